"""A peer's tasks as streams: what SendStreamingMessage and SubscribeToTask answer.

Spec: A2A 1.0 sections 3.1.2 and 3.1.6. A streamed send is the same send (peer.py),
said as the events of that turn (peers/a2a/stream.py); a subscription is a task as it
is and then each change as it happens, pushed by the task store as it is made, until
the task ends or pauses again. A stream holds a connection, so it is bounded in time
(after `seconds` it closes and the client subscribes again) and in number: at most
MAX_STREAMS open at once per peer, so streams cannot take every connection a server has.
"""
from __future__ import annotations

import time
from typing import Callable, Iterator

from peers.a2a.errors import TooManyStreams
from peers.a2a.model import Message, Task
from peers.a2a.stream import Event, StatusUpdate, events_of
from peers.peer import MAX_STREAMS, Peer
from transports.base import Body, hang_up

SUBSCRIPTION_SECONDS = 30.0
KEEP_ALIVE_SECONDS = 1.0  # how often a quiet subscription says it is still open


def stream_message(peer: Peer, message: Message, *, owner: str = "", scopes: frozenset[str] = frozenset(),
                   seconds: float = SUBSCRIPTION_SECONDS) -> Iterator[Event | None]:
    """SendStreamingMessage: what send_message does, told as it happens. The message is
    taken (or refused, with an error instead of a stream) before this returns; the work
    then goes on in the background, as returnImmediately's does, while the stream tells
    of each state it enters and each artifact it makes. Where the work is done at once
    (a follow-up turn, a duplicate, every background worker busy) the stream is that
    turn's events. Either way the events are the same, however fast the work was."""
    since = len(peer.store.get(message.task_id, owner).lifecycle) - 1 if message.task_id else 0
    give_back = _open_slot(peer)  # before the work: a refused stream has done nothing
    try:
        answer = peer.send_message(message, owner=owner, scopes=scopes, wait=False)
    except BaseException:
        give_back(False)
        raise
    if isinstance(answer, Message):
        return Body(iter([answer]), give_back)
    events = _told(peer, answer, events_of(answer, since), owner, seconds)
    return Body(events if peer.cut_streams_after is None else cut(events, peer.cut_streams_after), give_back)


def _open_slot(peer: Peer) -> Callable[[bool], None]:
    """One of the peer's MAX_STREAMS stream slots, and how to give it back: its stream is
    a Body, whose end runs exactly once however the stream stops (read to the end,
    closed, or dropped before it was ever read: a client that left before the first byte)."""
    if not peer.streams.acquire(blocking=False):
        raise TooManyStreams(f"{MAX_STREAMS} streams are open on this agent; try again shortly, or "
                             "ask about the task with GetTask (nothing was done)")
    return lambda completed: peer.streams.release()


class StreamCut(Exception):
    """A streamed send cut on purpose (the test double's cut_streams_after): the server
    ends the body there without its end, which is what a client sees when a connection
    drops. The task goes on."""


def cut(events: Iterator[Event | None], after: int) -> Iterator[Event | None]:
    """`events` until `after` of them have gone; whatever would follow (an event, or a
    keep-alive while the task works on) breaks the stream instead."""
    try:
        for event in events:
            if after == 0:
                raise StreamCut("the stream was cut here on purpose (cut_streams_after)")
            after -= event is not None
            yield event
    finally:
        hang_up(events)


def watch(peer: Peer, task_id: str, *, owner: str = "",
          seconds: float = SUBSCRIPTION_SECONDS) -> Iterator[Event | None]:
    """SubscribeToTask: the task as it is, then each change as it happens, until it ends
    or pauses again, or `seconds` pass."""
    task = peer.store.get(task_id, owner)
    return Body(_told(peer, task, [task], owner, seconds), _open_slot(peer))


def _told(peer: Peer, task: Task, first: list[Event], owner: str, seconds: float) -> Iterator[Event | None]:
    """`first`, then each change to `task` after it, as the store makes it. While nothing
    changes, a None each second: the server writes it as an SSE comment, so a subscriber
    that hung up is noticed (its write fails) and its thread freed within a second or
    two, not at the deadline."""
    yield from first
    if task.state.is_terminal or (isinstance(first[-1], StatusUpdate) and first[-1].final):
        return  # it ended (or paused) already: nothing more will come on this stream
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        later = peer.store.next_change(task, owner, min(deadline, time.monotonic() + KEEP_ALIVE_SECONDS))
        if later is None and task.id in peer.store.tasks:  # nothing yet: say so, which also finds
            yield None                                     # out whether the subscriber is still there
            continue
        if later is None:  # the task was forgotten
            return
        for event in events_of(later, len(task.lifecycle) - 1)[1:]:  # what changed
            yield event
            if isinstance(event, StatusUpdate) and event.final:
                return
        task = later
