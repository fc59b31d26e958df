"""A peer's tasks as streams: what SendStreamingMessage and SubscribeToTask answer.

Spec: A2A 1.0 sections 3.1.2 and 3.1.6. A streamed send is the same send (peer.py),
said as the events of that turn (peers/a2a/stream.py); a subscription is a task as it
is and then each change as it happens, read from the store's change feed (changes.py),
until the task ends or pauses again. A stream holds a connection, so it is bounded in
time (after `seconds` it closes and the client subscribes again) and in number: a
peer's `Streams` keeps at most MAX_STREAMS open at once, so streams cannot take every
worker a server has, and one caller (one owner: one bearer token) at most half of them,
so a caller renewing its subscriptions cannot keep every other caller's streams out.
Not here: cutting a stream on purpose (doubles.py).
"""
from __future__ import annotations

import threading
import time
from collections import Counter

from peers.a2a.errors import TooManyStreams
from peers.a2a.model import PAUSED, Message, Task
from peers.a2a.stream import Event, StatusUpdate, events_of
from peers.changes import Changes, Waiter
from peers.store import TaskStore
from peers.tenants import split
from transports.base import Body

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Callable, Iterator, Protocol
else:  # an interface below is a documented class at run time, and typing's Protocol to a checker
    Protocol = object

MAX_STREAMS = 32  # streams open at once: half a server's 64 workers, so plain requests get in
SUBSCRIPTION_SECONDS = 30.0
KEEP_ALIVE_SECONDS = 1.0  # how often a quiet subscription says it is still open


class StreamedPeer(Protocol):
    """What a stream needs of the peer it tells of (peer.py's Peer is one): its tasks, the
    feed their changes are published on, and its own send and get. Said here, so this
    module imports no peer: the peer is built with its Streams, and the arrow goes one way."""

    store: TaskStore
    changes: Changes

    def send_message(self, message: Message, *, owner: str = "", scopes: frozenset[str] = frozenset(),
                     wait: bool = True, started: Callable[[Task], None] | None = None) -> Task | Message: ...

    def get_task(self, task_id: str, *, owner: str = "") -> Task: ...


class Streams:
    """A peer's streams, at most `most` open at once, and at most `share` (half, or one)
    for one caller: each holds a slot from when it is asked for until it ends, however it
    ends."""

    def __init__(self, most: int = MAX_STREAMS) -> None:
        self.most, self.share = most, max(1, most // 2)
        self.lock = threading.Lock()
        self.open: Counter[str] = Counter()  # owner -> its streams open now

    def send(self, peer: StreamedPeer, message: Message, *, owner: str = "", scopes: frozenset[str] = frozenset(),
             seconds: float = SUBSCRIPTION_SECONDS,
             started: Callable[[Task], None] | None = None) -> Iterator[Event | None]:
        """SendStreamingMessage: what send_message does, told as it happens. The message is
        taken (or refused, with an error instead of a stream) before this returns; the work
        then goes on in the background, as returnImmediately's does, while the stream tells
        of each state it enters and each artifact it makes. Where the work is done at once
        (a follow-up turn, a duplicate, every background worker busy) the stream is that
        turn's events. Either way the events are the same, however fast the work was.
        `started(task)`, as for send_message: a webhook sent with the message, registered."""
        since = len(peer.store.get(message.task_id, owner).lifecycle) - 1 if message.task_id else 0
        made = peer.store.seq  # the tasks made so far: a first message answered with one of them made none
        give_back = self.open_slot(owner)  # before the work: a refused stream has done nothing
        try:
            answer = peer.send_message(message, owner=owner, scopes=scopes, wait=False, started=started)
        except BaseException:
            give_back(False)
            raise
        if isinstance(answer, Message):
            return Body(iter([answer]), give_back)
        # A turn sent again, which moved the task no further, or a first message answered with the task an
        # earlier one made (a resend, an effect done already): the task as it is, whole, as a subscription starts
        again = len(answer.lifecycle) - 1 <= since if message.task_id is not None else \
            peer.store.order.get(answer.id, made + 1) <= made
        if again and answer.state in PAUSED:  # this turn ends there, as a send's stream ends at a pause
            return Body(iter([answer]), give_back)
        return Body(_told(peer, answer, [answer] if again else events_of(answer, since), owner, seconds), give_back)

    def watch(self, peer: StreamedPeer, task_id: str, *, owner: str = "",
              seconds: float = SUBSCRIPTION_SECONDS) -> Iterator[Event | None]:
        """SubscribeToTask: the task as it is, then each change as it happens, until it ends
        or pauses again, or `seconds` pass."""
        task = peer.get_task(task_id, owner=owner)
        return Body(_told(peer, task, [task], owner, seconds), self.open_slot(owner))

    def open_slot(self, owner: str = "") -> Callable[[bool], None]:
        """One of the stream slots, for `owner`, and how to give it back: its stream is a
        Body, whose end runs exactly once however the stream stops (read to the end,
        closed, or dropped before it was ever read: a client that left before the first byte).
        A caller's share is one, whatever tenants it names (peers/tenants.py)."""
        owner = split(owner)[1]
        with self.lock:
            if sum(self.open.values()) >= self.most:
                raise TooManyStreams(f"{self.most} streams are open on this agent; try again shortly, or "
                                     "ask about the task with GetTask (nothing was done)")
            if self.open[owner] >= self.share:
                raise TooManyStreams(f"you have {self.share} streams open on this agent, a caller's share; "
                                     "close one, or ask about the task with GetTask (nothing was done)")
            self.open[owner] += 1

        def give_back(completed: bool) -> None:
            with self.lock:
                self.open[owner] -= 1
                if not self.open[owner]:
                    del self.open[owner]
        return give_back


def _told(peer: StreamedPeer, task: Task, first: list[Event], owner: str, seconds: float) -> Iterator[Event | None]:
    """`first`, then each change to `task` after it, as the store publishes it. While
    nothing changes, a None each second: the server writes it as an SSE comment, so a
    subscriber that hung up is noticed (its write fails) and its thread freed within a
    second or two, not at the deadline."""
    yield from first
    if task.state.is_terminal or (isinstance(first[-1], StatusUpdate) and first[-1].final):
        return  # it ended (or paused) already: nothing more will come on this stream
    deadline = time.monotonic() + seconds
    waiter = Waiter(peer.changes, task.id)
    try:
        while time.monotonic() < deadline:
            later = peer.store.find(task.id, owner)
            if later is None:  # the task was forgotten
                return
            if later is task:  # nothing yet: wait; a quiet second says so, which also finds
                if not waiter.wait(min(deadline, time.monotonic() + KEEP_ALIVE_SECONDS)):
                    yield None  # out whether the subscriber is still there
                continue
            peer.store.flush()  # read before its own publisher told it: on disk first, all the same
            changed = events_of(later, len(task.lifecycle) - 1)[1:]  # what changed
            ends = any(isinstance(event, StatusUpdate) and event.final for event in changed)
            if ends:  # nothing more to hear: the feed lets it go before its end is told
                waiter.stop()
            for event in changed:
                yield event
                if isinstance(event, StatusUpdate) and event.final:
                    return
            task = later
    finally:
        waiter.stop()
