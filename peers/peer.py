"""The peer core: an agent with a card and skills that turns a request into a Task.

Essay: Delegation over JSON-RPC ("submitted (the peer accepted it), working (the peer is
doing it), and completed (the peer is done)"). Seed 000's Handoff Contract: a skill
takes a typed payload (checked against the skill's input schema before any task
exists) and ends in an explicit variant: completed with an artifact, failed saying
whether a retry is safe, rejected before any effect, or paused for its caller (an
approval, or a step-up credential: peers/pause.py).

Wire- and transport-neutral: `peers/methods.py` maps each wire's methods onto `send_message`,
`get_task`, `cancel_task` and `list_tasks`; `peers/app.py` serves it. Task ids come from a
counter by default, so a learner's transcript is stable; a served peer's are unguessable.
"""
from __future__ import annotations

import threading
from functools import partial
from typing import Any, Callable

from peers.a2a.errors import ContentTypeNotSupported
from peers.a2a.model import PAUSED, AgentCard, Artifact, ListQuery, Message, Part, Task, TaskState
from peers.a2a.schema import check
from peers.pause import Paused, Pending, Refusal, SkillFailed, reason_and_data, run_granted
from peers.skill import Skill, canonical
from peers.stamps import counter_ids
from peers.ledger import BEING_DONE, WAITING, Effect, Ledger
from peers.store import TaskStore, content_of, refuse_if_too_big
from transports.jsonrpc import InvalidParams

MAX_BACKGROUND = 16  # tasks worked on after their answer (returnImmediately) at one time
MAX_STREAMS = 32  # streams open at once: half a server's 64 connections, so plain requests get in


class Peer:
    def __init__(self, card: AgentCard, skills: list[Skill], *,
                 new_task_id: Callable[[], str] | None = None, max_tasks: int = 1000,
                 clock: Callable[[], str] | None = None) -> None:
        self.card = card
        self.skills = {s.card.id: s for s in skills}
        self.new_task_id = new_task_id or counter_ids("task")
        self.store = TaskStore(max_tasks)
        self.ledger = Ledger()  # what this peer has done, kept beyond the store's window
        self.clock = clock  # None: no timestamps, so a learner's transcript never changes
        self.background = threading.BoundedSemaphore(MAX_BACKGROUND)  # returnImmediately's workers
        self.extended_card: AgentCard | None = None  # shown only to authenticated callers
        self.webhooks: Any = None  # peers/push.py Webhooks, made when a caller first registers one
        self.streams = threading.BoundedSemaphore(MAX_STREAMS)  # open streams (peers/streaming.py)
        # What the serving app sets: where pushes may go, its log, its test double's stream cut.
        self.allow_private_webhooks, self.log, self.cut_streams_after = False, (lambda line: None), None

    def send_message(self, message: Message, *, owner: str = "", scopes: frozenset[str] = frozenset(),
                     wait: bool = True, started: Callable[[Task], None] | None = None) -> Task:
        """Run the skill a message asks for, as a task: submitted -> working -> an end.

        `owner` is who asked (see store.py); a message already seen from that owner gets
        the task it made the first time, and the skill does not run again. A message
        naming a task (its taskId) is the next turn of that task: see `_continue`.
        `scopes`: what the caller's credential grants beyond asking (a step-up's scope). With
        `wait=False` (returnImmediately) the task is answered as submitted and worked on in
        the background (MAX_BACKGROUND at once; beyond, the caller waits). `started(task)`
        is told of a new task before its work begins (to register the caller's webhook).
        """
        if message.task_id is not None:
            return self._continue(message, owner, scopes)
        skill = self._skill_for(message)
        payload = self._input_of(message, skill)  # bad input fails here, before any task
        effect = skill.effect_of(payload) if skill.effect_of else None  # billing: which order
        content = content_of(message)
        refuse_if_too_big(content)  # before any task: a request that cannot be kept does nothing
        admit = partial(skill.admit, payload, message.metadata or {}) if skill.admit else lambda: None
        refused = admit()
        if refused:  # not permitted: a rejected task says why, and nothing was done
            return self._rejected(message, owner, content, refused)
        claim = canonical(payload)
        with self.ledger.lock:  # "done already?" and "claim it" as one step
            earlier = self._held(effect)
            if earlier is None:
                task, is_new = self.store.add(lambda: self._submitted(message), owner, message.message_id, content)
                if is_new and effect is not None:  # claimed: a copy arriving meanwhile finds this task
                    self.ledger.record(effect, Effect(owner, task.id, claim, BEING_DONE))
        if earlier is not None:  # the same effect asked for again: it never happens twice
            return self._already_done(earlier, message, owner, payload, content)
        if not is_new:  # the same message delivered again: the first answer
            return task
        if started is not None:
            started(task)
        pending = Pending(None, effect, claim, admit)
        work = partial(self._run, partial(skill.run, payload), task, pending, owner, scopes)
        if not wait and self.background.acquire(blocking=False):  # the caller asks how it went later
            threading.Thread(target=self._in_background, args=(work,), daemon=True).start()
            return task
        return work()

    def _in_background(self, work: Callable[[], Task]) -> None:
        try:
            work()
        except Exception as exc:  # noqa: BLE001 - a skill's bug: said in the log, never lost in a thread
            self.log(f"internal error in background work: {exc!r}")
        finally:
            self.background.release()

    def _continue(self, message: Message, owner: str, scopes: frozenset[str]) -> Task:
        """The next turn of a task (A2A: a message carrying taskId). Only a paused task
        takes one, and only with what it waits for; the turn joins the task's history."""
        content = content_of(message)
        refuse_if_too_big(content)
        task = self.store.get(message.task_id, owner)  # unknown, or another caller's: -32001
        if message.context_id not in (None, task.context_id):
            raise InvalidParams(f"contextId {message.context_id[:80]!r} is not the context of "
                                f"task {task.id} ({task.context_id})")
        asked = Message(f"{task.id}-asked-{len(task.history)}", "agent",  # the turn it paused on
                        (Part(text=task.status_message or ""),)
                        + ((Part(data=task.status_data),) if task.status_data else ()),
                        task.context_id, task.id)
        turns = (asked, message._replace(context_id=task.context_id))
        task, pending = self.store.resume(task.id, owner, turns, content,
                                          lambda pending: pending.paused.accept(message, scopes))
        if pending is None:  # the same follow-up delivered again: the task as it is now
            return task
        refused = pending.admit()  # the handoff's grant, again: it may have expired meanwhile
        if refused:
            self._release(pending.effect, task.id)
            note, data = reason_and_data(refused)
            return self.store.update(task.advance(TaskState.FAILED, message=note, data=data,
                                                  timestamp=self._now()))
        with self.ledger.lock:  # approved: claim the effect, unless another task did it meanwhile
            earlier = self.ledger.get(pending.effect)
            if earlier is not None and earlier.task_id == task.id:
                earlier = None  # the claim this task held while it waited
            if earlier is None and pending.effect is not None:
                self.ledger.record(pending.effect, Effect(owner, task.id, pending.claim, BEING_DONE))
        if earlier is not None:
            done_by = f"task {earlier.task_id}" if earlier.owner == owner else "another caller"
            return self.store.update(task.advance(TaskState.FAILED, timestamp=self._now(), message=(
                f"{done_by} already did this meanwhile; nothing was done again (retry is NOT safe)")))
        return self._run(pending.paused.then, task, pending, owner, scopes)

    def _run(self, work: Callable[[], str], task: Task, pending: Pending, owner: str,
             scopes: frozenset[str]) -> Task:
        """-> working -> completed, failed, or paused for a person; the ledger records an
        effect done, and forgets a claim that ended with nothing done."""
        task = self.store.update(task.advance(TaskState.WORKING, timestamp=self._now()))
        effect = pending.effect
        try:
            text = run_granted(work, scopes)
        except SkillFailed as exc:
            note = f"{exc.reason} (retry {'is' if exc.retry_safe else 'is NOT'} safe)"
            task = self.store.update(task.advance(TaskState.FAILED, message=note, timestamp=self._now(),
                                                  data=exc.as_data()))
        except Paused as exc:  # nothing was done: a person, or a stronger credential, must say
            task = self.store.pause(task.advance(exc.STATE, message=str(exc), data=exc.asked,
                                                 timestamp=self._now()), pending._replace(paused=exc))
        else:
            parts = (Part(text=text),) if isinstance(text, str) else tuple(text)  # words, or parts
            artifact = Artifact(f"{task.id}-result", parts)
            task = self.store.update(task.advance(TaskState.COMPLETED, artifacts=(artifact,) if parts else (),
                                                  timestamp=self._now()))  # no parts: no artifact
        if effect is not None and task.state is TaskState.COMPLETED:
            self.ledger.record(effect, Effect(owner, task.id, pending.claim, "".join(a.text for a in task.artifacts)))
        elif effect is not None and task.state in PAUSED:  # held for the caller who may release it
            self.ledger.record(effect, Effect(owner, task.id, pending.claim, WAITING))
        elif effect is not None:  # nothing was done: it may be asked for again
            self._release(effect, task.id)
        return task

    def _already_done(self, earlier: Effect, message: Message, owner: str, payload: Any,
                      content: str) -> Task:
        """A request for an effect already carried out (or being carried out): the original
        task, when the same caller asks the same again and it is still kept; else a
        rejection saying why."""
        same = earlier.payload == canonical(payload)
        if earlier.owner == owner and same and earlier.task_id in self.store.tasks:
            return self.store.get(earlier.task_id, owner)
        if earlier.summary == WAITING:  # held, not done: say so, to its owner or anyone else
            holder = f"task {earlier.task_id}" if earlier.owner == owner else "another caller's task"
            note = f"{holder} is paused, waiting for its caller (an approval or a credential); nothing was done"
        elif earlier.owner != owner:
            note = "this was already done for another caller; nothing was done again"
        elif same:
            note = f"already done by task {earlier.task_id}: {earlier.summary}; nothing was done again"
        else:
            note = (f"task {earlier.task_id} already did this: {earlier.summary}; this request "
                    "differs from it, so nothing was done")
        return self._rejected(message, owner, content, note)

    def _rejected(self, message: Message, owner: str, content: str, refused: str | Refusal) -> Task:
        note, data = reason_and_data(refused)

        def rejected() -> Task:
            return self._submitted(message).advance(TaskState.REJECTED, message=note, data=data,
                                                    timestamp=self._now())
        return self.store.add(rejected, owner, message.message_id, content)[0]

    def get_task(self, task_id: str, *, owner: str = "") -> Task:
        return self.store.get(task_id, owner)

    def cancel_task(self, task_id: str, *, owner: str = "") -> Task:
        """Only a task waiting for its caller can be canceled (see TaskStore.cancel)."""
        task, pending = self.store.cancel(task_id, owner,
                                          lambda task: task.advance(TaskState.CANCELED, timestamp=self._now()))
        self._release(pending.effect, task.id)
        return task

    def _held(self, effect: str | None) -> Effect | None:
        """The ledger's entry for `effect` (under the ledger's lock). A claim held by a paused
        task that has since left the store is let go: nobody can approve it any more."""
        earlier = self.ledger.get(effect)
        if earlier is not None and earlier.summary == WAITING and earlier.task_id not in self.store.tasks:
            self.ledger.forget(effect)
            return None
        return earlier

    def _release(self, effect: str | None, task_id: str) -> None:
        """Let go of the claim `task_id` holds on `effect`: it ended with nothing done."""
        with self.ledger.lock:
            held = self.ledger.get(effect)
            if held is not None and held.task_id == task_id:
                self.ledger.forget(effect)

    def list_tasks(self, query: ListQuery, *, owner: str = "") -> list[Task]:
        return self.store.owned_by(owner, context_id=query.context_id, state=query.state,
                                   updated_after=query.updated_after)

    def _submitted(self, message: Message) -> Task:
        """A submitted task for `message`, which becomes the first entry of its history."""
        task_id = self.new_task_id()
        context = message.context_id or f"context-{task_id}"
        history = () if message.message_id is None else (message._replace(task_id=task_id, context_id=context),)
        return Task(task_id, context_id=context, history=history, timestamp=self._now())

    def _skill_for(self, message: Message) -> Skill:
        """The skill a message names in metadata.skillId, or the only one there is."""
        skill_id = message.skill_id
        if skill_id is None and len(self.skills) == 1:
            skill_id = next(iter(self.skills))
        if skill_id is None:
            raise InvalidParams(f"name a skill in message.metadata.skillId: one of {sorted(self.skills)}")
        if skill_id not in self.skills:
            raise InvalidParams(f"unknown skill {skill_id[:60]!r}; this agent offers {sorted(self.skills)}")
        return self.skills[skill_id]

    def _input_of(self, message: Message, skill: Skill) -> Any:
        """The skill's checked input: a data part as it is, or text read by `from_text`."""
        if any(p.raw is not None or p.url is not None for p in message.parts):
            raise ContentTypeNotSupported(f"skill {skill.card.id!r} takes data or text, not files")
        data = next((p for p in message.parts if p.data is not None), None)
        if data is not None:
            payload = data.data
        elif skill.from_text is not None:
            payload = skill.from_text(message.text)
        else:
            raise InvalidParams(f"skill {skill.card.id!r} needs a data part")
        problem = check(payload, skill.card.input_schema) if skill.card.input_schema else None
        if problem:
            raise InvalidParams(problem)
        return payload

    def _now(self) -> str | None:
        return self.clock() if self.clock else None

