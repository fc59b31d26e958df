"""The in-process JSON-RPC shim: base URL -> peer app, no sockets, real bytes.

Essay: "[transport] in-process JSON-RPC shim (Part 12 reused)". The shim routes a URL
to the peer app serving its origin (scheme://host[:port]) and hands it the same
`HttpRequest` an HTTP server would build, so the bytes that cross here are the bytes
that would cross a socket. It does not copy HTTP's framing or TLS: those live in the
network transport. A deadline it keeps only when given one (`timeout`): then the app
runs in a worker thread, and a caller that stops waiting does not stop the peer, as
over a network. Without one, the app runs in the caller's thread, so a debugger can
step from the support agent into the peer. `stream` hands over a stream's chunks as the
app makes them (the app's answer within the deadline, as `post`'s; then each chunk in
the caller's thread, the deadline checked between chunks); an app that fails
mid-stream is, to the caller, a connection cut mid-body, as over HTTP.
"""
from __future__ import annotations

import time

from transports import sse
from transports.base import App, Body, HttpRequest, HttpResponse, hang_up, parse_url, request, seconds_for
from transports.codec import MAX_FRAME_BYTES
from transports.errors import TransportError, let_quit

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Iterator


class InProcessTransport:
    label = "in-process JSON-RPC shim (Part 12 reused)"

    def __init__(self, apps: dict[str, App], *, timeout: float | None = None) -> None:
        self.apps = {parse_url(base_url).origin: app for base_url, app in apps.items()}
        self.timeout = timeout

    def get(self, url: str, headers: dict[str, str], *, binding: str | None = None) -> HttpResponse:
        return self._call(request("GET", url, headers))

    def post(self, url: str, body: bytes, headers: dict[str, str], *, binding: str | None = None) -> HttpResponse:
        return self._call(request("POST", url, headers, bytes(body)))

    def stream(self, url: str, body: bytes, headers: dict[str, str], *,
               binding: str | None = None) -> HttpResponse:
        """`post`, but a 200 text/event-stream reply comes back as the app makes it: its body
        an iterator of chunks. Closing the iterator early stops the app's stream."""
        return self._call(request("POST", url, headers, bytes(body)), stream=True)

    def _call(self, http_request: HttpRequest, stream: bool = False) -> HttpResponse:
        url = parse_url(http_request.url)
        if url is None:
            raise TransportError(f"not an http(s) URL: {http_request.url[:80]!r}")
        app = self.apps.get(url.origin)
        if app is None:
            raise TransportError(f"nothing serves {url.origin} in this process (the in-process shim "
                                 "reaches only the apps it runs; a real server needs --transport http)")
        seconds = seconds_for(self.timeout)  # a caller's patience may leave it less (base.patient_until)
        if stream:  # each chunk is handed over as the app makes it, in the caller's thread
            started = time.monotonic()
            response = app(http_request) if seconds is None else \
                self._within_deadline(app, http_request, seconds, whole=False)
            if not isinstance(response.body, bytes) and response.status == 200 and sse.is_stream(
                    response.header("Content-Type")):
                return response._replace(body=_arriving(response.body, started, seconds))
        else:
            response = app(http_request) if seconds is None else self._within_deadline(app, http_request, seconds)
        return response if isinstance(response.body, bytes) else response._replace(body=_whole(response.body))

    def _within_deadline(self, app: App, http_request: HttpRequest, seconds: float,
                         whole: bool = True) -> HttpResponse:
        import threading
        answer: list[Any] = []

        def work() -> None:
            try:
                response = app(http_request)  # a streamed body is read here, within the deadline too
                answer.append(response if isinstance(response.body, bytes) or not whole else
                              response._replace(body=_whole(response.body)))
            except BaseException as exc:  # re-raised in the caller's thread, as if called there
                answer.append(exc)
        worker = threading.Thread(target=work, daemon=True)  # the peer finishes on its own
        worker.start()
        worker.join(seconds)
        if not answer:  # the same words as the network transport's read timeout
            raise TransportError(f"no reply within {seconds:g}s (read timeout)", sent=True,
                                 timed_out=True)
        if isinstance(answer[0], BaseException):
            raise answer[0]
        return answer[0]


def _arriving(chunks: Any, started: float, timeout: float | None) -> Body:
    """A stream's chunks as the app makes them, bounded in size (and in time, between
    chunks, when there is a deadline). The app's own failure reads as a cut-off body.
    However reading stops, the app's stream is closed then (its `finally` runs now)."""
    def read() -> Iterator[bytes]:
        size = 0
        try:
            for chunk in chunks:
                size += len(chunk)
                if size > MAX_FRAME_BYTES:
                    raise TransportError(f"the reply is over the {MAX_FRAME_BYTES}-byte limit", sent=True)
                if timeout is not None and time.monotonic() > started + timeout:  # the network's words
                    raise TransportError(f"the reply did not finish within {timeout:g}s", sent=True,
                                         timed_out=True)
                yield bytes(chunk)
        except TransportError:
            raise
        except Exception as exc:  # what an HTTP client of a server whose app failed mid-stream would see
            let_quit(exc)
            raise TransportError("the connection broke before a full reply: the peer closed it",
                                 sent=True) from None

    return Body(read(), lambda completed: hang_up(chunks))


def _whole(chunks: Any) -> bytes:
    """A streamed body (an app may answer with chunks, as it makes them), read to its end,
    as an HTTP client reads a chunked reply: bounded by the same size."""
    body = bytearray()
    for chunk in chunks:
        body += chunk
        if len(body) > MAX_FRAME_BYTES:
            raise TransportError(f"the reply is larger than {MAX_FRAME_BYTES} bytes", sent=True)
    return bytes(body)
