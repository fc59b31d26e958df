"""One call for any agent, in our process or across the transport: `run(payload) -> Task`.

Seed 000: a remote stage is called "through the same await translator.run(...) shape as
a local Agent", and "the orchestration code doesn't know whether translator is a local
Agent or a RemoteA2AAgent". Here both return an A2A Task: a `LocalAgent` makes its
own (no frame crosses anything), a `RemoteAgent` discovers nothing new, passes the trust
gate and delegates over the transport, returning the task the peer made. A stage that
made no task (refused by the gate, or the peer unreachable) raises `NotDelegated`
with the support agent's outcome saying why. The lessons remote_as_local.py and
bounce.py call `run` and nothing else.
"""
from __future__ import annotations

from itertools import count

from peers.a2a.model import AgentCard, Artifact, Part, Task, TaskState

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable, Protocol
    from peers.support.calling.outcomes import Outcome
    # What a local agent's work returns: how its task ends, its words, and its data.
    Work = Callable[[dict[str, Any], dict[str, Any]], tuple[TaskState, str, dict[str, Any] | None]]
else:  # an interface below is a documented class at run time, and typing's Protocol to a checker
    Protocol = object


class NotDelegated(Exception):
    """A remote stage made no task; `outcome` (the support agent's) says why."""

    def __init__(self, outcome: Outcome) -> None:
        super().__init__(outcome.error or "the trust gate refused it; nothing was sent")
        self.outcome = outcome


class Stage(Protocol):
    """What an orchestration calls, wherever the agent runs: its name, where it runs, and run()."""

    name: str
    where: str

    def run(self, payload: dict[str, Any], **metadata: Any) -> Task: ...



class LocalAgent:
    """An agent in our own process: `work(payload, metadata)` decides, and `run` records
    it as a task through the same states a peer's task passes."""

    where = "local: no frame"

    def __init__(self, name: str, work: Work) -> None:
        self.name, self.work, self.ids = name, work, count(1)

    def run(self, payload: dict[str, Any], **metadata: Any) -> Task:
        state, text, data = self.work(payload, metadata)
        task = Task(f"{self.name}-task-{next(self.ids)}")
        if state is not TaskState.REJECTED:  # a rejection is decided before any work
            task = task.advance(TaskState.WORKING)
        if state is TaskState.COMPLETED:
            parts = (Part(text=text),) + ((Part(data=data),) if data is not None else ())
            return task.advance(state, artifacts=(Artifact(f"{task.id}-result", parts),))
        return task.advance(state, message=text, data=data)


class RemoteAgent:
    """A peer behind the transport, with the same `run`: `delegate` (the story's step that
    takes a card: the trust gate first, then one delegation) on its card and skill; the
    task the peer answers."""

    where = "remote: its frames are printed"

    def __init__(self, delegate: Callable[..., Outcome], card: AgentCard, skill: str) -> None:
        self.delegate, self.card, self.skill, self.name = delegate, card, skill, card.name
        self.outcome: Outcome | None = None  # the support agent's outcome of the last run

    def run(self, payload: dict[str, Any], **metadata: Any) -> Task:
        self.outcome = self.delegate(self.card, self.skill, payload, **metadata)
        if self.outcome.task is None:
            raise NotDelegated(self.outcome)
        return self.outcome.task


def data_of(task: Task) -> dict[str, Any] | None:
    """The first data part of a completed task's artifacts: the next stage's input."""
    return next((part.data for artifact in task.artifacts for part in artifact.parts
                 if isinstance(part.data, dict)), None)
