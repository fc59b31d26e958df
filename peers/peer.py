"""The peer core: an agent with a card and skills that turns a request into a Task.

Essay: Delegation over JSON-RPC ("submitted (the peer accepted it), working (the peer is
doing it), and completed (the peer is done)"). Seed 000's Handoff Contract: a skill
takes a typed payload (`parse` rejects anything else before a task exists) and ends in
an explicit variant: completed with an artifact, or failed saying whether a retry is safe.

Wire-neutral and transport-neutral: a wire format (`wire_essay`) maps its methods onto
`send`, and an app (`app.PeerApp`) serves it. Task ids come from a counter by default,
so a learner's transcript is stable; a served peer passes unguessable ids instead.
"""
from __future__ import annotations

import itertools
from collections import OrderedDict
from typing import Any, Callable, NamedTuple

from peers.model import AgentCard, AgentSkill, Artifact, Part, Task, TaskState
from transports.jsonrpc import InvalidParams


class SkillFailed(Exception):
    """A skill ran and could not finish. `retry_safe` tells the caller whether to try again."""

    def __init__(self, reason: str, *, retry_safe: bool) -> None:
        super().__init__(reason)
        self.reason, self.retry_safe = reason, retry_safe


class Skill(NamedTuple):
    card: AgentSkill  # what the Agent Card advertises
    parse: Callable[[dict[str, Any]], Any]  # input -> typed payload; raises InvalidParams
    run: Callable[[Any], str]  # payload -> result text; raises SkillFailed


def counter_ids(prefix: str) -> Callable[[], str]:
    """task-1, task-2, ...: deterministic ids for a run a learner reads."""
    numbers = itertools.count(1)
    return lambda: f"{prefix}-{next(numbers)}"


class Peer:
    def __init__(self, card: AgentCard, skills: list[Skill], *,
                 new_task_id: Callable[[], str] | None = None, max_tasks: int = 1000) -> None:
        self.card = card
        self.skills = {s.card.id: s for s in skills}
        self.new_task_id = new_task_id or counter_ids("task")
        self.max_tasks = max_tasks
        self.tasks: OrderedDict[str, Task] = OrderedDict()  # oldest first, for eviction

    def send(self, skill_id: str, payload: dict[str, Any]) -> Task:
        """Run one skill as a task: validate, then submitted -> working -> a terminal state."""
        skill = self.skills.get(skill_id)
        if skill is None:
            raise InvalidParams(f"unknown skill {skill_id!r}; this agent offers "
                                f"{sorted(self.skills)}")
        typed = skill.parse(payload)  # bad input fails here, before any task exists
        task = self._keep(Task(self.new_task_id()))  # submitted: accepted
        task = self._keep(task.advance(TaskState.WORKING))
        try:
            text = skill.run(typed)
        except SkillFailed as exc:
            note = f"{exc.reason} (retry {'is' if exc.retry_safe else 'is NOT'} safe)"
            return self._keep(task.advance(TaskState.FAILED, message=note))
        artifact = Artifact(f"{task.id}-result", (Part(text=text),))
        return self._keep(task.advance(TaskState.COMPLETED, artifacts=(artifact,)))

    def _keep(self, task: Task) -> Task:
        """Store the task's latest state; a new task evicts the oldest, so memory stays bounded."""
        is_new = task.id not in self.tasks
        self.tasks[task.id] = task  # insertion order is creation order: the oldest is first
        if is_new and len(self.tasks) > self.max_tasks:
            self.tasks.popitem(last=False)
        return task


# -- helpers for a skill's `parse`: typed payloads, errors that name the field --------

def require_fields(payload: Any, fields: dict[str, type | tuple[type, ...]]) -> None:
    """Exactly these fields, of these JSON types (bool is never a number)."""
    if not isinstance(payload, dict):
        raise InvalidParams('"input" must be an object')
    for name in payload:
        if name not in fields:
            raise InvalidParams(f"unexpected field {name!r}; expected {sorted(fields)}")
    for name, kind in fields.items():
        if name not in payload:
            raise InvalidParams(f"missing field {name!r}")
        value = payload[name]
        if isinstance(value, bool) or not isinstance(value, kind):
            raise InvalidParams(f"field {name!r} must be {_json_type(kind)}, "
                                f"not {type(value).__name__}")


_JSON_NAMES = {str: "a string", int: "a number", float: "a number", dict: "an object",
               list: "an array"}


def _json_type(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(dict.fromkeys(_JSON_NAMES[k] for k in kinds))
