"""A peer restarted on its store file: the tasks the restart interrupted, settled or continued.

A task that was running, or waiting for its caller, when the process died cannot simply
go on: its work was a running function, gone with the process. So, on start
(`serve --store`, through `attach`):
- a task whose effect the ledger shows done is completed, with that result (the process
  died between committing the effect and saying so);
- a task of one turn is continued: its message's work runs again from submitted, by the
  peer core's own steps, under the ledger's claim, with the skill's admission judged
  again, so its effect still happens at most once; it completes, or pauses for its
  caller again (an approval asked for again is the same proposal);
- any other (a follow-up's grant, an approval or a step-up, only its caller can give
  again) is failed, saying nothing was done and a retry is safe, and its claim let go;
- a completed task whose claim was not yet marked done has it marked.
Not here: reading and writing the file (durable.py).
"""
from __future__ import annotations

from functools import partial
from typing import Any, Callable

from peers.a2a.model import PAUSED, Artifact, Part, Task, TaskState
from peers.durable import DurableLedger, DurableStore, open_store
from peers.ledger import BEING_DONE, WAITING, Effect
from peers.pause import Pending
from peers.skill import canonical

INTERRUPTED = ("the agent restarted before this task ended; nothing was done, so a retry (a new "
               "message) is safe")


def attach(peer: Any, path: str, crash_at: str | None = None) -> list[str]:
    """Give `peer` a durable store and ledger on `path`; returns what `serve --store` says
    of them as it starts (the ledger's newest five effects). DurableError if it cannot."""
    peer.store, peer.ledger = open_store(path, peer.store, peer.ledger)
    settle(peer.store, peer.ledger, partial(_go_on, peer))
    peer.ledger.crash_at = crash_at
    effects = list(peer.ledger.effects.items())
    return [f"[serve] store: {path} ({len(peer.store.tasks)} tasks, {len(effects)} effects in the ledger)"] + [
        f"[serve] ledger: {key}: {effect.summary} (task {effect.task_id})" for key, effect in effects[-5:]]


def _go_on(peer: Any, task: Task, owner: str) -> None:
    """Continue a task the restart interrupted, by the peer core's own steps, as
    send_message began it: its message's work again, from submitted, under the ledger's
    claim (so its effect still happens at most once), with the skill's admission judged
    again. A task of one turn only: one with a follow-up (an approval given, a step-up)
    would need that turn's grant again, which only its caller can give."""
    turns = [message for message in task.history if message.role == "user"]
    if len(turns) != 1:
        raise ValueError("only a task of one turn is continued")
    skill = peer._skill_for(turns[0])
    payload = peer._input_of(turns[0], skill)
    effect = skill.effect_of(payload) if skill.effect_of else None
    admit = partial(skill.admit, payload, turns[0].metadata or {}) if skill.admit else lambda: None
    if admit():
        raise ValueError("its admission no longer holds")
    with peer.ledger.lock:
        held = peer.ledger.get(effect)
        if held is not None and held.task_id != task.id:
            raise ValueError("another task holds its effect")
        if effect is not None:
            peer.ledger.record(effect, Effect(owner, task.id, canonical(payload), BEING_DONE))
    again = peer.store.update(task._replace(lifecycle=task.lifecycle[:1], status_message=None, status_data=None))
    peer._run(partial(skill.run, payload), again, Pending(None, effect, canonical(payload), admit), owner,
              frozenset())


def settle(store: DurableStore, ledger: DurableLedger, go_on: Callable[[Task, str], None] | None = None) -> None:
    """Each task the restart interrupted, as the module's rules say (`go_on(task, owner)`
    continues one, or raises if it cannot; without it, none is continued)."""
    claims = {effect.task_id: key for key, effect in ledger.effects.items()}
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
            continue
        if go_on is not None:
            try:
                go_on(task, store.owners[task.id])
                continue
            except Exception:  # noqa: BLE001 - it cannot go on (see _go_on): failed, as below
                task = store.tasks[task.id]
        if key is not None and key in ledger.effects:
            ledger.forget(key)
        if task.state.is_terminal:
            continue
        note = INTERRUPTED if task.state not in PAUSED else INTERRUPTED.replace("before this task ended",
                                                                                "while this task waited")
        store.update(task.advance(TaskState.FAILED, message=note, timestamp=task.timestamp,
                                  data={"retrySafe": True, "effectsLanded": False}))
