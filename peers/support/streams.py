"""--stream: a task told event by event as it happens, and a broken stream picked up again.

Spec: A2A 1.0 sections 3.1.2 (SendStreamingMessage) and 3.1.6 (SubscribeToTask); 0.3
calls them message/stream and tasks/resubscribe. The printer shows each event as it
arrives; here they are folded into the task (peers/a2a/stream.py), and reading stops at
the event that ends the stream: nothing after it is even looked at.

A stream can break: the connection drops, a proxy times out, the peer restarts. The
task goes on without us, so the events already read are kept, and the support agent
subscribes to the task again: the first event of a subscription is the task as it is
now, so comparing it with the last one seen says what was missed (states entered,
artifacts made). A task that ended meanwhile has no stream to join (a 1.0 peer refuses
the subscription), so it is asked for instead (GetTask). The same happens if a stream
ends cleanly before its task does. At most RESUMES times, within the delegation's
patience; after that, or on a wire with no subscription, the task is asked about
(polling.py). A stream that broke before it named its task cannot be picked up, and one
still broken when the delegation's time is up is reported as what it is (a timeout,
say): those failures are the delegation's.
"""
from __future__ import annotations

import time
from typing import Any, Callable, Iterator

from peers.a2a.model import AgentCard, Message, Task
from peers.a2a.stream import ends, fold
from peers.support.polling import settle
from peers.a2a.wire_format import method_for
from peers.support.replies import read
from transports.errors import ProtocolViolation, RemoteError, TransportError
from transports.printer import escape

RESUMES = 3


def follow(agent: Any, card: AgentCard, spoken: Any, message: Message) -> Task:
    """The task `message` starts, streamed: resumed with a subscription if the stream
    breaks off before the task ends or pauses, then settled (polling.py) if still going."""
    deadline = time.monotonic() + agent.patience
    task, broke = _read(spoken, agent.call(card.url, method_for(spoken, "stream"),
                                           spoken.send_params(message), spoken.HEADERS, stream=True))
    subscribe = method_for(spoken, "subscribe")
    for _ in range(RESUMES):
        if task is None or ends(task.state) or subscribe is None or time.monotonic() >= deadline:
            break
        why = f"broke off ({broke})" if broke else "ended before the task did"
        agent.say(f"[support] the stream {escape(why)}; task {escape(task.id)} was last seen "
                  f"{task.state.value}: subscribing to it again ({subscribe}) for what was missed")
        later, broke = _resume(agent, card, spoken, subscribe, task)
        if later is not None and later.id != task.id:
            raise ProtocolViolation(f"subscribed to task {task.id[:80]!r}, the peer answered about another")
        task = _caught_up(task, later)
    if broke is not None and (task is None or (not ends(task.state) and time.monotonic() >= deadline)):
        raise broke  # before it named its task (nothing to subscribe to), or out of time: as it is
    if task is None:
        raise ProtocolViolation("the stream described no task")
    return settle(agent, card, task, max(0.0, deadline - time.monotonic()))


def _resume(agent: Any, card: AgentCard, spoken: Any, subscribe: str,
            seen: Task) -> tuple[Task | None, TransportError | None]:
    """The task's stream joined again; or, for a task that ended meanwhile (1.0 section
    3.1.6: no stream to join, UnsupportedOperationError), the task asked for (GetTask).
    What was missed is said as soon as the first event arrives."""
    def found(now: Any) -> None:
        agent.say(f"[support] missed while not listening: {escape(_missed(seen, now))}")
    try:
        results = agent.call(card.url, subscribe, {"id": seen.id}, spoken.HEADERS, stream=True)
    except RemoteError as refused:
        get = method_for(spoken, "get")
        if get is None:
            raise
        agent.say(f"[support] {subscribe} was refused ({escape(str(refused))}): asking for the task "
                  f"instead ({get})")
        later = read(spoken.task_from_wire, agent.call(card.url, get, {"id": seen.id}, spoken.HEADERS), "the task")
        found(later)
        return later, None
    return _read(spoken, results, found)


def _read(spoken: Any, results: Any, first: Callable[[Any], None] = lambda event: None
          ) -> tuple[Task | None, TransportError | None]:
    """The task a stream describes, as far as it got, and why it broke off, if it did.
    `first` is told of the first event as it arrives (a subscription's: the task as it
    was when we came back)."""
    if not isinstance(results, Iterator):  # one JSON answer where a stream was asked for
        task = read(spoken.task_from_result, results, "the result")
        first(task)
        return task, None
    broke: list[TransportError] = []

    def arriving() -> Iterator[Any]:
        try:
            for number, result in enumerate(results):
                event = read(spoken.event_from_result, result, "the stream")
                if number == 0:
                    first(event)
                yield event
        except TransportError as exc:  # the connection, not the peer's words: the task goes on
            broke.append(exc)
    try:
        return fold(arriving()), (broke[0] if broke else None)
    finally:
        results.close()  # the event that ends the stream was read: hang up


def _missed(seen: Task, now: Any) -> str:
    """What changed between the last event read and the task as we found it again."""
    if not isinstance(now, Task):
        return "unknown: the peer did not say how the task was when we came back"
    states = now.lifecycle[1:] if now.lifecycle[:1] == seen.lifecycle[-1:] else now.lifecycle
    known = {artifact.artifact_id for artifact in seen.artifacts}
    made = [repr(artifact.artifact_id) for artifact in now.artifacts if artifact.artifact_id not in known]
    missed = ([f"the task became {' -> '.join(state.value for state in states)}"] if states else []) \
        + ([f"artifact {', '.join(made)}"] if made else [])
    return "; ".join(missed) or "nothing: the task is as it was"


def _caught_up(seen: Task, later: Task | None) -> Task:
    """The task as the subscription left it, its lifecycle and artifacts continuing what was
    seen before (an artifact sent again replaces the copy we had)."""
    if later is None:
        return seen
    states = later.lifecycle[1:] if later.lifecycle[:1] == seen.lifecycle[-1:] else later.lifecycle
    fresh = {artifact.artifact_id for artifact in later.artifacts}
    artifacts = tuple(a for a in seen.artifacts if a.artifact_id not in fresh) + later.artifacts
    return later._replace(lifecycle=seen.lifecycle + states, artifacts=artifacts)
