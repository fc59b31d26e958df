"""--trace FILE.jsonl and --replay FILE.jsonl: a run kept as one JSON line per record.

A Recorder listens to the Console and to the frame printer, so it keeps, in order: every
printed line (`"kind": "line"`, with what kind of line it is), every frame (`"kind":
"frame"`: sequence, time offset, direction, peer, transport, wire format, method,
JSON-RPC id, HTTP status and headers with secrets masked, the body as sent (with the
values of its `token` and `credentials` fields masked too),
elapsed milliseconds, and the origin it crossed to or came from), and the story's events:
`"kind": "registry"`, and, each just before the line that says it, `"trust"` (its verdict
and reason), `"failure"` (its error), `"model"`, and a stream's `"broken"` and `"resumed"`. A push
to our webhook is a frame of its own, from the peer we gave the webhook to, its method
PUSH, since no JSON-RPC method names it.
`load` reads a saved run back, for --replay (tools.py), which prints the lines again, so
it reads exactly as it did live, with no peers. The diagram is drawn from the same records
(diagram.py); this module draws nothing.
"""
from __future__ import annotations

import json
import sys
import threading
from collections import deque

from peers.a2a import wire_format
from peers.a2a.bindings import HTTP_JSON
from peers.support.output import Kind
from transports.base import parse_url
from transports.codec import LIMITS, loads_strict
from transports.named_files import open_to_write, read_named
from transports.printer import Frame, mask_body

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable

MAX_TRACE_CHARS = 64 << 20  # a run's trace is a few KiB; this is generous, not endless
RECORD_LIMITS = LIMITS._replace(max_bytes=8 << 20)  # one record: a frame of 1 MiB escaped, and its headers
MAX_RECORDS = 100_000  # a run's trace holds dozens; a proxy's keeps its newest 10,000: more is no trace of ours
# JSON-RPC method -> the wire format it belongs to (the names never collide).
WIRE_OF = {method: name for name in wire_format.NAMES for method in wire_format.by_name(name).METHODS}
# MCP's methods (--scenario mcp: our own tool, reached down, not across) are no A2A wire's: named as MCP.
WIRE_OF.update(dict.fromkeys(("initialize", "notifications/initialized", "tools/list", "tools/call"), "MCP"))
# Every kind of record a Recorder writes: the Console's lines and events, and the frames.
KINDS = ("line", "frame", "registry", "trust", "failure", "model", "broken", "resumed", "task")
PUSH = "push to our webhook"  # a frame's method, where a peer POSTed a task's change to us
# URLs whose last request is remembered, the newest: an answer comes just after its request, a push names the peer we
# last asked, and a proxy's clients may name a new URL (a query of their own) with every request, for days. Bounded in
# bytes too, URLs and what they were asked: a thousand 8 KiB URLs were 8 MiB, past the 4 MiB a session keeps of its
# records (web/keeping.py); a quarter of that holds a hundred of the longest URLs a proxy takes (8 KiB), more than its
# 64 workers ask at once (server.py), though one request whose body names a method or an id of a MiB holds it alone
MOST_ASKED, MOST_ASKED_BYTES = 1000, 1 << 20


class Recorder:
    def __init__(self, transport: str, held: tuple[str, ...] = ()) -> None:
        self.transport, self.held = transport, held  # held: our secrets, masked in every body recorded
        self.records: list[dict[str, Any]] = []
        self.added = 0  # records numbered as added: a keeper of the newest alone (web/keeping.py) may drop the first
        self.names: dict[str, str] = {}  # origin -> the name on the card served there
        self._asked: dict[str, tuple[Any, ...]] = {}  # url -> (method, id, binding) of the last request, newest last
        self._asked_bytes = 0  # of those URLs and what they were asked (_size)
        self._asking = threading.Lock()  # a proxy's workers record at once

    def line(self, text: str, kind: Kind, facts: dict[str, Any]) -> None:
        """A Console listener. A line whose facts name an `event` records that event too."""
        if "event" in facts:
            record = {"kind": facts["event"], **{k: v for k, v in facts.items() if k != "event"}}
            url = parse_url(record.get("peer"))
            if url is not None:  # a peer known only by its card URL: its lane is its origin
                record["peer"] = record["origin"] = url.origin
            self._add(record)
        self._add({"kind": "line", "line": kind.label, "text": text})

    def event(self, kind: str, **data: Any) -> None:
        """A record of `kind`; its text, and the text in its lists (the registry's card URLs, whose
        query may carry an API key), with our secrets masked, as every frame's are."""
        def masked(value: Any) -> Any:
            if isinstance(value, str):
                return mask_body(value, self.held)
            return [masked(each) for each in value] if isinstance(value, list) else value
        self._add({"kind": kind, **{name: masked(value) for name, value in data.items()}})

    def frame(self, frame: Frame) -> None:
        body = mask_body(frame.body.decode("utf-8", errors="backslashreplace"), self.held)
        binding = frame.binding  # as its sender named it (cards.py, http_json.py); None: a card, a token, a push
        parsed = _json(frame.body)
        origin = parse_url(frame.sender or frame.url).origin  # every URL that crossed a transport parses
        if frame.sender is not None:  # a push: in the wire of what we last sent that peer
            method, rpc_id = PUSH, None
            wire = _wire(self._asked.get(frame.sender, (None, None))[0])
        elif frame.direction == "-->" and binding == HTTP_JSON.name:  # its request line names the method
            from peers.support.calling.http_json import method_of  # loaded only for a run that spoke it
            method, rpc_id = method_of(frame.http_method, parse_url(frame.url).path), None
            self._asks(frame.url, (method, rpc_id, binding))
        elif frame.http_method == "GET" and frame.url not in self._asked:
            method, rpc_id = "GET agent card", None
            name = parsed.get("name") if isinstance(parsed, dict) else None
            if frame.direction == "<--" and isinstance(name, str):
                self.names[origin] = name
        elif frame.direction == "-->":
            method = parsed.get("method") if isinstance(parsed, dict) else None
            rpc_id = parsed.get("id") if isinstance(parsed, dict) else None
            self._asks(frame.url, (method, rpc_id, None))
        else:
            method, rpc_id, _ = self._asked.get(frame.url, (None, None, None))
        self._add({"kind": "frame", "t_ms": round(frame.offset_ms, 3), "direction": frame.direction,
                   "peer": origin,  # named after the card served there, in resolved()
                   "origin": origin,  # its lane: a look-alike host serving billing's card is not billing
                   "transport": self.transport, "wire": wire if method == PUSH else _wire(method), "method": method,
                   "jsonrpc_id": rpc_id, "http_method": frame.http_method, "url": mask_body(frame.url, self.held),
                   "http_status": frame.status, "headers": frame.headers, "body": body,
                   "elapsed_ms": None if frame.elapsed_ms is None else round(frame.elapsed_ms, 3),
                   **({"binding": binding} if binding else {})})

    def _asks(self, url: str, asked: tuple[Any, ...]) -> None:
        """What `url` was last asked, remembered as the newest; past MOST_ASKED URLs, or MOST_ASKED_BYTES of them and
        what they were asked, the oldest forgotten (the newest kept: a request is at most a frame). Of what a body
        names, a string or a number alone is kept (a method's name, an id): a list or an object is neither, and was
        kept whole, however large a client made it."""
        asked = tuple(value if value is None or isinstance(value, (str, int, float)) else None for value in asked)
        with self._asking:
            if url in self._asked:
                self._asked_bytes -= _size(url, self._asked.pop(url))
            self._asked[url], self._asked_bytes = asked, self._asked_bytes + _size(url, asked)
            while len(self._asked) > 1 and (len(self._asked) > MOST_ASKED or self._asked_bytes > MOST_ASKED_BYTES):
                oldest = next(iter(self._asked))
                self._asked_bytes -= _size(oldest, self._asked.pop(oldest))

    def resolved(self) -> list[dict[str, Any]]:
        """The records, each frame's peer given the name on its card once that was seen
        (a card fetch happens before the name is known)."""
        return [{**r, "peer": self._name_of(r["peer"])} if r["kind"] in ("frame", "failure") else r
                for r in self.records]

    def _name_of(self, peer: str) -> str:
        url = parse_url(peer)
        return peer if url is None else self.names.get(url.origin, url.host)

    def write(self, path: str) -> None:
        write(path, self.resolved())

    def _add(self, record: dict[str, Any]) -> None:
        self.added += 1
        self.records.append({"seq": self.added, **record})


def write(path: str, records: list[dict[str, Any]]) -> None:
    with open_to_write(path) as out:
        for record in records:
            out.write(json.dumps(record) + "\n")


def load(path: str) -> list[dict[str, Any]]:
    """A saved trace; ValueError with file and line for anything else."""
    try:
        data = read_named(path, 4 * MAX_TRACE_CHARS)  # UTF-8: at most 4 bytes a character
    except OSError as exc:
        raise ValueError(f"{path}: cannot read it ({exc.strerror or exc.__class__.__name__})") from None
    too_large = f"{path}: larger than {MAX_TRACE_CHARS:,} characters; not a trace of one run"
    if len(data) > 4 * MAX_TRACE_CHARS:
        raise ValueError(too_large)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{path}: cannot read it (not UTF-8)") from None
    if len(text) > MAX_TRACE_CHARS:
        raise ValueError(too_large)
    if text.count("\n") > MAX_RECORDS:  # before any is split off and kept: millions of small ones took gigabytes
        raise ValueError(f"{path}: more than {MAX_RECORDS:,} records; not a trace this workbench writes")
    # Lines end at "\n" alone (U+2028 and kin are JSON text, not line ends); a byte-order mark
    # and blank lines, as an editor may leave them, are no records.
    lines = [(number, line) for number, line in enumerate(text.removeprefix("\ufeff").split("\n"), 1)
             if line.strip()]
    if not lines:
        raise ValueError(f"{path}: empty; a trace has one JSON record per line")
    records = []
    for number, line in lines:
        try:  # a record holds one frame's body, up to its 1 MiB, JSON-escaped: up to 6 characters a byte
            record = loads_strict(line.encode(), RECORD_LIMITS)
        except ValueError as exc:
            raise ValueError(f"{path}:{number}: not a trace record ({str(exc)[:80]})") from None
        if not isinstance(record, dict) or not isinstance(record.get("kind"), str):
            raise ValueError(f"{path}:{number}: not a trace record (an object with a \"kind\")")
        records.append(record)
    if not any(record["kind"] in KINDS for record in records):  # nothing to print or draw: say so, not silence
        raise ValueError(f"{path}: no record of a kind a trace has ({', '.join(KINDS)}); not a trace of this "
                         f"workbench")
    return records


def _size(url: str, asked: tuple[Any, ...]) -> int:
    """The bytes a URL remembered and what it was asked take (scalars, each sized by its own kind)."""
    return sys.getsizeof(url) + sum(sys.getsizeof(value) for value in asked)


def _wire(method: Any) -> str | None:
    if method == "GET agent card":
        return "card"
    return WIRE_OF.get(method) if isinstance(method, str) else None


def _json(data: bytes) -> Any:
    try:
        return loads_strict(data)
    except ValueError:
        return None


# What a record holds that its sender chose the length of, counted with its headers: a frame's method (and id) is its
# request's, named again in its answer's record, uncounted a client's 3,000-character method tripled the file
COUNTED = ("body", "text", "url", "method", "jsonrpc_id")


class Window:
    """A listener after a Recorder's, keeping its records to the newest `most` and `most_bytes` (of
    bodies, lines, URLs, headers and the methods they name: COUNTED; the registry record first stays),
    and `tell`ing so, in the words of `keeper` (who keeps them), when older ones first go and every
    tenth of `most` after that: a long session's trace is of its newest part, its memory bounded (a
    proxy's, the page's).
    A proxy's workers record at once: one call at a time counts and drops records."""

    def __init__(self, records: list[dict[str, Any]], tell: Callable[[dict[str, Any]], None],
                 most: int, most_bytes: int, keeper: str = "its trace and diagram keep") -> None:
        self.records, self.tell, self.most, self.most_bytes, self.keeper = records, tell, most, most_bytes, keeper
        self.sizes: deque[int] = deque()  # of each record kept but the pinned first, in order
        self.size = self.dropped = self.said = 0  # said: how many had gone when the page was last told
        self._one_at_a_time = threading.Lock()

    def __call__(self, *heard: Any) -> None:
        with self._one_at_a_time:
            told = self._keep()
        if told is not None:  # told once the count is done: the telling may be recorded, and counted, too
            self.tell(told)

    def _keep(self) -> dict[str, Any] | None:
        pinned = 1 if self.records and self.records[0].get("kind") == "registry" else 0
        for record in self.records[pinned + len(self.sizes):]:  # the records added since the last call
            size = sum(len(record[key]) for key in COUNTED if isinstance(record.get(key), str)) + 64 + sum(
                len(name) + len(value) for name, value in (record.get("headers") or {}).items())
            self.sizes.append(size)
            self.size += size
        gone = 0
        while len(self.sizes) > 1 and (len(self.sizes) > self.most or self.size > self.most_bytes):
            self.size -= self.sizes.popleft()
            gone += 1
        if gone:
            del self.records[pinned:pinned + gone]
            self.dropped += gone
        if self.dropped and (not self.said or self.dropped - self.said >= max(1, self.most // 10)):
            self.said = self.dropped
            return {"type": "dropped", "what": "records", "text": (
                f"{self.keeper} the newest {self.most:,} records ({self.most_bytes >> 20} MiB of "
                f"bodies, lines, URLs and headers): {self.dropped:,} older frames and lines were dropped")}
        return None
