"""A peer restarted on its store file: the tasks the restart interrupted, settled or continued.

A task that was running, or waiting for its caller, when the process died cannot simply
go on: its work was a running function, gone with the process. So, on start
(`serve --store`: a peer made on `open_store`'s store and ledger, then `restarted`):
- a task whose effect the ledger shows done is completed, with that result (the process
  died between committing the effect and saying so), whatever state its row is in: never run again;
- a task of one turn is continued: its message's work runs again, its lifecycle from
  submitted, by the peer core's own steps (`go_on`), under the ledger's claim, with the skill's
  admission judged again, so its effect still happens at most once; it completes, or
  pauses for its caller again (an approval asked for again is the same proposal, its
  hold ending at the time stated before the restart, not renewed: pause.py). Another
  task's paused claim holds nothing against it, as against an approval (peer.py); one being
  done, or done, does: it is failed. Tasks asking for one effect are continued one after
  another, the task holding the claim the dead process left first (its re-run, or failure,
  settles that claim), then in the store's order, each meeting the ledger as the one before
  left it, so which goes on never races with another's re-run holding the claim as being
  done (one waiting its turn is shown submitted: what it waits for comes back only with its
  re-run, the end of its hold kept); tasks of other effects at once. The restart waits CONTINUE_SECONDS for these
  in all; one still running then goes on, and so do the rest of its effect's, in turn;
- any other (a follow-up's grant, an approval or a step-up, only its caller can give
  again), or one that cannot go on, is failed, saying why, that nothing was done and a
  retry is safe, and any claim it holds is let go;
- a completed task whose claim was not yet marked done has it marked, and one whose effect
  the ledger does not hold (its row deleted, or edited, by hand) has it recorded as done: the
  ledger is what stops a second refund (a task the store's bounds keep: durable_read.py says why
  not one beyond them); a claim naming a completed task for another effect
  (edited), a failed, canceled or rejected task (it did nothing: its claim's release was lost,
  or a file edited), or a task gone, is let go; and then the store is cut to its bounds.
Not here: reading and writing the file (durable.py); a task's steps (peer.py).
"""
from __future__ import annotations

import threading
import time
from functools import partial

from peers.a2a.model import NEXT, PAUSED, Artifact, Part, Task, TaskState
from peers.durable import DurableLedger, DurableStore
from peers.ledger import BEING_DONE, WAITING, Effect, full
from peers.pause import Pending, reason_and_data
from peers.peer import Peer
from peers.skill import Request, read_request
from peers.tenants import split
from transports.errors import let_quit
from transports.escaping import escape

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Callable

INTERRUPTED = ("the agent restarted before this task ended; nothing was done, so a retry (a new "
               "message) is safe")
CONTINUE_SECONDS = 5.0  # how long a restart waits for the tasks it continues, in all
# An effect's row among the newest five, shown so: judged as it is read (durable_ledger.py), where a request meets it.
UNREADABLE = Effect("", "?", "", "a row this peer did not write (its store file edited?)")


class CannotGoOn(Exception):
    """Why a task a restart interrupted cannot run again; said in the note it is failed with."""


def restarted(peer: Peer, path: str, wait: float = CONTINUE_SECONDS) -> list[str]:
    """Settle the tasks a restart interrupted, on a peer made with `open_store(path)`'s
    store and ledger, waiting `wait` seconds for those it continues; returns what `serve
    --store` says of them as it starts (the ledger's newest five effects)."""
    settle(peer.store, peer.ledger, partial(go_on, peer), partial(effect_of, peer), wait, partial(done_by, peer))
    total, newest = peer.ledger.newest(5, UNREADABLE)  # from the file, as a continued task may still be recording
    tasks = len(peer.store.tasks)
    return [f"[serve] store: {_shown(path)} ({tasks} task{'' if tasks == 1 else 's'}, {total} "
            f"effect{'' if total == 1 else 's'} in the ledger)"] + [
        f"[serve] ledger: {_shown(key)}: {_shown(effect.summary)} (task {_shown(effect.task_id)})"
        for key, effect in newest]


def _shown(text: str, limit: int = 200) -> str:
    """A file's text as one line of ours: a row edited by hand may hold a newline, and a line of ours after it."""
    return escape(text[:limit]) + (f"... ({len(text) - limit:,} more characters)" if len(text) > limit else "")


def go_on(peer: Peer, task: Task, owner: str) -> Task:
    """Run again a task a restart interrupted, by send_message's own steps (peer.py):
    its message's work, its admission judged again, under the ledger's claim (so its
    effect still happens at most once), its lifecycle from submitted. A task of one
    turn only: CannotGoOn for a later turn's grant (an approval, a step-up), which only
    its caller can give again, or a request no longer admitted."""
    request = _request(peer, task, owner)
    refused = request.admit()
    if refused:
        raise CannotGoOn(f"it is no longer admitted: {reason_and_data(refused)[0][:200]}")
    with peer.ledger.lock:
        held = peer.ledger.get(request.effect)  # another task's paused claim holds nothing against it, as against an
        if held is not None and held.task_id != task.id and held.summary != WAITING:  # approval (peer._continue)
            raise CannotGoOn("another task holds its effect")  # (settle runs an effect's tasks in turn: no race)
        if held is not None and held.summary not in (WAITING, BEING_DONE):  # done by this task, as the ledger says
            raise CannotGoOn("the ledger shows its effect done already")  # (its row did not): never done again
        if not peer.ledger.room_for(request.effect, owner):  # its claim let go, and its caller's share full since
            raise CannotGoOn(full(peer.ledger, owner))
        if request.effect is not None:
            peer.ledger.record(request.effect, Effect(owner, task.id, request.claim, BEING_DONE))
    again = peer.store.update(submitted_again(task))
    until = (again.status_data or {}).get("holdsUntil")  # the hold stated before the restart, not renewed
    pending = Pending(None, request.effect, request.claim, request.admit, until)
    work = partial(request.skill.run, request.payload)
    return peer._answer(peer._run(work, again, pending, owner, frozenset()))  # the core's own steps


def submitted_again(task: Task) -> Task:
    """`task` as a restart runs it again: submitted, with the end of the hold a pause stated kept (unshown: it
    has no status message), so that a restart killed meanwhile, and the next, renew no hold."""
    until = (task.status_data or {}).get("holdsUntil")
    return task._replace(lifecycle=task.lifecycle[:1], status_message=None,
                         status_data={"holdsUntil": until} if isinstance(until, str) else None)


def effect_of(peer: Peer, task: Task, owner: str) -> str | None:
    """The ledger's key for what a task of one turn asks for; None if none, or if it cannot
    be read (`go_on` then says why, failing it)."""
    try:
        return _request(peer, task, owner).effect
    except Exception as exc:  # noqa: BLE001 - any reason go_on has to fail it: it is failed there
        let_quit(exc)
        return None


def done_by(peer: Peer, task: Task, owner: str) -> tuple[str, Effect] | None:
    """The ledger's entry a completed task made: its first turn's effect and claim, its result's text (None:
    none, or unreadable). However many turns it took (an approval's), its first turn asked for the effect."""
    try:
        request = _request(peer, task, owner, first=True)
    except Exception as exc:  # noqa: BLE001 - a task whose request cannot be read back claims nothing
        let_quit(exc)
        return None
    summary = "".join(artifact.text for artifact in task.artifacts)
    return None if request.effect is None else (request.effect, Effect(owner, task.id, request.claim, summary))


def _request(peer: Peer, task: Task, owner: str, first: bool = False) -> Request:
    """What a task of one turn asked; CannotGoOn for a later turn's grant, only its caller's to give again."""
    turns = [message for message in task.history if message.role == "user"]
    if len(turns) != 1 and not (first and turns):
        raise CannotGoOn("a later turn's grant is needed again")
    return read_request(peer.skills, turns[0], split(owner)[0])


def settle(store: DurableStore, ledger: DurableLedger, go_on: Callable[[Task, str], object] | None = None,
           effect_of: Callable[[Task, str], str | None] | None = None, wait: float = CONTINUE_SECONDS,
           done_by: Callable[[Task, str], tuple[str, Effect] | None] | None = None) -> None:
    """Each task the restart interrupted, as the module's rules say (`go_on(task, owner)`
    continues one, or raises if it cannot; without it, none is continued). All are settled
    first; then the store is cut to its bounds, and claims whose task is gone are let go (no
    thread runs yet: a claim let go is never one a running task holds); then the tasks still
    kept are continued, a thread for each effect (`effect_of(task, owner)`, else the claim the
    task holds, else the task alone) running its tasks in the store's order, waited for `wait`
    seconds in all (serve: CONTINUE_SECONDS); one still running then goes on (its task is working, as it would
    be), and its effect's later tasks after it; then all of it is written."""
    claims = {effect.task_id: key for key, effect in ledger.claims()}  # (an effect done: found by its key, below)
    to_continue: list[Task] = []
    for task in list(store.tasks.values()):  # each settled before any is continued: a continued task's
        key = claims.get(task.id)  # claim is recorded again meanwhile
        done = ledger.get(key)
        made = done_by(task, store.owners[task.id]) if done_by is not None and task.state is TaskState.COMPLETED \
            else None  # (key, effect) of what it did; None: not completed, or its request unreadable
        if task.state is TaskState.COMPLETED and done is not None and done.summary == BEING_DONE \
                and (made is None or made[0] == key):  # completed, and the process died before its claim was
            ledger.record(key, done._replace(summary="".join(a.text for a in task.artifacts)))  # marked: marked
        elif task.state is TaskState.COMPLETED:  # a ledger without it (a file edited by hand): it was done, and
            _learn(ledger, made)  # is never done again
        if task.state.is_terminal:  # an ended task holds no claim: one naming it (for an effect a completed task
            _let_go(ledger, task.id)  # never made; a failure's release lost, a file edited) held its order for ever
            continue
        own = effect_of(task, store.owners[task.id]) if effect_of is not None else None
        if own is None and done_by is not None:  # a task of later turns (approved): its first asked for its effect,
            own = (done_by(task, store.owners[task.id]) or (None,))[0]  # which the ledger holds done once it did it
        mine = ledger.get(own) if own is not None else None  # its own effect, from the file if done
        if _did(mine, task.id) and not _did(done, task.id):
            done = mine  # its claim as read was another row naming it (edited), or none: its own says done
        if done is not None and done.summary not in (WAITING, BEING_DONE):  # in whatever state its row says (a
            # file edited): it was done, so it is never run again; said so (a paused task by way of working)
            going = task if TaskState.COMPLETED in NEXT[task.state] else task.advance(TaskState.WORKING,
                                                                                       timestamp=task.timestamp)
            store.update(going.advance(TaskState.COMPLETED, timestamp=task.timestamp,
                                       artifacts=(Artifact(f"{task.id}-result", (Part(text=done.summary),)),)))
            _let_go(ledger, task.id)  # a stray claim naming it (a file edited) holds its order for ever otherwise
        elif go_on is None:
            _fail(store, ledger, task, "")
        else:
            to_continue.append(task)
    store.trim()  # the store's bounds hold on disk too: a file kept under larger ones is cut
    for key, effect in ledger.claims():  # a claim whose task the store no longer has (cut just now, too)
        if effect.task_id not in store.tasks:
            ledger.release(key, effect.task_id)
    in_turn: dict[tuple[str, str], list[Task]] = {}  # an effect's tasks, in the store's order (dicts keep it)
    for task in to_continue:
        if task.id in store.tasks:  # not one cut just now: its claim is let go
            key = (effect_of(task, store.owners[task.id]) if effect_of is not None else None) or claims.get(task.id)
            in_turn.setdefault(("effect", key) if key is not None else ("task", task.id), []).append(task)
    for (kind, key), tasks in in_turn.items():  # the claim's holder first: the claim the dead process left is its
        holder = ledger.get(key) if kind == "effect" else None  # (its re-run, or its failure, settles it)
        tasks.sort(key=lambda task: holder is None or task.id != holder.task_id)  # (stable: the rest in order)
    for tasks in in_turn.values():  # one waiting its turn is shown submitted: its pause (what it waits for) is made
        for task in tasks[1:]:  # again only by its re-run, and the peer may serve before that (CONTINUE_SECONDS)
            store.update(submitted_again(task))
    going = [threading.Thread(target=_continue_each, args=(store, ledger, go_on, tasks), daemon=True)
             for tasks in in_turn.values()]
    for thread in going:
        thread.start()
    deadline = time.monotonic() + wait
    for thread in going:
        thread.join(max(0.0, deadline - time.monotonic()))
    store.flush()


def _learn(ledger: DurableLedger, made: tuple[str, Effect] | None) -> None:
    """A completed task's effect recorded as done, unless the ledger shows it done (by it, or another task)."""
    held = ledger.get(made[0]) if made is not None else None
    if made is not None and (held is None or held.summary in (WAITING, BEING_DONE)):
        ledger.record(*made)


def _continue_each(store: DurableStore, ledger: DurableLedger, go_on: Callable[[Task, str], object],
                   tasks: list[Task]) -> None:
    for task in tasks:  # one after another: each meets the ledger as the one before left it
        _continue(store, ledger, go_on, task)


def _continue(store: DurableStore, ledger: DurableLedger, go_on: Callable[[Task, str], object], task: Task) -> None:
    try:
        go_on(task, store.owners[task.id])
    except Exception as exc:  # noqa: BLE001 - it cannot go on (CannotGoOn, or its skill's bug): failed
        let_quit(exc)
        _fail(store, ledger, store.tasks.get(task.id, task), str(exc) if isinstance(exc, CannotGoOn) else "",
              waited=task.state in PAUSED)  # as the restart found it, whatever it was shown as meanwhile


def _fail(store: DurableStore, ledger: DurableLedger, task: Task, why: str, waited: bool | None = None) -> None:
    """Failed, saying nothing was done; its claim (however it was made) let go. `waited`: it was paused."""
    _let_go(ledger, task.id)
    if task.state.is_terminal or task.id not in store.tasks:
        return
    waited = task.state in PAUSED if waited is None else waited
    note = INTERRUPTED if not waited else INTERRUPTED.replace("before this task ended", "while this task waited")
    store.update(task.advance(TaskState.FAILED, message=note + (f" (not continued: {why})" if why else ""),
                              timestamp=task.timestamp, data={"retrySafe": True, "effectsLanded": []}))


def _did(effect: Effect | None, task_id: str) -> bool:
    """Whether the ledger's `effect` is one done (no claim) by `task_id`."""
    return effect is not None and effect.task_id == task_id and effect.summary not in (WAITING, BEING_DONE)


def _let_go(ledger: DurableLedger, task_id: str) -> None:
    """Every claim `task_id` holds (however it was made) let go; an effect it did stays."""
    for key, effect in ledger.claims():  # a copy: under the ledger's lock, each is let go only if still the task's
        if effect.task_id == task_id:
            ledger.release(key, task_id)
