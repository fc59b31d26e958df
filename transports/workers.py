"""The server's workers: at most so many threads doing the work given, in order.

transports/server.py gives each request read in full to a `Workers` pool; a thread calls
the app and writes its answer (server_answer.py's `Connection.answer`, which never raises).
Threads are made as work arrives, up to the most allowed, and leave after
IDLE_WORKER_SECONDS with nothing to do, so an idle server holds none. `files_to_spare`
says how many connections the process can hold open. Not here: reading, answering.
"""
from __future__ import annotations

import threading
import time
from collections import deque

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Callable

IDLE_WORKER_SECONDS = 5.0  # a worker with nothing to do for this long leaves
MOST_SAID = 5  # work a stop drops: each said, up to these; the rest counted in one line (a thousand: not a flood)


class Workers:
    """At most `most` threads doing the work given, in order; made as needed, gone when idle."""

    def __init__(self, most: int) -> None:
        self.most, self.lock = most, threading.Condition()
        self.waiting: deque[Callable[[], None]] = deque()
        self.threads: set[threading.Thread] = set()
        self.free, self.closed = 0, False

    def give(self, work: Callable[[], None]) -> None:
        with self.lock:
            self.waiting.append(work)
            if self.free > len(self.waiting) - 1 or len(self.threads) >= self.most:
                self.lock.notify()
                return
            thread = threading.Thread(target=self._run, daemon=True, name="peer-server-worker")
            self.threads.add(thread)
        thread.start()

    def close(self, seconds: float, log: Callable[[str], None], named: Callable[[Callable[[], None]], str]) -> None:
        """Let idle workers go now, and wait up to `seconds` for those still answering; work
        still waiting is never begun (its connection is the stop's to close), and is said to
        `log` as `named` names it, once those answering are done: its client was told nothing."""
        with self.lock:
            self.closed = True
            self.lock.notify_all()
            dropped = list(self.waiting)  # closed: none of it is begun now
        deadline = time.monotonic() + seconds
        for thread in list(self.threads):
            thread.join(max(0.0, deadline - time.monotonic()))
        for work in dropped[:MOST_SAID]:
            log(f"{named(work)} dropped unanswered: the server stopped before a worker began it")
        if len(dropped) > MOST_SAID:
            log(f"{len(dropped) - MOST_SAID} more requests dropped unanswered: the server stopped before a worker "
                "began them")

    def _run(self) -> None:
        while True:
            with self.lock:
                self.free += 1
                if not self.waiting and not self.closed:
                    self.lock.wait(IDLE_WORKER_SECONDS)
                self.free -= 1
                # Closed: none begun now. A request still waiting was never begun; begun after a
                # stop, its effect would land with the connection closed and nobody told of it.
                if not self.waiting or self.closed:
                    self.threads.discard(threading.current_thread())
                    return
                work = self.waiting.popleft()
            work()  # never raises: Connection.answer turns every failure into a log line


def files_to_spare() -> int:
    """How many connections this process can hold open: its file limit, less some for the
    store, logs and the peer's own client sockets."""
    try:
        import resource
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):
        return 1024
    return 1 << 30 if soft == resource.RLIM_INFINITY else max(16, soft - 64)
