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
import time
from typing import Any, Callable, NamedTuple

from peers.model import AgentCard, AgentSkill, Artifact, Message, Part, Task, TaskState
from peers.store import TaskStore
from transports.jsonrpc import InvalidParams


class SkillFailed(Exception):
    """A skill ran and could not finish. `retry_safe` tells the caller whether to try again."""

    def __init__(self, reason: str, *, retry_safe: bool) -> None:
        super().__init__(reason)
        self.reason, self.retry_safe = reason, retry_safe


class NeedsApproval(Exception):
    """A decision the skill may not take alone (seed 004: releasing money above a threshold).
    The task pauses in input-required with the proposed effect, for a person to approve."""


class Skill(NamedTuple):
    card: AgentSkill  # what the Agent Card advertises
    parse: Callable[[dict[str, Any]], Any]  # input -> typed payload; raises InvalidParams
    run: Callable[[Any], str]  # payload -> result text; raises SkillFailed
    from_text: Callable[[str], dict[str, Any]] | None = None  # a plain-text request -> input


def counter_ids(prefix: str) -> Callable[[], str]:
    """task-1, task-2, ...: deterministic ids for a run a learner reads."""
    numbers = itertools.count(1)
    return lambda: f"{prefix}-{next(numbers)}"


class Peer:
    def __init__(self, card: AgentCard, skills: list[Skill], *,
                 new_task_id: Callable[[], str] | None = None, max_tasks: int = 1000,
                 clock: Callable[[], str] | None = None) -> None:
        self.card = card
        self.skills = {s.card.id: s for s in skills}
        self.new_task_id = new_task_id or counter_ids("task")
        self.store = TaskStore(max_tasks)
        self.clock = clock  # None: no timestamps, so a learner's transcript never changes

    @property
    def tasks(self) -> dict[str, Task]:
        return self.store.tasks

    def send(self, skill_id: str, payload: Any, *, owner: str = "",
             message: Message | None = None) -> Task:
        """Run one skill as a task: validate, then submitted -> working -> a terminal state.

        `owner` is who asked (see store.py); a `message` already seen from that owner gets
        the task it made the first time, and the skill does not run again.
        """
        skill = self.skills.get(skill_id)
        if skill is None:
            raise InvalidParams(f"unknown skill {skill_id!r}; this agent offers "
                                f"{sorted(self.skills)}")
        typed = skill.parse(payload)  # bad input fails here, before any task exists
        with self.store.lock:  # "seen this message?" and "make its task" as one step
            if message is not None and (seen := self.store.by_message(owner, message.message_id)):
                return seen
            task_id = self.new_task_id()
            context = (message.context_id if message else None) or f"context-{task_id}"
            history = (message._replace(task_id=task_id, context_id=context),) if message else ()
            task = self._keep(Task(task_id, context_id=context, history=history,
                                   timestamp=self._now()), owner, message)  # submitted
        task = self._keep(task.advance(TaskState.WORKING, timestamp=self._now()), owner)
        try:
            text = skill.run(typed)
        except SkillFailed as exc:
            note = f"{exc.reason} (retry {'is' if exc.retry_safe else 'is NOT'} safe)"
            return self._keep(task.advance(TaskState.FAILED, message=note,
                                           timestamp=self._now()), owner)
        except NeedsApproval as exc:  # nothing was done; a person must decide
            return self._keep(task.advance(TaskState.INPUT_REQUIRED, message=str(exc),
                                           timestamp=self._now()), owner)
        artifact = Artifact(f"{task.id}-result", (Part(text=text),))
        return self._keep(task.advance(TaskState.COMPLETED, artifacts=(artifact,),
                                       timestamp=self._now()), owner)

    def send_message(self, message: Message, *, owner: str = "") -> Task:
        """The message-shaped request of A2A 0.3/1.0: find the skill and its input in it.

        A data part is the skill's input as is; otherwise the text is read by the skill's
        `from_text` (so a client that only sends text, as seed 000's does, is understood).
        """
        skill_id = (message.metadata or {}).get("skillId")
        if skill_id is None and len(self.skills) == 1:
            skill_id = next(iter(self.skills))
        skill = self.skills.get(skill_id) if isinstance(skill_id, str) else None
        if skill is None:
            raise InvalidParams("name a skill in message.metadata.skillId: one of "
                                f"{sorted(self.skills)}")
        data = next((p.data for p in message.parts if p.data is not None), None)
        if data is None:
            if skill.from_text is None:
                raise InvalidParams(f"skill {skill_id!r} needs a data part")
            data = skill.from_text(message.text)
        return self.send(skill_id, data, owner=owner, message=message)

    def get_task(self, task_id: str, *, owner: str = "") -> Task:
        return self.store.get(task_id, owner)

    def cancel_task(self, task_id: str, *, owner: str = "") -> Task:
        task = self.store.get(task_id, owner)
        if task.state.is_terminal:
            from peers.errors import TaskNotCancelable  # only the 0.3/1.0 wires cancel
            raise TaskNotCancelable(f"task {task_id!r} is already {task.state.value}")
        return self._keep(task.advance(TaskState.CANCELED, timestamp=self._now()), owner)

    def list_tasks(self, *, owner: str = "", context_id: str | None = None,
                   state: TaskState | None = None) -> list[Task]:
        return self.store.owned_by(owner, context_id=context_id, state=state)

    def _keep(self, task: Task, owner: str, message: Message | None = None) -> Task:
        return self.store.put(task, owner, message.message_id if message else None)

    def _now(self) -> str | None:
        return self.clock() if self.clock else None


_SECOND: list[tuple[int, str]] = [(-1, "")]  # (second, its text); swapped whole, never torn


def utc_now() -> str:
    """A served peer's clock: ISO 8601 UTC with milliseconds, as A2A 1.0 asks. A task is
    stamped three times, so each second's text is formatted once, not per stamp."""
    now = time.time()
    second, text = _SECOND[0]
    if second != int(now):
        second, text = int(now), time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now))
        _SECOND[0] = (second, text)
    return f"{text}.{int((now - second) * 1000):03d}Z"


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
