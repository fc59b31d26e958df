"""A server's connection: its request read as it arrives, answered by the app, the answer sent.

transports/server.py reads requests on one thread for every connection; each request read
in full is given to a worker (workers.py), whose thread calls the app and writes the answer on
the connection (`Connection.answer`): as a whole, as far as the client takes it at once (the
rest left in `unsent` for the loop: unsent.py), or, for an iterator body (Server-Sent
Events), chunk by chunk as the app makes it. A response is one write, Nagle off, with
Content-Length; keep-alive for HTTP/1.1 unless the client says `Connection: close`, for
HTTP/1.0 if it asks; an iterator body is sent chunked (HTTP/1.0: ended by closing).
Error bodies of the server's own (`refusal`) and the escaping of what a client sent into
the log (`escape`) live here too. Not here: the loop that reads, deadlines, the cap on
connections (server.py), the threads (workers.py).
"""
from __future__ import annotations

import re
import select
import socket
import time

from transports.base import App, HangUp, HttpRequest, HttpResponse, hang_up
from transports.chunked_body import ChunkedBody
from transports.errors import let_quit
from transports.http11_server import Head, Refusal, head_end, named_length, origin_form, parse_head, response_head
from transports.jsonrpc import InternalError, JsonRpcError, encode_error
from transports.masking import mask_line
from transports.unsent import NotReading, Unsent, rest_of

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable

_CLIENT_TEXT = re.compile(r'[^\x20-\x7e]|["\\]')  # escaped in what a client sent
_OUR_TEXT = re.compile(r"[^\x20-\x7e]")  # escaped in our own text, such as an exception's repr


def escape(text: str | bytes, pattern: re.Pattern = _CLIENT_TEXT, limit: int = 300) -> str:
    if not isinstance(text, str):
        text = bytes(text).decode("latin-1")  # one character per byte: every byte shows
    text = mask_line(text)  # a client's mistake (?api_key=..., http://user:password@...): its secret logged masked
    shown = pattern.sub(lambda found: ascii(found[0])[1:-1] if found[0] != '"' else "\\x22",
                        text[:limit])
    return shown + "..." if len(text) > limit else shown


def refusal(status: int, error: JsonRpcError, app: Any = None, line: bytes = b"", **headers: str) -> bytes:
    """A whole answer of ours, then we close: a JSON-RPC error body, as the peer app's refusals; or, where the app has
    a `refused(path, status, error)` hook and the request line names a path, the HttpResponse it words for that path
    (a peer's HTTP+JSON routes: their own shape). The hook runs on the server's one loop thread, so it must be quick
    and never wait. An answer to HEAD is its head alone, the length of the body a GET would get said in it."""
    method, target = (line.split(b" ", 2) + [b"", b""])[:2]  # what it asked, as much as was read of it
    fields, body = {"Content-Type": "application/json"}, encode_error(None, error)
    path = origin_form(target.decode("latin-1"))[0]  # absolute-form's path too
    if getattr(app, "refused", None) is not None and path.startswith("/"):
        try:  # whatever the hook does or gives, a refusal is said
            worded = app.refused(path.partition("?")[0], status, error)
            if isinstance(worded, HttpResponse) and isinstance(worded.body, bytes):
                response_head(status, {**worded.headers, **headers}, len(worded.body), close=True)  # it can be said
                fields, body = worded.headers, worded.body
        except Exception as exc:  # noqa: BLE001 - a hook's bug: our own words instead
            let_quit(exc)
    return response_head(status, {**fields, **headers}, len(body), close=True) + (b"" if method == b"HEAD" else body)


class Connection:
    """One client socket: what has arrived of its next request, and its state (server.py)."""

    def __init__(self, sock: socket.socket, ip: str, now: float, idle_timeout: float,
                 tls: Any = None, handshake_timeout: float = 0.0) -> None:
        sock.setblocking(False)  # the loop's: a worker answering sets a timeout (answer)
        self.sock, self.ip, self.deadline = sock, ip, now + idle_timeout
        self.buffer = bytearray()
        self.state, self.since, self.keep = "idle", now, False  # since: opened, or its last answer sent
        self.heard = False  # whether a byte of its next request (or TLS handshake) has come since
        self.client_certificate = ""  # who the verified client certificate names, if any (tls.client_subject)
        self.refused = False  # a handshake refused: its alert sent, then drained as an answer we hang up on
        self.idle_timeout = idle_timeout
        if tls is not None:  # an ssl.SSLContext: the handshake first, on a request's clock
            from transports import tls as tls_steps
            self.sock, self.state, self.deadline = tls_steps.wrap(tls, sock), "handshake", now + handshake_timeout
        self.head: Head | None = None  # read, while its body arrives
        self.chunks: ChunkedBody | None = None  # a chunked body, decoded as it arrives (chunked_body.py)
        self.line = b""  # the request line of the request being read, for the log
        self.unsent: bytes | memoryview = b""  # what the client has not taken yet of a whole answer (unsent.py)
        self.counted = 0  # the bytes `unsent` keeps alive, counted in the server's Unsent
        self.write_timeout, self.said, self.stopped = 0.0, "", False  # said: its answer's line; stopped: by the server
        self.answering = False  # a worker is making its answer now (server.py's stop says its line if so)
        self.give_up = 0.0  # when the loop stops writing an answer, however steadily its client reads (unsent.py)

    def held(self) -> int:
        """Bytes held of the request being read: what has arrived, and a chunked body decoded so far."""
        return len(self.buffer) + (len(self.chunks.body) if self.chunks is not None else 0)

    def first_line(self) -> bytes:  # what the log shows of a request not read in full
        return bytes(self.buffer[:301]).partition(b"\r\n")[0]  # over 300: escape adds "..."

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def receive(self, log: Callable[[str], None]) -> bytes:
        """What has arrived; b"" at its end; BlockingIOError: nothing yet. Over TLS, decrypted,
        and the handshake first, a step each time the client's bytes arrive: a failed one is
        one line of `log`, then b"" (the end); once done, the connection is idle. Called when
        it is readable (by the loop; by a worker: next_request), so it made progress: `heard` (room.py)."""
        self.heard = True
        if self.state == "closing" or not hasattr(self.sock, "pending"):  # draining: the TLS layer is gone
            return self.sock.recv(65536)
        from transports import tls
        if self.state == "handshake":
            failed = tls.handshake(self.sock)
            if failed:
                log(f"{self.ip} {failed}")
                self.refused = True
                return b""
            if failed == "":
                raise BlockingIOError
            self.client_certificate = tls.client_subject(self.sock)
            self.state = "idle"  # `since` stays: a handshake is no request answered (server.py's room)
            self.deadline = time.monotonic() + self.idle_timeout
        return tls.read(self.sock)

    def take_request(self, max_body: int, *, early: bool = False) -> tuple[Head, bytes] | None:
        """The request in `buffer`, head and body, once all of it has arrived (None until then); Refusal for one that
        must not be served. Its head is judged as soon as it is whole, so an oversize body is refused before it is
        sent (and 100 Continue is said); a chunked one, as soon as the chunk that passes the limit says its size."""
        if self.head is None:
            end = head_end(self.buffer)
            if end is None:
                return None
            self.head = parse_head(bytes(self.buffer[:end]), max_body)
            self.line = self.first_line()
            del self.buffer[:end + 4]
            self.chunks = ChunkedBody(max_body) if self.head.chunked else None
            waiting = len(self.buffer) < self.head.length or self.head.chunked and not self.buffer
            if self.head.expect_continue and waiting and not early:  # early: the loop reads it again, and says it
                self.sock.send(b"HTTP/1.1 100 Continue\r\n\r\n")  # a small send: the socket takes it
        head = self.head
        if self.chunks is not None:
            body = self.chunks.take(self.buffer)
            if body is None:
                return None
            # As if it had come with a Content-Length, as RFC 9112 7.1.3 decodes it: the app sees one framing.
            headers = {name: value for name, value in head.headers.items() if name != "transfer-encoding"}
            head = head._replace(headers={**headers, "content-length": str(len(body))}, length=len(body))
        elif len(self.buffer) < head.length:
            return None
        else:
            body = bytes(self.buffer[:head.length])
            del self.buffer[:head.length]
        self.head = self.chunks = None
        return head, body

    def next_request(self, wait: float, max_body: int) -> tuple[Head, bytes] | None:
        """A busy keep-alive client's next request: one the last read brought (no more is read before it is
        answered: a client pipelining without pause has one read held, not a read more per answer), or one
        arriving whole within `wait` s of our answer (sparing a trip to the loop); else None, what did arrive
        left in `buffer` for the loop, which judges it as any other (a refusal too). Over TLS, what the TLS
        layer has decrypted already is read at once (poll sees the rest)."""
        decrypted = hasattr(self.sock, "pending") and self.sock.pending()  # TLS's: poll would not see it
        if not (self.buffer or decrypted):
            waiting = select.poll()  # poll, not select: a server's descriptors may pass 1024
            waiting.register(self.sock, select.POLLIN)
            if not waiting.poll(wait * 1000):
                return None
        try:
            self.sock.settimeout(0)
            data = self.receive(lambda line: None) if decrypted or not self.buffer else b""  # over TLS, decrypted
        except OSError:  # nothing after all (over TLS, half a record: BlockingIOError), or reset: the loop finds out
            return None
        self.buffer += data
        del self.buffer[:len(self.buffer) - len(self.buffer.lstrip(b"\r\n"))]  # RFC 9112 2.2
        if self.head is not None or not self.buffer:  # nothing (b"": the client is gone; the loop sees that too)
            return None
        held = bytes(self.buffer)
        try:
            request = self.take_request(max_body, early=True)
        except (Refusal, OSError):  # judged again by the loop, which answers it
            request = None
        if request is None:  # a head whose body is still coming too: the loop reads it all again, from its
            self.head, self.chunks, self.buffer[:] = None, None, held  # first byte (else its body is read as a head)
        return request

    def answer(self, app: App, base: str, head: Head, body: bytes, write_timeout: float,
               log: Callable[[str], None], unsent: Unsent) -> bool:
        """Call the app and send its answer; whether the connection may take another request.
        Of a whole answer, what the client does not take at once is left for the loop, counted
        in `unsent` (with no room left there, the connection is closed: unsent.py); a stream
        is sent here, each write within `write_timeout`."""
        try:
            self.sock.settimeout(0)  # a whole answer: as much as the client takes now (unsent.py)
            self.write_timeout, self.answering = write_timeout, True  # write_timeout: for a stream
            return self._answer(app, base, head, body, log, unsent)
        except Exception as exc:  # a bug of ours: one line, and this connection ends
            let_quit(exc)
            log(f"{self.ip} server error: {escape(repr(exc), _OUR_TEXT)}")
            return False
        finally:
            self.answering = False  # its line said (or the loop's to say): a stopping server says none for it

    def _answer(self, app: App, base: str, head: Head, body: bytes, log: Callable[[str], None],
                unsent: Unsent) -> bool:
        http10, note, line, bare = head.version == "HTTP/1.0", "", self.line, head.method == "HEAD"
        try:
            # Header names are lower-case already, as transports.base.request makes them. HEAD is
            # asked as GET: GET's status and headers (Content-Length too), sent without the body;
            # an app that answers HEAD itself (`answers_head`: a proxy) is asked HEAD, its length said.
            itself = bare and getattr(app, "answers_head", False) is True
            method = "GET" if bare and not itself else head.method
            response = app(HttpRequest(method, base + head.target, head.headers, body, self.client_certificate, self.ip))
            status, body = response.status, response.body
            streaming = not isinstance(body, (bytes, bytearray))
            if streaming:
                iter(body)  # TypeError if not iterable: the app's bug, answered 500 below
            close = not head.keep_alive or (streaming and http10 and not bare)  # 1.0 has no chunks
            length = named_length(response.header("Content-Length")) if itself else None if streaming else len(body)
            out = response_head(status, response.headers, length, close=close, http10=http10, body_follows=not itself)
        except HangUp:  # the app asked for no answer at all (a proxy's fault): the client sees a close
            log(f'{self.ip} "{escape(line)}" hung up with no answer, as the app asked')
            return False  # (not `log(...) or False`: a log function may return anything)
        except Exception as exc:  # a bug in the app: say so in the log, not on the wire
            let_quit(exc)
            note = f" app raised {escape(repr(exc), _OUR_TEXT)}"
            status, body, streaming, close = 500, b"", False, True
            out = refusal(500, InternalError())
        try:
            if bare:  # the head alone; a stream the GET opened is closed unread
                hang_up(body)
                self.unsent, self.counted = rest_of(self.sock, out[:out.index(b"\r\n\r\n") + 4], unsent)
            elif streaming:
                self.sock.settimeout(self.write_timeout)  # each event as it comes: the worker waits for the client
                note += self._stream(out, body, chunked=not http10)
            else:
                whole = out + body if status not in (204, 304) else out
                self.unsent, self.counted = rest_of(self.sock, whole, unsent)
        except OSError as exc:  # or no room left to keep an answer the client did not take at once (unsent.py)
            note += f" {exc}" if isinstance(exc, NotReading) else f" client did not take an event within {self.write_timeout:g} s " \
                "mid-stream: cut" if isinstance(exc, TimeoutError) else " client disconnected mid-response"
        self.said = f'{self.ip} "{escape(line)}" {status}{note}'
        if not (self.unsent or self.stopped):  # else said once the loop has written the rest, or by a stopping server
            log(self.said)
        return not (close or note)

    def _stream(self, head: bytes, chunks: Iterable, chunked: bool) -> str:
        """Send each chunk as the app makes it; returns a note for the log if it broke off."""
        try:
            self.send(head)
            for chunk in chunks:  # a chunk that is not bytes fails below: TypeError
                if chunk:  # an empty chunk would mean "the end"
                    self.send(b"%x\r\n%s\r\n" % (len(chunk), chunk) if chunked else chunk)
            if chunked:
                self.send(b"0\r\n\r\n")
            return ""
        except OSError:
            raise  # the client left (an app's own OSError is reported the same way)
        except Exception as exc:  # the client gets no last chunk: it sees a cut-off body
            let_quit(exc)  # HangUp: the app cut its own stream (a proxy's fault), not a bug
            return " hung up mid-stream, as the app asked" if isinstance(exc, HangUp) else \
                f" app raised {escape(repr(exc), _OUR_TEXT)} mid-stream"
        finally:
            hang_up(chunks)  # a generator's `finally` runs now, not when collected
