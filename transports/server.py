"""Serve a peer app over HTTP/1.1: a small, strict, bounded server on plain sockets.

Essay: "a real network transport ... one step away". The server only moves bytes: each
request becomes an `HttpRequest` for the same peer app the in-process shim calls, and its
`HttpResponse` goes back, so frames are byte-identical on both transports. The rules
(tests/test_http.py and tests/test_server_hardening.py hold it to each):
- Requests are read strictly (transports/http11_server.py). One that is malformed, oversize
  or ambiguous is refused with its status and a JSON-RPC error, and the connection closed:
  bytes after a refused head are never read as a request.
- The app sees the request path under this server's own base URL; Host is never used.
- Time is bounded: a request, head and body, must arrive within `request_timeout` of its
  first byte however it is dripped (else 408); between requests a connection may idle
  `idle_timeout`. Threads are bounded: one per connection, at most `max_connections`; the
  next connection is answered 503 with Retry-After and closed at once.
- A response is one write, Nagle off, with Content-Length; keep-alive for HTTP/1.1 unless
  the client says `Connection: close`, for HTTP/1.0 if it asks. A body that is an iterator
  of bytes (Server-Sent Events, later) is sent chunked, each chunk as it comes.
- One `log(line)` function, one line per request or incident, never a traceback. What a
  client sent is escaped first (ESC shows as \\x1b), so it cannot forge lines or drive a
  terminal. An exception in the app is logged and answered 500, its detail never sent.
- Binds 127.0.0.1 unless told otherwise; `stop()` ends every connection promptly.
Not here: TLS (put a proxy in front), chunked request bodies, HEAD, HTTP/2.
"""
from __future__ import annotations

import re
import socket
import socketserver
import threading
import time
from typing import Callable, Iterable

from transports.base import App, HttpRequest, hang_up
from transports.codec import MAX_FRAME_BYTES
from transports.http11 import Reader
from transports.http11_server import Head, Refusal, head_end, parse_head, response_head
from transports.jsonrpc import InternalError, InvalidRequest, JsonRpcError, encode_error

_CLIENT_TEXT = re.compile(r'[^\x20-\x7e]|["\\]')  # escaped in what a client sent
_OUR_TEXT = re.compile(r"[^\x20-\x7e]")  # escaped in our own text, such as an exception's repr
_LINGER = 1.0  # seconds to drain a client we hang up on: unread bytes would reset our answer


def _escape(text: str | bytes, pattern: re.Pattern = _CLIENT_TEXT, limit: int = 300) -> str:
    if not isinstance(text, str):
        text = bytes(text).decode("latin-1")  # one character per byte: every byte shows
    shown = pattern.sub(lambda found: ascii(found[0])[1:-1] if found[0] != '"' else "\\x22",
                        text[:limit])
    return shown + "..." if len(text) > limit else shown


def _refusal(status: int, error: JsonRpcError, **headers: str) -> bytes:
    # A whole answer of ours, then we close: a JSON-RPC error body, as the peer app's refusals.
    body = encode_error(None, error)
    return response_head(status, {"Content-Type": "application/json", **headers}, len(body),
                         close=True) + body


class _Connection(Reader):
    """One client socket. As for the client's replies, http11's Reader keeps the bytes not
    used yet in `buffer`, and each wait gets only the time left before `deadline`: a
    deadline, not a timeout per read, so a dripping client cannot make the waits add up."""

    def __init__(self, sock: socket.socket, write_timeout: float) -> None:
        super().__init__(sock, deadline=0.0)
        self.write_timeout = write_timeout
        self.linger = False  # we answered and close: the client may still be sending

    def more(self) -> None:
        """Wait for more bytes: TimeoutError at the deadline, EOFError if the client left."""
        if not self.fill():
            raise EOFError

    def first_line(self) -> bytes:  # what the log shows of a request not read in full
        return bytes(self.buffer[:301]).partition(b"\r\n")[0]  # over 300: _escape adds "..."

    def send(self, data: bytes) -> None:
        self.sock.settimeout(self.write_timeout)  # a client that stops reading is let go
        self.sock.sendall(data)


class PeerServer(socketserver.TCPServer):
    allow_reuse_address = True  # a restarted peer can bind its port again at once
    request_queue_size = 128  # accepting is quick: connections over the cap get their 503

    def __init__(self, app: App | None, host: str = "127.0.0.1", port: int = 0, *,
                 log: Callable[[str], None] = lambda line: None, idle_timeout: float = 30.0,
                 request_timeout: float = 10.0, max_body: int = MAX_FRAME_BYTES,
                 max_connections: int = 64) -> None:
        self.app = app  # may be set after binding, once the port (and so the card URL) is known
        self.log, self.idle_timeout, self.request_timeout = log, idle_timeout, request_timeout
        self.max_body, self.max_connections = max_body, max_connections
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._workers: dict[socket.socket, threading.Thread] = {}  # one per open connection
        super().__init__((host, port), None)
        self._base = self.base_url  # made once: every request's URL starts with it

    @property
    def base_url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"

    def start(self) -> "PeerServer":
        """Serve in a background thread (tests, `--transport http`); returns self."""
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"peer-server-{self.server_address[1]}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop accepting, end each connection once its current answer is sent, and wait."""
        if self._thread is not None:
            self.shutdown()
            self._thread.join(timeout=5)
        self.server_close()
        with self._lock:  # a worker leaves the dict before it closes its socket
            workers = dict(self._workers)
            for sock in workers:
                try:  # its next read meets end-of-file; an answer being sent still goes out
                    sock.shutdown(socket.SHUT_RD)
                except OSError:
                    pass
        deadline = time.monotonic() + 2
        for worker in workers.values():
            worker.join(timeout=max(0.0, deadline - time.monotonic()))

    def process_request(self, sock: socket.socket, client: tuple) -> None:
        # socketserver calls this in the accepting thread for each new connection.
        with self._lock:
            if len(self._workers) < self.max_connections:
                worker = threading.Thread(target=self._serve, args=(sock, client), daemon=True)
                self._workers[sock] = worker
                try:
                    return worker.start()
                except RuntimeError:  # no thread to be had: as good as full
                    del self._workers[sock]
        self.log(f"{client[0]} 503 turned away: {self.max_connections} connections are open")
        try:  # no thread for this one: a fresh socket takes one small send without blocking
            sock.setblocking(False)
            sock.send(_refusal(503, InvalidRequest("too many connections; retry in a second"),
                               **{"Retry-After": "1"}))
            sock.recv(65536)  # what arrived already: closing on unread bytes sends a reset
        except OSError:
            pass
        sock.close()

    def _serve(self, sock: socket.socket, client: tuple) -> None:
        conn = _Connection(sock, self.request_timeout)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # else ~40 ms stalls
            while self._exchange(conn, client[0]):
                pass
            if conn.linger:
                sock.shutdown(socket.SHUT_WR)  # our answer is whole; drain, then close
                conn.deadline = time.monotonic() + min(_LINGER, self.request_timeout)
                while True:
                    conn.more()
                    conn.buffer.clear()
        except (OSError, EOFError):
            pass  # the client left: its request's log line said so already
        except Exception as exc:  # a bug of ours: one line, and this connection ends
            self.log(f"{client[0]} server error: {_escape(repr(exc), _OUR_TEXT)}")
        finally:
            with self._lock:
                del self._workers[sock]
            sock.close()

    def _exchange(self, conn: _Connection, ip: str) -> bool:
        """Read one request and answer it; False when the connection should end."""
        buffer, line = conn.buffer, b""
        try:  # between requests, the idle timeout; a client leaving or timing out is no news
            conn.deadline = time.monotonic() + self.idle_timeout
            while not buffer.lstrip(b"\r\n"):  # RFC 9112 2.2: empty lines before a request
                buffer.clear()
                conn.more()
        except (OSError, EOFError):
            return False
        try:
            del buffer[:len(buffer) - len(buffer.lstrip(b"\r\n"))]
            conn.deadline = time.monotonic() + self.request_timeout  # from its first byte
            while (end := head_end(buffer)) is None:
                conn.more()
            head = parse_head(bytes(buffer[:end]), self.max_body)
            line = conn.first_line()
            del buffer[:end + 4]
            if head.expect_continue and len(buffer) < head.length:
                conn.send(b"HTTP/1.1 100 Continue\r\n\r\n")
            while len(buffer) < head.length:
                conn.more()
            body = bytes(buffer[:head.length])
            del buffer[:head.length]
        except Refusal as refusal:
            return self._refuse(conn, ip, line or conn.first_line(), refusal.status, refusal.why)
        except TimeoutError:
            return self._refuse(conn, ip, line or conn.first_line(), 408,
                                f"the request took over {self.request_timeout:g} s")
        except (OSError, EOFError):
            self.log(f'{ip} "{_escape(line or conn.first_line())}" client disconnected mid-request')
            return False
        return self._answer(conn, ip, line, head, body)

    def _refuse(self, conn: _Connection, ip: str, line: bytes, status: int, why: str) -> bool:
        note = f"refused: {why}"
        try:
            conn.send(_refusal(status, InvalidRequest(why)))
        except OSError:
            note += "; the client left"
        self.log(f'{ip} "{_escape(line)}" {status} {note}')
        conn.linger = True
        return False

    def _answer(self, conn: _Connection, ip: str, line: bytes, head: Head, body: bytes) -> bool:
        http10, note = head.version == "HTTP/1.0", ""
        try:
            # Header names are lower-case already, as transports.base.request makes them.
            response = self.app(HttpRequest(head.method, self._base + head.target, head.headers,
                                            body))
            status, body = response.status, response.body
            streaming = not isinstance(body, (bytes, bytearray))
            if streaming:
                iter(body)  # TypeError if not iterable: the app's bug, answered 500 below
            close = not head.keep_alive or (streaming and http10)  # 1.0 has no chunks
            out = response_head(status, response.headers, None if streaming else len(body),
                                close=close, http10=http10)
        except Exception as exc:  # a bug in the app: say so in the log, not on the wire
            note = f" app raised {_escape(repr(exc), _OUR_TEXT)}"
            status, body, streaming, close = 500, b"", False, True
            out = _refusal(500, InternalError())
        try:
            if streaming:
                note += self._stream(conn, out, body, chunked=not http10)
            else:
                conn.send(out + body if status not in (204, 304) else out)
        except OSError:
            note += " client disconnected mid-response"
        self.log(f'{ip} "{_escape(line)}" {status}{note}')
        conn.linger = close or bool(note)
        return not conn.linger

    def _stream(self, conn: _Connection, head: bytes, chunks: Iterable, chunked: bool) -> str:
        """Send each chunk as the app makes it; returns a note for the log if it broke off."""
        try:
            conn.send(head)
            for chunk in chunks:  # a chunk that is not bytes fails below: TypeError
                if chunk:  # an empty chunk would mean "the end"
                    conn.send(b"%x\r\n%s\r\n" % (len(chunk), chunk) if chunked else chunk)
            if chunked:
                conn.send(b"0\r\n\r\n")
            return ""
        except OSError:
            raise  # the client left (an app's own OSError is reported the same way)
        except Exception as exc:  # the client gets no last chunk: it sees a cut-off body
            return f" app raised {_escape(repr(exc), _OUR_TEXT)} mid-stream"
        finally:
            hang_up(chunks)  # a generator's `finally` runs now, not when collected
