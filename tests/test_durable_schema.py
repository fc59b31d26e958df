"""`serve --store FILE.db`, schema 5 on: each task's row holds the messages that made or continued
it, so a commit writes one row a task, and a task made when the store is full is written over
the row of the one it forgets (its slot), as an effect over the oldest's. A file of schema 1
or 2 (messages in a table of their own) is migrated as it opens, losing nothing a resend needs;
a messages column this peer did not write is one line naming the file. A file of schema 3
(effects in their keys' order) has its effects rebuilt in the order made. A file refused as it
opens is left as it was; one of schema 4 (rows keyed by their seq) has each row's seq made its slot.
Tables not shaped as this peer makes them are refused. Real SQLite files, the
real store, billing and app, in process; the older files are written table by table here, as
that version of the peer wrote them."""
import hashlib
import json
import os
import sqlite3
from contextlib import closing

import pytest

from peers import billing
from peers.a2a import wire_v10
from peers.durable import SCHEMA_VERSION, DurableError, UnreadableEffect, open_store
from peers.restart import restarted
from peers.stamps import counter_ids
from peers.store import content_of, digest

from test_durable import durable_billing, refund

# Schema 2's tables, as the peer made them before a task's messages moved into its row; and
# the file's tasks rewritten so: each message a row of its own, keyed by its owner and messageId.
SCHEMA_2 = """
CREATE TABLE tasks_2 (seq INTEGER PRIMARY KEY, id TEXT NOT NULL, owner TEXT NOT NULL,
                      size INTEGER NOT NULL, body TEXT NOT NULL);
CREATE TABLE messages (owner TEXT NOT NULL, message_id TEXT NOT NULL, task_id TEXT NOT NULL,
                       digest TEXT NOT NULL, PRIMARY KEY (owner, message_id)) WITHOUT ROWID;
INSERT INTO tasks_2 SELECT seq, id, owner, size, body FROM tasks;
DROP TABLE tasks;
ALTER TABLE tasks_2 RENAME TO tasks;
UPDATE meta SET value = '2' WHERE key = 'schema';
"""


# Schema 4's tables, as the peer made them before a row was kept in a slot: keyed by its seq,
# made by the very statements that version ran (a file's tables are judged by them).
SCHEMA_4 = """
ALTER TABLE tasks RENAME TO tasks_5;
ALTER TABLE effects RENAME TO effects_5;
CREATE TABLE IF NOT EXISTS tasks (seq INTEGER PRIMARY KEY, id TEXT NOT NULL, owner TEXT NOT NULL,
                                  size INTEGER NOT NULL, messages TEXT NOT NULL, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS effects (seq INTEGER PRIMARY KEY, key TEXT NOT NULL, body TEXT NOT NULL);
INSERT INTO tasks SELECT seq, id, owner, size, messages, body FROM tasks_5;
INSERT INTO effects SELECT seq, key, body FROM effects_5 ORDER BY seq;
DROP TABLE tasks_5;
DROP TABLE effects_5;
UPDATE meta SET value = '4' WHERE key = 'schema';
"""


def as_schema_4(path):
    """Rewrite the store file at `path` as schema 4 held it."""
    with closing(sqlite3.connect(path)) as db:
        db.executescript(SCHEMA_4)


# Schema 3's effects, as the peer kept them before they were kept in the order made: in their keys' order.
SCHEMA_3 = """
CREATE TABLE effects_3 (key TEXT PRIMARY KEY, seq INTEGER NOT NULL, body TEXT NOT NULL) WITHOUT ROWID;
INSERT INTO effects_3 SELECT key, seq, body FROM effects;
DROP TABLE effects;
ALTER TABLE effects_3 RENAME TO effects;
UPDATE meta SET value = '3' WHERE key = 'schema';
"""


def as_schema_3(path):
    """Rewrite the store file at `path` as schema 3 held it."""
    as_schema_4(path)
    with closing(sqlite3.connect(path)) as db:
        db.executescript(SCHEMA_3)


def as_schema_2(path, *extra_messages):
    """Rewrite the store file at `path` as schema 2 held it, with `extra_messages` (owner,
    messageId, task id, digest) as rows of the messages table too."""
    as_schema_3(path)
    with closing(sqlite3.connect(path)) as db:
        messages = [(owner, message_id, task_id, seen) for task_id, owner, kept
                    in db.execute("SELECT id, owner, messages FROM tasks") for message_id, seen in json.loads(kept)]
        db.executescript(SCHEMA_2)
        db.executemany("INSERT INTO messages VALUES (?, ?, ?, ?)", messages + list(extra_messages))
        db.commit()


# Schema 5's effects, as the peer made them before an effect's owner was a column beside an index on its key.
SCHEMA_5 = """
ALTER TABLE effects RENAME TO effects_6;
CREATE TABLE IF NOT EXISTS effects (slot INTEGER PRIMARY KEY, seq INTEGER NOT NULL, key TEXT NOT NULL,
                                    body TEXT NOT NULL);
INSERT INTO effects SELECT slot, seq, key, body FROM effects_6;
DROP TABLE effects_6;
UPDATE meta SET value = '5' WHERE key = 'schema';
"""


def as_schema_5(path):
    """Rewrite the store file at `path` as schema 5 held it (the index goes with the table it was on)."""
    with closing(sqlite3.connect(path)) as db:
        db.executescript(SCHEMA_5)


def billing_on(path, **options):
    """billing on a store file as `serve --store` makes it, two callers' tokens; (peer, call)."""
    peer, call = durable_billing(path, other_tokens=("b0b",), **options)
    return peer, lambda params, token="t0k": call("SendMessage", params, token)


def approval(message_id, task_id, order, amount):
    return {"message": {"messageId": message_id, "role": "ROLE_USER", "taskId": task_id, "parts": [{"data": {
        "approval": {"order_id": order, "amount": amount, "currency": "USD"}}}]}}


def kept_messages(path):
    """Each task's messages as its row holds them: task id -> [[messageId, digest], ...]."""
    with closing(sqlite3.connect(path)) as db:
        return {task_id: json.loads(kept) for task_id, kept in db.execute("SELECT id, messages FROM tasks")}


def test_a_continued_task_keeps_every_message_in_its_one_row_and_the_file_has_no_other_table(tmp_path):
    path = tmp_path / "billing.db"
    peer, call = billing_on(path)
    first = call(refund("m-1", "ORD-1"))["result"]["task"]
    paused = call(refund("m-2", "ORD-2", 6000))["result"]["task"]
    call(approval("m-2a", paused["id"], "ORD-2", 6000.0))
    sent = wire_v10.send_request(refund("m-1", "ORD-1")).message
    peer.store.file.close()
    kept = kept_messages(path)
    assert [pair[0] for pair in kept[paused["id"]]] == ["m-2", "m-2a"], "the follow-up joined the task's own row"
    assert kept[first["id"]] == [["m-1", digest(content_of(sent))]]
    with closing(sqlite3.connect(path)) as db:
        assert sorted(db.execute("SELECT name FROM sqlite_master WHERE tbl_name <> 'meta'")) == [
            ("effects",), ("effects_by_key",), ("tasks",)]
    peer, call = billing_on(path)
    assert call(approval("m-2a", paused["id"], "ORD-2", 6000.0))["result"]["task"]["id"] == paused["id"]
    assert "already used for a different message" in call(refund("m-2a", "ORD-9"))["error"]["message"]
    assert sorted(peer.ledger.effects) == ["refund of ORD-1", "refund of ORD-2"]
    peer.store.file.close()


def test_a_forgotten_tasks_messages_go_with_its_row_and_their_ids_are_free_again(tmp_path):
    path = tmp_path / "billing.db"
    peer, call = billing_on(path, max_tasks=2)
    made = [call(refund(f"m-{n}", f"ORD-{n}"))["result"]["task"]["id"] for n in range(3)]
    peer.store.file.close()
    assert {task_id: [pair[0] for pair in pairs] for task_id, pairs in kept_messages(path).items()} == {
        made[1]: ["m-1"], made[2]: ["m-2"]}
    peer, call = billing_on(path, max_tasks=2, new_task_id=counter_ids("again"))
    other = call(refund("m-0", "ORD-7"))  # a message kept of a forgotten task would call this a conflict
    assert other["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED", other
    peer.store.file.close()


def schema_2_file(path):
    """A schema-2 store file: two callers' tasks, one continued by a follow-up, and a message
    whose task was never kept (as a file from before a task's messages went with it may hold)."""
    peer, call = billing_on(path)
    first = call(refund("m-1", "ORD-1"))["result"]["task"]
    paused = call(refund("m-2", "ORD-2", 6000))["result"]["task"]
    call(approval("m-2a", paused["id"], "ORD-2", 6000.0))
    theirs = call(refund("m-1", "ORD-5"), token="b0b")["result"]["task"]  # the same messageId, another caller
    owner = peer.store.owners[first["id"]]
    peer.store.file.close()
    as_schema_2(path, (owner, "m-gone", "task-gone", "0" * 64))
    return first, paused, theirs


def test_a_schema_2_file_is_migrated_each_message_into_its_tasks_row_and_the_rest_dropped(tmp_path):
    path = tmp_path / "billing.db"
    first, paused, theirs = schema_2_file(path)
    peer, _ = billing_on(path)
    peer.store.file.close()
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == (str(SCHEMA_VERSION),)
        assert sorted(db.execute("SELECT name FROM sqlite_master WHERE tbl_name <> 'meta'")) == [
            ("effects",), ("effects_by_key",), ("tasks",)], "the messages table gone, its rows in their tasks'"
    kept = kept_messages(path)
    assert {task_id: [pair[0] for pair in pairs] for task_id, pairs in kept.items()} == {
        first["id"]: ["m-1"], paused["id"]: ["m-2", "m-2a"], theirs["id"]: ["m-1"]}, "m-gone, of no task, dropped"


def test_after_migrating_a_schema_2_file_a_resent_message_gets_its_first_task_and_nothing_is_refunded_twice(tmp_path):
    path = tmp_path / "billing.db"
    first, paused, theirs = schema_2_file(path)
    peer, call = billing_on(path, new_task_id=counter_ids("migrated"))  # not task-1 again: first's id
    effects = dict(peer.ledger.effects)
    assert call(refund("m-1", "ORD-1"))["result"]["task"]["id"] == first["id"], "a resend: its first task"
    assert call(refund("m-1", "ORD-5"), token="b0b")["result"]["task"]["id"] == theirs["id"], "each caller's own"
    assert call(approval("m-2a", paused["id"], "ORD-2", 6000.0))["result"]["task"]["id"] == paused["id"]
    conflict = call(refund("m-1", "ORD-3"))["error"]  # only the carried digest tells this from a resend
    assert conflict["code"] == -32602 and "already used for a different message" in conflict["message"]
    assert peer.ledger.effects == effects, "nothing refunded twice, nothing new"
    peer.store.file.close()
    peer, call = billing_on(path)  # and again on the migrated file, as schema 5
    assert call(refund("m-2", "ORD-2", 6000))["result"]["task"]["id"] == paused["id"]
    assert peer.ledger.effects == effects
    peer.store.file.close()


def test_a_schema_2_file_with_a_message_this_peer_did_not_write_is_one_line_and_left_as_it_was(tmp_path):
    path = tmp_path / "billing.db"
    schema_2_file(path)
    with closing(sqlite3.connect(path)) as db:
        db.execute("UPDATE messages SET message_id = x'00ff' WHERE message_id = 'm-2'")
        db.commit()
    with pytest.raises(DurableError, match="holds a row this peer cannot read") as raised:
        open_store(str(path))
    assert str(raised.value).startswith(str(path)) and "\n" not in str(raised.value)
    with closing(sqlite3.connect(f"file:{path}?immutable=1", uri=True)) as db:  # as on disk (the refused file still held)
        assert db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == ("2",), "not half migrated"
        assert db.execute("SELECT COUNT(*) FROM messages").fetchone() == (5,)


ONE_DIGEST = "ab" * 32


@pytest.mark.parametrize("kept", [
    "7", "{}", '"m-1"', "[" * 5000, "not json", '[["m-1"]]', '[["m-1", 5]]', f'[[1, "{ONE_DIGEST}"]]',
    '[["m-1", "not a digest"]]', f'[["m-1", "{ONE_DIGEST.upper()}"]]', f'[["m-1", "{ONE_DIGEST}", "more"]]',
    f'[["m-9", "{ONE_DIGEST}"], ["m-9", "{ONE_DIGEST}"]]', b"[]", 12,
], ids=["a number", "an object", "a string", "deep", "not JSON", "no digest", "a digest that is a number",
        "a messageId that is a number", "a digest that is not one", "a digest not as written", "three items",
        "one message twice", "a blob", "an integer"])
def test_a_messages_column_this_peer_did_not_write_is_one_line_naming_the_file(tmp_path, kept):
    path = tmp_path / "billing.db"
    peer, call = billing_on(path)
    call(refund("m-1", "ORD-1"))
    peer.store.file.close()
    with closing(sqlite3.connect(path)) as db:
        db.execute("UPDATE tasks SET messages = ?", (kept,))
        db.commit()
    with pytest.raises(DurableError, match="holds a row this peer cannot read") as raised:
        open_store(str(path))
    assert str(raised.value).startswith(str(path)) and "\n" not in str(raised.value)


def test_one_message_kept_by_two_tasks_is_one_line_naming_the_file(tmp_path):
    """Each message made or continued one task; two rows holding it would leave the first
    task's forgetting to take the second's message with it."""
    path = tmp_path / "billing.db"
    peer, call = billing_on(path)
    call(refund("m-1", "ORD-1"))
    call(refund("m-2", "ORD-2"))
    peer.store.file.close()
    with closing(sqlite3.connect(path)) as db:
        db.execute("UPDATE tasks SET messages = (SELECT messages FROM tasks WHERE seq = 1)")
        db.commit()
    with pytest.raises(DurableError, match="m-1.*kept twice"):
        open_store(str(path))


def test_a_file_holding_one_task_id_twice_reads_back_the_later_task_and_its_messages_alone(tmp_path):
    """As test_durable.py's file of one id twice, in schema 5: the earlier row's task is
    forgotten as it is read, its messages with it, and no message points at the other's task."""
    path = tmp_path / "billing.db"
    peer, call = billing_on(path)
    call(refund("a-0", "ORD-A0"))
    call(refund("b-0", "ORD-B0"))
    owner = peer.store.owners["task-1"]
    peer.store.file.close()
    with closing(sqlite3.connect(path)) as db:
        db.execute("UPDATE tasks SET id = 'task-1', body = replace(body, 'task-2', 'task-1'), owner = owner || 'b' "
                   "WHERE id = 'task-2'")
        db.commit()
    peer, call = billing_on(path, new_task_id=counter_ids("again"))
    assert list(peer.store.tasks) == ["task-1"] and list(peer.store.by_message) == [(owner + "b", "b-0")]
    assert peer.store.message_keys == {"task-1": [(owner + "b", "b-0")]}
    resent = call(refund("a-0", "ORD-A0"))  # its task forgotten: a new message, for an order done (rejected)
    assert "ORD-B0" not in json.dumps(resent), "never answered with another caller's task"
    assert resent["result"]["task"]["status"]["state"] == "TASK_STATE_REJECTED", resent
    peer.store.file.close()
    assert {task_id: [pair[0] for pair in pairs] for task_id, pairs in kept_messages(path).items()} == {
        "task-1": ["b-0"], "again-1": ["a-0"]}, "the earlier row deleted, with its message"


def test_a_schema_3_file_has_its_effects_kept_in_the_order_made_and_nothing_is_refunded_twice(tmp_path):
    """Schema 3 kept effects in their keys' order; migrated, each is its first record's place,
    the row's own order, and the ledger comes back as it was: a resend gets its first task, a
    refund asked again is never a second, and the next effect is appended after the last."""
    path = tmp_path / "billing.db"
    peer, call = billing_on(path)
    done = [call(refund(f"m-{number}", order))["result"]["task"] for number, order in enumerate(("ORD-3", "ORD-10"))]
    paused = call(refund("m-2", "ORD-1", 6000))["result"]["task"]  # its claim held, waiting for a person
    peer.store.file.close()
    as_schema_3(path)
    peer, call = billing_on(path, new_task_id=counter_ids("migrated"))
    assert list(peer.ledger.effects) == ["refund of ORD-3", "refund of ORD-10", "refund of ORD-1"]
    assert call(refund("m-0", "ORD-3"))["result"]["task"]["id"] == done[0]["id"], "a resend: its task"
    assert call(refund("m-9", "ORD-10"))["result"]["task"]["id"] == done[1]["id"], "asked again: its task, no refund"
    call(approval("m-2a", paused["id"], "ORD-1", 6000.0))
    call(refund("m-4", "ORD-2"))
    peer.store.file.close()
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == (str(SCHEMA_VERSION),)
        assert [key for (key,) in db.execute("SELECT key FROM effects NOT INDEXED")] == [  # the table's own order
            "refund of ORD-3", "refund of ORD-10", "refund of ORD-1", "refund of ORD-2"]
    peer, call = billing_on(path)
    assert peer.ledger.effects["refund of ORD-1"].summary.startswith("refund of $6,000.00 issued")
    peer.store.file.close()


def snapshot(path):
    """Everything the file holds, as SQLite reads it."""
    with closing(sqlite3.connect(path)) as db:
        return [db.execute(query).fetchall() for query in ("SELECT * FROM meta", "SELECT type, name, sql FROM sqlite_master",
                                                           "SELECT * FROM effects", "SELECT * FROM tasks")]


def tampered(path, *statements):
    with closing(sqlite3.connect(path)) as db:
        for statement in statements:
            db.execute(statement)
        db.commit()


def two_refunds(path):
    peer, call = billing_on(path)
    call(refund("m-0", "ORD-0"))
    call(refund("m-1", "ORD-1"))
    peer.store.file.close()


UNTYPED_EFFECTS = ("CREATE TABLE loose (key, seq, body)", "INSERT INTO loose SELECT key, seq, body FROM effects",
                   "DROP TABLE effects", "ALTER TABLE loose RENAME TO effects")


@pytest.mark.parametrize("statements", [
    ("UPDATE effects SET key = x'00' WHERE key = 'refund of ORD-0'",),
    ("UPDATE effects SET body = 'not json' WHERE key = 'refund of ORD-0'",),
    (*UNTYPED_EFFECTS, "UPDATE effects SET key = 'refund of ORD-1'"),
], ids=["a key that is not text", "a body that is not JSON", "one key twice"])
def test_a_schema_3_file_refused_as_its_rows_are_read_back_is_left_as_it_was(tmp_path, statements):
    """The migration and the reading back are one transaction: refused, the file is not left
    made schema 5 (which the peer that wrote it would refuse as a newer version's)."""
    path = tmp_path / "billing.db"
    two_refunds(path)
    as_schema_3(path)
    tampered(path, *statements)
    before = snapshot(path)
    with pytest.raises(DurableError, match="holds a row this peer cannot read"):
        open_store(str(path))
    assert snapshot(path) == before


@pytest.mark.parametrize("schema, statements", [
    (3, ("UPDATE meta SET value = '4' WHERE key = 'schema'",)),
    (4, ("UPDATE meta SET value = '5' WHERE key = 'schema'",)),
    (4, ("ALTER TABLE tasks ADD COLUMN slot INTEGER",)),
    (5, ("ALTER TABLE effects ADD COLUMN note TEXT NOT NULL DEFAULT ''",)),
    (5, ("DROP TABLE effects",)),
    (5, ("CREATE TABLE strict (slot INTEGER PRIMARY KEY, seq INTEGER NOT NULL CHECK (seq < 3), key TEXT NOT NULL, "
         "owner TEXT NOT NULL, body TEXT NOT NULL)", "INSERT INTO strict SELECT * FROM effects", "DROP TABLE effects",
         "ALTER TABLE strict RENAME TO effects")),
], ids=["schema 4 said of schema 3's tables", "schema 5 said of schema 4's", "schema 4's with a column more",
        "a column more", "no effects table", "a CHECK more"])
def test_tables_not_shaped_as_this_peer_makes_them_are_one_line_when_the_file_opens(tmp_path, schema, statements):
    """Read by column name the rows came back, and the first commit, written by position, stopped
    the process (exit 70) on every start; with no effects table one was made anew, empty, and a
    refund asked again in a new message was made a second time."""
    path = tmp_path / "billing.db"
    two_refunds(path)
    (as_schema_3 if schema == 3 else as_schema_4 if schema == 4 else lambda path: None)(path)
    tampered(path, *statements)
    before = snapshot(path) if schema < 5 or "DROP" not in statements[0] else None
    with pytest.raises(DurableError, match="table that is not one this peer makes") as raised:
        open_store(str(path))
    assert "\n" not in str(raised.value) and str(raised.value).startswith(str(path))
    assert before is None or snapshot(path) == before


@pytest.mark.parametrize("schema, statement", [
    (5, "CREATE TRIGGER wipe AFTER INSERT ON tasks BEGIN DELETE FROM effects; END"),
    (3, "CREATE TRIGGER wipe AFTER UPDATE ON effects BEGIN DELETE FROM effects; END"),
    (5, "CREATE VIEW refunds AS SELECT key FROM effects"),
    (5, "CREATE UNIQUE INDEX short ON effects (substr(key, 11))"),
    (4, "CREATE INDEX by_key ON effects (key)"),
    (5, "CREATE TABLE junk (a)"),
], ids=["a trigger on tasks", "a trigger a migration would fire", "a view", "a unique index", "an index (schema 4)",
        "a table more"])
def test_a_trigger_view_index_or_table_this_peer_never_makes_is_one_line_and_nothing_runs_it(tmp_path, schema, statement):
    """A trigger in the file ran on the peer's own next write: its ledger wiped, and an order
    refunded before was refunded again after a restart. A unique index opened, and refused the
    next refund's write: the process stopped (exit 70) on every start from then on."""
    path = tmp_path / "billing.db"
    two_refunds(path)
    (as_schema_3 if schema == 3 else as_schema_4 if schema == 4 else lambda path: None)(path)
    tampered(path, statement)
    before = snapshot(path)
    with pytest.raises(DurableError, match="this peer never makes") as raised:
        open_store(str(path))
    assert "\n" not in str(raised.value) and str(raised.value).startswith(str(path))
    assert snapshot(path) == before, "nothing written, so nothing fired"


@pytest.mark.parametrize("field, value", [("task_id", {"a": 1}), ("owner", ["o"]), ("summary", 5)],
                         ids=["a task_id that is an object", "an owner that is a list", "a summary that is a number"])
def test_an_effect_whose_fields_are_not_text_is_one_line_naming_it_when_it_is_read_and_nothing_is_done(
        tmp_path, field, value):
    """A task_id that is an object came back, and settling the restart (restart.py) stopped
    `serve` with a traceback: unhashable type. An effect done is read when it is asked for, not
    as the file opens (durable_ledger.py): the restart asks for the effect of each completed task
    it keeps, and stops there, in one line; a store that no longer keeps that task starts, and a
    request for that order is refused in one line (-32603), nothing done, another order refunded."""
    path = tmp_path / "billing.db"
    two_refunds(path)
    effect = {"$": "Effect", "owner": "o", "task_id": "task-1", "payload": "{}", "summary": "done", field: value}
    tampered(path, f"UPDATE effects SET body = '{json.dumps(effect)}' WHERE key = 'refund of ORD-0'")
    store, ledger = open_store(str(path))
    with pytest.raises(UnreadableEffect, match="holds a row it cannot read: effect 'refund of ORD-0'") as raised:
        restarted(billing.billing_agent(store=store, ledger=ledger), str(path))
    store.file.close()
    assert "\n" not in str(raised.value)
    peer, call = billing_on(path, max_tasks=1)  # ORD-0's task, the older, is not read
    error = call(refund("m-9", "ORD-0"))["error"]
    assert error["code"] == -32603 and "holds a row it cannot read: effect 'refund of ORD-0'" in error["message"]
    assert "\n" not in error["message"] and len(peer.store.tasks) == 1, "no task made"
    assert call(refund("m-8", "ORD-8"))["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    peer.store.file.close()
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("SELECT body FROM effects WHERE key = 'refund of ORD-0'").fetchone() == (json.dumps(effect),)


def page_size(path):
    with closing(sqlite3.connect(path)) as db:
        return db.execute("PRAGMA page_size").fetchone()[0]


def test_a_new_file_has_small_pages_and_a_file_made_with_large_ones_keeps_them_and_its_tasks(tmp_path):
    """A commit writes each page it changed whole: a new file's pages are 1 KiB. One made
    before, with SQLite's 4 KiB, is opened as it is (a page size is taken only as a file is
    made), every task and effect read back."""
    new, old = tmp_path / "new.db", tmp_path / "old.db"
    peer, call = billing_on(new)
    call(refund("m-1", "ORD-1"))
    peer.store.file.close()
    with closing(sqlite3.connect(old)) as db:
        db.execute("PRAGMA page_size=4096")
        db.execute("VACUUM")  # an empty file takes a page size only when first written
    peer, call = billing_on(old)
    first = call(refund("m-1", "ORD-1"))["result"]["task"]
    peer.store.file.close()
    assert (page_size(new), page_size(old)) == (1024, 4096)
    peer, call = billing_on(old)
    assert call(refund("m-1", "ORD-1"))["result"]["task"]["id"] == first["id"], "the same task, not a new refund"
    assert sorted(peer.ledger.effects) == ["refund of ORD-1"]
    peer.store.file.close()


@pytest.mark.parametrize("table", ["tasks", "effects"])
def test_a_file_refused_for_a_row_is_left_byte_for_byte_its_journal_and_mode_too(tmp_path, table):
    """A file judged this peer's by its schema, then refused for a row, was left in WAL mode (its
    header's bytes changed) and narrowed to its owner: opening it changed a file it then refused.
    Narrowed and made WAL now only once every row is read back; a good file still is both."""
    path = tmp_path / "billing.db"
    two_refunds(path)
    tampered(path, "PRAGMA journal_mode=DELETE")
    good = path.read_bytes()
    tampered(path, f"UPDATE {table} SET seq = -5")
    os.chmod(path, 0o644)
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(DurableError, match="holds a row this peer cannot read"):
        open_store(str(path))
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before and os.stat(path).st_mode & 0o777 == 0o644
    path.write_bytes(good)
    store, _ = open_store(str(path))
    assert store.file.rows("PRAGMA journal_mode") == [("wal",)] and os.stat(path).st_mode & 0o777 == 0o600
    store.file.close()


def test_a_schema_5_file_has_each_effects_owner_made_a_column_and_nothing_is_refunded_twice(tmp_path):
    """Schema 6 reads an effect done from the file by its key (its index) and counts each caller's share by
    the owner column, which a schema 5 file has not: migrated as it opens, each row's owner is its body's,
    the index is made, the paused refund's claim still holds, and a refund asked again is its task."""
    path = tmp_path / "billing.db"
    peer, call = billing_on(path)
    done = call(refund("m-1", "ORD-1"))["result"]["task"]
    call(refund("m-2", "ORD-2"), token="b0b")
    paused = call(refund("m-3", "ORD-3", 6000))["result"]["task"]
    owners = {key: effect.owner for key, effect in peer.ledger.effects.items()}
    peer.store.file.close()
    as_schema_5(path)
    peer, call = billing_on(path, new_task_id=counter_ids("migrated"))
    assert call(refund("m-9", "ORD-1"))["result"]["task"]["id"] == done["id"], "asked again: its task, no refund"
    assert call(refund("m-8", "ORD-2"))["result"]["task"]["status"]["state"] == "TASK_STATE_REJECTED", \
        "done for another caller"
    approved = call(approval("m-3a", paused["id"], "ORD-3", 6000.0))["result"]["task"]
    assert approved["status"]["state"] == "TASK_STATE_COMPLETED", "the paused refund's claim held across it"
    assert call(refund("m-6", "ORD-3", 6000))["result"]["task"]["id"] == paused["id"], "refunded once"
    assert peer.ledger.owned == {owners["refund of ORD-1"]: 2, owners["refund of ORD-2"]: 1}, "each share counted"
    peer.store.file.close()
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == (str(SCHEMA_VERSION),)
        rows = db.execute("SELECT key, owner, body FROM effects ORDER BY seq").fetchall()
        assert sorted(db.execute("SELECT name FROM sqlite_master WHERE tbl_name = 'effects'")) == [
            ("effects",), ("effects_by_key",)]
    assert [(key, owner) for key, owner, _ in rows] == list(owners.items())
    assert all(json.loads(body)["owner"] == owner for _, owner, body in rows)


def test_a_schema_5_file_killed_at_any_point_of_its_migration_is_left_schema_5_or_made_schema_6_whole(tmp_path):
    """The migration rebuilds the effects' table, row by row, in the transaction that opens the file: a
    process killed (os._exit, as kill -9) at seeded points inside it, counted in SQLite's own steps, leaves
    the file as it was, byte for byte what SQLite reads, or migrated whole; either opens with every refund."""
    import random
    import subprocess
    import sys
    from conftest import ROOT
    from peers.app import owner_of_bearer
    from peers.ledger import Effect
    owners = [owner_of_bearer(f"token-{number}") for number in range(3)]  # as a caller's owner is kept
    source = tmp_path / "source.db"
    store, ledger = open_store(str(source), max_effects=400)
    for number in range(300):
        ledger.record(f"refund of ORD-{number}", Effect(owners[number % 3], f"task-{number}", "{}",
                                                        f"refund of $5.00 issued for ORD-{number}"))
    store.file.close()
    as_schema_5(source)
    before = snapshot(source)
    child = """
import os, sqlite3, sys
sys.path.insert(0, sys.argv[1])
steps, kill_at = [0], int(sys.argv[3])
def counted():  # each thousand of SQLite's steps; at kill_at, the process dies as kill -9 kills it
    steps[0] += 1
    if steps[0] == kill_at:
        os._exit(137)
connect = sqlite3.connect
def connect_counted(*args, **kwargs):
    db = connect(*args, **kwargs)
    db.set_progress_handler(counted, 1000)
    return db
sqlite3.connect = connect_counted
from peers.durable import open_store
store, _ = open_store(sys.argv[2], max_effects=400)
store.file.close()
print(steps[0])
"""

    def opened(path, kill_at):
        return subprocess.run([sys.executable, "-c", child, str(ROOT), str(path), str(kill_at)], capture_output=True,
                              text=True, timeout=60)
    whole = tmp_path / "whole.db"
    whole.write_bytes(source.read_bytes())
    counted = opened(whole, 0)
    assert counted.returncode == 0, counted.stderr[-2000:]
    steps = int(counted.stdout)
    assert steps > 20, "the migration is long enough to be killed inside"
    outcomes = set()
    for kill_at in sorted(random.Random(5).sample(range(1, steps), 8)):
        path = tmp_path / f"killed-{kill_at}.db"
        path.write_bytes(source.read_bytes())
        killed = opened(path, kill_at)
        assert killed.returncode == 137 and "Traceback" not in killed.stderr, (kill_at, killed.stderr[-2000:])
        with closing(sqlite3.connect(path)) as db:
            (schema,) = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        assert schema in ("5", str(SCHEMA_VERSION)), schema
        if schema == "5":
            assert snapshot(path) == before, f"killed at {kill_at:,} of {steps:,}: no longer schema 5 whole"
        outcomes.add(schema)
        store, ledger = open_store(str(path), max_effects=400)
        assert len(ledger.effects) == 300 and ledger.get("refund of ORD-0").summary.startswith("refund of $5.00")
        assert ledger.owned == dict.fromkeys(owners, 100)
        store.file.close()
    assert "5" in outcomes, "some kill landed inside the migration"
