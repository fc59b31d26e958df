"""The transport interface: move one frame, as bytes, to a URL and bring one back.

A transport is deliberately tiny, like a WSGI server: `get` fetches a document such as
an Agent Card, `post` carries one JSON-RPC frame, and `stream` is `post` for a reply that
comes in parts (Server-Sent Events), handed over as it arrives. Each returns an
`HttpResponse` even in-process, so a peer app answers with the same statuses (401,
404, 413 ...) whichever transport carries it. A peer is an app: `app(HttpRequest) ->
HttpResponse`. A transport that cannot complete an exchange raises
`transports.errors.TransportError`. Essay: Delegation over JSON-RPC. Not here:
envelopes (see `jsonrpc`), A2A objects (see `peers/a2a/`), printing (see `printer`).
"""

from __future__ import annotations

import math
import re
import time
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache

from transports.records import Record

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable, Iterator, Protocol
else:  # an interface below is a documented class at run time, and typing's Protocol to a checker
    Protocol = object


class HttpRequest(Record):
    """What an app receives. Header names are case-insensitive in HTTP, so every transport
    hands the app lower-case names (`request(...)` below makes sure of it)."""

    method: str  # "GET" or "POST"
    url: str
    headers: dict[str, str]  # lower-case names
    body: bytes = b""
    client_certificate: str = ""  # over TLS: who the verified client certificate names (subject, fingerprint)
    client_address: str = ""  # the IP address the request came from (a server's; "" in process): guesses are counted by it

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())


def request(method: str, url: str, headers: dict[str, str], body: bytes = b"") -> HttpRequest:
    """An HttpRequest, header names lower-cased; a repeated name keeps its first value."""
    lowered: dict[str, str] = {}
    for name, value in headers.items():
        lowered.setdefault(name.lower(), value)
    return HttpRequest(method, url, lowered, body)


class ClientRequest(Record):
    """A request as a client writes it, to hand to a transport's `send`: its headers as
    written (the transport lower-cases them for the app), and the `binding` its sender
    names (see Transport). A value, so a protocol binding can make one without sending it."""

    method: str  # "GET" or "POST"
    url: str
    headers: dict[str, str]
    body: bytes = b""
    binding: str | None = None


class HttpResponse(Record):
    status: int
    headers: dict[str, str]
    body: bytes = b""

    def header(self, name: str) -> str | None:
        return header(self.headers, name)


def header(headers: dict[str, str], name: str) -> str | None:
    wanted = name.lower()
    return next((value for key, value in headers.items() if key.lower() == wanted), None)


class Body:
    """A body read as it arrives: an iterator of its chunks whose `finish(completed)` runs
    exactly once, however reading stops: at the end (True); broken off by an error, or
    closed early (False), even closed or dropped before the first read, when a
    generator's own `finally` would never run. Closing it closes `chunks` first."""

    def __init__(self, chunks: Iterable[Any], finish: Callable[[bool], None]) -> None:
        self._finish: Callable[[bool], None] | None = finish
        self.chunks = iter(chunks)

    def __iter__(self) -> "Body":
        return self

    def __next__(self) -> Any:
        try:
            return next(self.chunks)
        except StopIteration:
            self.end(True)
            raise
        except BaseException:
            self.end(False)
            raise

    def close(self) -> None:
        self.end(False)

    def end(self, completed: bool) -> None:
        finish, self._finish = self._finish, None
        if finish is not None:
            try:
                hang_up(self.chunks)
            finally:
                finish(completed)

    __del__ = close


def hang_up(chunks: Any) -> None:
    """Hang up on a body read in chunks: close it if it can be (a generator's `finally`
    then runs now, not whenever it is collected)."""
    closing = getattr(chunks, "close", None)
    if closing is not None:
        closing()


class HangUp(Exception):
    """Raised by an app (or by its answer's body, mid-stream) to end the connection with no
    answer, or no more of one: the client sees the connection close. A proxy's fault, never
    a peer's way to refuse (a refusal is an answer)."""


class App(Protocol):
    """A peer as an app, like WSGI's: one HTTP request in, one HTTP response out. A server
    asks it a HEAD as a GET and sends the answer's head alone; an app with a true class
    attribute `answers_head` (a proxy, which forwards HEAD as HEAD) is asked the HEAD
    itself, and the Content-Length its answer names is said."""

    def __call__(self, request: HttpRequest) -> HttpResponse: ...


class Transport(Protocol):
    """What the support agent needs from a transport, and all a printer wraps. `binding`
    is a short name the sender gives for the protocol binding its request is spelled in;
    a byte transport ignores it, a wrapper passes it on, the printer records it on the
    frame so that no reader of frames has to guess it from their shape. None: a request
    no binding sends (a card fetched, a token asked for)."""

    label: str  # one phrase for the [transport] banner

    def get(self, url: str, headers: dict[str, str], *, binding: str | None = None) -> HttpResponse: ...

    def post(self, url: str, body: bytes, headers: dict[str, str], *, binding: str | None = None) -> HttpResponse: ...

    def stream(self, url: str, body: bytes, headers: dict[str, str], *,
               binding: str | None = None) -> HttpResponse:
        """`post`; but a 200 reply of Content-Type text/event-stream has as its `body` an
        iterator of the bytes as they arrive (closing it hangs up), not bytes."""


def send(transport: Transport, request: ClientRequest, *, stream: bool = False) -> HttpResponse:
    """`request` by whichever of the transport's calls it needs: `get`, `post`, or, when the
    answer may be a stream, `stream`. The printer has a `send` of its own and passes each
    request on to the transport below it through this."""
    if request.method not in ("GET", "POST") or (stream and request.method == "GET"):
        # Another verb (HTTP+JSON's DELETE), or a GET that may answer a stream (a subscription):
        # only a byte transport that speaks every verb has `exchange` (network.py's; a proxy's).
        return transport.exchange(request, stream=stream)  # type: ignore[attr-defined]
    if request.method == "GET":
        return transport.get(request.url, request.headers, binding=request.binding)
    sending = transport.stream if stream else transport.post
    return sending(request.url, request.body, request.headers, binding=request.binding)


_PATIENCE: ContextVar[float | None] = ContextVar("patience", default=None)  # time.monotonic(), or no caller's


@contextmanager
def patient_until(moment: float) -> Iterator[None]:
    """Every exchange begun in the block (by this thread) ends by `moment` (time.monotonic()),
    whatever its transport's timeout: a caller following a task within its patience asks
    each question within it too, not with a whole timeout of its own. Within another, the sooner."""
    outer = _PATIENCE.get()
    kept = _PATIENCE.set(moment if outer is None else min(outer, moment))
    try:
        yield
    finally:
        _PATIENCE.reset(kept)


def seconds_for(timeout: float | None) -> float | None:
    """The seconds an exchange begun now may take: the transport's `timeout` (None: no limit),
    cut to what is left of its caller's patience (`patient_until`), if any."""
    moment = _PATIENCE.get()
    left = None if moment is None else max(math.ceil((moment - time.monotonic()) * 100) / 100, 0.0)  # in hundredths
    return timeout if left is None else left if timeout is None else min(timeout, left)


class Url(Record):
    """An absolute http(s) URL, split: the only kind of URL the workbench accepts."""

    scheme: str  # "http" or "https", lower case
    host: str  # lower case; an IPv6 address keeps its brackets
    port: int  # as written, or the scheme's default (80, 443)
    target: str  # path and query, at least "/": what an HTTP request line asks for

    @property
    def path(self) -> str:
        return self.target.split("?", 1)[0]

    @property
    def origin(self) -> str:
        """'https://billing.acme.example/a2a' -> 'https://billing.acme.example'."""
        default = DEFAULT_PORTS[self.scheme]
        return f"{self.scheme}://{self.host}" + ("" if self.port == default else f":{self.port}")

    @property
    def canonical(self) -> str:
        """The URL in one spelling: `HTTPS://Billing.example:443/` is `https://billing.example` (its path as sent)."""
        return self.origin + ("" if self.target == "/" else self.target)


# scheme :// host [: port] [target] [#fragment]; visible ASCII only, no user:password@.
# A host name is dot-separated labels of 1-63 letters, digits and inner hyphens (RFC 1123), and
# may end in the root's dot (`localhost.`, a fully qualified name: kept, as a browser keeps it).
_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_URL = re.compile(rf"(https?)://(\[[0-9a-f:.]+\]|{_LABEL}(?:\.{_LABEL})*\.?)(?::([0-9]{{1,5}}))?"
                  r"([/?][!-~]*)?", re.ASCII | re.IGNORECASE)
DEFAULT_PORTS = {"http": 80, "https": 443}


MOST_CACHED = 2048  # characters: a URL longer than any a peer serves from (a client's, a card's) is parsed each time,
# so what the cache holds stays within 256 of these, whatever strings a client sends to be checked


def parse_url(value: object) -> Url | None:
    """The one URL check: every URL from a file, a flag, a peer's card or a request passes
    here, and both transports route by what it returns. None for anything else."""
    if not isinstance(value, str):
        return None
    return _parsed(value) if len(value) <= MOST_CACHED else _parse(value)


def _parse(value: str) -> Url | None:
    match = _URL.fullmatch(value)
    if match is None:
        return None
    scheme, host, port, target = match.groups()
    number = int(port) if port else DEFAULT_PORTS[scheme.lower()]
    if not 0 < number < 65536 or len(host.rstrip(".")) > 253:
        return None
    return Url(scheme.lower(), host.lower(), number, (target or "/").split("#", 1)[0] or "/")


_parsed = lru_cache(maxsize=256)(_parse)  # a served app is asked the same few URLs on every request


def is_http_url(value: object) -> bool:
    return parse_url(value) is not None
