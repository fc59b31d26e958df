"""A peer restarted on its store file: the tasks the restart interrupted, settled or continued.

A task that was running, or waiting for its caller, when the process died cannot simply
go on: its work was a running function, gone with the process. So, on start
(`serve --store`: a peer made on `open_store`'s store and ledger, then `restarted`):
- a task whose effect the ledger shows done is completed, with that result (the process
  died between committing the effect and saying so);
- a task of one turn is continued: its message's work runs again, its lifecycle from
  submitted, by the peer core's own steps (`Peer.go_on`), under the ledger's claim, with the skill's
  admission judged again, so its effect still happens at most once; it completes, or
  pauses for its caller again (an approval asked for again is the same proposal, its
  hold ending at the time stated before the restart, not renewed: pause.py). The
  restart waits CONTINUE_SECONDS for these in all; one still running then goes on;
- any other (a follow-up's grant, an approval or a step-up, only its caller can give
  again), or one that cannot go on, is failed, saying why, that nothing was done and a
  retry is safe, and any claim it holds is let go;
- a completed task whose claim was not yet marked done has it marked; a claim whose task
  is gone is let go; and then the store is cut to its bounds.
Not here: reading and writing the file (durable.py); running a task again (peer.py).
"""
from __future__ import annotations

import threading
import time
from typing import Callable

from peers.a2a.model import PAUSED, Artifact, Part, Task, TaskState
from peers.durable import DurableLedger, DurableStore
from peers.ledger import BEING_DONE, WAITING
from peers.peer import CannotGoOn, Peer
from transports.errors import let_quit

INTERRUPTED = ("the agent restarted before this task ended; nothing was done, so a retry (a new "
               "message) is safe")
CONTINUE_SECONDS = 5.0  # how long a restart waits for the tasks it continues, in all


def restarted(peer: Peer, path: str) -> list[str]:
    """Settle the tasks a restart interrupted, on a peer made with `open_store(path)`'s
    store and ledger; returns what `serve --store` says of them as it starts (the
    ledger's newest five effects)."""
    settle(peer.store, peer.ledger, peer.go_on)
    effects = list(peer.ledger.effects.items())
    tasks = len(peer.store.tasks)
    return [f"[serve] store: {path} ({tasks} task{'' if tasks == 1 else 's'}, {len(effects)} "
            f"effect{'' if len(effects) == 1 else 's'} in the ledger)"] + [
        f"[serve] ledger: {key}: {effect.summary} (task {effect.task_id})" for key, effect in effects[-5:]]


def settle(store: DurableStore, ledger: DurableLedger, go_on: Callable[[Task, str], object] | None = None) -> None:
    """Each task the restart interrupted, as the module's rules say (`go_on(task, owner)`
    continues one, or raises if it cannot; without it, none is continued). Continuing
    runs in threads, waited for CONTINUE_SECONDS in all; one still running then goes on
    (its task is working, as it would be). Then claims whose task is gone are let go,
    and the store is cut to its bounds; then all of it is written."""
    claims = {effect.task_id: key for key, effect in ledger.effects.items()}
    going: list[threading.Thread] = []
    for task in list(store.tasks.values()):
        key = claims.get(task.id)
        done = ledger.effects[key] if key is not None else None
        if task.state is TaskState.COMPLETED and done is not None and done.summary == BEING_DONE:
            # completed, and the process died before its claim was marked done: mark it now
            ledger.record(key, done._replace(summary="".join(a.text for a in task.artifacts)))
        if task.state.is_terminal:
            continue
        if done is not None and done.summary not in (WAITING, BEING_DONE) and task.state is TaskState.WORKING:
            store.update(task.advance(TaskState.COMPLETED, timestamp=task.timestamp,  # it was done: say so
                                      artifacts=(Artifact(f"{task.id}-result", (Part(text=done.summary),)),)))
        elif go_on is None:
            _fail(store, ledger, task, "")
        else:
            going.append(threading.Thread(target=_continue, args=(store, ledger, go_on, task), daemon=True))
            going[-1].start()
    deadline = time.monotonic() + CONTINUE_SECONDS
    for thread in going:
        thread.join(max(0.0, deadline - time.monotonic()))
    for key, effect in list(ledger.effects.items()):  # a claim whose task the store no longer has
        if effect.summary in (BEING_DONE, WAITING) and effect.task_id not in store.tasks:
            ledger.forget(key)
    store.trim()  # the store's bounds hold on disk too: a file kept under larger ones is cut
    store.flush()


def _continue(store: DurableStore, ledger: DurableLedger, go_on: Callable[[Task, str], object], task: Task) -> None:
    try:
        go_on(task, store.owners[task.id])
    except Exception as exc:  # noqa: BLE001 - it cannot go on (CannotGoOn, or its skill's bug): failed
        let_quit(exc)
        _fail(store, ledger, store.tasks.get(task.id, task), str(exc) if isinstance(exc, CannotGoOn) else "")


def _fail(store: DurableStore, ledger: DurableLedger, task: Task, why: str) -> None:
    """Failed, saying nothing was done; its claim (however it was made) let go."""
    for key, effect in list(ledger.effects.items()):
        if effect.task_id == task.id and effect.summary in (BEING_DONE, WAITING):
            ledger.forget(key)
    if task.state.is_terminal or task.id not in store.tasks:
        return
    note = INTERRUPTED if task.state not in PAUSED else INTERRUPTED.replace("before this task ended",
                                                                            "while this task waited")
    store.update(task.advance(TaskState.FAILED, message=note + (f" (not continued: {why})" if why else ""),
                              timestamp=task.timestamp, data={"retrySafe": True, "effectsLanded": False}))
