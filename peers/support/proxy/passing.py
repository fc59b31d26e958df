"""An answer on its way back to the client: a stream passed on as it arrives, and the faults that
change an answer (cut, drip, corrupt, reorder: faults.py; reorder.py swaps) acting on it.

A stream (Server-Sent Events) goes on chunk by chunk, never gathered first, and is judged by
annotate.py once it has ended, as the agent sent it. A fault that acts on its events reads it
event by event instead (each piece ends just after the line that ended an event, however an
agent spreads events, blank lines and CRLFs over chunks), so it can cut after, rewrite or swap
whole events. The printer has shown each frame as the agent sent it; the one [fault] line says
what the client got instead. Not here: which request a fault names (faults.py), forwarding.
"""
from __future__ import annotations

import json
import re
import time

from peers.support.proxy import annotate
from peers.support.proxy.faults import Fault
from peers.support.proxy.reorder import Reorder
from transports import sse
from transports.base import Body, HangUp, hang_up
from transports.codec import dumps_as_text, loads_strict
from transports.errors import TransportError
from transports.printer import MAX_STREAM_KEPT

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable, Iterator
    Piece = tuple[bytes, Any]  # raw bytes ending one event, and that event's data (None: bytes after the last)

_LINE = re.compile(rb"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")  # a line with its end, or a chunk's unfinished rest
PAST_KEPT = b"(the stream ran on past what is kept)"  # `events`, once a stream has: all it holds


def answer(body: bytes, number: int, acting: list[Fault], say: Callable[[str], None]) -> bytes | Body:
    """A whole (non-stream) answer as the client gets it, once any fault on it has acted."""
    for fault in acting:
        if fault.kind == "corrupt":
            body = _corrupted_body(body, fault, number, say)
        elif fault.kind == "reorder":
            say(f"[fault] {fault.spec}: the answer to request {number} is not a stream; forwarded unchanged")
        elif fault.kind == "drip":
            _said_drip(fault, number, len(body), say)
            return Body(_dripped([body], fault.value), lambda completed: None)
    return body


def stream(chunks: Any, number: int, binding: str | None, request_body: bytes, content_type: str,
           say: Callable[[str], None], cut: int | None, acting: list[Fault]) -> Iterator[bytes]:
    """A stream's chunks as they arrive, changed if a fault says so, judged once it has ended
    (only one of at most MAX_STREAM_KEPT bytes: a longer one is passed on, and its events not kept)."""
    decoder, events, completed, judged, reorder = sse.Decoder(), [], False, True, None
    by_event = cut is not None or any(fault.kind in ("corrupt", "reorder") for fault in acting)
    try:
        if not by_event:
            pieces: Iterable[bytes] = _fed(chunks, decoder, events)
        else:
            tampered: Iterator[Piece] = _by_event(_within(chunks, number, say), decoder, events)
            for fault in acting:
                if fault.kind == "corrupt":
                    tampered = _corrupted_events(tampered, fault, number, say)
                elif fault.kind == "reorder":
                    reorder = Reorder(fault, number, say)
                    tampered = reorder(tampered)
            pieces = _cut(tampered, cut, number, say)
        for fault in acting:
            if fault.kind == "drip":
                _said_drip(fault, number, None, say)
                pieces = _dripped(pieces, fault.value)
        yield from pieces
        completed = True
    except HangUp:
        judged = False  # our own cut: ours to answer for, not the agent's
        if reorder is not None:  # the event handed on last was written: a cut comes after one
            reorder.ended("the stream was cut", written=True)
        raise
    except TransportError as exc:
        judged = not exc.timed_out  # silent past --timeout: ended by us, no rule of the agent's to judge
        say(f"[proxy] request {number}: the agent's stream went silent: {exc} (--timeout bounds each wait for its "
            "next bytes, not the stream's length); the client's is ended too" if exc.timed_out else
            f"[proxy] finding: request {number}: the agent's stream broke off: {exc}; the client's is cut too")
        if reorder is not None:
            reorder.ended(f"the agent's stream {'went silent' if exc.timed_out else 'broke off'}")
        raise HangUp from None
    except GeneratorExit:
        say(f"[proxy] request {number}: the client's stream ended early (it hung up, or took nothing for the "
            "server's write deadline); the agent's stream was closed")
        if reorder is not None:  # the event handed on last is the one the server could not write
            reorder.ended("the client stopped taking the stream")
        judged = False
        raise
    finally:
        hang_up(chunks)
        if judged and len(events) == 1 and events[0] is PAST_KEPT:
            if completed:  # broken off, it was said so: not "passed on whole"
                say(f"[proxy] request {number}: the stream ran on past {MAX_STREAM_KEPT} bytes: passed on whole, "
                    "its end not judged (the rules read only what is kept)")
        elif judged:
            for line in annotate.notes(annotate.Answer(binding, request_body, 200, content_type, events=events,
                                                       completed=completed, unended=decoder.unended)):
                say(line)


def _fed(chunks: Iterable[bytes], decoder: Any, events: list[bytes]) -> Iterator[bytes]:
    kept = 0
    for chunk in chunks:
        kept += len(chunk)
        if kept <= MAX_STREAM_KEPT:
            events += decoder.feed(chunk)
        elif not (events and events[-1] is PAST_KEPT):  # past it: nothing more is kept, and the stream is not judged
            events[:] = [PAST_KEPT]
        yield chunk
    if kept <= MAX_STREAM_KEPT:
        events += decoder.end()


def _within(chunks: Iterable[bytes], number: int, say: Callable[[str], None]) -> Iterator[bytes]:
    """A stream a fault reads event by event, as far as MAX_STREAM_KEPT: then cut, and said. The
    chunk that runs past it is read to there, so its events within it still go on (and count)."""
    kept = 0
    for chunk in chunks:
        kept += len(chunk)
        if kept > MAX_STREAM_KEPT:
            yield chunk[:len(chunk) - (kept - MAX_STREAM_KEPT)]
            say(f"[proxy] request {number}: the stream ran past the {MAX_STREAM_KEPT} bytes a fault reads event "
                "by event: cut there, both connections closed")
            raise HangUp
        yield chunk


def _by_event(chunks: Iterable[bytes], decoder: Any, events: list[bytes]) -> Iterator[Piece]:
    """The stream a whole event at a time: fed a line at a time, so each piece ends where an event did."""
    held = bytearray()
    for chunk in chunks:
        for line in _LINE.finditer(chunk):
            held += line[0]
            ended = decoder.feed(line[0])
            if ended:
                events += ended
                yield bytes(held), ended[-1]
                held.clear()
    ended = decoder.end()
    events += ended
    if held:  # an event the end cut off: none (sse.py)
        yield bytes(held), None


def _cut(pieces: Iterator[Piece], cut: int | None, number: int, say: Callable[[str], None]) -> Iterator[bytes]:
    passed = 0
    for piece, data in pieces:
        yield piece
        passed += data is not None
        if cut is not None and passed >= cut:
            say(f"[fault] cut-stream:{cut}: cut the stream of request {number} after its event {cut}: "
                "the body never ends, both connections closed")
            raise HangUp
    if cut is not None:  # armed, and said to be: its silence would read as a cut that did nothing
        say(f"[fault] cut-stream:{cut}: the stream answering request {number} ended after {passed} event(s): "
            "nothing cut")


def _corrupted_events(pieces: Iterator[Piece], fault: Fault, number: int, say: Callable[[str], None]) -> Iterator[Piece]:
    done, seen = False, 0
    for piece, data in pieces:
        seen += data is not None
        if not done and data is not None:
            changed = _corrupt(data, fault.field)
            if changed is not None:
                done, (new, was, now) = True, changed
                say(f"[fault] {fault.spec}: in event {seen} of the stream answering request {number}, "
                    f"{fault.field} ({was}) replaced by {now}")
                kept = b"".join(line for line in piece.splitlines(keepends=True)
                                if line.strip() and not line.startswith(b"data"))
                piece = kept + b"data: " + new + b"\n\n"
        yield piece, data
    if not done:
        say(f"[fault] {fault.spec}: no event of the stream answering request {number} has {fault.field}; "
            "forwarded unchanged")


def _corrupted_body(body: bytes, fault: Fault, number: int, say: Callable[[str], None]) -> bytes:
    changed = _corrupt(body, fault.field)
    if changed is None:
        say(f"[fault] {fault.spec}: the answer to request {number} has no JSON field {fault.field}; forwarded unchanged")
        return body
    new, was, now = changed
    say(f"[fault] {fault.spec}: in the answer to request {number}, {fault.field} ({was}) replaced by {now}; "
        "the rest re-encoded compactly")
    return new


def _corrupt(text: bytes, field: str) -> tuple[bytes, str, str] | None:
    """`text` (JSON) with `field` given a value of another type: a boolean for anything but a
    boolean, which gets a string. None if it is not JSON or has no such field."""
    try:
        document = loads_strict(text)
    except ValueError:
        return None
    *path, last = field.split(".")
    holder = document
    for name in path:
        holder = _item(holder, name)
    if isinstance(holder, list) and last.isdigit() and int(last) < len(holder):
        key: Any = int(last)
    elif isinstance(holder, dict) and last in holder:
        key = last
    else:
        return None
    was = holder[key]
    holder[key] = "true" if isinstance(was, bool) else True
    shown = json.dumps(was, ensure_ascii=False)
    described = f"{shown[:40]}{'...' if len(shown) > 40 else ''}, {_type_name(was)}"
    now = '"true" (a string)' if isinstance(was, bool) else "true (a boolean)"
    return dumps_as_text(document), described, now


def _item(holder: Any, name: str) -> Any:
    if isinstance(holder, dict):
        return holder.get(name)
    if isinstance(holder, list) and name.isdigit() and int(name) < len(holder):
        return holder[int(name)]
    return None


def _type_name(value: Any) -> str:
    return {bool: "a boolean", str: "a string", int: "a number", float: "a number", dict: "an object",
            list: "a list"}.get(type(value), "null")


def _said_drip(fault: Fault, number: int, size: int | None, say: Callable[[str], None]) -> None:
    what, step = f"its {size} bytes" if size is not None else "its stream", _step(fault.value)
    say(f"[fault] {fault.spec}: passing the answer to request {number} on at {fault.value:g} bytes a second "
        f"({what}, sent chunked, a piece every {step / fault.value:.2g} s)")


def _dripped(pieces: Iterable[bytes], rate: float) -> Iterator[bytes]:
    step = _step(rate)
    for piece in pieces:
        for start in range(0, len(piece), step):
            time.sleep(step / rate)
            yield piece[start:start + step]


def _step(rate: float) -> int:
    return max(1, int(rate // 10))  # about ten pieces a second, one byte at least
