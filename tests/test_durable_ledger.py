"""`serve --store`: the ledger on its file (peers/durable_ledger.py). Read back whole as the peer
started, a long-served ledger made each start's memory (and time) grow with every refund it had
made: 50,000 refunds took 40 MB as a peer started. Exactly-once still holds: a refund made before
any number of others is found done when asked again. Real SQLite files, the real store, ledger,
billing and app, in process; the ledger's rows made by its own `record`, seeded."""
import gc
import json
import random
import tracemalloc

from peers import billing
from peers.a2a import wire_v10
from peers.app import PeerApp, owner_of_bearer
from peers.durable import open_store
from peers.ledger import BEING_DONE, WAITING, Effect
from peers.restart import restarted
from transports.inprocess import InProcessTransport

from conftest import cli
from test_durable import HEADERS, refund

OWNERS = [owner_of_bearer(token) for token in ("t0k", "b0b", "c4t")]  # t0k: the caller below


def a_ledger_of(path, done, seed):
    """A store file whose ledger holds `done` refunds made (ORD-0 the oldest, t0k's, as billing claims it)
    among three callers, and three claims of tasks long gone; written by the ledger's own `record`."""
    rng = random.Random(seed)
    store, ledger = open_store(str(path), max_effects=done + 10)
    for number in range(done):
        owner = OWNERS[0] if number == 0 else rng.choice(OWNERS)
        claim = json.dumps({"amount": 5, "order_id": f"ORD-{number}"}, sort_keys=True)
        ledger.record(f"refund of ORD-{number}", Effect(owner, f"task-{number}", claim, BEING_DONE))
        ledger.record(f"refund of ORD-{number}", Effect(owner, f"task-{number}", claim,
                                                        f"refund of $5.00 issued for ORD-{number} (ref BILL-{number})"))
    for number, summary in enumerate((BEING_DONE, WAITING, WAITING)):  # a dead process's, let go as the peer starts
        ledger.record(f"refund of GONE-{number}", Effect(rng.choice(OWNERS), f"gone-{number}", "{}", summary))
    store.file.close()


def started(path):
    """The peer on `path` as `serve --store` starts it; (peer, peak bytes Python held while it started)."""
    tracemalloc.start()
    try:
        store, ledger = open_store(str(path), max_effects=1_000_000)
        peer = billing.billing_agent(store=store, ledger=ledger)
        restarted(peer, str(path))
        return peer, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_peers_start_takes_no_more_memory_for_a_ledger_of_20000_refunds_than_for_one_of_200(tmp_path):
    small, large = tmp_path / "small.db", tmp_path / "large.db"
    a_ledger_of(small, 200, seed=1)
    a_ledger_of(large, 20_000, seed=2)
    peer, _ = started(small)  # (what a first start loads, loaded)
    peer.store.file.close()
    peaks = []
    for path in (small, large):
        peer, peak = started(path)
        peaks.append(peak)
        peer.store.file.close()
    assert peaks[1] < peaks[0] + (256 << 10), f"start-up peaks {peaks[0]:,} and {peaks[1]:,} bytes: it grew with the rows"


def test_a_refund_made_before_20000_others_is_found_done_when_asked_again_after_a_restart(tmp_path):
    path = tmp_path / "large.db"
    a_ledger_of(path, 20_000, seed=3)
    peer, _ = started(path)
    transport = InProcessTransport({billing.BASE_URL: PeerApp(peer, wire_v10, token="t0k")})

    def send(message_id, order):
        frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": refund(message_id, order)})
        return json.loads(transport.post(billing.BASE_URL + "/a2a", frame.encode(), HEADERS).body)["result"]["task"]
    again = send("m-again", "ORD-0")
    assert again["status"]["state"] == "TASK_STATE_REJECTED", again["status"]
    assert "already done by task task-0: refund of $5.00 issued for ORD-0" in \
        again["status"]["message"]["parts"][0]["text"], "found in the file, not done again"
    assert send("m-new", "ORD-NEW")["status"]["state"] == "TASK_STATE_COMPLETED"
    assert [key for key, effect in peer.ledger.effects.items() if effect.summary in (BEING_DONE, WAITING)] == [], \
        "the dead process's claims let go as it started"
    assert len(peer.ledger.effects) == 20_001, "every refund kept, one new"
    peer.store.file.close()


def test_the_memory_a_serving_peer_holds_does_not_grow_with_the_refunds_it_makes(tmp_path):
    """Memory held every effect done for the process's life: a thousand refunds more, 590 KB more."""
    store, ledger = open_store(str(tmp_path / "billing.db"), max_tasks=20)  # the store's own memory bounded, small
    peer = billing.billing_agent(store=store, ledger=ledger)
    transport = InProcessTransport({billing.BASE_URL: PeerApp(peer, wire_v10, token="t0k")})

    def refunds(first, count):
        for number in range(first, first + count):
            frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                                "params": refund(f"m-{number}", f"ORD-{number}")}).encode()
            assert b"TASK_STATE_COMPLETED" in transport.post(billing.BASE_URL + "/a2a", frame, HEADERS).body
    refunds(0, 200)  # the store full, every cache warm
    tracemalloc.start()
    try:
        gc.collect()  # what is held, not garbage the collector has yet to come to
        before = tracemalloc.get_traced_memory()[0]
        refunds(200, 1_000)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 256 << 10, f"{grown:,} bytes more after 1,000 refunds"  # (in memory, they took 590 KB)
    assert len(ledger.effects) == 1_200
    store.file.close()


def test_a_claim_forgotten_is_not_found_in_the_file_before_its_row_is_deleted_there(tmp_path):
    """A claim let go is gone at once, though its row's deletion waits for the next commit: a restart letting
    go of a dead process's claim, then continuing another task of that order, found the row still there, and
    failed that task as "another task holds its effect"."""
    store, ledger = open_store(str(tmp_path / "billing.db"))
    claim = Effect(OWNERS[0], "task-1", "{}", BEING_DONE)
    ledger.record("refund of ORD-1", claim)
    store.flush()  # its row in the file
    ledger.forget("refund of ORD-1")  # its deletion staged, not yet written
    assert ledger.get("refund of ORD-1") is None
    ledger.record("refund of ORD-1", claim._replace(task_id="task-2"))  # claimed again before the commit
    assert ledger.get("refund of ORD-1").task_id == "task-2"
    store.file.close()
    store, ledger = open_store(str(tmp_path / "billing.db"))
    assert dict(ledger.effects) == {"refund of ORD-1": claim._replace(task_id="task-2")}
    store.file.close()


def test_serve_on_a_file_whose_kept_refunds_row_was_edited_exits_2_with_one_line_naming_the_file(tmp_path):
    """An effect done is judged as it is read: a restart reads the effect of each completed task it keeps, and
    one this peer did not write stops `serve` there, in one line, as a file refused as it opens does."""
    path = tmp_path / "billing.db"
    store, ledger = open_store(str(path))
    transport = InProcessTransport({billing.BASE_URL: PeerApp(billing.billing_agent(store=store, ledger=ledger),
                                                              wire_v10, token="t0k")})
    frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": refund("m-1", "ORD-1")})
    assert b"TASK_STATE_COMPLETED" in transport.post(billing.BASE_URL + "/a2a", frame.encode(), HEADERS).body
    store.file.write([("UPDATE effects SET body = json_set(body, '$.summary', 5)", ())])
    store.file.close()
    done = cli("serve", "billing-agent", "--port", "0", "--store", str(path), timeout=20)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    said = [line for line in (done.stdout + done.stderr).splitlines() if str(path) in line]
    assert said == [f"error: {path}: this agent's ledger holds a row it cannot read: effect 'refund of ORD-1' is not one this "
                    "peer wrote (its store file edited?); nothing was done"], done.stdout + done.stderr


def test_a_commit_failing_for_any_reason_stops_the_peer_and_no_effect_it_held_is_let_go_of_unwritten(tmp_path):
    """Memory holds an effect done until the commit that writes it returns. A commit that failed with other than
    SQLite's error (a value SQLite cannot bind: a string no UTF-8 holds) was counted written all the same, so the
    ledger let go of the refunds it carried, on disk nowhere, and the next request for one refunded it again."""
    import subprocess
    import sys
    from conftest import ROOT
    path = tmp_path / "billing.db"
    script = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
from peers.durable import open_store
from peers.ledger import Effect
store, ledger = open_store({str(path)!r})
ledger.record("refund of ORD-1", Effect("o", "task-1", "{{}}", "refund of $5.00 issued for ORD-1"))
ledger.record("refund of ORD-2", Effect("o\\udc80", "task-2", "{{}}", "refund of $5.00 issued"))  # not UTF-8: unbound
try:
    store.flush()
except Exception as exc:
    print("the commit raised", type(exc).__name__)
ledger.record("refund of ORD-3", Effect("o", "task-3", "{{}}", "refund of $5.00 issued for ORD-3"))
print("ORD-1 found:", ledger.get("refund of ORD-1") is not None)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 70 and done.stdout == "", (done.stdout, done.stderr[-2000:])
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith(f"[store] {path}: a write failed (a row it cannot write: UnicodeEncodeError"), done.stderr
    assert done.stderr.endswith("); stopping, so that nothing is answered that is not on disk\n"), done.stderr
    store, ledger = open_store(str(path))
    assert len(ledger.effects) == 0, "nothing of the failed commit on disk, and nothing was told"
    store.file.close()


def test_an_effects_owner_column_larger_than_any_row_this_peer_writes_is_one_line_and_never_read_into_memory(tmp_path):
    """An effect's key and body were bounded as the peer started, its owner column (schema 6) not: a file
    edited to hold an owner of 9 million characters started, holding it in each caller's count for the
    process's life (and a copy of it at every request for its order)."""
    import sqlite3
    from contextlib import closing
    from peers.durable import DurableError
    from peers.durable_read import MAX_ROW_CHARS
    path = tmp_path / "billing.db"
    store, ledger = open_store(str(path))
    ledger.record("refund of ORD-1", Effect(OWNERS[0], "task-1", "{}", "refund of $5.00 issued for ORD-1"))
    store.file.close()
    with closing(sqlite3.connect(path)) as db:
        db.execute("UPDATE effects SET owner = ?", ("o" * (MAX_ROW_CHARS + 1),))
        db.commit()
    before = path.read_bytes()
    tracemalloc.start()
    try:
        try:
            open_store(str(path))
        except DurableError as exc:
            refused = str(exc)
        else:
            refused = None
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert refused is not None and "\n" not in refused and refused.startswith(f"{path}: holds a row this peer cannot "
                                                                              "read (1 effect(s) this peer did not write")
    assert peak < MAX_ROW_CHARS // 4, f"{peak:,} bytes held as it was refused: the owner was read"
    assert path.read_bytes() == before, "left as it was"
