"""The peer core: an agent with a card and skills that turns a request into a Task.

Essay: Delegation over JSON-RPC ("submitted (the peer accepted it), working (the peer is doing it), and
completed (the peer is done)"). Seed 000's Handoff Contract: a skill takes a typed payload (checked against
the skill's input schema before any task exists) and ends in an explicit variant: completed with an artifact,
failed saying whether a retry is safe, rejected before any effect, or paused for its caller (an approval, or a
step-up credential: peers/pause.py).

Built by composition: a peer is given its card, its skills and its parts: where it keeps its tasks (`store`,
whose change feed streams and webhooks read), the `ledger` of what it has done, its `streams`, how it stamps
ids and times, and its log. Nothing outside sets its attributes; restart.py runs a task again after a restart,
by its steps. Every answer is kept first (`store.flush`: on disk, for a durable store). Wire- and
transport-neutral: `peers/methods.py` maps each wire's methods onto `send_message`, `get_task`, `cancel_task`
and `list_tasks`; `peers/app.py` serves it. Task ids come from a counter by default, so a learner's transcript
is stable; a served peer's are unguessable.
"""
from __future__ import annotations

from functools import partial

from peers.a2a.model import PAUSED, AgentCard, ListQuery, Message, Task, TaskPage, TaskState
from peers.ledger import BEING_DONE, WAITING, Effect, Ledger, full, why_not_again
from peers.pause import (Paused, Pending, Refusal, SkillFailed, asked, hold_over, paused_or_failed, reason_and_data,
                         run_granted)
from peers.on_first_use import made_on_first_use
from peers.skill import Request, Skill, produced, read_request, refuse_unaccepted, same_claim, skill_for
from peers.stamps import counter_ids
from peers.store import TaskStore, content_of, refuse_if_too_big
from peers.tenants import split
from transports.jsonrpc import InvalidParams

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Callable
    from peers.pages import Pages
    from peers.push import Webhooks
    from peers.push_payload import PushSettings
    from peers.streaming import Streams
    from threading import BoundedSemaphore

MAX_BACKGROUND = 16  # tasks worked on after their answer (returnImmediately) at one time


class Peer:
    def __init__(self, card: AgentCard, skills: list[Skill], *, store: TaskStore | None = None,
                 ledger: Ledger | None = None, streams: Streams | None = None, push: PushSettings | None = None,
                 new_task_id: Callable[[], str] | None = None, clock: Callable[[], str] | None = None,
                 log: Callable[[str], None] | None = None, allow_private_webhooks: bool = False,
                 extended_card: AgentCard | None = None, max_tasks: int = 1000, hold_seconds: float | None = None) -> None:
        self.card = card
        self.extended_card = extended_card  # shown only to authenticated callers
        self.skills = {s.card.id: s for s in skills}
        self.store = store or TaskStore(max_tasks)
        self.changes = self.store.changes  # each change to a task, published once (peers/changes.py)
        self.ledger = ledger or Ledger()  # what this peer has done, kept beyond the store's window
        if streams is not None:  # given (a test double's); else made when a caller first streams
            self.streams = streams
        self.new_task_id = new_task_id or counter_ids("task")
        self.clock, self.hold_seconds = clock, hold_seconds  # no clock: a stable transcript, and no hold ends
        self.log = log or (lambda line: None)
        self.allow_private_webhooks, self.push = allow_private_webhooks, push  # for `webhooks`, at the end

    def send_message(self, message: Message, *, owner: str = "", scopes: frozenset[str] = frozenset(),
                     wait: bool = True, started: Callable[..., None] | None = None) -> Task:
        """Run the skill a message asks for, as a task: submitted -> working -> an end.

        `owner` is who asked, in its tenant (store.py, tenants.py); a message it sent before gets the task it made
        the first time, and the skill does not run again. A message naming a task (its taskId) is the next turn of
        that task: see `_continue`. `scopes`: what the caller's credential grants beyond asking (a step-up's scope).
        With `wait=False` (returnImmediately) the task is answered as submitted and worked on in the background
        (MAX_BACKGROUND at once; beyond, the caller waits). `started(task, is_new)` is told of the task answered, a
        new one before its work begins (to register the caller's webhook).
        """
        if message.task_id is not None:
            return self._answer(self._continue(message, owner, scopes, started))
        request = read_request(self.skills, message, split(owner)[0])  # bad input fails here, before any task
        task, is_new = self._open(request, message, owner)  # submitted, or what was said before
        if started is not None:  # told of the task answered: a new one before its work begins
            started(task, is_new)
        if not is_new:
            return self._answer(task)
        pending = Pending(None, request.effect, request.claim, request.admit)
        work = partial(self._run, partial(request.skill.run, request.payload), task, pending, owner, scopes)
        if not wait and self.background.acquire(blocking=False):  # the caller asks how it went later
            import threading  # loaded by the runs that work in the background, not by every start-up
            threading.Thread(target=self._in_background, args=(work,), daemon=True).start()
            return self._answer(task)
        return self._answer(work())  # `s` here: the lifecycle, in _run

    def _open(self, request: Request, message: Message, owner: str) -> tuple[Task, bool]:
        """The new task, submitted, its effect claimed in the ledger in the same step (True); or, with nothing done
        (False): a rejection saying why, the task that did this effect already, or the task this message made before."""
        refused = request.admit()
        if refused:  # not permitted: a rejected task says why, and nothing was done
            return self._rejected(message, owner, request.content, refused), False
        with self.ledger.lock:  # "done already?" and "claim it" as one step
            made = self.store.made_by(owner, message.message_id, request.content)  # A2A: a message sent before gets
            if made is not None:  # the task it made, not the one the ledger names for its effect now (a retry's)
                return made, False
            earlier = self.ledger.held(request.effect, self._holds, owner)
            room = earlier is not None or self.ledger.room_for(request.effect, owner, self._holds)  # none forgotten
            if earlier is None and room:
                task, is_new = self.store.add(lambda: self._submitted(message), owner, message.message_id,
                                              request.content)
                if is_new and request.effect is not None:  # claimed: a copy arriving meanwhile finds this task
                    self.ledger.record(request.effect, Effect(owner, task.id, request.claim, BEING_DONE))
        if earlier is not None:  # the same effect asked for again: it never happens twice
            return self._already_done(earlier, message, owner, request), False
        if not room:
            return self._rejected(message, owner, request.content, full(self.ledger, owner)), False
        return task, is_new

    def _in_background(self, work: Callable[[], Task]) -> None:
        try:
            work()
        except Exception as exc:  # noqa: BLE001 - a skill's bug: said in the log, never lost in a thread
            self.log(f"internal error in background work: {exc!r}")
        finally:
            self.background.release()

    def _continue(self, message: Message, owner: str, scopes: frozenset[str],
                  started: Callable[[Task], None] | None = None) -> Task:
        """The next turn of a task (A2A: a message carrying taskId). Only a paused task takes one, and only with
        what it waits for; the turn joins the task's history, and then, not before, `started(task)` is told of it."""
        content = content_of(message)
        refuse_if_too_big(content)
        task = self.store.get(message.task_id, owner)  # unknown, or another caller's: -32001
        first = next((turn for turn in task.history if turn.role == "user"), None)
        if first is not None:  # a later turn's parts are judged by the task's skill's inputModes too
            refuse_unaccepted(skill_for(self.skills, first), message)
        if message.context_id not in (None, task.context_id):
            raise InvalidParams(f"contextId {message.context_id[:80]!r} is not the context of "
                                f"task {task.id} ({task.context_id})")
        turns = (asked(task), message._replace(context_id=task.context_id))  # the turn it paused on, and this
        task, pending = self.store.resume(task.id, owner, turns, content,
                                          lambda pending: pending.paused.accept(message, scopes))
        if started is not None:  # the turn is taken (by this message: its webhook is kept whatever), or was
            started(task, pending is not None)
        if pending is None:  # the same follow-up delivered again: the task as it is now
            return task
        refused = pending.admit()  # the handoff's grant, again: it may have expired meanwhile
        if refused:
            self.ledger.release(pending.effect, task.id)
            note, data = reason_and_data(refused)
            return self.store.update(task.advance(TaskState.FAILED, message=note, data=data, timestamp=self._now()))
        with self.ledger.lock:  # approved: claim the effect, unless another task did it meanwhile
            earlier = self.ledger.get(pending.effect)
            if earlier is not None and (earlier.task_id == task.id or earlier.summary == WAITING):
                earlier = None  # the claim it held while it waited, or another caller's paused task's: not done
            room = earlier is not None or self.ledger.room_for(pending.effect, owner, self._holds)
            if earlier is None and room and pending.effect is not None:
                self.ledger.record(pending.effect, Effect(owner, task.id, pending.claim, BEING_DONE))
        if not room:  # its claim let go meanwhile, and the ledger full: nothing is forgotten to do it
            return self.store.update(task.advance(TaskState.FAILED, timestamp=self._now(), message=full(
                self.ledger, owner), data={"retrySafe": True, "effectsLanded": []}))  # nothing done, as seed 004 says it
        if earlier is not None:  # done by another meanwhile, or being done now (it may yet do nothing): not by this task
            by = f"task {earlier.task_id}" if earlier.owner == owner else "another caller"
            now = earlier.summary == BEING_DONE
            return self.store.update(task.advance(TaskState.FAILED, timestamp=self._now(), message=(
                f"{by} is doing this now; nothing was done by this task (ask again once it ends)" if now else
                f"{by} already did this meanwhile; nothing was done again (a retry finds it done)"),
                data={"retrySafe": True, "effectsLanded": [] if now else [split(pending.effect)[1]]}))
        return self._run(pending.paused.then, task, pending, owner, scopes)

    def _run(self, work: Callable[[], str], task: Task, pending: Pending, owner: str, scopes: frozenset[str]) -> Task:
        """-> working -> completed, failed, or paused for a person. An effect done is in the ledger before the task
        says completed (a restart between the two completes it: restart.py); a claim that did nothing is forgotten."""
        task = self.store.update(task.advance(TaskState.WORKING, timestamp=self._now(), data=pending.hold))
        effect = pending.effect
        try:
            text = run_granted(work, scopes)
        except SkillFailed as exc:
            note = f"{exc.reason} (retry {'is' if exc.retry_safe else 'is NOT'} safe)"
            task = self.store.update(task.advance(TaskState.FAILED, message=note, timestamp=self._now(), data=exc.as_data()))
        except Paused as exc:  # nothing was done: a person, or a stronger credential, must say
            task = paused_or_failed(task, exc, self.store.paused_by(owner), pending.holds_until, self.hold_seconds,
                                    self._now())
            if effect is not None and task.state in PAUSED:  # held for its caller before the pause can be
                self.ledger.record(effect, Effect(owner, task.id, pending.claim, WAITING))  # answered or canceled
            task = self.store.pause(task, pending._replace(paused=exc)) if task.state in PAUSED \
                else self.store.update(task)  # over the caller's share: nothing is held
        else:
            artifacts, metadata = produced(text, f"{task.id}-result")  # words, parts, or a Result (skill.py)
            done = task._replace(metadata=metadata).advance(TaskState.COMPLETED, artifacts=artifacts,
                                                            timestamp=self._now())
            if effect is not None:
                self.ledger.record(effect, Effect(owner, task.id, pending.claim, "".join(a.text for a in done.artifacts)))
            return self.store.update(done)
        if effect is not None and task.state not in PAUSED:  # nothing was done: it may be asked for again
            self.ledger.release(effect, task.id)
        return task

    def _already_done(self, earlier: Effect, message: Message, owner: str, request: Request) -> Task:
        """A request for an effect already done (or being done): the original task, if the same caller asks the same and it
        is kept; else a rejection saying why. So is a message resent once its task is forgotten, its messageId with it."""
        same = same_claim(earlier.payload, request.claim)
        kept = self.store.find(earlier.task_id, owner) if earlier.owner == owner and same else None  # one look, as
        return kept if kept is not None else \
            self._rejected(message, owner, request.content, why_not_again(earlier, owner, same))  # it may go meanwhile

    def _rejected(self, message: Message, owner: str, content: str, refused: str | Refusal) -> Task:
        note, data = reason_and_data(refused)
        return self.store.add(lambda: self._submitted(message).advance(  # kept under its messageId, as any task
            TaskState.REJECTED, message=note, data=data, timestamp=self._now()), owner, message.message_id, content)[0]

    def _holds(self, task_id: str) -> bool:  # a paused task's claim: kept, still paused (or about to be), hold not over
        task = self.store.tasks.get(task_id)  # working: its hold is written just before its pause is kept (_run)
        return task is not None and (task.state in PAUSED or task.state is TaskState.WORKING) \
            and not hold_over(task, self._now())

    def get_task(self, task_id: str, *, owner: str = "") -> Task:
        return self._answer(self.store.get(task_id, owner))

    def cancel_task(self, task_id: str, *, owner: str = "") -> Task:
        """Only a task waiting for its caller can be canceled (see TaskStore.cancel)."""
        task, pending = self.store.cancel(task_id, owner, lambda task: task._replace(  # the turn it waited on kept
            history=task.history + (asked(task),)).advance(TaskState.CANCELED, timestamp=self._now()))
        self.ledger.release(pending.effect, task.id)
        return self._answer(task)

    def list_tasks(self, query: ListQuery, *, owner: str = "") -> TaskPage:
        found = self.store.owned_by(owner, context_id=query.context_id, state=query.state,
                                    updated_after=query.updated_after)
        self.store.flush()
        return self.pages.page(found, query, owner, self.store.sizes.get)

    def _answer(self, task: Task) -> Task:
        """`task`, once every change it tells of is kept: a durable store writes all it staged (any request's), in one commit."""
        self.store.flush()
        return task

    def _submitted(self, message: Message) -> Task:
        """A submitted task for `message`, which becomes the first entry of its history."""
        task_id = self.new_task_id()
        context = message.context_id or f"context-{task_id}"
        history = () if message.message_id is None else (message._replace(task_id=task_id, context_id=context),)
        return Task(task_id, context_id=context, history=history, timestamp=self._now())

    def _now(self) -> str | None:
        return self.clock() if self.clock else None

    @made_on_first_use
    def background(self) -> BoundedSemaphore:  # returnImmediately's workers, MAX_BACKGROUND at once; made as a caller
        import threading  # first asks: a run that never works in the background never loads threading
        return threading.BoundedSemaphore(MAX_BACKGROUND)

    @made_on_first_use
    def streams(self) -> Streams:  # its open streams, bounded (streaming.py); made as a caller first streams
        from peers.streaming import Streams
        return Streams()

    @made_on_first_use
    def webhooks(self) -> Webhooks:  # where pushes may go, spelled as `push` says (push.py); made as one is set
        from peers.push import Webhooks
        return Webhooks(self.changes, allow_private=self.allow_private_webhooks, settings=self.push, log=self.log)

    @made_on_first_use
    def pages(self) -> Pages:  # ListTasks's cursors, sealed with a key of its own (pages.py); made at a first list
        from peers.pages import Pages
        return Pages()
