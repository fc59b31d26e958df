"""--fault reorder:N:A:B on the stream answering request N: its events A and B swapped as they pass.

passing.py reads such a stream a whole event at a time; here events A to B are held until B has
come, then passed on B first and A last. One line says what the client was given, and only once
it is so: the swap, once its last event was passed on; else, where the stream ended first (it ran
out of events, was cut, broke off, or the client hung up), how far the swap got. An event counts
as passed on when the server, having written it, asks for the next. Not here: reading the stream,
the other faults (passing.py), which request a fault names (faults.py).
"""
from __future__ import annotations

from peers.support.proxy.faults import Fault

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable, Iterator
    Piece = tuple[bytes, Any]  # raw bytes ending one event, and that event's data (None: bytes after the last)


class Reorder:
    """One reorder fault acting on one stream: called with the stream's pieces, its pieces reordered."""

    def __init__(self, fault: Fault, number: int, say: Callable[[str], None]) -> None:
        self.fault, self.number, self.say = fault, number, say
        self.swapped = 0  # events of the swap (B first, A last) passed on
        self.handing = False  # an event of the swap handed on, and not yet asked past: written, or not
        self.said = False

    def __call__(self, pieces: Iterable[Piece]) -> Iterator[Piece]:
        (first, second), seen = self.fault.events, 0
        held: list[Piece] = []
        for piece, data in pieces:
            seen += data is not None
            if first <= seen <= second and data is not None:
                held.append((piece, data))
                if seen == second:
                    yield from self._swap([held[-1], *held[1:-1], held[0]])
                    held = []
                continue
            yield from held  # a piece after the last event: the stream ends before the swap
            held = []
            yield piece, data
        if held or seen < second:
            self._said(f"the stream answering request {self.number} ended after {seen} event(s): nothing swapped")
            yield from held

    def _swap(self, events: list[Piece]) -> Iterator[Piece]:
        for event in events:
            self.handing = True
            yield event
            self.handing, self.swapped = False, self.swapped + 1
        self._said(f"swapped events {self.fault.events[0]} and {self.fault.events[1]} of the stream answering "
                   f"request {self.number}")

    def ended(self, why: str, written: bool = False) -> None:
        """The stream ended early, for `why` (the client stopped taking it, a cut ...): what of the swap the client
        was given, if not said yet. `written`: the event handed on last was written (a cut came after it)."""
        (first, second), swapped = self.fault.events, self.swapped + (written and self.handing)
        if swapped == second - first + 1:  # all of it, cut just after
            return self._said(f"swapped events {first} and {second} of the stream answering request {self.number}")
        stream = f"the stream answering request {self.number}"
        self._said(f"{why} before event {second} of {stream} was passed on in event {first}'s place: nothing swapped"
                   if not swapped else f"{why} mid-swap in {stream}: event {second} went in event {first}'s place, "
                   f"event {first} never did")

    def _said(self, what: str) -> None:
        if not self.said:
            self.said = True
            self.say(f"[fault] {self.fault.spec}: {what}")
