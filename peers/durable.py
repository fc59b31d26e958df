"""`serve NAME --store FILE.db`: a served peer's tasks and its ledger, kept in SQLite.

Seed 004 asks of every failure "whether retrying is safe and which effects may already have landed". A peer that
keeps everything in memory forgets, when it restarts, both the tasks its clients were told about and the refunds it
made, so a client's retry after a crash would refund again. With a store file:
- Every change is staged, under the store's lock (the ledger's under a lock of its own, memory and file together): a
  task's row, which holds the messages that made or continued it (each messageId and a SHA-256 of what it said, so a
  resent copy after a restart gets its first task; they go with their task: a copy resent once its task is
  forgotten is a new message to the peer, its effect found done, never done again), each effect the ledger records.
  What is staged is written, in one transaction, before anyone hears of any of it (`flush`: before the caller's answer, a
  stream's or a subscription's event, a webhook's delivery): a request nobody watches is one commit, however many
  changes it made, and a commit carries every request's changes staged by then (a row changed twice, once, as it is
  last). Nothing is read back per request but an effect memory does not hold, by its key (one indexed read:
  durable_ledger.py): a row is found by what memory holds (a task's, or an effect's, by its slot), and a full
  store's new task is written over the row of the task it forgets (durable_schema.py). A commit
  that returned survives the process dying at any moment (kill -9); an OS crash or power cut may take back the last
  commits, never half of one (durable_schema.py). A write that fails stops the process: memory must never run ahead
  of what was told.
- Held for the process's life (a second peer: locked); its owner's alone, holding no credential (durable_private.py).
- On start, of the ledger only its claims and each caller's count (its effects done stay in the file, found when
  asked: durable_ledger.py), of the tasks only as many of the newest as its bounds hold (and any a claim names):
  older rows, never read, go as the store is cut to its bounds (durable_read.py; restart.py settles the rest).
- The file carries a schema version. A file from a newer version, someone else's database, one locked by another
  process, not SQLite, not writable, or holding tables or rows this peer did not write is a DurableError naming the
  file (serve: one line, exit 2), and is left as it was (an effect done's row is judged as it is read, not before:
  durable_ledger.py).
Not here: a task's bytes (durable_codec.py), the file's tables (durable_schema.py), what a peer does (peer.py).
"""
from __future__ import annotations

import os
import sqlite3
import sys
import threading

from peers.durable_codec import to_json
from peers.durable_ledger import DurableLedger, UnreadableEffect  # noqa: F401 - UnreadableEffect: serve's, from here
from peers.durable_private import private_file, scrub_owners
from peers.durable_read import cut_older, read_back
from peers.durable_schema import JOURNAL, PRAGMAS, SCHEMA_VERSION, TASK_ROW, ForeignFile, Slots
from peers.durable_versions import judged, migrate
from peers.store import TaskStore
from transports.records import Record

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Iterable


class DurableError(Exception):
    """The store file cannot be used; the text names it and says why, in one line."""


class StoreFile:
    """One peer's SQLite file: opened, checked and written here only. It is held for the
    process's life (locking_mode EXCLUSIVE), so a second peer on the same file is refused
    as locked, rather than keeping a ledger of its own beside the first's."""

    def __init__(self, path: str) -> None:
        self.path, self.lock = path, threading.Lock()  # one connection, shared by the server's threads
        # Staged since the last commit: (table, slot) -> (statement, values, records to add as JSON at the commit).
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
            for pragma in PRAGMAS:  # this connection's; the file's own journal once all is read back (`opened`)
                self.db.execute(f"PRAGMA {pragma}")
            if version is None:  # a new file's now: nothing in it to leave as it was, and of two peers opening
                self.db.execute(f"PRAGMA {JOURNAL}")  # it at once one is refused, not both (rollback's locks deadlock)
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
                f"cannot be used as the store ({_why(exc, path)})" if isinstance(exc, sqlite3.Error) else
                f"holds a row this peer cannot read ({str(exc)[:120]})")) from None

    def opened(self) -> None:
        """What opening the file changed (a migration, owners scrubbed), committed: all of it was read back.
        Only then is the file narrowed to its owner and its journal made the log: a file refused as it
        opened (a row this peer did not write) is left as it was, byte for byte, its mode too."""
        self.db.execute("COMMIT")
        private_file(self.path)  # a file made before this version's (or copied in) narrowed to its owner
        self.db.execute(f"PRAGMA {JOURNAL}")
        if self.scrubbed:  # the clear owners' pages overwritten on disk now, not at some later checkpoint
            self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def stage(self, row: tuple[Any, ...], sql: str, values: tuple[Any, ...], *records: Any) -> int:
        """Keep `row`'s change for the next commit, replacing one staged before it; the change's number:
        on disk once `written` is at least that."""
        with self.staging:
            self.pending[row] = (sql, values, records)
            self.staged += 1
            return self.staged

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
        try:  # (each row's values made as it is written: one that cannot be made is a write that fails)
            with self.lock:
                self._write((sql, (*values, *map(to_json, records)) if records else values)
                            for sql, values, records in staged.values())
        finally:
            with self.staging:
                self.committing, self.written = False, max(self.written, upto)
                self.finished.notify_all()

    def write(self, statements: list[tuple[str, tuple[Any, ...]]]) -> None:
        """The statements as one transaction, now (what is staged waits for its commit)."""
        with self.lock:
            self._write(statements)

    def _write(self, statements: Iterable[tuple[str, tuple[Any, ...]]]) -> None:
        """Called holding the lock. A write that fails (a full disk, a failing device, a value SQLite cannot
        bind) stops the process: memory would otherwise run ahead of the file, which a restart trusts (and
        a commit is counted written however it ends: the ledger lets go of what it carried, durable_ledger.py)."""
        try:
            with _Transaction(self.db):
                for sql, values in statements:
                    self.db.execute(sql, values)
        except Exception as exc:  # noqa: BLE001 - whatever stopped it, the transaction is rolled back, unwritten
            why = _why(exc, self.path) if isinstance(exc, sqlite3.Error) else \
                f"a row it cannot write: {type(exc).__name__}"  # (never the row: it may be any caller's words)
            print(f"[store] {self.path}: a write failed ({why}); stopping, so that nothing is "
                  "answered that is not on disk", file=sys.stderr, flush=True)
            os._exit(70)

    def rows(self, sql: str, values: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self.lock:
            return self.db.execute(sql, values).fetchall()

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
        if kind is None or self.db.in_transaction:  # a full disk's error ends it in SQLite: a ROLLBACK then
            self.db.execute("COMMIT" if kind is None else "ROLLBACK")  # would fail, and be told instead of why


def _why(exc: sqlite3.Error, path: str) -> str:
    text = str(exc)
    if "locked" in text or "busy" in text:
        return "it is locked: is another peer using it?"
    if "not a database" in text or "malformed" in text:
        return "it is not a SQLite database, or it is damaged"
    if "readonly" in text or "unable to open" in text:
        return "it cannot be opened for writing"
    if "full" in text or "I/O error" in text:  # SQLITE_FULL; SQLITE_IOERR: no room to map its shared memory, a quota,
        try:  # a failing device ...: what is free beside it tells which (Python 3.10 has no error's name)
            found = os.statvfs(os.path.dirname(os.path.abspath(path)))
            free: int | None = found.f_bavail * found.f_frsize
        except OSError:
            free = None
        room = f"{free:,} bytes free there" if free is not None else "its free space unknown"
        shm = getattr(exc, "sqlite_errorname", "") == "SQLITE_IOERR_SHMSIZE"  # its shared memory's file not grown
        if "full" in text or shm or free is not None and free < 1 << 20:
            return f"no room to write it: its disk is full, or a file met its size limit; {room}"
        return f"a disk I/O error: it could not be read or written (a size limit or quota met, a failing device?); {room}"
    return text[:200]


class DurableStore(TaskStore):
    """The task store, each change staged under its lock, written before it is told (`flush`)."""

    def __init__(self, file: StoreFile, *args: Any, **options: Any) -> None:
        super().__init__(*args, **options)
        self.file, self.slots = file, Slots()  # each task's row; the row's seq is its `order` (the order made)
        self.older: int | None = None  # rows of this seq or older were not read back (durable_read.py): cut

    def _kept(self, task_id: str) -> None:
        slot, owner = self.slots.slot(task_id), self.owners[task_id]  # an id may be made again: by its slot
        # Its messages, as its row keeps them (durable_schema.py): each one's id and digest, the owner its own.
        keys = [[message_id, self.by_message[(owner, message_id)][1]] for _, message_id in self.message_keys[task_id]]
        self.file.stage(("tasks", slot), TASK_ROW, (slot, self.order[task_id], task_id, owner, self.sizes[task_id]),
                        keys, self.tasks[task_id])

    def flush(self) -> None:
        self.file.commit()

    def trim(self) -> None:
        cut_older(self)  # first: a task read only as a claim named it (durable_read.py) makes none of the newest go
        super().trim()

    def _forget(self, task_id: str) -> None:  # its row deleted, unless the next task made is written over it
        slot = self.slots.give_back(task_id)
        if slot is not None:  # every kept task has one (`_kept`)
            self.file.stage(("tasks", slot), "DELETE FROM tasks WHERE slot = ?", (slot,))
        super()._forget(task_id)  # its messages with it: they are in its row


def open_store(path: str, *, max_tasks: int = 1000, max_bytes: int = 16 << 20, max_effects: int = 10_000,
               remember_messages: bool = True) -> tuple[DurableStore, DurableLedger]:
    """A store and ledger on `path`, all it kept read back; DurableError if it cannot be used."""
    file = StoreFile(path)
    durable = DurableStore(file, max_tasks, max_bytes, remember_messages=remember_messages)
    effects = DurableLedger(file, max_effects)
    try:
        read_back(file, durable, effects)
    except (sqlite3.Error, ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        file.db.close()  # as above
        raise DurableError(f"{path}: holds a row this peer cannot read ({str(exc)[:120]})") from None
    try:
        file.opened()
    except sqlite3.Error as exc:  # its log cannot be made (a folder not writable ...)
        file.db.close()
        raise DurableError(f"{path}: cannot be used as the store ({_why(exc, path)})") from None
    return durable, effects
