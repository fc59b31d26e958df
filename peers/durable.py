"""`serve NAME --store FILE.db`: a served peer's tasks and its ledger, kept in SQLite.

Seed 004 asks of every failure "whether retrying is safe and which effects may already
have landed". A peer that keeps everything in memory forgets, when it restarts, both
the tasks its clients were told about and the refunds it made, so a client's retry
after a crash would refund again. With a store file:
- Every change is staged, under the store's lock (the ledger's under a lock of its own, memory
  and file together): a task's row, which holds the messages that made or continued it (each
  messageId and a SHA-256 of what it said, so a resent copy after a restart gets its first
  task; they go with their task), each effect the ledger records. What is staged is written,
  in one transaction, before anyone hears of any of it (`flush`: before the caller's answer, a
  stream's or a subscription's event, a webhook's delivery): a request nobody watches is one
  commit, however many changes it made, and a commit carries every request's changes staged
  by then (a row changed twice, once, as it is last). Nothing is read back per request: a
  row is found by what memory holds (a task's, or an effect's, by its `seq`).
  A commit that returned survives the process dying at any moment (kill -9); an OS crash
  or power cut may take back the last commits, never half of one (durable_schema.py). A
  write that fails stops the process: memory must never run ahead of what was told.
- Held for the process's life (a second peer: locked); its owner's alone, holding no credential (durable_private.py).
- On start, all of it is read back, oldest first (restart.py then settles it).
- The file carries a schema version. A file from a newer version, someone else's database, one
  locked by another process, not SQLite, not writable, or holding tables or rows this peer did
  not write is a DurableError naming the file (serve: one line, exit 2), and is left as it was.
Not here: a task's bytes (durable_codec.py), the file's tables (durable_schema.py), what a peer does (peer.py).
"""
from __future__ import annotations

import os
import sqlite3
import sys
import threading
from typing import Any

from peers.a2a.model import Task
from peers.durable_codec import from_json, ill_typed, message_keys, to_json
from peers.durable_private import private_file, scrub_owners
from peers.durable_schema import EFFECT_ROW, MAX_SEQ, PRAGMAS, SCHEMA_VERSION, TASK_ROW, ForeignFile, judged, migrate
from peers.ledger import Effect, Ledger
from peers.store import TaskStore
from transports.records import Record


class DurableError(Exception):
    """The store file cannot be used; the text names it and says why, in one line."""


class StoreFile:
    """One peer's SQLite file: opened, checked and written here only. It is held for the
    process's life (locking_mode EXCLUSIVE), so a second peer on the same file is refused
    as locked, rather than keeping a ledger of its own beside the first's."""

    def __init__(self, path: str) -> None:
        self.path, self.lock = path, threading.Lock()  # one connection, shared by the server's threads
        # Staged since the last commit: (table, seq) -> (statement, values, records to add as JSON at the commit).
        self.pending: dict[tuple[Any, ...], tuple[str, tuple[Any, ...], tuple[Any, ...]]] = {}
        self.staging = threading.Lock()
        # Group commit: changes staged, and on disk, so far; whether a commit is under way.
        self.staged, self.written, self.committing = 0, 0, False
        self.finished = threading.Condition(self.staging)  # a commit under way is done
        if not path or path == ":memory:" or path.startswith("file:"):
            raise DurableError(f"{path}: a store is a file's path (a store in memory survives nothing)")
        try:
            if not os.path.exists(path):  # its owner's alone before SQLite writes a byte (durable_private.py)
                private_file(path)
            self.db = sqlite3.connect(path, timeout=0.25, isolation_level=None, check_same_thread=False)
            version = judged(self.db)  # another program's file, or one this peer cannot read: refused, unchanged
            private_file(path)  # one judged this peer's: narrowed to its owner, if it is not
            for pragma in PRAGMAS:
                self.db.execute(f"PRAGMA {pragma}")
            # The file's lock, taken now and kept; what opening changes is committed once every row is read
            # back (`opened`): a file refused is left as it was, never half made this version's.
            self.db.execute("BEGIN IMMEDIATE")
            self.db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            migrate(self.db, version)  # an earlier schema's made this one's
            # Written even if there: a read-only file fails now.
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
            self.scrubbed = scrub_owners(self.db)  # no token in clear, from an earlier version either
        except (sqlite3.Error, ValueError, DurableError, ForeignFile) as exc:  # ValueError: an earlier schema's row
            if hasattr(self, "db"):  # the file let go now, not when the collector finds this: a caller may retry
                self.db.close()  # (its changes rolled back)
            raise exc if isinstance(exc, DurableError) else DurableError(f"{path}: " + (
                str(exc) if isinstance(exc, ForeignFile) else
                f"cannot be used as the store ({_why(exc)})" if isinstance(exc, sqlite3.Error) else
                f"holds a row this peer cannot read ({str(exc)[:120]})")) from None

    def opened(self) -> None:
        """What opening the file changed (a migration, owners scrubbed), committed: all of it was read back."""
        self.db.execute("COMMIT")
        if self.scrubbed:  # the clear owners' pages overwritten on disk now, not at some later checkpoint
            self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def stage(self, row: tuple[Any, ...], sql: str, values: tuple[Any, ...], *records: Any) -> None:
        """Keep `row`'s change for the next commit, replacing one staged before it."""
        with self.staging:
            self.pending[row] = (sql, values, records)
            self.staged += 1

    def commit(self) -> None:
        """Everything staged so far on disk, in one transaction, when this returns. A
        commit under way may carry it: then it waits for that one, and leaves. Otherwise it
        writes what every thread has staged by now, while the others go on working: one
        transaction for all of them (waiting in turn for the file, each would write its own)."""
        with self.staging:
            wanted = self.staged
            while self.committing and self.written < wanted:
                self.finished.wait()
            if self.written >= wanted:
                return
            self.committing, upto = True, self.staged
            staged, self.pending = self.pending, {}
        try:
            with self.lock:
                self._write([(sql, (*values, *map(to_json, records)) if records else values)
                             for sql, values, records in staged.values()])
        finally:
            with self.staging:
                self.committing, self.written = False, max(self.written, upto)
                self.finished.notify_all()

    def write(self, statements: list[tuple[str, tuple[Any, ...]]]) -> None:
        """The statements as one transaction, now (what is staged waits for its commit)."""
        with self.lock:
            self._write(statements)

    def _write(self, statements: list[tuple[str, tuple[Any, ...]]]) -> None:
        """Called holding the lock. A write that fails (a full disk, a failing device) stops
        the process: memory would otherwise run ahead of the file, which a restart trusts."""
        try:
            with _Transaction(self.db):
                for sql, values in statements:
                    self.db.execute(sql, values)
        except sqlite3.Error as exc:
            print(f"[store] {self.path}: a write failed ({_why(exc)}); stopping, so that nothing is "
                  "answered that is not on disk", file=sys.stderr, flush=True)
            os._exit(70)

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        with self.lock:
            return self.db.execute(sql).fetchall()

    def close(self) -> None:
        """What is staged, committed; then the file let go."""
        self.commit()
        with self.lock:
            self.db.close()


class _Transaction(Record):
    db: sqlite3.Connection

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
    """The task store, each change staged under its lock, written before it is told (`flush`)."""

    def __init__(self, file: StoreFile, *args: Any, **options: Any) -> None:
        super().__init__(*args, **options)
        self.file = file  # a row's seq is its task's `order`: the order tasks were made in

    def _kept(self, task_id: str) -> None:
        seq, owner = self.order[task_id], self.owners[task_id]  # a row by its seq: an id may be made again
        # Its messages, as its row keeps them (durable_schema.py): each one's id and digest, the owner its own.
        keys = [[message_id, self.by_message[(owner, message_id)][1]] for _, message_id in self.message_keys[task_id]]
        self.file.stage(("tasks", seq), TASK_ROW, (seq, task_id, owner, self.sizes[task_id]), keys, self.tasks[task_id])

    def flush(self) -> None:
        self.file.commit()

    def _forget(self, task_id: str) -> None:
        self.file.stage(("tasks", self.order[task_id]), "DELETE FROM tasks WHERE seq = ?", (self.order[task_id],))
        super()._forget(task_id)  # its messages with it: they are in its row


class DurableLedger(Ledger):
    """The ledger, each effect it records (or forgets) staged, written with the next commit."""

    def __init__(self, file: StoreFile, *args: Any) -> None:
        super().__init__(*args)
        self.file, self.seq = file, 0  # the last place given in the file: the next effect's is after it
        self.seqs: dict[str, int] = {}  # each effect's place, from its first record (as in memory): a restart evicts so
        self.writing = threading.Lock()  # memory and file change together under it: staged in the order made

    def record(self, key: str, effect: Effect) -> None:
        with self.writing:
            evicted = next(iter(self.effects)) if key not in self.effects and len(self.effects) >= self.max_effects \
                else None
            super().record(key, effect)
            if key not in self.seqs:  # a claim's result keeps the claim's place
                self.seq = self.seqs[key] = self.seq + 1
            self.file.stage(("effects", self.seqs[key]), EFFECT_ROW, (self.seqs[key], key), effect)
            self._delete(self.seqs.pop(evicted, None))  # the oldest, if the ledger was full

    def forget(self, key: str) -> None:
        with self.writing:
            super().forget(key)
            self._delete(self.seqs.pop(key, None))

    def _delete(self, seq: int | None) -> None:  # by its row, not its key: a key forgotten may be recorded again
        if seq is not None:
            self.file.stage(("effects", seq), "DELETE FROM effects WHERE seq = ?", (seq,))


def open_store(path: str, *, max_tasks: int = 1000, max_bytes: int = 16 << 20, max_effects: int = 10_000,
               remember_messages: bool = True) -> tuple[DurableStore, DurableLedger]:
    """A store and ledger on `path`, all it kept read back; DurableError if it cannot be used."""
    file = StoreFile(path)
    durable = DurableStore(file, max_tasks, max_bytes, remember_messages=remember_messages)
    effects = DurableLedger(file, max_effects)
    try:
        found: dict[str, int] = {}
        for seq, key, body in file.rows("SELECT seq, key, body FROM effects ORDER BY seq"):
            effect = from_json(body, Effect)  # below: a count this peer gave, a key once, text where it writes text
            if seq >= MAX_SEQ or type(key) is not str or key in found or not all(type(v) is str for v in effect):
                raise ValueError(f"effect {str(key)[:40]!r} is not one this peer wrote (seq {str(seq)[:24]!r})")
            found[key] = seq
            Ledger.record(effects, key, effect)
        effects.seqs = {key: found[key] for key in effects.effects}
        for key in found.keys() - effects.seqs.keys():  # kept under a larger bound: cut, as memory is
            effects._delete(found[key])
        for seq, task_id, owner, size, kept, body in file.rows("SELECT seq, id, owner, size, messages, body FROM tasks "
                                                                  "ORDER BY seq"):
            task, keys = from_json(body, Task), message_keys(kept)
            wrong = ill_typed(task)  # a field of another type would fail later, mid-request
            if task.id != task_id or not task.lifecycle or wrong or not isinstance(owner, str) \
                    or not isinstance(size, int) or size < 0 or seq >= MAX_SEQ:
                raise ValueError(f"task {str(task_id)[:40]} is not a task this peer wrote" + (f" ({wrong})" if wrong else ""))
            if task_id in durable.tasks:  # its id made again (a counter begun again): the later task has it
                durable._forget(task_id)
            durable.tasks[task_id], durable.owners[task_id], durable.order[task_id] = task, owner, seq
            durable.held.setdefault(owner, {})[task_id] = None
            durable.sizes[task_id], durable.message_keys[task_id] = size, []
            durable.kept_bytes += size
            for message_id, seen in keys:  # a message made or continued one task: kept once
                if (owner, message_id) in durable.by_message:
                    raise ValueError(f"message {message_id[:40]!r} is kept twice")
                durable.by_message[(owner, message_id)] = (task_id, seen)
                durable.message_keys[task_id].append((owner, message_id))
    except (sqlite3.Error, ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        file.db.close()  # as above
        raise DurableError(f"{path}: holds a row this peer cannot read ({str(exc)[:120]})") from None
    durable.seq, effects.seq = (file.rows(f"SELECT COALESCE(MAX(seq), 0) FROM {table}")[0][0] for table in ("tasks", "effects"))
    file.opened()
    return durable, effects
