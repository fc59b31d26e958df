"""Serve a peer app over real HTTP/1.1, with the standard library's http.server.

Essay: "a real network transport ... one step away"; seed 000's small A2A server (GET the
card, POST JSON-RPC). The server only moves bytes: it turns each HTTP request into an
`HttpRequest`, calls the same peer app the in-process shim calls, and writes the
`HttpResponse` back, so frames are byte-identical on both transports.

What makes it sturdy, each covered by tests/test_http.py:
- HTTP/1.1 keep-alive, one thread per connection, so a slow or idle client blocks only
  itself; idle connections are closed after `idle_timeout` seconds.
- Nagle's algorithm off: otherwise a keep-alive reply can stall ~40 ms on delayed ACKs.
- A body must announce its Content-Length (411 otherwise) and may not exceed `max_body`
  (413, answered without reading the body, and the connection is then closed).
- Binds 127.0.0.1 unless told otherwise; one logging function; `stop()` shuts down cleanly.
Not here: TLS (put a proxy in front), chunked request bodies, HTTP/2.
"""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

from transports.base import App, HttpResponse, request
from transports.codec import MAX_FRAME_BYTES
from transports.jsonrpc import ErrorCode


def _refusal(status: int, message: str, code: int = ErrorCode.INVALID_REQUEST) -> HttpResponse:
    # The same JSON-RPC error shape the peer app uses for its own HTTP-level refusals.
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": int(code), "message": message}}
    return HttpResponse(status, {"Content-Type": "application/json"}, json.dumps(body).encode())


_date_cache: list[tuple[int, str]] = [(0, "")]  # (second, text); swapped whole, never torn


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive by default
    disable_nagle_algorithm = True
    wbufsize = 8192  # headers and body leave in one write; http.server flushes per request
    server: "PeerServer"

    def setup(self) -> None:
        self.timeout = self.server.idle_timeout  # read by StreamRequestHandler.setup
        super().setup()

    def _handle(self) -> None:
        length = self.headers.get("Content-Length")
        if self.command == "POST" and length is None:
            response = _refusal(411, "Content-Length is required")
            self.close_connection = True  # we cannot tell where a body would end
        elif length is not None and (not length.isdigit() or int(length) > self.server.max_body):
            response = _refusal(413, f"body larger than {self.server.max_body} bytes")
            self.close_connection = True  # the unread body must not be parsed as a request
        else:
            body = self.rfile.read(int(length)) if length else b""
            url = f"http://{self.headers.get('Host', 'localhost')}{self.path}"
            try:
                response = self.server.app(request(self.command, url, dict(self.headers), body))
            except Exception as exc:  # a bug in the app: say so in the log, not on the wire
                self.server.log(f"internal error serving {self.command} {self.path}: {exc!r}")
                response = _refusal(500, "Internal error", ErrorCode.INTERNAL_ERROR)
        self.send_response(response.status)
        for name, value in response.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(response.body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(response.body)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _handle

    def date_time_string(self, timestamp: float | None = None) -> str:
        # The Date header changes once a second; formatting it per response costs ~10% of
        # a request's CPU, so each second's string is made once (as nginx does).
        if timestamp is not None:
            return super().date_time_string(timestamp)
        now = int(time.time())
        second, text = _date_cache[0]
        if second != now:
            second, text = now, super().date_time_string(now)
            _date_cache[0] = (second, text)
        return text

    def log_message(self, format: str, *args: object) -> None:
        self.server.log(f"{self.address_string()} {format % args}")


class PeerServer(ThreadingHTTPServer):
    daemon_threads = True  # a stuck connection never keeps the process alive
    block_on_close = False

    def __init__(self, app: App | None, host: str = "127.0.0.1", port: int = 0, *,
                 log: Callable[[str], None] = lambda line: None, idle_timeout: float = 30.0,
                 max_body: int = MAX_FRAME_BYTES) -> None:
        self.app = app  # may be set after binding, once the port (and so the card URL) is known
        self.log, self.idle_timeout, self.max_body = log, idle_timeout, max_body
        self._thread: threading.Thread | None = None
        super().__init__((host, port), _Handler)

    @property
    def base_url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> "PeerServer":
        """Serve in a background thread (tests, `--transport http`); returns self."""
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"peer-server-{self.server_address[1]}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop accepting, close the listening socket, and wait for the serving thread."""
        if self._thread is not None:
            self.shutdown()
            self._thread.join(timeout=5)
        self.server_close()
