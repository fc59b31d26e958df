"""The store file's shape (peers/durable.py): its tables, the rows a commit writes, its pragmas.

Rules: what one request writes is a few pages of each tree it changes, and each page is a
frame appended to the write-ahead log (a system call or two, and a page: 1 KiB), so each table is
one tree, a task is one row (the messages that made or continued it inside it: they live
and go with it), and a row is found by what memory already holds, never read back first;
one index only, the effects' by key, for the ledger's effects done, which memory does not
hold (durable_ledger.py). A file of an earlier schema is migrated in the transaction that
opens it; one of a later schema is refused (durable_versions.py). Every setting of the file
is chosen here, and says why.
Not here: opening, staging and committing (durable.py), a row's bytes (durable_codec.py).
"""
from __future__ import annotations

import sqlite3


TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

SCHEMA_VERSION = 6  # 1 kept an index beside each table's rowid tree, twice the frames; 2 kept a task's
# messages in a table of their own, a second row for each request to write and delete; 3 kept
# effects in their keys' order, so each new one landed mid-tree and split its pages half-full
# (under bench/cpu_per_request.py's load, a full store's commit wrote 6.5 pages; it wrote 5
# then); 4 appended each new row at its tree's right edge and, once full, cut the oldest at its
# left: a new page, a page freed, their parents and the free list's pages each commit (9.4 KB
# a request), where a row written over in place changes one page; 5 had no index, so every effect
# was read back, and held in memory, as the peer started: a long-served ledger (200,000 refunds)
# grew each start's memory and time without bound. All five read, and migrated (durable_versions.py).
# Each table is a rowid tree of `slot`s. A thing forgotten leaves its slot free, and the next
# thing made takes it (`Slots`): its row is written over the forgotten one's, in place, so a full
# store's request changes a page of its tree, not its two edges (the ledger forgets only a claim
# that did nothing: its rows are appended). A row's `seq` is the order its
# task (or effect) was made in, which memory holds (ListTasks's tie-break; the oldest is
# forgotten first): rows are read back in its order. A task's row carries the messages that made
# or continued it, as JSON: [[messageId, digest], ...], its owner the row's (they live and go
# with their task). An effect's key and owner are columns: an effect done is found by its key
# (`effects_by_key`: one more page a new effect writes, a few entries of 30 bytes, where reading
# every effect back cost each start all of them), and each caller's share is counted by owner as
# the peer starts. This text is part of the schema: a file's tables and index are judged by the
# statements that made them (`_shape`), so any change to it is a new version.
TABLES = """
CREATE TABLE IF NOT EXISTS tasks (slot INTEGER PRIMARY KEY, seq INTEGER NOT NULL, id TEXT NOT NULL,
                                  owner TEXT NOT NULL, size INTEGER NOT NULL, messages TEXT NOT NULL,
                                  body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS effects (slot INTEGER PRIMARY KEY, seq INTEGER NOT NULL, key TEXT NOT NULL,
                                    owner TEXT NOT NULL, body TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS effects_by_key ON effects (key);
"""
# A row's seq is a count this peer gave, from 1, and the next row's is one more: a file whose
# seq is not an integer, or too near SQLite's largest (2**63 - 1) to count on from, was not
# written by this peer (a row past it could not be written: every request would fail).
MAX_SEQ = 1 << 62


def run(db: sqlite3.Connection, script: str) -> None:
    """Statements one by one, inside the transaction begun (executescript would commit it)."""
    for statement in filter(str.strip, script.split(";")):
        db.execute(statement)


class ForeignFile(Exception):
    """A file this peer does not read: its schema, or its tables' shape, is not one it makes. The text says why."""


def shaped(db: sqlite3.Connection, shapes: dict[str, Any]) -> None:
    """ForeignFile unless the file's tables, and indexes, are those `shapes` holds (`shapes_of`)."""
    for table, shape in shapes.items():
        if table != "indexes" and _shape(db, table) != shape:
            raise ForeignFile(f"has a {table} table that is not one this peer makes")
    indexes = {}
    for kind, name, made in db.execute("SELECT type, name, sql FROM sqlite_master WHERE name NOT IN ('meta', 'tasks', "
                                       "'effects') AND name NOT LIKE 'sqlite^_%' ESCAPE '^'"):  # SQLite's own aside
        # An index or a table more: a unique index, say, would refuse the peer's next write (exit 70).
        if kind != "index" or shapes["indexes"].get(name, "") != _spaced(made):
            raise ForeignFile(f"has {'an' if kind == 'index' else 'a'} {kind} ({str(name)[:40]!r}) this peer never makes")
        indexes[name] = made
    for name in set(shapes["indexes"]) - set(indexes):  # without it, each lookup would read the whole table
        raise ForeignFile(f"has no index {name}, which this peer makes")


def _shape(db: sqlite3.Connection, table: str) -> tuple[list[tuple[Any, ...]], Any]:
    """Each column's name, declared type, NOT NULL, default and place in the primary key; and the
    statement that made the table, however spaced or quoted (a CHECK or a constraint more is another table)."""
    columns = [tuple(column[1:]) for column in db.execute(f"PRAGMA table_info({table})")]
    made = db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()
    return columns, _spaced(made[0]) if made else None


def _spaced(made: Any) -> Any:
    return " ".join(made.replace('"', "").split()) if isinstance(made, str) else None


def shapes_of(tables: str) -> dict[str, Any]:
    """What `tables` makes, as `shaped` reads it (an empty database, in memory, made once)."""
    made = sqlite3.connect(":memory:")
    try:
        run(made, tables)
        indexes = {name: _spaced(sql) for name, sql in made.execute("SELECT name, sql FROM sqlite_master "
                                                                    "WHERE type = 'index'")}
        return {**{table: _shape(made, table) for table in ("tasks", "effects")}, "indexes": indexes}
    finally:
        made.close()


# Each staged row replaces the whole row (or deletes it), so of two changes to one row
# before a commit only the last need be written: a commit is all of them or none. A slot
# freed and taken again before the commit is one change: the new row, over the old.
TASK_ROW = ("INSERT INTO tasks VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (slot) DO UPDATE SET seq = excluded.seq, "
            "id = excluded.id, owner = excluded.owner, size = excluded.size, messages = excluded.messages, "
            "body = excluded.body")
EFFECT_ROW = ("INSERT INTO effects VALUES (?, ?, ?, ?, ?) ON CONFLICT (slot) DO UPDATE SET seq = excluded.seq, "
              "key = excluded.key, owner = excluded.owner, body = excluded.body")


class Slots:
    """Which slot (row) of a table each thing kept has: a thing forgotten gives its slot back, and
    the next thing made takes the slot given back last (in a full store, the one just forgotten).
    Not thread-safe: its table's lock is held around it (the store's, the ledger's)."""

    def __init__(self, taken: dict[Any, int] | None = None) -> None:
        self.of: dict[Any, int] = dict(taken or {})  # a thing's key -> its slot
        self.free: list[int] = []
        self.last = max(self.of.values(), default=0)  # no slot above it was ever given

    def slot(self, key: Any) -> int:
        """`key`'s slot: its own, or the one given back last, or a new one."""
        slot = self.of.get(key)
        if slot is None:
            if self.free:
                slot = self.free.pop()
            else:
                slot = self.last = self.last + 1
            self.of[key] = slot
        return slot

    def give_back(self, key: Any) -> int | None:
        """`key`'s slot, now free (None: it had none)."""
        slot = self.of.pop(key, None)
        if slot is not None:
            self.free.append(slot)
        return slot


# The file's settings, each chosen (issue 36 measured them: bench/cpu_per_request.py):
# - locking_mode EXCLUSIVE: the file is this process's for its life (a second peer on it is
#   refused as locked, rather than keeping a ledger of its own beside the first's).
# - journal_mode WAL (JOURNAL, the file's own setting: a new file's as it is made, another's once
#   every row is read back, so a file refused as it opens keeps the journal it had): a commit appends
#   the pages it changed to the log, one write each; the database file itself is written at
#   checkpoints, not at every commit.
# - synchronous NORMAL: a commit is written to the log (in the OS's cache, which outlives
#   this process: kill -9 at any moment loses no commit that returned), and the log is
#   flushed to the device at each checkpoint, not at each commit. An OS crash or a power
#   cut may take back the last commits (never half of one, never a damaged file). FULL
#   flushed at every commit: it was half of what durability cost per request, to guard
#   against a machine's failure that a test double's run does not outlive anyway.
# - secure_delete ON: what is deleted or replaced is zeroed (durable_private.py).
# - page_size 1024: a commit appends every page it changed, whole, and a request changes
#   a few hundred bytes of each: with SQLite's 4 KiB pages a commit wrote 22 KB (about five
#   pages), with 1 KiB pages 9.4 KB (about nine), for the same instructions (schema 4's rows;
#   schema 5 writes over a row in place: 4.3 KB). Taken only when a file is made (one made
#   before keeps its own), so it comes first.
PRAGMAS = ("page_size=1024", "locking_mode=EXCLUSIVE", "synchronous=NORMAL", "secure_delete=ON")
JOURNAL = "journal_mode=WAL"
