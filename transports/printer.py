"""FramePrinter: wraps any transport, prints every frame that crosses it, and keeps them.

Essay: the `-->` / `<--` lines of Delegation over JSON-RPC, and the card in The Agent Card. The only code that
prints frames: the bytes that crossed, never a re-encoding, what a peer controls escaped (no card moves the cursor
or recolours the terminal), credentials masked (masking.py) before a frame is printed or recorded. Modelled on the
MCP SDK's recording transport: it implements the calls of the transport it wraps, and `send`, which takes a request
as a value. A stream is shown and kept to MAX_STREAM_KEPT bytes; the rest of a longer one (a proxy's reads on)
passes unshown.

Hooks, as http.server's: `before_send(frame)` runs after a request is shown and before it leaves (--step and --break
pause there; it may raise `StopRun`), `listeners` are told of every frame as it is recorded (--trace),
`summarize(frame, text)` may give a fetched card one line (--frames summary), `by_path(binding, headers)` says whether
a request names its operation by its path; `show(text, frame)` prints (None: records silently). `beneath(transport)`
changes what lies below, for a block (a caller's own certificate, a proxy on the path); every frame is still shown,
recorded and told. A frame to or from a URL in `unshown` is recorded and told, not shown (a lesson says in a line what
repeats). A JSON-RPC frame names its operation inside it: shown as the bytes alone, as the essay quotes it. An
HTTP+JSON request names it by its verb and path: shown first, and its answer's status (`--> POST /message:send {...}`,
`<-- 200 {...}`); told apart by the media type the request speaks (`named_by_path`) unless `by_path` knows better (a
proxy knows a body's binding). Each frame keeps the `binding` its sender named, a reply its request's, for the trace
and the diagram. A request a peer makes to us (a push to our webhook) crosses no transport we call: whoever received it
hands it to `received`, which shows and records it (`sender`: to whom we gave that URL).
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from itertools import count

from transports import sse
from transports.base import Body, ClientRequest, HttpResponse, Transport, hang_up, header, parse_url, send
from transports.codec import is_json
from transports.escaping import escape
from transports.masking import FORM, hold, is_secret_header, mask, mask_body, mask_held, masked  # noqa: F401
from transports.records import Record

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Callable, Iterator

MAX_SHOWN = 8192  # characters of one frame shown; the record keeps every byte
MAX_STREAM_KEPT = 1 << 20  # of a stream that runs on past our own 1 MiB (a proxy's), this is shown and kept
# What a printer keeps of the frames it recorded (a trace keeps its own: `listeners`): past either bound the older
# half goes, so a long run's memory stays flat (a peer answering each poll with a MiB, a proxy serving for days).
MOST_FRAMES_KEPT, MOST_BYTES_KEPT = 2000, 64 << 20


class StopRun(Exception):
    """The learner asked to stop before the next frame left (q at a --step prompt), or, saying so, elsewhere."""


class Frame(Record):
    """One direction of one exchange, as it crossed the transport (credentials masked)."""

    seq: int
    direction: str  # "-->" (we sent it) or "<--" (the peer sent it)
    http_method: str  # "GET" or "POST"
    url: str
    headers: dict[str, str]
    body: bytes
    status: int | None = None  # for "<--": the HTTP status
    offset_ms: float = 0.0  # when it crossed, since the printer was made
    elapsed_ms: float | None = None  # for "<--": how long the peer took to answer
    sender: str | None = None  # for a request made to us (a push): the URL of the peer we gave ours to
    binding: str | None = None  # what its sender said spelled it (Transport's `binding`); a reply, its request's


class FramePrinter:
    def __init__(self, inner: Transport, show: Callable[[str, Frame], None] | None = None, *,
                 verbose: bool = False, held: tuple[str, ...] = (), numbered_with: FramePrinter | None = None) -> None:
        self.inner, self.label, self.unshown = inner, inner.label, set()  # unshown: URLs whose frames are not shown
        self.held = list(held)  # our secrets, masked wherever shown; shared, and grown by what we send (`hold`)
        self.show, self.verbose = show, verbose  # show None: records, prints nothing; --verbose: status, headers, timing
        self.frames: list[Frame] = []  # the newest recorded, within `most_kept` (frames, bytes of their bodies)
        self.most_kept, self.recorded, self._bytes_kept = (MOST_FRAMES_KEPT, MOST_BYTES_KEPT), 0, 0
        self._numbers = numbered_with._numbers if numbered_with else count(1)  # unique across threads, and printers
        self.listeners: list[Callable[[Frame], None]] = []  # hook: told of every frame
        self.before_send: Callable[[Frame], None] = lambda frame: None  # hook: may StopRun
        self.summarize: Callable[[Frame, str], str | None] = lambda frame, text: None  # hook: a card's line
        self.by_path: Callable[[str | None, dict[str, str]], bool] = lambda binding, headers: named_by_path(headers)
        self._start = time.perf_counter()

    def get(self, url: str, headers: dict[str, str], *, binding: str | None = None) -> HttpResponse:
        sent = self._record("-->", "GET", url, headers, b"", binding=binding)
        rest = self.by_path(binding, headers)
        self._show(f"--> GET {_target(url, self.held) if rest else mask_body(url, self.held)}", sent)
        self.before_send(sent)
        response = self.inner.get(url, headers, binding=binding)
        got = self._record("<--", "GET", url, response.headers, response.body, response.status, sent)
        if rest:  # an operation's answer, with its status: one line, as a POST's
            self._show(f"<-- {response.status} {_text(response.body, held=self.held)}".rstrip(), got)
        elif response.status != 200:
            self._show(f"<-- HTTP {response.status} {_text(response.body, held=self.held)}", got)
        else:  # a card, as served: line by line if JSON (none of its lines can begin as one of ours), else one line
            self._show(self._summary(got) or _text(response.body, keep_newlines=is_json(response.body), held=self.held), got)
        return response

    def post(self, url: str, body: bytes, headers: dict[str, str], *, binding: str | None = None) -> HttpResponse:
        return self.send(ClientRequest("POST", url, headers, body, binding))

    def stream(self, url: str, body: bytes, headers: dict[str, str], *, binding: str | None = None) -> HttpResponse:
        """`post`, for a reply that may come as a stream: each event shown on a line as it arrives, the whole
        stream recorded as one frame when it ends."""
        return self.send(ClientRequest("POST", url, headers, body, binding), stream=True)

    def send(self, request: ClientRequest, *, stream: bool = False) -> HttpResponse:
        """One request, shown and recorded as it leaves, and its answer as it comes back."""
        if request.method == "HEAD" or request.method == "GET" and not stream:
            fetch = self.head if request.method == "HEAD" else self.get  # a proxy's HEAD; a card, an HTTP+JSON GET
            return fetch(request.url, request.headers, binding=request.binding)
        sent = self._record("-->", request.method, request.url, request.headers, request.body, binding=request.binding)
        self._show(self._request_line(request), sent)
        self.before_send(sent)
        response = send(self.inner, request, stream=stream)
        url, rest = request.url, self.by_path(request.binding, request.headers)
        if response.status == 200 and sse.is_stream(response.header("Content-Type")):
            if not isinstance(response.body, bytes):
                return response._replace(body=self._events(url, response, sent, rest))
            for _ in self._events(url, response._replace(body=[response.body]), sent, rest):
                pass  # a stream read whole (post): each event shown at once
            return response
        got = self._record("<--", request.method, url, response.headers, response.body, response.status, sent)
        status = f"{response.status} " if rest else "" if response.status == 200 else f"HTTP {response.status} "
        self._show(f"<-- {status}{_text(response.body, held=self.held)}".rstrip(), got)
        return response

    def head(self, url: str, headers: dict[str, str], *, binding: str | None = None) -> HttpResponse:
        """GET's status and headers alone, from a transport that has `head` (the network's)."""
        sent = self._record("-->", "HEAD", url, headers, b"", binding=binding)
        self._show(f"--> HEAD {_target(url, self.held)}", sent)
        self.before_send(sent)
        response = self.inner.head(url, headers, binding=binding)  # type: ignore[attr-defined]
        self._show(f"<-- {response.status} (headers only)", self._record(
            "<--", "HEAD", url, response.headers, response.body, response.status, sent))
        return response

    def _request_line(self, request: ClientRequest) -> str:
        """A request as shown: a JSON-RPC frame, its bytes alone; an HTTP+JSON one, its verb and path first."""
        by_path = self.by_path(request.binding, request.headers) or request.method != "POST"
        named = f"{request.method} {_target(request.url, self.held)} " if by_path else ""
        return f"--> {named}{_text(request.body, held=self.held)}".rstrip()  # a GET's, a DELETE's: no body

    def _events(self, url: str, response: HttpResponse, sent: Frame, rest: bool = False) -> Body:
        # What the lines are shown with until the stream ends and its whole frame is recorded, under the number taken
        now = (time.perf_counter() - self._start) * 1000  # now: a frame recorded meanwhile (a push) takes another
        head = Frame(next(self._numbers), "<--", sent.http_method, url, mask_held(mask(response.headers), self.held), b"", 200,
                     now, now - sent.offset_ms, binding=sent.binding)
        self._show(f"<-- {'200 ' if rest else ''}a stream of events, each shown as it arrives, numbered [1], [2] ... by the "
                   "workbench (the numbers are not part of the protocol)", head)
        decoder, received, numbers = sse.Decoder(), bytearray(), count(1)

        def arriving() -> Iterator[bytes]:
            seen = 0  # bytes so far: the first MAX_STREAM_KEPT are shown and kept, the rest passed on
            for chunk in response.body:
                if seen < MAX_STREAM_KEPT:
                    kept = chunk[:MAX_STREAM_KEPT - seen]
                    received.extend(kept)
                    for event in decoder.feed(kept):
                        self._show(f"<-- [{next(numbers)}] {_text(event, held=self.held)}", head)
                if seen <= MAX_STREAM_KEPT < seen + len(chunk):  # the chunk past it: one beginning there too
                    self._show(f"<-- the stream is over {MAX_STREAM_KEPT} bytes: its first events are "
                               "shown and kept, the rest passed on as they arrive, not shown", head)
                seen += len(chunk)
                yield chunk
            for event in decoder.end() if seen <= MAX_STREAM_KEPT else ():
                self._show(f"<-- [{next(numbers)}] {_text(event, held=self.held)}", head)

        def recorded(completed: bool) -> None:  # ended, broken off, or hung up on: what arrived
            hang_up(response.body)
            self._record("<--", sent.http_method, url, response.headers, bytes(received), 200, sent, seq=head.seq)
        return Body(arriving(), recorded)

    @contextmanager
    def beneath(self, transport: Transport) -> Iterator[Transport]:
        """For the block, frames cross `transport` instead of what lies below; then that again."""
        below, self.inner = self.inner, transport
        try:
            yield below
        finally:
            self.inner = below

    def received(self, url: str, headers: dict[str, str], body: bytes, sender: str) -> None:
        """A request `sender` made to us at `url` (a push to our webhook, answered 200), shown and recorded."""
        got = self._record("<--", "POST", url, headers, body, 200, sender=sender)
        self._show(f"<-- (pushed to our webhook) {_text(body, held=self.held)}", got)

    def since(self, recorded: int) -> tuple[Frame, ...]:
        """The frames recorded after the first `recorded` (a caller's mark, `recorded` then), as kept still."""
        return tuple(frame for frame in self.frames if frame.seq > recorded)

    def sent_to(self, origin: str) -> list[Frame]:
        """The frames we sent to one peer (tests count them: a refused peer gets none)."""
        wanted = parse_url(origin)
        return [f for f in self.frames if f.direction == "-->" and wanted is not None
                and parse_url(f.url) is not None and parse_url(f.url).origin == wanted.origin]

    def _record(self, direction: str, http_method: str, url: str, headers: dict[str, str],
                body: bytes, status: int | None = None, sent: Frame | None = None, *,
                sender: str | None = None, binding: str | None = None, seq: int | None = None) -> Frame:
        offset = (time.perf_counter() - self._start) * 1000
        elapsed = None if sent is None else offset - sent.offset_ms
        if direction == "-->":  # a credential we send (an OAuth token fetched now): masked wherever said back
            hold(self.held, headers)
        self.recorded = max(self.recorded, seq := next(self._numbers) if seq is None else seq)  # a stream's: its start's
        frame = Frame(seq, direction, http_method, url, mask_held(mask(headers), self.held), body,
                      status, offset, elapsed, sender, binding if sent is None else sent.binding)
        self.frames.append(frame)
        self._bytes_kept += len(body)
        if len(self.frames) > self.most_kept[0] or self._bytes_kept > self.most_kept[1]:
            del self.frames[:max(1, len(self.frames) // 2)]  # recounted: threads recording at once skew it briefly
            self._bytes_kept = sum(len(kept.body) for kept in self.frames)
        for listener in self.listeners:
            listener(frame)
        return frame

    def _summary(self, got: Frame) -> str | None:
        """A fetched document's own line (the `summarize` hook's, of its masked text), escaped; None: shown whole."""
        text = mask_body(got.body.decode("utf-8", "backslashreplace"), self.held)
        summary = self.show and self.summarize(got, text)
        return f"<-- {got.status} {escape(summary, keep_newlines=True)}" if summary else None

    def _show(self, text: str, frame: Frame) -> None:
        if self.show is not None and frame.url not in self.unshown:
            self.show(text, frame)
            if self.verbose:
                self.show(mask_body(_details(frame), self.held), frame)


def named_by_path(headers: dict[str, str]) -> bool:
    """Whether a request names its operation by its verb and path (a REST API's way) rather than in its body
    (JSON-RPC's) or is a document fetched (a card): told by the media type it speaks, an API's own JSON (RFC
    6839's "+json", A2A's application/a2a+json) or a form (an OAuth2 token request), where JSON-RPC and a
    fetched document speak plain application/json."""
    spoken = (header(headers, "Content-Type") or header(headers, "Accept") or "").split(";")[0].strip().lower()
    return spoken.endswith("+json") or spoken == FORM  # a form: an OAuth2 token request, to its path


def _target(url: str, held: tuple[str, ...] = ()) -> str:
    """What a request line names: the URL's path and query, any secret we hold masked (a peer may echo one)."""
    parsed = parse_url(url)
    return escape(mask_body(parsed.target if parsed is not None else url, held))


def _text(body: bytes, *, keep_newlines: bool = False, held: tuple[str, ...] = ()) -> str:
    text = mask_body(body.decode("utf-8", errors="backslashreplace").rstrip("\n"), held)
    if len(text) > MAX_SHOWN:
        text = f"{text[:MAX_SHOWN]} ... ({len(text) - MAX_SHOWN} more characters not shown)"
    return escape(text, keep_newlines=keep_newlines)


def _details(frame: Frame) -> str:
    """--verbose: one indented line of what HTTP said about a frame (secrets masked)."""
    if frame.sender is not None:  # a request made to us: no time of ours to measure it by
        head = f"{frame.http_method} {frame.url}, from {frame.sender}"
    elif frame.direction == "<--":
        head = f"HTTP {frame.status}, {frame.elapsed_ms:.1f} ms"
    else:
        head = f"{frame.http_method} {frame.url}"
    headers = "; ".join(f"{k}: {v}" for k, v in frame.headers.items())
    return escape(f"    [{frame.direction} {head}] {headers}")
