"""A peer's tasks as streams: what SendStreamingMessage and SubscribeToTask answer.

Spec: A2A 1.0 sections 3.1.2 and 3.1.6. A streamed send is the same send (peer.py),
said as the events of that turn (peers/a2a/stream.py); a subscription is a task as it
is and then each change as it happens, pushed by the task store as it is made, until
the task ends or pauses again. A subscription holds a connection, so it is bounded in
time: after `seconds` the stream closes and the client subscribes again.
"""
from __future__ import annotations

import time
from typing import Iterator

from peers.a2a.model import Message
from peers.a2a.stream import Event, StatusUpdate, events_of
from peers.peer import Peer

SUBSCRIPTION_SECONDS = 30.0
KEEP_ALIVE_SECONDS = 1.0  # how often a quiet subscription says it is still open


def stream_message(peer: Peer, message: Message, *, owner: str = "",
                   scopes: frozenset[str] = frozenset()) -> list[Event]:
    """SendStreamingMessage: what send_message does, as the events of this turn (the task
    as this turn found it, each state it entered, its artifacts)."""
    since = len(peer.store.get(message.task_id, owner).lifecycle) - 1 if message.task_id else 0
    answer = peer.send_message(message, owner=owner, scopes=scopes)
    return [answer] if isinstance(answer, Message) else events_of(answer, since)


def watch(peer: Peer, task_id: str, *, owner: str = "",
          seconds: float = SUBSCRIPTION_SECONDS) -> Iterator[Event | None]:
    """SubscribeToTask: the task as it is, then each change as it happens, until it ends
    or pauses again, or `seconds` pass. While nothing changes, a None each second: the
    server writes it as an SSE comment, so a subscriber that hung up is noticed (its
    write fails) and its thread freed within a second or two, not at the deadline."""
    task = peer.store.get(task_id, owner)
    yield task
    if task.state.is_terminal:  # it ended between the subscribe and now: nothing more will come
        return
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
