"""The in-process JSON-RPC shim: base URL -> peer app, no sockets, real bytes.

Essay: "[transport] in-process JSON-RPC shim (Part 12 reused)". The shim routes a URL
to the peer app serving its origin (scheme://host[:port]) and hands it the same
`HttpRequest` an HTTP server would build, so the bytes that cross here are the bytes
that would cross a socket. It does not copy HTTP's framing, TLS or timeouts: those live
in the network transport.
"""
from __future__ import annotations

from transports.base import App, HttpRequest, HttpResponse, parse_url, request
from transports.errors import TransportError


class InProcessTransport:
    label = "in-process JSON-RPC shim (Part 12 reused)"

    def __init__(self, apps: dict[str, App]) -> None:
        self.apps = {parse_url(base_url).origin: app for base_url, app in apps.items()}

    def get(self, url: str, headers: dict[str, str]) -> HttpResponse:
        return self._call(request("GET", url, headers))

    def post(self, url: str, body: bytes, headers: dict[str, str]) -> HttpResponse:
        return self._call(request("POST", url, headers, bytes(body)))

    def _call(self, http_request: HttpRequest) -> HttpResponse:
        url = parse_url(http_request.url)
        if url is None:
            raise TransportError(f"not an http(s) URL: {http_request.url[:80]!r}")
        app = self.apps.get(url.origin)
        if app is None:
            raise TransportError(f"nothing serves {url.origin} in this process")
        return app(http_request)
