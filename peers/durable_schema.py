"""The store file's shape (peers/durable.py): its tables, the rows a commit writes, its pragmas.

Rules: what one request writes is a few pages of each tree it changes, and each page is a
frame appended to the write-ahead log (a system call or two, and 4 KiB), so each table is
one tree, and a row is found by what memory already holds, never read back first. A file
of an earlier schema is migrated in the transaction that opens it (durable.py); one of a
later schema is refused. Every setting of the file is chosen here, and says why.
Not here: opening, staging and committing (durable.py), a row's bytes (durable_codec.py).
"""

SCHEMA_VERSION = 2  # 1 kept an index beside each table's rowid tree, twice the frames: read, and migrated
# A task's row is its `seq`, the rowid, which the store holds for every task it keeps (the
# id is a column, for reading back); messages and effects are keyed by what finds them,
# WITHOUT ROWID.
TABLES = """
CREATE TABLE IF NOT EXISTS tasks (seq INTEGER PRIMARY KEY, id TEXT NOT NULL, owner TEXT NOT NULL,
                                  size INTEGER NOT NULL, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS messages (owner TEXT NOT NULL, message_id TEXT NOT NULL, task_id TEXT NOT NULL,
                                     digest TEXT NOT NULL, PRIMARY KEY (owner, message_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS effects (key TEXT PRIMARY KEY, seq INTEGER NOT NULL, body TEXT NOT NULL) WITHOUT ROWID;
"""
FROM_VERSION_1 = """
ALTER TABLE tasks RENAME TO tasks_1; ALTER TABLE messages RENAME TO messages_1; ALTER TABLE effects RENAME TO effects_1;
""" + TABLES + """
INSERT INTO tasks SELECT seq, id, owner, size, body FROM tasks_1;
INSERT INTO messages SELECT owner, message_id, task_id, digest FROM messages_1;
INSERT INTO effects SELECT key, seq, body FROM effects_1;
DROP TABLE tasks_1; DROP TABLE messages_1; DROP TABLE effects_1;
"""
# Each staged row replaces the whole row (or deletes it), so of two changes to one row
# before a commit only the last need be written: a commit is all of them or none.
TASK_ROW = ("INSERT INTO tasks VALUES (?, ?, ?, ?, ?) ON CONFLICT (seq) DO UPDATE SET "
            "body = excluded.body, size = excluded.size")
MESSAGE_ROW = "INSERT OR REPLACE INTO messages VALUES (?, ?, ?, ?)"
EFFECT_ROW = "INSERT INTO effects VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET body = excluded.body, seq = excluded.seq"
# A row's seq is a count this peer gave, from 1, and the next row's is one more: a file whose
# seq is not an integer, or too near SQLite's largest (2**63 - 1) to count on from, was not
# written by this peer (a row past it could not be written: every request would fail).
MAX_SEQ = 1 << 62
# The file's settings, each chosen (issue 36 measured them: bench/cpu_per_request.py):
# - locking_mode EXCLUSIVE: the file is this process's for its life (a second peer on it is
#   refused as locked, rather than keeping a ledger of its own beside the first's).
# - journal_mode WAL: a commit appends the pages it changed to the log, one write each;
#   the database file itself is written at checkpoints, not at every commit.
# - synchronous NORMAL: a commit is written to the log (in the OS's cache, which outlives
#   this process: kill -9 at any moment loses no commit that returned), and the log is
#   flushed to the device at each checkpoint, not at each commit. An OS crash or a power
#   cut may take back the last commits (never half of one, never a damaged file). FULL
#   flushed at every commit: it was half of what durability cost per request, to guard
#   against a machine's failure that a test double's run does not outlive anyway.
# - secure_delete ON: what is deleted or replaced is zeroed (durable_private.py).
PRAGMAS = ("locking_mode=EXCLUSIVE", "journal_mode=WAL", "synchronous=NORMAL", "secure_delete=ON")
