"""Now, with its second written out once: a served peer's task stamps and its server's Date.

Why: a request stamps its task three times and its answer carries a Date, and formatting
a time is most of what each costs; within one second the text is the same. The rule that
makes sharing it safe across threads: a caller reads the kept second once, judges it, and
uses what it judged, never what another thread kept since (that would stamp a moment a
second ahead, or a second back; tests/test_clock_across_threads.py forces the switch).
Not here: which format (each caller gives its own), a clock of its own (time.time).
"""
from __future__ import annotations

import time

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Callable


def written_once_a_second(write: Callable[[float], str]) -> Callable[[], tuple[float, str]]:
    """A clock answering (now, `write(now)` as of now's second), calling `write` once a second."""
    last = [(-1, "")]  # the second last written, and its text

    def now() -> tuple[float, str]:
        moment, kept = time.time(), last[0]  # read once: another thread may keep another second meanwhile
        if int(moment) != kept[0]:
            kept = last[0] = (int(moment), write(moment))
        return moment, kept[1]
    return now
