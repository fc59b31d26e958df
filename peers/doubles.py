"""Test doubles: a peer's real parts, wrapped to fail on purpose, so a client's recovery
can be tested and taught. No peer has one unless it is given one: `serve`'s flags
(--cut-streams-after, --crash-at) and a lesson's settings ask for them.

- `CutStreams`: the peer's streams, each streamed send broken off after N events, as
  when a connection drops (a client's resume: --scenario broken-stream).
- `CrashingLedger`: the peer's durable ledger, and the process killed (exit 137, no
  clean-up, no answer, as under SIGKILL) at a crash point: right after an effect is
  claimed, before its skill runs ("before-effect": a request nobody was told of is not
  on disk yet, durable.py), or right after the effect is committed as done, before the
  peer answers ("after-commit": --scenario crash). From the first effect on, those a
  restart continues included.
Not here: the parts themselves (streaming.py, durable.py), which know of no double.
"""
from __future__ import annotations

import os

from peers.a2a.model import Message, Task
from peers.a2a.stream import Event
from peers.ledger import BEING_DONE, WAITING, Effect
from peers.streaming import SUBSCRIPTION_SECONDS, Streams
from transports.base import hang_up

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable, Iterator
    from peers.peer import Peer

CRASH_POINTS = ("before-effect", "after-commit")


class StreamCut(Exception):
    """A streamed send cut on purpose: the server ends the body there without its end,
    which is what a client sees when a connection drops. The task goes on."""


class CutStreams:
    """A test double around a peer's `Streams`: each streamed send ends after `after`
    events; subscriptions (how a client picks a broken stream up again) are left whole."""

    def __init__(self, after: int, streams: Streams | None = None) -> None:
        self.after, self.streams = after, streams or Streams()

    def send(self, peer: Peer, message: Message, *, owner: str = "", scopes: frozenset[str] = frozenset(),
             seconds: float = SUBSCRIPTION_SECONDS,
             started: Callable[[Task], None] | None = None) -> Iterator[Event | None]:
        return cut(self.streams.send(peer, message, owner=owner, scopes=scopes, seconds=seconds, started=started),
                   self.after)

    def watch(self, peer: Peer, task_id: str, *, owner: str = "",
              seconds: float = SUBSCRIPTION_SECONDS) -> Iterator[Event | None]:
        return self.streams.watch(peer, task_id, owner=owner, seconds=seconds)


def cut(events: Iterator[Event | None], after: int) -> Iterator[Event | None]:
    """`events` until `after` of them have gone; whatever would follow (an event, or a
    keep-alive while the task works on) breaks the stream instead."""
    try:
        for event in events:
            if after == 0:
                raise StreamCut("the stream was cut here on purpose (--cut-streams-after)")
            after -= event is not None
            yield event
    finally:
        hang_up(events)


class CrashingLedger:
    """A test double around a peer's durable ledger: the same ledger (its `effects`, `lock`
    and `writing` are the real one's), and the process dies at the crash point `at`. For
    "after-commit", `commit` writes what is staged first (the store's flush), so the
    effect is on disk and no answer is."""

    def __init__(self, ledger: Any, at: str, commit: Callable[[], None]) -> None:
        if at not in CRASH_POINTS:
            raise ValueError(f"a crash point is one of {', '.join(CRASH_POINTS)}")
        self.ledger, self.at, self.commit = ledger, at, commit
        self.effects, self.lock, self.writing = ledger.effects, ledger.lock, ledger.writing
        self.max_effects, self.owned, self.room_for = ledger.max_effects, ledger.owned, ledger.room_for
        self.claim_of, self.claims, self.newest = ledger.claim_of, ledger.claims, ledger.newest

    def get(self, key: str | None) -> Effect | None:
        return self.ledger.get(key)

    def held(self, key: str | None, kept: Callable[[str], bool], owner: str) -> Effect | None:
        return self.ledger.held(key, kept, owner)

    def release(self, key: str | None, task_id: str) -> None:
        self.ledger.release(key, task_id)

    def forget(self, key: str) -> None:
        self.ledger.forget(key)

    def record(self, key: str, effect: Effect) -> None:
        self.ledger.record(key, effect)
        done = effect.summary not in (BEING_DONE, WAITING)
        if self.at == "before-effect" and not done:
            os._exit(137)  # no clean-up, no answer: as a killed process
        if self.at == "after-commit" and done:
            self.commit()
            os._exit(137)
