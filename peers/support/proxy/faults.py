"""Faults on demand, the same every time for one --seed: what the proxy does instead of forwarding.

The grammar of `--fault SPEC` (repeatable), N counting the requests the proxy receives
from 1 (the card's GET included), in the order they arrive:
    delay:N[:SECONDS]   hold request N that long (default 0.5 s) before forwarding it
    drop-response:N     forward request N, read the agent's whole answer, then close the
                        client's connection with no answer (the effect happened, unheard)
    twice:N             deliver request N to the agent twice; the client gets the second answer
    cut-stream:E        cut the first stream after its E-th event (no end of the body, a close);
                        every event counted, E at most MOST_EVENTS (below)
    status:N:CODE       answer request N with CODE (429, 503 ...) and Retry-After: 1 instead
                        of forwarding it (the agent never sees it)
    drip:N[:BYTES]      pass the answer to request N on at BYTES a second (default 256), in
                        pieces, a stream's too: a slow network, or an agent that stalls
    corrupt:N:FIELD     in the answer to request N (a stream's first event that has it), the
                        JSON field FIELD (dotted: result.status.state; a list's item by its
                        index) replaced by a value of the wrong type (a string by a number ...)
    reorder:N:A:B       swap events A and B of the stream answering request N
N (or E) may be `?`: drawn from --seed, 1 to 4, so one seed always names one frame. An event
count (E, A, B) above MOST_EVENTS is refused: a stream the proxy reads is at most the frame
limit (1 MiB), so it holds no more events than that (each 6 bytes at least), and such a
fault could never act. Each
fault, when it acts, says in one line what it did and to which frame. Two on one frame that
cannot both act (`_clash`), or two cut-streams, are refused before the proxy listens. What the
printer shows is what the agent sent; the [fault] line says what the client got instead.
"""
from __future__ import annotations

import random
import re
import threading

from transports import sse
from transports.printer import MAX_STREAM_KEPT
from transports.records import Record

MOST_EVENTS = MAX_STREAM_KEPT // sse.SHORTEST_EVENT  # the most events a fault reading a stream meets: 174762
USAGE = ("delay:N[:SECONDS], drop-response:N, twice:N, cut-stream:EVENTS, status:N:CODE, drip:N[:BYTES_PER_SECOND], "
         "corrupt:N:FIELD, reorder:N:A:B (N counts requests from 1; '?' draws it from --seed; "
         f"events up to {MOST_EVENTS})")
KINDS = ("delay", "drop-response", "twice", "cut-stream", "status", "drip", "corrupt", "reorder")
ANSWER_CHANGED = frozenset({"drop-response", "drip", "corrupt", "reorder"})  # one of them per answer
_FIELD = re.compile(r"[A-Za-z0-9_$@-]{1,64}(?:\.[A-Za-z0-9_$@-]{1,64}){0,15}")  # dotted names, list indexes


class Fault(Record):
    kind: str
    number: int  # the request it acts on; for cut-stream, the events let through
    value: float = 0.0  # delay: seconds; status: the HTTP status; drip: bytes a second
    spec: str = ""
    field: str = ""  # corrupt: the dotted name of the field
    events: tuple[int, int] = (0, 0)  # reorder: the two events swapped


def parse(spec: str, seed: int) -> Fault:
    """One --fault SPEC; ValueError with a one-line reason."""
    kind, _, rest = spec.partition(":")
    parts = rest.split(":") if rest else []
    if kind not in KINDS:
        raise ValueError(f"--fault {_quoted(spec)}: no such fault; one of {USAGE}")
    wanted = {"delay": (1, 2), "status": (2, 2), "drip": (1, 2), "corrupt": (2, 2), "reorder": (3, 3)}.get(kind, (1, 1))
    if not wanted[0] <= len(parts) <= wanted[1]:
        raise ValueError(f"--fault {_quoted(spec)}: {kind} is written {_written(kind)}")
    number = random.Random(f"{seed}:{spec}").randint(1, 4) if parts[0] == "?" else _whole(parts[0], spec, drawn=True)
    if kind == "delay":
        seconds = _seconds(parts[1], spec) if len(parts) == 2 else 0.5
        return Fault(kind, number, seconds, spec)
    if kind == "status":
        status = _whole(parts[1], spec)
        if not 400 <= status <= 599:
            raise ValueError(f"--fault {_quoted(spec)}: the status must be 400 to 599 (429, 503 ...)")
        return Fault(kind, number, float(status), spec)
    if kind == "drip":
        rate = _whole(parts[1], spec) if len(parts) == 2 else 256
        return Fault(kind, number, float(rate), spec)
    if kind == "corrupt":
        if not _FIELD.fullmatch(parts[1]):
            raise ValueError(f"--fault {_quoted(spec)}: the field is named with dots, as result.status.state")
        return Fault(kind, number, 0.0, spec, field=parts[1])
    if kind == "reorder":
        first, second = _event(parts[1], spec), _event(parts[2], spec)
        if first == second:
            raise ValueError(f"--fault {_quoted(spec)}: two different events are swapped")
        return Fault(kind, number, 0.0, spec, events=(min(first, second), max(first, second)))
    if kind == "cut-stream" and parts[0] != "?":
        number = _event(parts[0], spec, drawn=True)
    return Fault(kind, number, 0.0, spec)


def _quoted(text: str, most: int = 60) -> str:
    """What was typed, quoted: cut to `most` characters, and then said to be ("...")."""
    return repr(text if len(text) <= most else text[:most] + "...")


def _written(kind: str) -> str:
    return next(form for form in USAGE.split(", ") if form.startswith(kind)).split(" ")[0]


def _whole(text: str, spec: str, *, drawn: bool = False) -> int:
    """A count from 1; `drawn`: where '?' (one drawn by --seed) may stand instead, and is said to."""
    if not text.isascii() or not text.isdigit() or not 1 <= len(text) <= 6 or int(text) < 1:
        raise ValueError(f"--fault {_quoted(spec)}: {_quoted(text, 20)} is not a count from 1"
                         + (" (or '?')" if drawn else ""))
    return int(text)


def _event(text: str, spec: str, *, drawn: bool = False) -> int:
    """An event's number in a stream: a count from 1 that a fault reading a stream can reach."""
    number = _whole(text, spec, drawn=drawn)
    if number > MOST_EVENTS:
        raise ValueError(f"--fault {_quoted(spec)}: event {number} can never come: a fault reads a stream event by event "
                         f"as far as {MAX_STREAM_KEPT} bytes, so {MOST_EVENTS} events (the shortest, 6 bytes each)")
    return number


def _seconds(text: str, spec: str) -> float:
    # Digits and a point, as the counts are ASCII digits: float() alone takes "1_0", " 5", "١٠", "-0".
    seconds = float(text) if text.isascii() and text.replace(".", "", 1).isdigit() else -1.0
    if not 0 <= seconds <= 60:
        raise ValueError(f"--fault {_quoted(spec)}: the delay must be 0 to 60 seconds")
    return seconds


class Faults:
    """The faults of one run, and the count of requests they are keyed by (threads share it)."""

    def __init__(self, faults: list[Fault]) -> None:
        """ValueError, one line, for two faults on one frame: each would say it is armed, and one never acts."""
        for index, fault in enumerate(faults):
            other = next((other for other in faults[:index] if _clash(fault, other)), None)
            if other is not None:
                where = "the first stream (only it is cut)" if fault.kind == "cut-stream" else (
                    f"request {fault.number}" + (" (drawn from --seed)" if "?" in fault.spec + other.spec else "")
                    + ("; a status answer is all it gets" if "status" in (fault.kind, other.kind) else
                       "; each changes its answer" if {fault.kind, other.kind} <= ANSWER_CHANGED else ""))
                raise ValueError(f"--fault {_quoted(other.spec)} and --fault {_quoted(fault.spec)} both act on {where}: "
                                 "give one")
        self.faults, self.count, self.streams = faults, 0, 0
        self._lock = threading.Lock()

    def next_request(self) -> tuple[int, list[Fault]]:
        """The number of the request arriving now, and the faults that act on it."""
        with self._lock:
            self.count += 1
            return self.count, [f for f in self.faults if f.kind != "cut-stream" and f.number == self.count]

    def cut_after(self) -> int | None:
        """For a stream beginning now: after how many events it is cut (only the first stream is)."""
        with self._lock:
            self.streams += 1
            cuts = [f.number for f in self.faults if f.kind == "cut-stream"]
            return cuts[0] if cuts and self.streams == 1 else None


    def never_met(self) -> list[str]:
        """What each armed fault whose frame never came would have acted on, said when the proxy
        stops: it was said to be armed, and its silence would read as a fault that did nothing."""
        with self._lock:
            return [f"[fault] {fault.spec}: never acted: " + (
                "no stream came through the proxy" if fault.kind == "cut-stream" else
                f"request {fault.number} never came ({self.count} did)")
                for fault in self.faults
                if (self.streams == 0 if fault.kind == "cut-stream" else fault.number > self.count)]


def _clash(one: Fault, other: Fault) -> bool:
    """Two cut-streams (only the first stream is cut), two of a kind on one request, a status
    answer and anything else on its request (the agent never sees it), or two that each change
    one answer (dropped, dripped, corrupted, reordered): one of them would not act as it says."""
    if "cut-stream" in (one.kind, other.kind):
        return one.kind == other.kind
    return one.number == other.number and (one.kind == other.kind or "status" in (one.kind, other.kind)
                                           or {one.kind, other.kind} <= ANSWER_CHANGED)
