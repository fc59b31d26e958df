"""`serve --store FILE.db` once its store is full: the task made is written over the row of the
task it forgets (its slot), in place, rather than appended at the tree's right edge while the
oldest is cut at its left (the ledger forgets no effect done: a full one takes none); every row keeps the
order it was made in (`seq`), so a restart reads back the same store, in the same order, and
forgets the same task next. Real SQLite files, the real store, peer and app, in process."""
import json
import random
import sqlite3
from contextlib import closing

import pytest

from peers import billing
from peers.a2a import wire_v10
from peers.app import PeerApp
from peers.durable import DurableError, open_store
from peers.restart import restarted
from peers.stamps import counter_ids
from transports.inprocess import InProcessTransport

from test_durable import HEADERS, refund
from test_durable_schema import as_schema_4

TOKENS = ("t0k", "b0b")  # two callers: each makes room from its own tasks once it holds the most


def peer_on(path, life, max_tasks, max_effects):
    """billing on a store file as `serve --store` opens it, its ids this life's; (peer, call)."""
    store, ledger = open_store(str(path), max_tasks=max_tasks, max_effects=max_effects)
    peer = billing.billing_agent(store=store, ledger=ledger, new_task_id=counter_ids(f"life{life}"))
    restarted(peer, str(path))
    transport = InProcessTransport({billing.BASE_URL: PeerApp(peer, wire_v10, token=TOKENS[0],
                                                              other_tokens=TOKENS[1:])})

    def call(params, token=TOKENS[0]):
        frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params}).encode()
        return json.loads(transport.post(billing.BASE_URL + "/a2a", frame,
                                         {**HEADERS, "Authorization": f"Bearer {token}"}).body)
    return peer, call


def rows(path, table, *columns):
    with closing(sqlite3.connect(path)) as db:
        return db.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY seq").fetchall()


def remembered(peer):
    """All a peer holds of its store and ledger that a restart must give back as it was."""
    store, ledger = peer.store, peer.ledger
    return (list(store.tasks.items()), store.owners, {owner: list(ids) for owner, ids in store.held.items()},
            store.order, store.seq, store.by_message, store.message_keys, store.sizes, store.kept_bytes,
            list(ledger.effects.items()), ledger.seq, store.slots.of)  # the ledger as its file holds it: memory
    # holds its claims alone (durable_ledger.py), and each effect done until its commit returns


def test_a_full_stores_new_task_takes_the_slot_of_the_task_forgotten_and_a_restart_reads_all_back_in_order(tmp_path):
    path = tmp_path / "billing.db"
    peer, call = peer_on(path, 1, max_tasks=3, max_effects=20)
    for n in range(9):
        assert "result" in call(refund(f"m-{n}", f"ORD-{n}"), TOKENS[n % 2])
    before = remembered(peer)
    peer.store.file.close()
    assert sorted(slot for (slot,) in rows(path, "tasks", "slot")) == [1, 2, 3], "three rows, never a fourth"
    assert sorted(slot for (slot,) in rows(path, "effects", "slot")) == list(range(1, 10)), "every refund kept"
    assert [task_id for (task_id,) in rows(path, "tasks", "id")] == list(peer.store.tasks), "in the order made"
    assert [key for (key,) in rows(path, "effects", "key")] == [f"refund of ORD-{n}" for n in range(9)]
    again, call = peer_on(path, 2, max_tasks=3, max_effects=20)
    assert remembered(again) == before
    assert call(refund("m-8", "ORD-8"), TOKENS[0])["result"]["task"]["id"] == "life1-9", "a resend: its first task"
    call(refund("m-9", "ORD-9"), TOKENS[1])  # makes room: the oldest task, as before the restart
    assert "life1-6" not in again.store.tasks and "refund of ORD-0" in again.ledger.effects, "its refund never forgotten"
    again.store.file.close()
    assert sorted(slot for (slot,) in rows(path, "tasks", "slot")) == [1, 2, 3]
    assert [task_id for (task_id,) in rows(path, "tasks", "id")] == list(again.store.tasks) == [
        "life1-8", "life1-9", "life2-1"]


def test_a_schema_4_file_keeps_each_rows_seq_as_its_slot_and_goes_on_writing_over_the_oldest(tmp_path):
    path = tmp_path / "billing.db"
    peer, call = peer_on(path, 1, max_tasks=3, max_effects=10)
    for n in range(4):
        call(refund(f"m-{n}", f"ORD-{n}"))
    before = remembered(peer)
    peer.store.file.close()
    as_schema_4(path)
    again, call = peer_on(path, 2, max_tasks=3, max_effects=10)
    assert remembered(again)[:-1] == before[:-1], "all of it, but for the slots: each row's seq is its slot now"
    assert again.store.file.rows("SELECT slot, seq FROM tasks ORDER BY seq") == [(2, 2), (3, 3), (4, 4)]
    assert call(refund("m-3", "ORD-3"))["result"]["task"]["id"] == "life1-4", "a resend: its first task"
    call(refund("m-4", "ORD-4"))
    again.store.file.close()
    assert rows(path, "tasks", "slot", "id") == [(3, "life1-3"), (4, "life1-4"), (2, "life2-1")], \
        "the new task written over the oldest's row"
    assert rows(path, "effects", "slot", "key") == [(n + 1, f"refund of ORD-{n}") for n in range(5)], "appended"


def test_seeded_lives_of_a_full_store_each_read_back_as_it_was(tmp_path):
    """Random requests (new refunds, resends, an order asked again under a new messageId, two
    callers) on small bounds, the peer closed and opened again between runs of them: each
    restart gives back the store and ledger as they were, row for row, in the same order."""
    for seed in range(3):
        rng = random.Random(seed)
        path = tmp_path / f"billing-{seed}.db"
        peer, call = peer_on(path, 0, max_tasks=4, max_effects=5)
        sent = []
        for life in range(1, 6):
            for _ in range(rng.randrange(3, 12)):
                token = rng.choice(TOKENS)
                kind = rng.random()
                if sent and kind < 0.2:  # a resend: its first task, or a refusal if it is gone
                    message_id, order, token = rng.choice(sent)
                elif sent and kind < 0.35:  # the same order again, under a new messageId
                    message_id, order = f"m-{seed}-{len(sent)}-again", rng.choice(sent)[1]
                else:
                    message_id, order = f"m-{seed}-{len(sent)}", f"ORD-{seed}-{len(sent)}"
                    sent.append((message_id, order, token))
                answer = call(refund(message_id, order), token)
                assert "result" in answer or answer["error"]["code"] == -32602, answer
            before, effects = remembered(peer), list(peer.ledger.effects)
            peer.store.file.close()
            assert [task_id for (task_id,) in rows(path, "tasks", "id")] == list(peer.store.tasks)
            assert [key for (key,) in rows(path, "effects", "key")] == effects
            assert max(slot for (slot,) in rows(path, "tasks", "slot")) <= 4, "a forgotten task's slot taken again"
            peer, call = peer_on(path, life, max_tasks=4, max_effects=5)
            assert remembered(peer) == before, f"seed {seed}, life {life}"
        peer.store.file.close()


@pytest.mark.parametrize("table", ["tasks", "effects"])
@pytest.mark.parametrize("slot", ["0", "-1", str(2**62), str(2**63 - 1)])
def test_a_slot_this_peer_never_gives_is_one_line_naming_the_file(tmp_path, table, slot):
    """A slot is a count from 1: at SQLite's largest, the next new slot could not be written
    (every request after it would stop the process)."""
    path = tmp_path / "billing.db"
    peer, call = peer_on(path, 1, max_tasks=3, max_effects=3)
    call(refund("m-1", "ORD-1"))
    peer.store.file.close()
    with closing(sqlite3.connect(path)) as db:
        db.execute(f"UPDATE {table} SET slot = {slot}")
        db.commit()
    with pytest.raises(DurableError, match="holds a row this peer cannot read") as raised:
        open_store(str(path))
    assert str(raised.value).startswith(str(path)) and "\n" not in str(raised.value)
