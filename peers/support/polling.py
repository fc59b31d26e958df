"""A task that came back still going: ask again (GetTask), waiting longer each time, or
be told (--push: our webhook, peers/support/webhook.py).

A2A lets a peer answer before its task ends: when asked to (returnImmediately, the
support agent's --no-wait), or when the work is long. A caller that needs the outcome
then asks again, without holding a connection open meanwhile. Each ask is a frame the
printer shows; the pauses grow (0.1 s, 0.2 s, 0.4 s ...) so a long task is not asked
about a thousand times; and the whole wait is bounded (--timeout), after which the task
is reported as still working, for a person or a later run to look up.
"""
from __future__ import annotations

import time
from typing import Any

from peers.a2a.model import AgentCard, Task, TaskState
from peers.a2a.wire_format import method_for
from peers.support.replies import read, read_json
from transports.errors import ProtocolViolation
from transports.printer import escape

GOING = (TaskState.SUBMITTED, TaskState.WORKING, TaskState.UNKNOWN)
FIRST_PAUSE, LONGEST_PAUSE = 0.1, 2.0  # seconds


def settle(agent: Any, card: AgentCard, task: Task, seconds: float) -> Task:
    """`task` as it is once it ends or pauses, or as it last was when `seconds` have passed:
    told by our webhook (--push, where one was registered with the message), else asking
    again with GetTask (where the wire has it)."""
    receiver, agent.receiver = getattr(agent, "receiver", None), None
    try:
        if task.state not in GOING:  # nearly always: the task came back finished, or paused
            return task
        if receiver is not None:
            return _told(agent, card, task, seconds, receiver)
        return _asked(agent, card, task, seconds)
    finally:
        if receiver is not None:
            receiver.close()


def _asked(agent: Any, card: AgentCard, task: Task, seconds: float) -> Task:
    spoken = agent.format_of[card.url]
    method = method_for(spoken, "get")
    deadline, pause = time.monotonic() + seconds, FIRST_PAUSE
    while task.state in GOING and method is not None and time.monotonic() + pause <= deadline:
        agent.say(f"[support] task {escape(task.id)} is {task.state.value}: asking again in {pause:g}s")
        time.sleep(pause)
        later = read(spoken.task_from_wire, agent.call(card.url, method, {"id": task.id}, spoken.HEADERS),
                     "the task")
        if later.id != task.id:
            raise ProtocolViolation(f"asked for task {task.id[:80]!r}, the peer answered about another")
        task, pause = later, min(pause * 2, LONGEST_PAUSE)
    return task


def _told(agent: Any, card: AgentCard, task: Task, seconds: float, receiver: Any) -> Task:
    """--push: each change as the peer tells our webhook of it, until the task ends."""
    spoken = agent.format_of[card.url]
    agent.say(f"[support] task {escape(task.id)} is {task.state.value}: {card.name} will tell our "
              "webhook of each change")
    deadline = time.monotonic() + seconds
    while task.state in GOING and time.monotonic() < deadline:
        body = receiver.next_push(deadline - time.monotonic())
        if body is None:
            break
        shown = getattr(agent.transport, "received", None)
        if shown is not None:
            shown("our webhook", body)
        told = read(spoken.event_from_result, read_json(body, "a push"), "a push")
        if isinstance(told, Task) and told.id == task.id:
            task = told
    return task
