"""The store file's shape (peers/durable.py): its tables, the rows a commit writes, its pragmas.

Rules: what one request writes is a few pages of each tree it changes, and each page is a
frame appended to the write-ahead log (a system call or two, and a page: 1 KiB), so each table is
one tree, a task is one row (the messages that made or continued it inside it: they live
and go with it), and a row is found by what memory already holds, never read back first.
A file of an earlier schema is migrated in the transaction that opens it (`migrate`); one
of a later schema is refused (durable.py). Every setting of the file is chosen here, and
says why.
Not here: opening, staging and committing (durable.py), a row's bytes (durable_codec.py).
"""
from __future__ import annotations

import sqlite3

from peers.durable_codec import to_json

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

SCHEMA_VERSION = 5  # 1 kept an index beside each table's rowid tree, twice the frames; 2 kept a task's
# messages in a table of their own, a second row for each request to write and delete; 3 kept
# effects in their keys' order, so each new one landed mid-tree and split its pages half-full
# (under bench/cpu_per_request.py's load, a full store's commit wrote 6.5 pages; it wrote 5
# then); 4 appended each new row at its tree's right edge and, once full, cut the oldest at its
# left: a new page, a page freed, their parents and the free list's pages each commit (9.4 KB
# a request), where a row written over in place changes one page: all four read, and migrated.
EARLIER_SCHEMAS = ("1", "2", "3", "4")
# Each table is a rowid tree of `slot`s. A thing forgotten leaves its slot free, and the next
# thing made takes it (`Slots`): its row is written over the forgotten one's, in place, so a full
# store's request changes a page of its tree, not its two edges (the ledger forgets only a claim
# that did nothing: its rows are appended). A row's `seq` is the order its
# task (or effect) was made in, which memory holds (ListTasks's tie-break; the oldest is
# forgotten first): rows are read back in its order. A task's row carries the messages that made
# or continued it, as JSON: [[messageId, digest], ...], its owner the row's (they live and go
# with their task). An effect's key is a column. This text is part of the schema: a file's tables
# are judged by the statement that made them (`_shape`), so any change to it is a new version.
TABLES = """
CREATE TABLE IF NOT EXISTS tasks (slot INTEGER PRIMARY KEY, seq INTEGER NOT NULL, id TEXT NOT NULL,
                                  owner TEXT NOT NULL, size INTEGER NOT NULL, messages TEXT NOT NULL,
                                  body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS effects (slot INTEGER PRIMARY KEY, seq INTEGER NOT NULL, key TEXT NOT NULL,
                                    body TEXT NOT NULL);
"""
# Schemas 1 and 2 name the same columns (1 kept the keys in indexes): each row's seq its slot.
FROM_VERSION_1_OR_2 = """
ALTER TABLE tasks RENAME TO tasks_old; ALTER TABLE effects RENAME TO effects_old;
""" + TABLES + """
INSERT INTO tasks SELECT seq, seq, id, owner, size, '[]', body FROM tasks_old;
INSERT INTO effects SELECT seq, seq, key, body FROM effects_old ORDER BY seq;
DROP TABLE tasks_old; DROP TABLE effects_old;
"""
# Schemas 3 and 4: a task's row as 5's, but keyed by its seq; an effect's by its key (3) or seq (4).
FROM_VERSION_3_OR_4 = """
ALTER TABLE tasks RENAME TO tasks_old; ALTER TABLE effects RENAME TO effects_old;
""" + TABLES + """
INSERT INTO tasks SELECT seq, seq, id, owner, size, messages, body FROM tasks_old;
INSERT INTO effects SELECT seq, seq, key, body FROM effects_old ORDER BY seq;
DROP TABLE tasks_old; DROP TABLE effects_old;
"""
# A row's seq is a count this peer gave, from 1, and the next row's is one more: a file whose
# seq is not an integer, or too near SQLite's largest (2**63 - 1) to count on from, was not
# written by this peer (a row past it could not be written: every request would fail).
MAX_SEQ = 1 << 62


def _run(db: sqlite3.Connection, script: str) -> None:
    """Statements one by one, inside the transaction begun (executescript would commit it)."""
    for statement in filter(str.strip, script.split(";")):
        db.execute(statement)


class ForeignFile(Exception):
    """A file this peer does not read: its schema, or its tables' shape, is not one it makes. The text says why."""


def judged(db: sqlite3.Connection) -> Any:
    """The schema a file's meta names (None: a new, empty file), judged before anything in it is
    changed, so a file refused is left as it was. ForeignFile: tables and no meta naming a schema
    (another program's database, a meta table of its own included), a trigger or a view, a schema
    this peer does not read, or this schema's tables not shaped as it makes them."""
    for kind, name in db.execute("SELECT type, name FROM sqlite_master WHERE type IN ('trigger', 'view')"):
        # Never made by this peer: a trigger would run on the peer's own next write (DELETE FROM effects ...).
        raise ForeignFile(f"has a {kind} ({str(name)[:40]!r}) this peer never makes")
    tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not tables:
        return None
    try:
        found = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() if "meta" in tables else None
    except sqlite3.Error:  # a meta table of another shape
        found = None
    if found is None:
        raise ForeignFile(f"holds tables of something else ({', '.join(sorted(map(str, tables)))[:80]}); a store file "
                          "is made by this peer, or is a new file")
    version = found[0]
    if version not in (*EARLIER_SCHEMAS, str(SCHEMA_VERSION)):
        newer = isinstance(version, str) and version.isascii() and version.isdigit() and (  # 5,000 digits: no int
            len(version.lstrip("0")) > 18 or int(version.lstrip("0") or "0") > SCHEMA_VERSION)  # (zeros: no int)
        shown = str(version)[:20] + ("..." if len(str(version)) > 20 else "")
        raise ForeignFile(f"made by a newer version of this peer (schema {shown}); this one reads schema "
                           f"{SCHEMA_VERSION}" if newer else f"has a schema this peer does not know ({str(version)[:20]!r})")
    if version in SHAPES:  # the tables of a schema read as they are (4) or kept (5): judged before anything changes
        _shaped(db, SHAPES[version])
    return version


def migrate(db: sqlite3.Connection, version: Any) -> None:
    """The file made schema 5, inside the transaction that opens it (`version` as `judged` read
    it). One of schema 1 or 2 is rebuilt, each message carried into the row of the task it made:
    the latest row of that id, if the same owner's, as reading schema 2 back found it; a message
    of no task kept is dropped, as it was then. One of schema 3 or 4 is rebuilt, each row's seq
    its slot. One of schema 5 is left as it is. ForeignFile: tables not shaped as it makes them
    (whatever the file says, a table missing is never made anew: an effects table gone would be
    refunds forgotten).
    ValueError: a message, or an effect's seq, this peer did not write."""
    if version is None:
        _run(db, TABLES)
    elif version in EARLIER_SCHEMAS:
        _migrate(db, version)
    _shaped(db, SHAPES[str(SCHEMA_VERSION)])


def _shaped(db: sqlite3.Connection, shapes: dict[str, Any]) -> None:
    for table, shape in shapes.items():
        if _shape(db, table) != shape:
            raise ForeignFile(f"has a {table} table that is not one this peer makes")
    for kind, name in db.execute("SELECT type, name FROM sqlite_master WHERE name NOT IN ('meta', 'tasks', 'effects') "
                                 "AND name NOT LIKE 'sqlite^_%' ESCAPE '^'"):  # SQLite's own (a key's index) aside
        # An index or a table more: a unique index, say, would refuse the peer's next write (exit 70).
        raise ForeignFile(f"has {'an' if kind == 'index' else 'a'} {kind} ({str(name)[:40]!r}) this peer never makes")


def _shape(db: sqlite3.Connection, table: str) -> tuple[list[tuple[Any, ...]], Any]:
    """Each column's name, declared type, NOT NULL, default and place in the primary key; and the
    statement that made the table, however spaced or quoted (a CHECK or a constraint more is another table)."""
    columns = [tuple(column[1:]) for column in db.execute(f"PRAGMA table_info({table})")]
    made = db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()
    return columns, " ".join(made[0].replace('"', "").split()) if made and isinstance(made[0], str) else None


def _shapes(tables: str) -> dict[str, Any]:
    """What `tables` makes, as _shape reads it (an empty database, in memory, made once)."""
    made = sqlite3.connect(":memory:")
    try:
        _run(made, tables)
        return {table: _shape(made, table) for table in ("tasks", "effects")}
    finally:
        made.close()


SCHEMA_4 = """
CREATE TABLE tasks (seq INTEGER PRIMARY KEY, id TEXT NOT NULL, owner TEXT NOT NULL, size INTEGER NOT NULL,
                    messages TEXT NOT NULL, body TEXT NOT NULL);
CREATE TABLE effects (seq INTEGER PRIMARY KEY, key TEXT NOT NULL, body TEXT NOT NULL);
"""
SHAPES = {"4": _shapes(SCHEMA_4), str(SCHEMA_VERSION): _shapes(TABLES)}


def _migrate(db: sqlite3.Connection, version: str) -> None:
    """A file of schema 1 to 4 made schema 5 (`migrate`)."""
    # Each effect's seq becomes its row's slot: one that is not a count this peer gave, or given twice, is refused.
    (strange,), (twice,) = (db.execute(f"SELECT COUNT(*) FROM effects WHERE {where}").fetchone() for where in (
        f"typeof(seq) <> 'integer' OR seq < 1 OR seq >= {MAX_SEQ}",
        "seq IN (SELECT seq FROM effects GROUP BY seq HAVING COUNT(*) > 1)"))
    if strange or twice:
        raise ValueError(f"{strange + twice} effect(s) with a seq this peer did not give")
    if version in ("3", "4"):
        _run(db, FROM_VERSION_3_OR_4)
        return
    _run(db, FROM_VERSION_1_OR_2)
    latest = {task_id: (seq, owner) for seq, task_id, owner in db.execute("SELECT seq, id, owner FROM tasks "
                                                                            "ORDER BY seq")}
    carried: dict[int, list[list[str]]] = {}
    for owner, message_id, task_id, seen in db.execute("SELECT owner, message_id, task_id, digest FROM messages "
                                                       "ORDER BY owner, message_id").fetchall():
        if not all(isinstance(value, str) for value in (owner, message_id, task_id, seen)):
            raise ValueError(f"message {str(message_id)[:40]!r} is not one this peer wrote")
        seq, holder = latest.get(task_id, (None, None))
        if holder == owner:  # never another caller's task, of an id made again
            carried.setdefault(seq, []).append([message_id, seen])
    for seq, keys in carried.items():
        db.execute("UPDATE tasks SET messages = ? WHERE slot = ?", (to_json(keys), seq))  # its slot, just made
    db.execute("DROP TABLE messages")


# Each staged row replaces the whole row (or deletes it), so of two changes to one row
# before a commit only the last need be written: a commit is all of them or none. A slot
# freed and taken again before the commit is one change: the new row, over the old.
TASK_ROW = ("INSERT INTO tasks VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (slot) DO UPDATE SET seq = excluded.seq, "
            "id = excluded.id, owner = excluded.owner, size = excluded.size, messages = excluded.messages, "
            "body = excluded.body")
EFFECT_ROW = ("INSERT INTO effects VALUES (?, ?, ?, ?) ON CONFLICT (slot) DO UPDATE SET seq = excluded.seq, "
              "key = excluded.key, body = excluded.body")


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
