"""The transport interface: move one frame, as bytes, to a URL and bring one back.

A transport is deliberately tiny (two methods), like a WSGI server: `get` fetches a
document such as an Agent Card, `post` carries one JSON-RPC frame. Both return an
`HttpResponse` even in-process, so a peer app answers with the same statuses (401,
404, 413 ...) whichever transport carries it. A peer is an app: `app(HttpRequest) ->
HttpResponse`. A transport that cannot complete an exchange raises
`transports.errors.TransportError`. Essay: Delegation over JSON-RPC. Not here:
envelopes (see `jsonrpc`), A2A objects (see `peers/a2a/`), printing (see `printer`).
"""
from __future__ import annotations

from typing import NamedTuple, Protocol
from urllib.parse import urlsplit


class HttpRequest(NamedTuple):
    method: str  # "GET" or "POST"
    url: str
    headers: dict[str, str]
    body: bytes = b""

    def header(self, name: str) -> str | None:
        """Header lookup ignoring case, as HTTP does."""
        return header(self.headers, name)


class HttpResponse(NamedTuple):
    status: int
    headers: dict[str, str]
    body: bytes = b""

    def header(self, name: str) -> str | None:
        return header(self.headers, name)


def header(headers: dict[str, str], name: str) -> str | None:
    wanted = name.lower()
    return next((value for key, value in headers.items() if key.lower() == wanted), None)


class App(Protocol):
    """A peer as an app, like WSGI's: one HTTP request in, one HTTP response out."""

    def __call__(self, request: HttpRequest) -> HttpResponse: ...


class Transport(Protocol):
    """What the support agent needs from a transport, and all a printer wraps."""

    label: str  # one phrase for the [transport] banner

    def get(self, url: str, headers: dict[str, str]) -> HttpResponse: ...

    def post(self, url: str, body: bytes, headers: dict[str, str]) -> HttpResponse: ...


def is_http_url(value: object) -> bool:
    """The one URL check: an absolute http(s) URL with a host and, if any, a valid port.
    Every URL that comes from a file, a flag or a peer's card passes here first."""
    if not isinstance(value, str) or not value.isprintable() or " " in value:
        return False
    parts = urlsplit(value)
    try:
        parts.port  # raises ValueError for a port that is not a number in range
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def origin_of(url: str) -> str:
    """'https://billing.acme.example/a2a' -> 'https://billing.acme.example' (lower case)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()
