"""`serve NAME --store FILE.db`: a served peer's tasks and its ledger, kept in SQLite.

Seed 004 asks of every failure "whether retrying is safe and which effects may already
have landed". A peer that keeps everything in memory forgets, when it restarts, both
the tasks its clients were told about and the refunds it made, so a client's retry
after a crash would refund again. With a store file:
- Every change is written, one transaction each, before the call that made it returns,
  so before the peer answers: a task, the messages that made or continued it (by owner
  and messageId, with a SHA-256 of what they said, so a resent copy after a restart
  gets its first task), and each effect the ledger records. WAL journal, synchronous
  FULL: a transaction that returned is on disk, whatever happens to the process.
- On start, all of it is read back, oldest first, within the store's bounds (its task
  count and byte budget hold on disk too: what the store forgets is deleted). A task the
  restart interrupted cannot go on, because its work was a running function: one whose
  effect the ledger shows done is completed with that result; any other, running or
  waiting for its caller, is failed saying nothing was done and a retry is safe, and its
  claim on the effect is let go.
- The file carries a schema version. A file from a newer version, locked by another
  process, not a SQLite database, or not writable is a DurableError naming the file.
Not here: the bytes of a task (durable_codec.py), what a peer does (peer.py).
"""
from __future__ import annotations

import os
import sqlite3
import threading
from typing import Any, Callable

from peers.a2a.model import PAUSED, Artifact, Part, Task, TaskState
from peers.durable_codec import from_json, to_json
from peers.ledger import BEING_DONE, WAITING, Effect, Ledger
from peers.store import TaskStore, digest

SCHEMA_VERSION = 1
INTERRUPTED = ("the agent restarted before this task ended; nothing was done, so a retry (a new "
               "message) is safe")
_TABLES = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tasks (id TEXT PRIMARY KEY, seq INTEGER NOT NULL, owner TEXT NOT NULL,
                                  size INTEGER NOT NULL, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS messages (owner TEXT NOT NULL, message_id TEXT NOT NULL, task_id TEXT NOT NULL,
                                     digest TEXT NOT NULL, PRIMARY KEY (owner, message_id));
CREATE TABLE IF NOT EXISTS effects (key TEXT PRIMARY KEY, seq INTEGER NOT NULL, body TEXT NOT NULL);
"""


class DurableError(Exception):
    """The store file cannot be used; the text names it and says why, in one line."""


class StoreFile:
    """One peer's SQLite file: opened, checked and written here only."""

    def __init__(self, path: str) -> None:
        self.path, self.lock = path, threading.Lock()  # one connection, shared by the server's threads
        try:
            self.db = sqlite3.connect(path, timeout=1.0, isolation_level=None, check_same_thread=False)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=FULL")
            with self._transaction():
                for statement in filter(str.strip, _TABLES.split(";")):
                    self.db.execute(statement)
                found = self.db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
                if found is None:
                    self.db.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
                elif not found[0].isdigit() or int(found[0]) > SCHEMA_VERSION:
                    raise DurableError(f"{path}: made by a newer version of this peer (schema {found[0][:20]}); "
                                       f"this one reads schema {SCHEMA_VERSION}")
        except sqlite3.Error as exc:
            raise DurableError(f"{path}: cannot be used as the store ({_why(exc)})") from None

    def _transaction(self) -> Any:
        return _Transaction(self.db)

    def write(self, statements: list[tuple[str, tuple[Any, ...]]]) -> None:
        """The statements as one transaction, on disk when this returns."""
        with self.lock, self._transaction():
            for sql, values in statements:
                self.db.execute(sql, values)

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        with self.lock:
            return self.db.execute(sql).fetchall()

    def close(self) -> None:
        with self.lock:
            self.db.close()


class _Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")  # the write lock now, not halfway through

    def __exit__(self, kind: Any, *rest: Any) -> None:
        self.db.execute("COMMIT" if kind is None else "ROLLBACK")


def _why(exc: sqlite3.Error) -> str:
    text = str(exc)
    if "locked" in text or "busy" in text:
        return "it is locked: is another peer using it?"
    if "not a database" in text or "malformed" in text:
        return "it is not a SQLite database, or it is damaged"
    if "readonly" in text or "unable to open" in text:
        return "it cannot be opened for writing"
    return text[:200]


class DurableStore(TaskStore):
    """The task store, each change also written to the store file (see the module's rules)."""

    def __init__(self, file: StoreFile, *args: Any, **options: Any) -> None:
        super().__init__(*args, **options)
        self.file, self.seq = file, 0

    def add(self, make_task: Callable[[], Task], owner: str, message_id: str | None,
            content: str = "") -> tuple[Task, bool]:
        task, is_new = super().add(make_task, owner, message_id, content)
        if is_new:
            self._write(task, owner, message_id, content)
        return task, is_new

    def resume(self, task_id: str, owner: str, turns: Any, content: str, accept: Any) -> tuple[Task, Any]:
        task, waiting = super().resume(task_id, owner, turns, content, accept)
        if waiting is not None:
            self._write(task, owner, turns[-1].message_id, content)
        return task, waiting

    def pause(self, task: Task, waiting: Any) -> Task:
        return self._written(super().pause(task, waiting))

    def cancel(self, task_id: str, owner: str, canceled: Any) -> tuple[Task, Any]:
        task, waiting = super().cancel(task_id, owner, canceled)
        return self._written(task), waiting

    def update(self, task: Task) -> Task:
        return self._written(super().update(task))

    def _written(self, task: Task) -> Task:
        with self.lock:
            owner = self.owners.get(task.id)
        if owner is not None:  # a task forgotten meanwhile stays forgotten
            self._write(task, owner)
        return task

    def _write(self, task: Task, owner: str, message_id: str | None = None, content: str = "") -> None:
        with self.lock:
            self.seq += 1
            size = self.sizes.get(task.id, 0)
        statements = [("INSERT INTO tasks VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET "
                       "body = excluded.body, size = excluded.size", (task.id, self.seq, owner, size, to_json(task)))]
        if message_id is not None and self.remember_messages:
            statements.append(("INSERT OR REPLACE INTO messages VALUES (?, ?, ?, ?)",
                               (owner, message_id, task.id, digest(content))))
        self.file.write(statements)

    def _forget(self, task_id: str) -> None:
        super()._forget(task_id)
        self.file.write([("DELETE FROM tasks WHERE id = ?", (task_id,)),
                         ("DELETE FROM messages WHERE task_id = ?", (task_id,))])


class DurableLedger(Ledger):
    """The ledger, each effect also written to the store file. `crash_at` is a test
    double's hook (`serve --crash-at`): the process dies, as under SIGKILL, right after
    an effect is claimed ("before-effect": the skill has not run) or right after it is
    committed as done ("after-commit": before the peer answers)."""

    def __init__(self, file: StoreFile, *args: Any) -> None:
        super().__init__(*args)
        self.file, self.seq, self.crash_at = file, 0, None

    def record(self, key: str, effect: Effect) -> None:
        super().record(key, effect)
        self.seq += 1
        self.file.write([("INSERT INTO effects VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET body = excluded.body",
                          (key, self.seq, to_json(effect)))])
        done = effect.summary not in (BEING_DONE, WAITING)
        if (self.crash_at, done) in (("before-effect", False), ("after-commit", True)):
            os._exit(137)  # no clean-up, no answer: as a killed process

    def forget(self, key: str) -> None:
        super().forget(key)
        self.file.write([("DELETE FROM effects WHERE key = ?", (key,))])


def open_store(path: str, store: TaskStore, ledger: Ledger) -> tuple[DurableStore, DurableLedger]:
    """A durable store and ledger on `path`, with everything it kept read back and every
    interrupted task settled; DurableError if the file cannot be used."""
    file = StoreFile(path)
    durable = DurableStore(file, store.max_tasks, store.max_bytes, remember_messages=store.remember_messages)
    effects = DurableLedger(file, ledger.max_effects)
    try:
        for key, body in file.rows("SELECT key, body FROM effects ORDER BY seq"):
            Ledger.record(effects, key, from_json(body))
        for task_id, owner, size, body in file.rows("SELECT id, owner, size, body FROM tasks ORDER BY seq"):
            durable.tasks[task_id], durable.owners[task_id] = from_json(body), owner
            durable.sizes[task_id], durable.message_keys[task_id] = size, []
            durable.kept_bytes += size
        for owner, message_id, task_id, seen in file.rows("SELECT owner, message_id, task_id, digest FROM messages"):
            if task_id in durable.tasks:
                durable.by_message[(owner, message_id)] = (task_id, seen)
                durable.message_keys[task_id].append((owner, message_id))
    except (ValueError, KeyError, TypeError) as exc:
        raise DurableError(f"{path}: holds a row this peer cannot read ({str(exc)[:120]})") from None
    (durable.seq,), (effects.seq,) = (file.rows(f"SELECT COALESCE(MAX(seq), 0) FROM {table}")[0]
                                      for table in ("tasks", "effects"))
    with durable.lock:  # the store's bounds hold on disk too: a file kept under larger ones is cut
        durable._make_room(0, new_task=False)
        while len(durable.tasks) > durable.max_tasks:
            durable._forget(next(iter(durable.tasks)))
    _settle_interrupted(durable, effects)
    return durable, effects


def attach(peer: Any, path: str, crash_at: str | None = None) -> list[str]:
    """Give `peer` a durable store and ledger on `path`; returns what `serve --store` says
    of them as it starts (the ledger's newest five effects). DurableError if it cannot."""
    peer.store, peer.ledger = open_store(path, peer.store, peer.ledger)
    peer.ledger.crash_at = crash_at
    effects = list(peer.ledger.effects.items())
    return [f"[serve] store: {path} ({len(peer.store.tasks)} tasks, {len(effects)} effects in the ledger)"] + [
        f"[serve] ledger: {key}: {effect.summary} (task {effect.task_id})" for key, effect in effects[-5:]]


def _settle_interrupted(store: DurableStore, ledger: DurableLedger) -> None:
    claims = {effect.task_id: key for key, effect in ledger.effects.items()}
    for task in list(store.tasks.values()):
        if task.state.is_terminal:
            continue
        key = claims.get(task.id)
        done = ledger.effects[key] if key is not None else None
        if done is not None and done.summary not in (WAITING, BEING_DONE) and task.state is TaskState.WORKING:
            store.update(task.advance(TaskState.COMPLETED, timestamp=task.timestamp,  # it was done: say so
                                      artifacts=(Artifact(f"{task.id}-result", (Part(text=done.summary),)),)))
            continue
        if key is not None:
            ledger.forget(key)
        note = INTERRUPTED if task.state not in PAUSED else INTERRUPTED.replace("before this task ended",
                                                                                "while this task waited")
        store.update(task.advance(TaskState.FAILED, message=note, timestamp=task.timestamp,
                                  data={"retrySafe": True, "effectsLanded": False}))
