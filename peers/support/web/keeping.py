"""What a run of the live page keeps in memory, bounded: its events for the page, and (for a
`proxy` session) its trace records.

Rules: everything kept is bounded by count and by bytes; nothing is dropped without the
page being told, in order, among the events it reads. Issue 24 (the events) and issue 35,
item 3 (a proxy session, watched for hours).
- `Events`: a run's events in order, each numbered from 1 as the page reads them (its
  server-sent event id), from any number on, as often as it reconnects (`after`). Only the
  newest diagram is kept: each drawing replaces the one before ("drawn again"). A run of the
  story or a lesson (a few hundred events) keeps its first MOST_EVENTS and then says it stopped
  listening: its start is the story. A rolling one (a proxy session) keeps its newest
  MOST_ROLLING events and MOST_ROLLING_BYTES bytes; a page that asks for events dropped
  already (one opened late, or reconnecting) is told first how many older ones went.
- A proxy session's trace records: kept by learner/trace.py's `Window` to the newest
  MOST_RECORDS records and MOST_RECORD_BYTES bytes, so the saved trace, the step-through
  view and the live diagram are of the newest part of a long session. Any other run's to
  the newest MOST_RUN_RECORDS and MOST_RUN_RECORD_BYTES: a lesson's trace is under 100 KiB,
  but an agent may push 64 KiB bodies to the run's webhook for as long as the run follows
  its task, each a frame kept whole, and the page keeps its last runs.
Not here: what an event says (runs.py), HTTP (server.py), what a proxy is (proxying.py).
"""
from __future__ import annotations

import json
import threading
from collections import deque
from itertools import islice

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

MOST_EVENTS = 20_000  # a lesson makes a few hundred; past this a run's page says it stopped listening
MOST_ROLLING = 5_000  # a proxy session's newest events kept for the page (each frame line is at most 8 KiB)
MOST_ROLLING_BYTES = 16 << 20
MOST_RECORDS = 1_000  # a proxy session's newest trace records: its trace, its step-through view, its diagram
MOST_RECORD_BYTES = 4 << 20  # of the records' bodies and lines: a frame is kept whole, up to 1 MiB or more
MOST_RUN_RECORDS, MOST_RUN_RECORD_BYTES = 4_000, 8 << 20  # any other run's: past what it draws live


class Events:
    """A run's events; `changed` is told of each (the run's Send and Stop wait on it too)."""

    def __init__(self, rolling: bool = False, most: int | None = None, most_bytes: int = MOST_ROLLING_BYTES) -> None:
        self.rolling, self.most_bytes = rolling, most_bytes
        self.most = most if most is not None else MOST_ROLLING if rolling else MOST_EVENTS
        self.changed = threading.Condition()
        self.kept: deque[tuple[dict[str, Any], int]] = deque()  # (event, its size), numbered from first + 1
        self.first = self.size = self.dropped = 0
        self.drawn_at: int | None = None  # the number of the newest diagram, to replace with the next

    def add(self, event: dict[str, Any]) -> None:
        with self.changed:
            if event["type"] == "diagram":
                self._forget_the_drawing_before()
            if self.rolling:
                self._roll(event)
            elif self.first + len(self.kept) < self.most or event["type"] == "end":
                self._keep(event)
            elif self.first + len(self.kept) == self.most:
                self._keep({"type": "line", "kind": "warning",
                            "text": f"the page shows the first {self.most} events of this run"})
            self.changed.notify_all()

    def after(self, index: int, timeout: float) -> tuple[int, list[dict[str, Any]]]:
        """(the number before the first event given, the events after `index`), waiting up to
        `timeout` for one. A page asking for events dropped already gets the oldest kept, after
        a "dropped" event numbered as the last one dropped, saying how many went."""
        with self.changed:
            self.changed.wait_for(lambda: self.first + len(self.kept) > index, timeout=timeout)
            start = max(index, self.first)
            events = [event for event, _ in islice(self.kept, start - self.first, None)]
            if index < self.first:
                return start - 1, [{"type": "dropped", "what": "events", "text": (
                    f"the page keeps this session's newest {self.most:,} events ({self.most_bytes >> 20} MiB): "
                    f"{self.dropped:,} older ones were dropped before this page read them")}, *events]
            return start, events

    def ended_by(self, index: int) -> bool:
        """Whether the run has ended and its end is among the first `index` events."""
        with self.changed:
            return bool(self.kept) and self.kept[-1][0]["type"] == "end" and self.first + len(self.kept) <= index

    def __len__(self) -> int:
        return self.first + len(self.kept)

    def _keep(self, event: dict[str, Any]) -> None:
        if event["type"] == "diagram":
            self.drawn_at = self.first + len(self.kept)
        size = len(json.dumps(event)) if self.rolling else 0
        self.kept.append((event, size))
        self.size += size

    def _roll(self, event: dict[str, Any]) -> None:
        self._keep(event)
        while len(self.kept) > 1 and (len(self.kept) > self.most or self.size > self.most_bytes):
            self.size -= self.kept.popleft()[1]
            self.first, self.dropped = self.first + 1, self.dropped + 1
        if self.drawn_at is not None and self.drawn_at < self.first:
            self.drawn_at = None

    def _forget_the_drawing_before(self) -> None:
        """Only the newest diagram is kept: a page needs the newest, and each is the whole run."""
        if self.drawn_at is not None and self.drawn_at >= self.first:
            at = self.drawn_at - self.first
            self.size -= self.kept[at][1]
            self.kept[at] = ({"type": "drawn again"}, 0)
        self.drawn_at = None
