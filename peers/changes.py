"""A peer's change feed: each change to a task, published once by the task store.

Spec: A2A 1.0 sections 3.1.2 and 3.1.6 (a stream, a subscription: each change as it
happens) and 4.3 (a push: each change, to a webhook). One feed serves them all: the store
(store.py) publishes a change once it is kept (on disk, for a durable store); streams and
subscriptions (streaming.py) wait on it through a `Waiter`, and push delivery (push.py)
follows it. A task the store forgets is published too, as `gone`, so what a follower
keeps beside it (a webhook's config, a waiting stream) goes with it.

Nobody follows, nearly always: then publishing is reading one empty list, with no lock
taken and nothing built. Not here: what a change is (store.py), what is told (the followers).
"""
from __future__ import annotations

import time
from _thread import allocate_lock  # threading.Lock itself, without loading threading (peers/ledger.py)

from peers.a2a.model import Task

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Callable
    Follower = Callable[[Task, str, bool], None]  # told (the task as it is now, its owner, whether it is gone)


class Changes:
    def __init__(self) -> None:
        # Replaced, never changed in place: publishing reads it without a lock.
        self.followers: tuple[Follower, ...] = ()
        self.lock = allocate_lock()  # between followers coming and going

    def follow(self, follower: Follower) -> None:
        with self.lock:
            self.followers = (*self.followers, follower)

    def unfollow(self, follower: Follower) -> None:
        # Equal, not the same: a bound method (a Waiter's) is a new object each time it is named.
        with self.lock:
            self.followers = tuple(known for known in self.followers if known != follower)

    def publish(self, task: Task, owner: str, *, gone: bool = False) -> None:
        """Tell every follower, in the order they came. The changes of one task are made
        in one thread at a time, so a follower hears them in the order they were made."""
        for follower in self.followers:
            follower(task, owner, gone)


class Waiter:
    """One reader waiting for the next change to one task: a stream or a subscription.
    It follows the feed from when it is made until `stop()`; woken, it reads the task
    from the store, so a change made between its last look and its wait is never missed."""

    def __init__(self, changes: Changes, task_id: str) -> None:
        self.changes, self.task_id = changes, task_id
        import threading  # a stream or a subscription: the runs that follow a task load it
        self.woken = threading.Event()
        changes.follow(self.heard)

    def heard(self, task: Task, owner: str, gone: bool) -> None:
        if task.id == self.task_id:
            self.woken.set()

    def wait(self, deadline: float) -> bool:
        """Whether the task changed (or went) before the monotonic `deadline`."""
        woken = self.woken.wait(max(0.0, deadline - time.monotonic()))
        self.woken.clear()  # the reader looks at the store next: nothing it could miss
        return woken

    def stop(self) -> None:
        """No longer follow the feed (again: nothing more)."""
        self.changes.unfollow(self.heard)
