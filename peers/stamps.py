"""What a peer stamps its tasks with: ids and times.

Ids come from a counter by default (task-1, task-2 ...), so the transcript a learner
reads is the same every run; a served peer, facing many clients, passes unguessable ids
instead, so no client finds another's task by guessing. Times are A2A 1.0's: ISO 8601
UTC with milliseconds; a learner's run has none, so its transcript never changes.
"""
from __future__ import annotations

import itertools
import os
import time

from transports.seconds import written_once_a_second

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Callable


def counter_ids(prefix: str) -> Callable[[], str]:
    """task-1, task-2, ...: deterministic ids for a run a learner reads."""
    numbers = itertools.count(1)
    return lambda: f"{prefix}-{next(numbers)}"


_SECOND = written_once_a_second(lambda now: time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)))


def utc_now() -> str:
    """A served peer's clock: ISO 8601 UTC with milliseconds, as A2A 1.0 asks."""
    now, second = _SECOND()
    return second + ".%03dZ" % int(now % 1 * 1000)  # %, not an f-string's format spec, parsed on every call


def unguessable_task_ids() -> Callable[[], str]:
    """A served peer's task ids, so no client finds another's by guessing: each a keyed
    hash (BLAKE2b) of a counter, under a key drawn once from the OS, so as unguessable as
    fresh random bytes. Not os.urandom per task: that system call lets other threads take
    the interpreter mid-request, and cost a quarter of the throughput at 4 clients
    (bench/http_load.py)."""
    from transports.digests import blake2b
    key, numbers = os.urandom(32), itertools.count()

    def new_id() -> str:
        return "task-" + blake2b(str(next(numbers)).encode(), key=key, digest_size=12).hexdigest()
    return new_id
