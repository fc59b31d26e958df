"""The transport interface: move one frame, as bytes, to a URL and bring one back.

A transport is deliberately tiny (two methods), like a WSGI server: `get` fetches a
document such as an Agent Card, `post` carries one JSON-RPC frame. Both return an
`HttpResponse` even in-process, so a peer app answers with the same statuses (401,
404, 413 ...) whichever transport carries it. A peer is an app: `app(HttpRequest) ->
HttpResponse`. Essay: Delegation over JSON-RPC. Not here: envelopes (see `jsonrpc`),
A2A objects (see `peers/`), printing (see `printer`).
"""
from __future__ import annotations

from typing import Callable, NamedTuple, Protocol

from transports.jsonrpc import RemoteError


class HttpRequest(NamedTuple):
    method: str  # "GET" or "POST"
    url: str
    headers: dict[str, str]
    body: bytes = b""

    def header(self, name: str) -> str | None:
        """Header lookup ignoring case, as HTTP does."""
        return _lookup(self.headers, name)


class HttpResponse(NamedTuple):
    status: int
    headers: dict[str, str]
    body: bytes = b""

    def header(self, name: str) -> str | None:
        return _lookup(self.headers, name)


def _lookup(headers: dict[str, str], name: str) -> str | None:
    if name in headers:  # the usual spelling: no scan needed
        return headers[name]
    wanted = name.lower()
    return next((v for k, v in headers.items() if k.lower() == wanted), None)


PeerApp = Callable[[HttpRequest], HttpResponse]


class Transport(Protocol):
    """What the support agent needs from a transport, and all a printer wraps."""

    label: str  # one phrase for the [transport] banner

    def get(self, url: str, headers: dict[str, str]) -> HttpResponse: ...

    def post(self, url: str, body: bytes, headers: dict[str, str]) -> HttpResponse: ...


class StopRun(Exception):
    """The learner asked to stop before the next frame left (q at a --step prompt)."""


class HttpRefusal(Exception):
    """The peer answered at the HTTP level instead of with a JSON-RPC response (401, 413 ...):
    an exchange happened, but not the protocol's."""

    def __init__(self, status: int, challenge: str | None = None) -> None:
        super().__init__(f"HTTP {status}" + (f" ({challenge})" if challenge else ""))
        self.status = status


class TransportError(Exception):
    """No exchange happened: nothing listens at the URL, the connection failed or timed out.

    `sent` says whether the request may have reached the peer, which decides whether a
    retry is safe (a delegation that may have landed must not be blindly repeated).
    """

    def __init__(self, reason: str, *, sent: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.sent = sent


def retry_advice(exc: Exception) -> str:
    """Seed 004: a failure must say whether retrying is safe, or the only recovery is hope."""
    if isinstance(exc, TransportError) and not exc.sent:
        return "nothing was sent, so a retry is safe"
    if isinstance(exc, HttpRefusal) and exc.status in (401, 403):
        return "the peer refused our credentials and did nothing; retry once they are fixed"
    if isinstance(exc, HttpRefusal) and exc.status < 500 or isinstance(exc, RemoteError) \
            and exc.code in (-32700, -32600, -32601, -32602):
        return "the peer refused the request before acting; the same request will fail again"
    return "the request reached the peer and may have been acted on: retry is NOT safe " \
           "until the peer confirms what happened"
