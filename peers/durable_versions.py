"""A store file's schema, judged as it opens, and a file of an earlier schema made this one's (durable.py).

A file of a later schema, or none this peer knows, is refused, and left as it was; one of an
earlier schema is migrated in the transaction that opens it, so a file refused midway (a row
this peer did not write) is never left half made this version's. Each earlier schema is said,
with why it changed, beside SCHEMA_VERSION (durable_schema.py); the statements that made
schemas 4 and 5 are kept here, as a file of those is judged by them before anything changes.
Not here: this schema's tables (durable_schema.py), reading rows back (durable_read.py).
"""
from __future__ import annotations

import sqlite3

from peers.durable_codec import from_json, to_json
from peers.durable_read import MAX_ROW_CHARS
from peers.durable_schema import MAX_SEQ, SCHEMA_VERSION, TABLES, ForeignFile, run, shaped, shapes_of
from peers.ledger import Effect

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

EARLIER_SCHEMAS = ("1", "2", "3", "4", "5")
# Each rebuilds the effects' table: an index of this schema's name would go with the old one, and none be made.
RENAMED = "ALTER TABLE effects RENAME TO effects_old; DROP INDEX IF EXISTS effects_by_key;"
# Schemas 1 and 2 name the same columns (1 kept the keys in indexes): each row's seq its slot.
FROM_VERSION_1_OR_2 = """
ALTER TABLE tasks RENAME TO tasks_old;""" + RENAMED + TABLES + """
INSERT INTO tasks SELECT seq, seq, id, owner, size, '[]', body FROM tasks_old;
DROP TABLE tasks_old;
"""
# Schemas 3 and 4: a task's row as 5's, but keyed by its seq; an effect's by its key (3) or seq (4).
FROM_VERSION_3_OR_4 = """
ALTER TABLE tasks RENAME TO tasks_old;""" + RENAMED + TABLES + """
INSERT INTO tasks SELECT seq, seq, id, owner, size, messages, body FROM tasks_old;
DROP TABLE tasks_old;
"""
# Schema 5: its tasks as they are; its effects' table made again, with an owner and an index.
FROM_VERSION_5 = RENAMED + TABLES
SCHEMA_4 = """
CREATE TABLE tasks (seq INTEGER PRIMARY KEY, id TEXT NOT NULL, owner TEXT NOT NULL, size INTEGER NOT NULL,
                    messages TEXT NOT NULL, body TEXT NOT NULL);
CREATE TABLE effects (seq INTEGER PRIMARY KEY, key TEXT NOT NULL, body TEXT NOT NULL);
"""
SCHEMA_5 = """
CREATE TABLE IF NOT EXISTS tasks (slot INTEGER PRIMARY KEY, seq INTEGER NOT NULL, id TEXT NOT NULL,
                                  owner TEXT NOT NULL, size INTEGER NOT NULL, messages TEXT NOT NULL,
                                  body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS effects (slot INTEGER PRIMARY KEY, seq INTEGER NOT NULL, key TEXT NOT NULL,
                                    body TEXT NOT NULL);
"""
SHAPES = {"4": shapes_of(SCHEMA_4), "5": shapes_of(SCHEMA_5), str(SCHEMA_VERSION): shapes_of(TABLES)}


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
    if version in SHAPES:  # the tables of a schema read as they are (4, 5) or kept (6): judged before anything changes
        shaped(db, SHAPES[version])
    return version


def migrate(db: sqlite3.Connection, version: Any) -> None:
    """The file made this schema, inside the transaction that opens it (`version` as `judged` read
    it). One of schema 1 or 2 is rebuilt, each message carried into the row of the task it made:
    the latest row of that id, if the same owner's, as reading schema 2 back found it; a message
    of no task kept is dropped, as it was then. One of schema 3 or 4 is rebuilt, each row's seq
    its slot. Schema 5's effects are rebuilt, each one's owner a column. One of this schema is left
    as it is. ForeignFile: tables not shaped as it makes them (whatever the file says, a table
    missing is never made anew: an effects table gone would be refunds forgotten).
    ValueError: a message, or an effect, this peer did not write."""
    if version is None:
        run(db, TABLES)
    elif version in EARLIER_SCHEMAS:
        _migrate(db, version)
    shaped(db, SHAPES[str(SCHEMA_VERSION)])


def _migrate(db: sqlite3.Connection, version: str) -> None:
    """A file of schema 1 to 5 made this one (`migrate`)."""
    if version == "5":
        run(db, FROM_VERSION_5)
        _carry_effects(db, "SELECT slot, seq, key, body FROM effects_old")
        return
    # Each effect's seq becomes its row's slot: one that is not a count this peer gave, or given twice, is refused.
    (strange,), (twice,) = (db.execute(f"SELECT COUNT(*) FROM effects WHERE {where}").fetchone() for where in (
        f"typeof(seq) <> 'integer' OR seq < 1 OR seq >= {MAX_SEQ}",
        "seq IN (SELECT seq FROM effects GROUP BY seq HAVING COUNT(*) > 1)"))
    if strange or twice:
        raise ValueError(f"{strange + twice} effect(s) with a seq this peer did not give")
    run(db, FROM_VERSION_3_OR_4 if version in ("3", "4") else FROM_VERSION_1_OR_2)
    _carry_effects(db, "SELECT seq, seq, key, body FROM effects_old ORDER BY seq")
    if version in ("3", "4"):
        return
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


def _carry_effects(db: sqlite3.Connection, select: str) -> None:
    """Each effect `select` reads of effects_old (slot, seq, key, body) into this schema's table, its owner
    a column, read from its body, which holds it too; then effects_old dropped. Row by row, as they come:
    a ledger of any length takes no more memory than a row. ValueError: a body that is not an effect's."""
    for slot, seq, key, body in db.execute(select):
        try:
            owner = from_json(body, Effect).owner if type(body) is str and len(body) <= MAX_ROW_CHARS else None
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
            owner = None
        if type(owner) is not str:
            raise ValueError(f"effect {str(key)[:40]!r} is not one this peer wrote")
        db.execute("INSERT INTO effects VALUES (?, ?, ?, ?, ?)", (slot, seq, key, owner, body))
    db.execute("DROP TABLE effects_old")
