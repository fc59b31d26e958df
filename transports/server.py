"""Serve a peer app over HTTP/1.1: a small, strict, bounded server on plain sockets.

Essay: "a real network transport ... one step away". It only moves bytes: each request becomes an
`HttpRequest` for the peer app the in-process shim calls too, so frames are byte-identical on both
transports. The rules (test_http.py, test_server_hardening.py, test_resource_attacks.py, test_connection_cap.py):
- Requests are read strictly (http11_server.py): one malformed, oversize or ambiguous is refused with its status
  and a JSON-RPC error (or as the app words errors at that path: its `refused` hook), and the connection closed
  (bytes after a refused head are never read as a request). The app sees the path under this base URL, never Host.
- A connection costs a client more than it costs the server: one thread (`serve_forever`) waits on all with `selectors`,
  so an idle or dripping one is a socket, not a thread; a request read in full goes to one of `max_workers` threads
  (workers.py), which answers the client's next requests too while each follows within 5 ms (over TLS too). A request
  must arrive within `request_timeout` of its first byte however it is dripped (else 408); between requests a connection
  may idle `idle_timeout`. A whole answer is sent as far as the client takes it at once, the loop writing the rest as
  it reads (unsent.py): one that stops reading holds no worker. At most `max_connections` are open; when full, the one
  that made the least progress is closed for a newcomer (room.py; all being answered: 503). Past 64 MiB held, large
  requests get 503. One log line per request or incident (a stop too), never a traceback. Binds 127.0.0.1; `tls`: https.
"""
from __future__ import annotations

import selectors
import socket
import threading
import time
from collections import deque
from contextlib import suppress
from functools import partial

from transports.base import App
from transports.codec import MAX_FRAME_BYTES
from transports.http11_server import Head, Refusal
from transports.jsonrpc import InvalidRequest
from transports.room import MOST_LINGERING, make_room, readable_now, reads_first, turn_away
from transports.server_answer import Connection, escape, refusal
from transports.unsent import MOST_UNSENT, Unsent, finish, start_writing, why_stalled, write_more
from transports.workers import Workers, files_to_spare

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable

_LINGER, _SWEEP = 1.0, 0.05  # s: to drain a client we hang up on (unread bytes would reset our answer); deadlines' looks
_MOST_HELD = 64 << 20  # bytes of requests held at once, all connections together: past it, large ones wait
IDLE, READING, BUSY, WRITING, CLOSING = "idle", "reading", "busy", "writing", "closing"  # (TLS: "handshake" first)
_AT_ONCE, _IN_A_ROW = 0.005, 100  # a worker keeps a client whose next request comes this soon, this often


class PeerServer:
    request_queue_size = 1024  # the listen backlog: accepting is quick, the loop takes them in turn
    def __init__(self, app: App | None, host: str = "127.0.0.1", port: int = 0, *,
                 log: Callable[[str], None] = lambda line: None, idle_timeout: float = 30.0, request_timeout: float = 10.0,
                 max_body: int = MAX_FRAME_BYTES, max_connections: int = 1024, max_workers: int = 64, tls: Any = None,
                 max_unsent: int = MOST_UNSENT) -> None:
        self.app, self.tls = app, tls  # app: may be set after binding, once the port (and card URL) is known
        self.log, self.idle_timeout, self.request_timeout = log, idle_timeout, request_timeout
        self.max_body, self.max_connections = max_body, min(max_connections, files_to_spare())
        self.workers, self._unsent = Workers(max_workers), Unsent(max_unsent)  # what workers leave the loop to write
        self.socket = socket.create_server((host, port), family=socket.AF_INET6 if ":" in host
                                           else socket.AF_INET, backlog=self.request_queue_size)
        self.socket.setblocking(False)
        self.server_address = self.socket.getsockname()
        self._open: dict[socket.socket, Connection] = {}  # every connection, by its socket
        self._closing = 0  # of them, those we have answered and are draining: not counted as open
        self._returned: deque[Connection] = deque()  # answered by a worker, back to the loop
        self._wake_up, self._waker = socket.socketpair()  # a worker's nudge to the loop
        self._waker.setblocking(False)  # a nudge never waits: one already waiting is enough
        self._selector = selectors.DefaultSelector()
        self._selector.register(self.socket, selectors.EVENT_READ, "accept")
        self._selector.register(self._wake_up, selectors.EVENT_READ, "wake")
        self._stop_asked, self._thread = False, None  # the loop's thread, if start() made one

    @property
    def base_url(self) -> str:
        (host, port), scheme = self.server_address[:2], "https" if self.tls else "http"
        return f"{scheme}://[{host}]:{port}" if ":" in host else f"{scheme}://{host}:{port}"

    @property
    def connections(self) -> int:  # open now, but those being closed: what the cap counts
        return len(self._open) - self._closing
    def start(self) -> "PeerServer":
        """Serve in a background thread (tests, `--transport http`); returns self."""
        self._thread = threading.Thread(target=self.serve_forever, args=(_SWEEP,), daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop accepting, end each connection once its current answer is sent, and wait."""
        self.shutdown()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.server_close()

    def shutdown(self) -> None:  # serve_forever returns within _SWEEP seconds
        self._stop_asked = True
        self._nudge()

    def server_close(self) -> None:
        """Close the listening socket and every connection, answers under way finished first (2 s, 2 s: unsent.finish)."""
        self._stop_asked = True
        for conn in [conn for conn in self._open.values() if conn.state not in (BUSY, WRITING)]:
            self._close(conn)
        self.socket.close()
        self.workers.close(2.0, self.log, lambda work: f'{work.args[0].ip} "{escape(work.args[0].line)}"')  # _work's conn
        finish([conn for conn in self._open.values() if conn.unsent], 2.0, self.log)  # the loop's writing, ended
        for conn in list(self._open.values()):
            if conn.answering:  # a worker still making its answer (a stream): its line said now, as the process may end
                conn.stopped = True
                self.log(f'{conn.ip} "{escape(conn.line)}" cut short: the server stopped')
            self._close(conn)
        for closing in (self._selector, self._wake_up, self._waker):
            closing.close()

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        """The loop: accept, read, hand complete requests to workers, mind the deadlines."""
        swept = 0.0
        while not self._stop_asked:
            for key, _ in reads_first(self._selector.select(timeout=min(poll_interval, _SWEEP))):
                if key.data == "accept":
                    self._accept()
                elif key.data == "wake":
                    self._wake_up.recv(4096)  # readable: it does not block
                else:
                    (self._writable if key.data.state == WRITING else self._readable)(key.data)
            while self._returned:
                self._taken_back(self._returned.popleft())
            if (now := time.monotonic()) >= swept + _SWEEP:
                swept = now
                for conn in [conn for conn in self._open.values() if conn.state != BUSY and now >= conn.deadline]:
                    if conn.state == READING:
                        self._refuse(conn, 408, f"the request took over {self.request_timeout:g} s")
                    else:  # idle for idle_timeout, or drained long enough: no news; stalled (TLS, a reader): news
                        if conn.state == "handshake":  # no 408: TLS was never agreed, so nothing to answer in
                            self.log(f"{conn.ip} TLS handshake not done within {self.request_timeout:g} s: closed")
                        elif conn.state == WRITING:  # a client that stopped reading (or reads too slowly): let go
                            self.log(f"{conn.said} {why_stalled(conn, self.request_timeout)}")
                        self._close(conn)

    def _nudge(self) -> None:
        with suppress(OSError):  # full (a nudge is waiting already) or closed (the server is closing)
            self._waker.send(b"!")

    def _accept(self) -> None:
        for _ in range(64):  # a few at a time, so the connections already open are read too
            try:
                sock, client = self.socket.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:  # out of files, say: the backlog keeps them a moment; a pause, not a spin
                if not make_room(self):
                    self.log(f"accept failed: {exc.strerror or exc}")
                    return time.sleep(_SWEEP)
                continue
            if len(self._open) - self._closing >= self.max_connections and not make_room(self):
                turn_away(self, sock, client[0])
                continue
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # else ~40 ms stalls
            conn = Connection(sock, client[0], time.monotonic(), self.idle_timeout, self.tls, self.request_timeout)
            self._open[conn.sock] = conn  # with TLS, a wrapped socket
            self._selector.register(conn.sock, selectors.EVENT_READ, conn)
            if readable_now(conn.sock):  # its first bytes are here: progress, seen before the next needs room
                self._readable(conn)

    def _linger(self, conn: Connection) -> None:
        """Our side is done: drain what the client sends for a moment, then close (unread bytes would reset our answer)."""
        with suppress(OSError):
            conn.sock.shutdown(socket.SHUT_WR)
        self._closing += conn.state != CLOSING
        conn.state, conn.head, conn.chunks = CLOSING, None, None
        conn.buffer.clear()
        conn.deadline = time.monotonic() + min(_LINGER, self.request_timeout)

    def _readable(self, conn: Connection) -> None:
        try:
            data = conn.receive(self.log)  # over TLS, a step of its handshake first
        except (BlockingIOError, InterruptedError):
            return
        except OSError:  # reset: as good as gone
            data = b""
        if conn.state == CLOSING:  # draining what the client still sends after our answer, until its end
            return None if data else self._close(conn)
        if not data and conn.state == READING:  # the client left; only a request begun is news
            self.log(f'{conn.ip} "{escape(conn.line or conn.first_line())}" client disconnected mid-request')
        if not data:  # a refused handshake's alert is sent: drained, as closing on unread bytes would reset it
            return self._linger(conn) if conn.refused and self._closing < MOST_LINGERING else self._close(conn)
        conn.buffer += data
        if conn.held() > 65536 and sum(held.held() for held in self._open.values()) > _MOST_HELD:
            return self._refuse(conn, 503, "the server holds too many large requests now; retry in a second")
        self._advance(conn)

    def _advance(self, conn: Connection) -> None:
        """Read as much of a request as has arrived; a whole one goes to a worker."""
        if conn.state == IDLE:
            del conn.buffer[:len(conn.buffer) - len(conn.buffer.lstrip(b"\r\n"))]  # RFC 9112 2.2
            if not conn.buffer:
                return
            conn.state, conn.deadline = READING, time.monotonic() + self.request_timeout  # from its first byte
        try:
            request = conn.take_request(self.max_body)
        except Refusal as refused:
            return self._refuse(conn, refused.status, refused.why)
        except OSError:  # the 100 Continue could not be sent: the client is gone
            return self._close(conn)
        if request is not None:
            conn.state = BUSY
            self._selector.unregister(conn.sock)
            self.workers.give(partial(self._work, conn, *request))

    def _work(self, conn: Connection, head: Head, body: bytes) -> None:  # in a worker, then back to the loop
        for turn in range(1, _IN_A_ROW + 1):  # a busy client's next request, answered here while it keeps coming
            conn.keep = conn.answer(self.app, self.base_url, head, body, self.request_timeout, self.log, self._unsent)
            going_on = conn.keep and not conn.unsent and not self._stop_asked and turn < _IN_A_ROW  # else: the loop
            if not going_on or (following := conn.next_request(_AT_ONCE, self.max_body)) is None:
                break
            head, body = following
        self._returned.append(conn)
        self._nudge()

    def _taken_back(self, conn: Connection) -> None:
        if self._stop_asked or conn.sock not in self._open:  # stopping: an answer's rest is the stop's to write
            return None if conn.unsent and conn.sock in self._open else self._close(conn)
        try:
            conn.sock.setblocking(False)
            self._selector.register(conn.sock, selectors.EVENT_WRITE if conn.unsent else selectors.EVENT_READ, conn)
        except (OSError, ValueError):
            return self._close(conn)
        if conn.unsent:  # the rest of its answer, written as the client reads it
            return start_writing(conn, self.request_timeout)
        if not conn.keep:  # our answer is whole: drain, then close
            return self._linger(conn)
        conn.state, conn.line, conn.since, conn.heard = IDLE, b"", time.monotonic(), False  # the sweep reads them
        conn.deadline = conn.since + self.idle_timeout
        self._advance(conn)  # the client may have sent its next request already

    def _writable(self, conn: Connection) -> None:
        done = write_more(conn, self._unsent, self.request_timeout)  # None: the client is gone
        if done is not False:  # the answer's line, said once its last byte is sent, or not
            self.log(conn.said + ("" if done else " client disconnected mid-response"))
        if done is None:
            return self._close(conn)
        if done:  # taken back, as a worker's answer is: kept alive, or drained and closed
            self._selector.unregister(conn.sock)
            self._taken_back(conn)

    def _refuse(self, conn: Connection, status: int, why: str) -> None:
        note = f"refused: {why}"
        try:
            conn.sock.send(refusal(status, InvalidRequest(why), self.app, conn.line or conn.first_line()))  # small
        except OSError:
            note += "; the client left"
        self.log(f'{conn.ip} "{escape(conn.line or conn.first_line())}" {status} {note}')
        self._linger(conn)  # said, then the end of our side: the answer, then end-of-file

    def _close(self, conn: Connection) -> None:
        self._unsent.give(conn.counted)
        conn.unsent, conn.counted = b"", 0
        if self._open.pop(conn.sock, None) is not None and conn.state == CLOSING:
            self._closing -= 1
        if conn.state != BUSY:
            with suppress(KeyError, ValueError):
                self._selector.unregister(conn.sock)
        conn.sock.close()
