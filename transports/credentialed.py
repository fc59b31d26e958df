"""A transport that adds a credential to each request it sends, and sends once more after a 401 when that can help.

RFC 9110 section 11 (HTTP authentication): a credential travels in the request's headers,
and a 401 says it was missing or refused before anything was done, so the same request
may go again with a fresh one. Essay: "the token travels in the HTTP Authorization
header, never inside the JSON-RPC payload". Like the printer, it wraps a transport and
is one, and it sits above the printer, so every header it adds is shown as it left
(masked). Which credential goes with which request is not decided here: `credential(url)`,
a hook, gives the headers (none: nothing is added); after a 401, `renew(url)` says whether
a fresh credential can be had (a kept OAuth2 token forgotten, say), and only then is the
request sent again, once (a second 401 stands). Nothing here knows A2A: the support
agent's keyring (peers/support/calling/keyring.py) is what the hooks ask.
"""

from __future__ import annotations

from transports.base import ClientRequest, HttpResponse, Transport

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Callable


class Credentialed:
    """`inner` (the printer), with `credential(url)`'s headers added to each request: a Transport."""

    def __init__(self, inner: Transport, credential: Callable[[str], dict[str, str]],
                 renew: Callable[[str], bool] = lambda url: False) -> None:
        self.inner, self.credential, self.renew, self.label = inner, credential, renew, inner.label
        self.attached = False  # whether the last request carried a credential (a 401 says which)

    def send(self, request: ClientRequest, *, stream: bool = False, again: bool = False) -> HttpResponse:
        """`request` with our credential; once more after a 401, if `renew` had a fresh one."""
        sent = request._replace(headers={**request.headers, **self.credential(request.url)})
        response = self.inner.send(sent, stream=stream)
        self.attached = sent.headers != request.headers  # a credential went with it (a 401 says which)
        if response.status == 401 and self.attached and not again and self.renew(request.url):
            return self.send(request, stream=stream, again=True)  # once: a second 401 stands
        return response

    def get(self, url: str, headers: dict[str, str], *, binding: str | None = None) -> HttpResponse:
        return self.send(ClientRequest("GET", url, headers, b"", binding))

    def post(self, url: str, body: bytes, headers: dict[str, str], *, binding: str | None = None) -> HttpResponse:
        return self.send(ClientRequest("POST", url, headers, body, binding))

    def stream(self, url: str, body: bytes, headers: dict[str, str], *,
               binding: str | None = None) -> HttpResponse:
        return self.send(ClientRequest("POST", url, headers, body, binding), stream=True)
