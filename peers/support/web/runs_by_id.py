"""The live page's runs by id (runs.py is one run): at most MAX_LIVE going at once, and the
newest MAX_KEPT finished ones kept for their events and trace; a saved trace opened is a
finished run too. Not here: what a run does and tells (runs.py), HTTP (server.py).
"""
from __future__ import annotations

import threading
import time
from itertools import count

from peers.support.learner import trace
from peers.support.web.conversation import Conversation
from peers.support.web.runs import Run

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable

MAX_LIVE = 3  # runs going at once; the next is refused until one ends
MAX_KEPT = 20  # finished runs kept for their events and trace; the oldest is forgotten first
STOP_SECONDS = 12.0  # the page, stopping, waits this long in all for its runs' clean-up


class Runs:
    """The page's runs by id: at most MAX_LIVE going at once, MAX_KEPT kept."""

    def __init__(self, again: Callable[[list[str], Any], int]) -> None:
        self.again = again
        self.by_id: dict[str, Run] = {}
        self.ids = count(1)
        self.lock = threading.Lock()

    def start(self, argv: list[str], step: bool, cleanup: Callable[[], None],
              credentials: dict[str, Any] | None = None, story: Callable[..., Any] | None = None,
              conversation: Conversation | None = None, again: Callable[..., int] | None = None,
              rolling: bool = False) -> Run | None:
        """A new run, started (`again`: what it runs, main() unless said; `rolling`: it keeps
        its newest events and records alone, keeping.py); None when MAX_LIVE are going already."""
        with self.lock:
            if sum(not run.done for run in self.by_id.values()) >= MAX_LIVE:
                return None
            run = Run(str(next(self.ids)), argv, step, cleanup, credentials, story, conversation, rolling)
            self.by_id[run.id] = run
            self._forget_the_oldest_finished()
        run.start(again or self.again)
        return run

    def opened(self, text: str) -> Run:
        """A run that is a saved trace (`text`, as --trace wrote it), shown again; kept as a
        finished run is. ValueError, naming the line, if it is not a trace (trace.load)."""
        import os
        import tempfile
        handle, path = tempfile.mkstemp(prefix="a2a-web-trace-", suffix=".jsonl")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(text)
            records = trace.load(path)
        except ValueError as exc:
            raise ValueError(str(exc).replace(path, "the trace opened")) from None
        finally:
            os.unlink(path)
        with self.lock:
            run = Run(str(next(self.ids)), [], False, lambda: None)
            self.by_id[run.id] = run
        run.replay(records)
        with self.lock:  # replayed, it is a finished run, and kept as one: MAX_KEPT in all
            self._forget_the_oldest_finished()
        return run

    def _forget_the_oldest_finished(self) -> None:  # called holding the lock
        finished = [key for key, old in self.by_id.items() if old.done]
        for key in finished[:max(0, len(finished) - MAX_KEPT)]:
            del self.by_id[key]

    def get(self, run_id: str) -> Run | None:
        with self.lock:
            return self.by_id.get(run_id)

    def stop_all(self, seconds: float = STOP_SECONDS) -> None:
        """Ask every run to stop before its next frame, and wait, `seconds` in all, for each to end:
        a lesson's clean-up (a process it started, its temporary folder) runs in the run's own
        thread, which would die with the process, the clean-up undone. (The crash lesson gives
        its billing 10 s to stop.)"""
        with self.lock:
            going = list(self.by_id.values())
        for run in going:
            run.ask("stop")
        deadline = time.monotonic() + seconds
        for run in going:
            with run.changed:
                run.changed.wait_for(lambda run=run: run.done, timeout=max(0.0, deadline - time.monotonic()))
