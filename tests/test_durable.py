"""`serve --store FILE.db`: a peer's tasks and ledger survive a restart, and a retry after
one never repeats an effect. Real SQLite files, the real store, peer and app; one test
kills a real served process with SIGKILL and starts it again on the same file."""
import json
import random
import signal
import sqlite3
import threading
from contextlib import closing

import pytest

from conftest import cli
from peers import billing
from peers.a2a import wire_v10
from peers.a2a.errors import TaskNotFound
from peers.a2a.model import TaskState
from peers.app import PeerApp
from peers.durable import SCHEMA_VERSION, DurableError, open_store
from peers.restart import CONTINUE_SECONDS, INTERRUPTED, restarted, settle
from peers.ledger import BEING_DONE, WAITING, Effect
from peers.stamps import counter_ids, unguessable_task_ids
from peers.store import MAX_TASK_BYTES
from transports.inprocess import InProcessTransport

HEADERS = {"Content-Type": "application/json", "A2A-Version": "1.0", "Authorization": "Bearer t0k"}


def on_file(path, max_tasks=1000, wait=CONTINUE_SECONDS, **options):
    """billing, made on a store and ledger on `path` as `serve --store` makes it, with
    what a restart interrupted settled (`wait`: how long the restart waits for the tasks it continues)."""
    store, ledger = open_store(str(path), max_tasks=max_tasks)
    peer = billing.billing_agent(store=store, ledger=ledger, **options)
    restarted(peer, str(path), wait)
    return peer


def durable_billing(path, other_tokens=(), **options):
    """billing, its store and ledger on `path` as `serve --store` has them, served in
    process (to the bearer token t0k, and to `other_tokens`, other callers'); (peer, call)."""
    peer = on_file(path, **options)
    transport = InProcessTransport({billing.BASE_URL: PeerApp(peer, wire_v10, token="t0k", other_tokens=other_tokens)})

    def call(method, params, token="t0k"):
        frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
        return json.loads(transport.post(billing.BASE_URL + "/a2a", frame,
                                         {**HEADERS, "Authorization": f"Bearer {token}"}).body)
    return peer, call


def refund(message_id, order, amount=5, **fields):
    return {"message": {"messageId": message_id, "role": "ROLE_USER", "parts": [{"data": {
        "order_id": order, "amount": amount}}], **fields}}


def test_after_a_restart_tasks_are_there_for_their_owner_only_and_nothing_is_refunded_twice(tmp_path):
    path = tmp_path / "billing.db"
    peer, call = durable_billing(path)
    first = call("SendMessage", refund("m-1", "ORD-1", context="ctx"))["result"]["task"]
    paused = call("SendMessage", refund("m-2", "ORD-2", 6000))["result"]["task"]  # waits for a person
    peer.store.file.close()
    peer, call = durable_billing(path)  # the same file, a new process's worth of objects
    assert call("GetTask", {"id": first["id"]})["result"]["status"]["state"] == "TASK_STATE_COMPLETED"
    with pytest.raises(TaskNotFound):  # the same visibility rules: another caller's id is no task
        peer.store.get(first["id"], "another-caller")
    assert [t["id"] for t in call("ListTasks", {})["result"]["tasks"]][-1] == first["id"]
    assert call("SendMessage", refund("m-1", "ORD-1"))["result"]["task"]["id"] == first["id"], "a resend: its task"
    again = call("SendMessage", refund("m-3", "ORD-1"))["result"]["task"]
    assert again["id"] == first["id"], "the same refund under a new messageId: the task that did it"
    waiting = call("GetTask", {"id": paused["id"]})["result"]  # continued: it waits for its approval again
    assert waiting["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    approval = {"approval": {"order_id": "ORD-2", "amount": 6000.0, "currency": "USD"}}
    approved = call("SendMessage", {"message": {"messageId": "m-2a", "role": "ROLE_USER", "taskId": paused["id"],
                                                "parts": [{"data": approval}]}})["result"]["task"]
    assert approved["status"]["state"] == "TASK_STATE_COMPLETED"
    assert sorted(peer.ledger.effects) == ["refund of ORD-1", "refund of ORD-2"]


def test_a_refund_kept_as_180_0_is_the_same_request_as_180_across_a_restart(tmp_path):
    """The claim a store file keeps is the payload as it came (180.0): the same refund asked again after
    a restart, as 180.0 or as 180 (one JSON number), is still that request (its task), not one that
    differs. Ids as `serve` has them."""
    path = tmp_path / "billing.db"
    peer, call = durable_billing(path, new_task_id=unguessable_task_ids())
    first = call("SendMessage", refund("m-1", "ORD-1", 180.0))["result"]["task"]
    kept = peer.ledger.effects["refund of ORD-1"].payload
    assert '"amount": 180.0' in kept
    peer.store.file.close()
    peer, call = durable_billing(path, new_task_id=unguessable_task_ids())
    assert peer.ledger.effects["refund of ORD-1"].payload == kept, "the row is read as it was written"
    for number, amount in enumerate([180.0, 180], 2):
        again = call("SendMessage", refund(f"m-{number}", "ORD-1", amount))["result"]["task"]
        assert (again["id"], again["status"]["state"]) == (first["id"], "TASK_STATE_COMPLETED"), again["status"]


def interrupted_mid_work(path):
    """A store file holding a refund claimed and working, as a process that died then leaves it."""
    peer, _ = durable_billing(path)
    task, _ = peer.store.add(lambda: peer._submitted(wire_v10.send_request(refund("m-9", "ORD-9")).message),
                             "t0k", "m-9")
    peer.ledger.record("refund of ORD-9", Effect("t0k", task.id, "{}", BEING_DONE))
    peer.store.update(task.advance(TaskState.WORKING))  # ... and the process dies here
    peer.store.file.close()
    return task


def test_a_task_a_restart_interrupted_mid_work_is_continued_and_refunds_once(tmp_path):
    path = tmp_path / "billing.db"
    task = interrupted_mid_work(path)
    peer, call = durable_billing(path)
    found = call("GetTask", {"id": task.id})["result"]
    assert found["status"]["state"] == "TASK_STATE_COMPLETED" and list(peer.ledger.effects) == ["refund of ORD-9"]
    assert call("SendMessage", refund("m-10", "ORD-9"))["result"]["task"]["id"] == task.id, "no second refund"


def test_without_a_peer_to_continue_it_an_interrupted_task_is_failed_as_safe_to_retry(tmp_path):
    path = tmp_path / "billing.db"
    task = interrupted_mid_work(path)
    store, ledger = open_store(str(path))
    settle(store, ledger)  # no go_on: nothing is continued
    assert store.tasks[task.id].state is TaskState.FAILED and store.tasks[task.id].status_message == INTERRUPTED
    assert ledger.effects == {}, "its claim let go"
    # Seed 004's data, as every failure's: effectsLanded a list (it was False, which our own client read as nothing)
    from peers.support.calling.outcomes import as_data
    assert store.tasks[task.id].status_data == {"retrySafe": True, "effectsLanded": []}
    assert as_data(store.tasks[task.id]) == " [as data: retry is safe; effects landed: none]"


def test_the_store_bounds_hold_on_disk(tmp_path):
    path = tmp_path / "billing.db"
    store, ledger = open_store(str(path), max_tasks=3)
    peer = billing.billing_agent(store=store, ledger=ledger)
    transport = InProcessTransport({billing.BASE_URL: PeerApp(peer, wire_v10, token="t0k")})
    for number in range(5):
        transport.post(billing.BASE_URL + "/a2a", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                       "params": refund(f"m-{number}", f"ORD-{number}")}).encode(), HEADERS)
    peer.store.file.close()  # the peer holds its file while it runs
    assert sqlite3.connect(path).execute("SELECT COUNT(*) FROM tasks").fetchone()[0] == 3


@pytest.mark.parametrize("make, why", [
    (lambda path: path.write_bytes(b"not a database, just bytes" * 100), "not a SQLite database"),
    (lambda path: sqlite3.connect(path).executescript(
        f"CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT); INSERT INTO meta VALUES ('schema', '{SCHEMA_VERSION + 1}');"),
     "made by a newer version"),
    (lambda path: sqlite3.connect(path).executescript(  # past the digits Python turns into an int: it raised
        f"CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT); INSERT INTO meta VALUES ('schema', '{'9' * 5000}');"),
     r"made by a newer version of this peer \(schema 9{20}\.\.\."),
    (lambda path: sqlite3.connect(path).executescript(  # zeros before it: no newer number, and no int either
        f"CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT); INSERT INTO meta VALUES ('schema', '{'0' * 5000}1');"),
     r"has a schema this peer does not know \('0{20}'\)"),
    (lambda path: path.mkdir(), "cannot be opened for writing"),
])
def test_a_store_file_that_cannot_be_used_is_one_line_naming_it(tmp_path, make, why):
    path = tmp_path / "billing.db"
    make(path)
    with pytest.raises(DurableError, match=why) as raised:
        open_store(str(path))
    assert str(raised.value).startswith(str(path)) and "\n" not in str(raised.value)


# The first schema, as files made before schema 2 hold it: each key in an index beside a rowid tree
# (run on a file of schema 2).
VERSION_1 = """
CREATE TABLE tasks_2 (id TEXT PRIMARY KEY, seq INTEGER NOT NULL, owner TEXT NOT NULL, size INTEGER NOT NULL,
                      body TEXT NOT NULL);
CREATE TABLE messages_2 (owner TEXT NOT NULL, message_id TEXT NOT NULL, task_id TEXT NOT NULL, digest TEXT NOT NULL,
                         PRIMARY KEY (owner, message_id));
CREATE TABLE effects_2 (key TEXT PRIMARY KEY, seq INTEGER NOT NULL, body TEXT NOT NULL);
INSERT INTO tasks_2 SELECT id, seq, owner, size, body FROM tasks;
INSERT INTO messages_2 SELECT * FROM messages;
INSERT INTO effects_2 SELECT * FROM effects;
DROP TABLE tasks; DROP TABLE messages; DROP TABLE effects;
ALTER TABLE tasks_2 RENAME TO tasks; ALTER TABLE messages_2 RENAME TO messages; ALTER TABLE effects_2 RENAME TO effects;
UPDATE meta SET value = '1' WHERE key = 'schema';
"""


def test_a_store_file_of_the_first_schema_is_migrated_losing_nothing_and_refunding_nothing_twice(tmp_path):
    path = tmp_path / "billing.db"
    peer, call = durable_billing(path)
    first = call("SendMessage", refund("m-1", "ORD-1"))["result"]["task"]
    paused = call("SendMessage", refund("m-2", "ORD-2", 6000))["result"]["task"]
    peer.store.file.close()
    from test_durable_schema import as_schema_2  # here: that module reads this one's helpers
    as_schema_2(path)
    with closing(sqlite3.connect(path)) as old:
        old.executescript(VERSION_1)
    peer, call = durable_billing(path, new_task_id=counter_ids("migrated"))  # not task-1 again: first's id
    assert call("GetTask", {"id": first["id"]})["result"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert call("GetTask", {"id": paused["id"]})["result"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert call("SendMessage", refund("m-1", "ORD-1"))["result"]["task"]["id"] == first["id"], "a resend: its task"
    assert call("SendMessage", refund("m-3", "ORD-1"))["result"]["task"]["id"] == first["id"], "never a second refund"
    later = call("SendMessage", refund("m-4", "ORD-4"))["result"]["task"]
    peer.store.file.close()
    with closing(sqlite3.connect(path)) as migrated:
        assert migrated.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == (str(SCHEMA_VERSION),)
        assert [row[0] for row in migrated.execute("SELECT id FROM tasks ORDER BY seq")] == \
            [first["id"], paused["id"], later["id"]]
        shape = migrated.execute("SELECT type, name FROM sqlite_master WHERE tbl_name <> 'meta'").fetchall()
        assert sorted(shape) == [("index", "effects_by_key"), ("table", "effects"), ("table", "tasks")], \
            "one tree a table, a task's messages in its row; the effects' index by key, to find an effect done"
    peer, call = durable_billing(path)
    assert sorted(peer.ledger.effects) == ["refund of ORD-1", "refund of ORD-2", "refund of ORD-4"]
    peer.store.file.close()


def test_a_store_file_another_peer_holds_is_refused_as_locked(tmp_path):
    path = tmp_path / "billing.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA journal_mode=WAL")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(DurableError, match="locked"):
            open_store(str(path))
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_serve_with_a_bad_store_file_exits_2_with_one_line(tmp_path):
    (tmp_path / "bad.db").write_bytes(b"garbage" * 200)
    done = cli("serve", "billing-agent", "--port", "0", "--store", str(tmp_path / "bad.db"), timeout=20)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"{tmp_path / 'bad.db'}: cannot be used as the store" in done.stdout + done.stderr


def test_a_served_peer_killed_with_sigkill_restarts_on_its_file_and_answers_a_retry_with_the_first_task(tmp_path):
    from conftest import start_serve
    from transports.network import HttpTransport
    path, env = str(tmp_path / "billing.db"), {"A2A_SERVE_TOKEN": "tok-1"}
    frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": refund("m-1", "ORD-1")}).encode()
    headers = {**HEADERS, "Authorization": "Bearer tok-1"}
    answers = []
    for _ in range(2):
        process, lines = start_serve("billing-agent", "--wire", "1.0", "--port", "0", "--store", path, env=env)
        try:
            base = lines[0].split("listening on ")[1].split()[0]
            transport = HttpTransport(timeout=5)
            answers.append(json.loads(transport.post(f"{base}/a2a", frame, headers).body)["result"]["task"])
            transport.close()
        finally:
            process.send_signal(signal.SIGKILL)
            process.communicate(timeout=10)
    assert answers[0]["id"] == answers[1]["id"] and answers[1]["status"]["state"] == "TASK_STATE_COMPLETED"
    effects = sqlite3.connect(path).execute("SELECT key FROM effects").fetchall()
    assert effects == [("refund of ORD-1",)], "refunded once, across the kill"


# -- killed at each point of a delegation, over many seeded runs ----------------------------

def served(path, *extra, token="tok-1"):
    from conftest import start_serve
    process, lines = start_serve("billing-agent", "--wire", "1.0", "--port", "0", "--store", path, *extra,
                                 env={"A2A_SERVE_TOKEN": token})
    assert lines and "listening on" in lines[0], lines
    return process, lines[0].split("listening on ")[1].split()[0], lines


def send(base, message_id, order, amount=5, token="tok-1"):
    """A refund's answer: the task, or None if the connection broke before an answer."""
    from transports.errors import TransportError
    from transports.network import HttpTransport
    frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                        "params": refund(message_id, order, amount)}).encode()
    transport = HttpTransport(timeout=5)
    try:
        return json.loads(transport.post(f"{base}/a2a", frame, {**HEADERS, "Authorization": f"Bearer {token}"}).body)
    except TransportError:
        return None
    finally:
        transport.close()


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_a_served_peer_stopped_as_a_user_stops_it_leaves_its_whole_store_in_the_one_file(tmp_path, stop):
    """Ctrl-C or SIGTERM: what was kept is in FILE.db itself, not left in its write-ahead log
    for a later open to replay, so the file copied or moved alone still holds every task."""
    import shutil
    path = str(tmp_path / "billing.db")
    process, base, _ = served(path)
    try:
        task = send(base, "m-1", "ORD-1")["result"]["task"]
    finally:
        process.send_signal(stop)
        _, err = process.communicate(timeout=20)
    assert process.returncode == 0 and "Traceback" not in err, err
    assert not (tmp_path / "billing.db-wal").exists(), "the log was folded into the file as the store closed"
    shutil.copy(path, tmp_path / "copy.db")
    with closing(sqlite3.connect(tmp_path / "copy.db")) as copy:
        assert copy.execute("SELECT id FROM tasks").fetchall() == [(task["id"],)]
        assert copy.execute("SELECT key FROM effects").fetchall() == [("refund of ORD-1",)]


@pytest.mark.parametrize("seed", range(8))
def test_killed_before_the_effect_after_the_commit_or_after_the_answer_nothing_is_lost_or_done_twice(tmp_path, seed):
    import random
    rng = random.Random(seed)
    path = str(tmp_path / "billing.db")
    told = {}  # order -> the task id the client was told about
    for number in range(3):
        point = rng.choice(["before-effect", "after-commit", "after-answer"])
        order, message_id, amount = f"ORD-{seed}-{number}", f"m-{seed}-{number}", rng.randint(1, 900)
        process, base, _ = served(path, *(["--crash-at", point] if point != "after-answer" else []))
        try:
            answer = send(base, message_id, order, amount)
        finally:
            process.kill()
            process.communicate(timeout=10)
        assert (answer is None) == (point != "after-answer"), (point, answer)
        process, base, _ = served(path)  # restarted on the same file, no crash this time
        try:
            again = send(base, message_id, order, amount)["result"]["task"]  # the same message: safe to resend
            if answer is not None:
                assert again["id"] == answer["result"]["task"]["id"], "the task the client was told about"
            assert again["status"]["state"] == "TASK_STATE_COMPLETED", "done, or continued on restart"
            told[order] = again["id"]
        finally:
            process.terminate()
            process.communicate(timeout=10)
    rows = sqlite3.connect(path).execute("SELECT key, body FROM effects").fetchall()
    assert sorted(key for key, _ in rows) == sorted(f"refund of {order}" for order in told), "each once, none lost"
    assert {json.loads(body)["task_id"] for _, body in rows} == set(told.values())


def test_an_approved_refund_killed_right_after_its_effects_commit_is_completed_on_restart_not_failed_as_nothing_done(
        tmp_path):
    """A refund that paused for approval and was approved has two turns; killed after its effect's commit
    (the ledger: done, by it) and before its task's, the restart failed it "nothing was done, so a retry is
    safe", effectsLanded [], though $6,000 went out: an effect done was no longer found by the task that
    did it, only by the claim it no longer is, and its own effect was asked of its later turn alone."""
    from transports.errors import TransportError
    from transports.network import HttpTransport
    path = str(tmp_path / "billing.db")
    process, base, _ = served(path, "--crash-at", "after-commit")
    try:
        paused = send(base, "m-1", "ORD-1", 6000)["result"]["task"]
        assert paused["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        approval = {"approval": {"order_id": "ORD-1", "amount": 6000.0, "currency": "USD"}}
        frame = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "SendMessage", "params": {"message": {
            "messageId": "m-2", "role": "ROLE_USER", "taskId": paused["id"], "parts": [{"data": approval}]}}}).encode()
        transport = HttpTransport(timeout=5)
        with pytest.raises(TransportError):  # the process died after the commit: no answer
            transport.post(f"{base}/a2a", frame, {**HEADERS, "Authorization": "Bearer tok-1"})
        transport.close()
    finally:
        process.kill()
        process.communicate(timeout=10)
    process, base, lines = served(path)  # restarted, no crash this time
    try:
        assert any("refund of ORD-1: refund of $6,000.00 issued" in line for line in lines), lines
        again = send(base, "m-3", "ORD-1", 6000)["result"]["task"]  # the order asked again: its task
        assert again["id"] == paused["id"]
        assert again["status"]["state"] == "TASK_STATE_COMPLETED", again["status"]
        assert again["artifacts"][0]["parts"][0]["text"].startswith("refund of $6,000.00 issued for ORD-1")
    finally:
        process.terminate()
        process.communicate(timeout=10)
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("SELECT key FROM effects").fetchall() == [("refund of ORD-1",)], "refunded once"


def test_sixteen_clients_and_a_restart_midway_lose_nothing_and_repeat_nothing(tmp_path):
    import threading
    import time
    from conftest import free_port
    from conftest import start_serve
    path, port = str(tmp_path / "billing.db"), free_port()
    base = f"http://127.0.0.1:{port}"
    args = ("billing-agent", "--wire", "1.0", "--port", str(port), "--store", path)
    process, _ = start_serve(*args, env={"A2A_SERVE_TOKEN": "tok-1"})
    done, problems, answered = {}, [], threading.Semaphore(0)

    def client(number):
        for turn in range(5):
            order, message_id = f"ORD-{number}-{turn}", f"m-{number}-{turn}"
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:  # refused or cut off during the restart: the same message again
                answer = send(base, message_id, order)
                if answer is None:
                    time.sleep(0.05)
                    continue
                task = answer.get("result", {}).get("task")
                if task is None:
                    problems.append(answer)
                    break
                if task["status"]["state"] == "TASK_STATE_FAILED":  # interrupted before its effect
                    message_id += "-again"
                    continue
                done[order] = task["id"]
                answered.release()
                break
            else:
                problems.append(f"{order}: no answer within 20 s")
    clients = [threading.Thread(target=client, args=(number,)) for number in range(16)]
    for thread in clients:
        thread.start()
    try:
        for _ in range(40):  # half the refunds answered, then the peer dies and comes back
            assert answered.acquire(timeout=20)
        process.kill()
        process.communicate(timeout=10)
        process, _ = start_serve(*args, env={"A2A_SERVE_TOKEN": "tok-1"})
        for thread in clients:
            thread.join(timeout=60)
    finally:
        process.terminate()
        process.communicate(timeout=10)
    assert problems == [] and len(done) == 80
    rows = sqlite3.connect(path).execute("SELECT key, body FROM effects").fetchall()
    assert sorted(key for key, _ in rows) == sorted(f"refund of {order}" for order in done), "each once"
    assert {json.loads(body)["task_id"] for _, body in rows} == set(done.values())


def test_the_crash_lesson_fails_safely_restarts_billing_and_its_retry_gets_the_one_refund():
    done = cli("--scenario", "crash", timeout=60)
    assert done.returncode == 0 and "Traceback" not in done.stderr
    lines = done.stdout.splitlines()
    assert any("may have been acted on: retry is NOT safe until the peer confirms" in line for line in done.stderr.splitlines() + lines)
    assert "[support] billing exited (137); starting it again on the same store" in lines
    stores = [line for line in lines if line.startswith("[billing] store: ")]
    assert [line.split("(")[1] for line in stores] == ["0 tasks, 0 effects in the ledger)", "1 task, 1 effect in the ledger)"]
    (ledger,) = [line for line in lines if line.startswith("[billing] ledger: refund of ORD-9100")]
    task_id = ledger.rsplit("(task ", 1)[1].rstrip(")")
    assert f"[support] task {task_id} state: completed" in lines, "it found the task billing made before it died"
    assert f"[support] found task {task_id}, completed: the refund landed before billing died; nothing to resend, " \
           "one refund" in lines
    assert "[support] trusted result (from billing-agent): refund of $180.00 issued for ORD-9100" in done.stdout
    sent = [line for line in lines if line.startswith("--> {")]
    assert ['"method": "SendMessage"' in line for line in sent] == [True, False], "looked (ListTasks), never resent"
    assert '"method": "ListTasks"' in sent[1] and '"contextId": "ticket-9100"' in sent[1]


def test_the_crash_lesson_on_a_wire_without_list_tasks_resends_and_says_a2a_only_allows_dropping_a_copy():
    done = cli("--scenario", "crash", "--wire", "0.3", timeout=60)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert ("A2A allows a server to drop a message whose messageId it has seen, but does not require it: "
            "billing's ledger, not the protocol, makes this safe") in done.stdout
    assert sum('"method": "message/send"' in line for line in done.stdout.splitlines()) == 2
    assert "[support] one refund: billing's ledger above is the one that answered" in done.stdout


def test_a_file_kept_under_larger_bounds_is_cut_to_the_stores_on_start(tmp_path):
    path = tmp_path / "billing.db"
    peer, call = durable_billing(path)
    made = [call("SendMessage", refund(f"m-{n}", f"ORD-{n}"))["result"]["task"]["id"] for n in range(5)]
    peer.store.file.close()
    small = on_file(path, max_tasks=2)
    assert list(small.store.tasks) == made[-2:], "the newest kept, the oldest forgotten"
    assert len(small.ledger.effects) == 5, "the ledger outlives the tasks' window, as in memory"
    small.store.file.close()
    assert sqlite3.connect(path).execute("SELECT COUNT(*) FROM tasks").fetchone()[0] == 2


def a_file_of_many_tasks(path, count):
    """A store file holding `count` completed refunds' rows (task-1 the oldest), made by hand from the one
    row a real peer wrote, as a file kept under far larger bounds, or made by hand, may hold them."""
    peer, call = durable_billing(path)
    call("SendMessage", refund("m-1", "ORD-1"))
    peer.store.file.close()
    with closing(sqlite3.connect(path)) as db:
        (_, _, _, owner, size, _, body), = db.execute("SELECT * FROM tasks").fetchall()
        db.execute("DELETE FROM tasks")
        db.executemany("INSERT INTO tasks VALUES (?, ?, ?, ?, ?, '[]', ?)", (
            (n, n, f"task-{n}", owner, size, body.replace('"task-1"', f'"task-{n}"')) for n in range(1, count + 1)))
        db.commit()
    return owner


@pytest.mark.parametrize("bound", ["max_tasks", "max_bytes"])
def test_a_file_of_many_more_tasks_than_the_bounds_starts_in_memory_the_bounds_hold_not_the_files(tmp_path, bound):
    """Start-up read every task row, then cut the store to its bounds: 1,500 rows of half a kilobyte each
    took 4 MB at their peak (each row parsed, then forgotten), a file of millions as many times more. Only
    the newest the bounds hold are read; the older rows go from the file as the store is cut."""
    import tracemalloc
    path = tmp_path / "billing.db"
    a_file_of_many_tasks(path, 1500)
    with closing(sqlite3.connect(path)) as db:
        (size,), = db.execute("SELECT DISTINCT size FROM tasks").fetchall()
    tracemalloc.start()
    try:  # ten tasks, by their count or by the bytes of their messages
        store, ledger = open_store(str(path), **{bound: 10 if bound == "max_tasks" else 10 * size})
        settle(store, ledger)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, f"{peak:,} bytes at the peak"
    assert list(store.tasks) == [f"task-{n}" for n in range(1491, 1501)], "the newest kept"
    assert list(ledger.effects) == ["refund of ORD-1"], "the ledger whole"
    store.file.close()
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("SELECT id FROM tasks ORDER BY seq").fetchall() == [(f"task-{n}",) for n in range(1491, 1501)]


def test_a_claim_naming_a_task_older_than_the_bounds_is_settled_as_if_every_task_were_read(tmp_path):
    """Start-up reads only the newest tasks the bounds hold, and any task a claim names: settled as before,
    a completed task's claim not yet marked done is marked with its result (never let go, to be refunded
    again), a working task's claim is let go, and both are cut with the rest."""
    path = tmp_path / "billing.db"
    owner = a_file_of_many_tasks(path, 50)
    with closing(sqlite3.connect(path)) as db:
        db.execute("UPDATE tasks SET body = json_set(json_remove(body, '$.artifacts'), '$.lifecycle', json("
                   "'{\"$tuple\": [{\"$state\": \"submitted\"}, {\"$state\": \"working\"}]}')) WHERE id = 'task-3'")
        db.commit()
    store, ledger = open_store(str(path), max_tasks=10)
    ledger.record("refund of ORD-1", ledger.effects["refund of ORD-1"]._replace(summary=BEING_DONE))  # died before
    ledger.record("refund of ORD-3", Effect(owner, "task-3", "{}", BEING_DONE))  # mid-work, long ago
    store.file.close()
    store, ledger = open_store(str(path), max_tasks=10)
    assert "task-1" in store.tasks and "task-3" in store.tasks and len(store.tasks) == 12, "read: claims name them"
    settle(store, ledger)
    assert {key: effect.summary for key, effect in ledger.effects.items()} == {
        "refund of ORD-1": "refund of $5.00 issued for ORD-1 (ref BILL-ORD-1)"}
    assert list(store.tasks) == [f"task-{n}" for n in range(41, 51)]
    store.file.close()
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("SELECT id FROM tasks ORDER BY seq").fetchall() == [(f"task-{n}",) for n in range(41, 51)]


def test_a_task_read_only_as_an_older_claim_names_it_costs_none_of_the_newest_the_bounds_hold(tmp_path):
    """A task older than the newest the bounds hold is read only so that its claim is settled, then cut. It was
    cut after the store's own rule had made room for it: of two callers, the one holding the most gives up its
    oldest, so each byte of another caller's old claimed task cost one of the newest a task, though it went too."""
    path = tmp_path / "billing.db"
    owner = a_file_of_many_tasks(path, 50)
    with closing(sqlite3.connect(path)) as db:
        (size,), = db.execute("SELECT DISTINCT size FROM tasks").fetchall()
        db.execute("UPDATE tasks SET owner = ?, body = json_set(json_remove(body, '$.artifacts'), '$.lifecycle', json("
                   "'{\"$tuple\": [{\"$state\": \"submitted\"}, {\"$state\": \"working\"}]}')) WHERE id = 'task-3'",
                   (owner + "-another",))
        db.commit()
    store, ledger = open_store(str(path), max_bytes=10 * size)
    ledger.record("refund of ORD-3", Effect(owner + "-another", "task-3", "{}", BEING_DONE))  # mid-work, long ago
    store.file.close()
    store, ledger = open_store(str(path), max_bytes=10 * size)
    assert "task-3" in store.tasks, "read: a claim names it"
    settle(store, ledger)
    assert ledger.effects == {"refund of ORD-1": ledger.effects["refund of ORD-1"]}, "task-3's claim let go"
    assert list(store.tasks) == [f"task-{n}" for n in range(41, 51)], "the newest ten, as without the claim"
    store.file.close()
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("SELECT id FROM tasks ORDER BY seq").fetchall() == [(f"task-{n}",) for n in range(41, 51)]


# -- found by a hostile tester (each a regression test) --------------------------------------

def test_a_second_peer_on_the_same_store_file_is_refused_as_locked(tmp_path):
    path = str(tmp_path / "billing.db")
    first, base, _ = served(path)
    try:
        assert send(base, "m-1", "ORD-1")["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        second = cli("serve", "billing-agent", "--port", "0", "--store", path, timeout=20)  # first one idle
        assert second.returncode == 2 and "locked" in second.stdout + second.stderr
    finally:
        first.terminate()
        first.communicate(timeout=10)


def test_someone_elses_database_is_refused_and_left_as_it_was(tmp_path):
    path = tmp_path / "contacts.sqlite"
    theirs = sqlite3.connect(path)
    theirs.executescript("CREATE TABLE contacts (name TEXT); INSERT INTO contacts VALUES ('Ada');")
    theirs.close()
    before = path.read_bytes()
    with pytest.raises(DurableError, match="holds tables of something else"):
        open_store(str(path))
    assert path.read_bytes() == before and not (tmp_path / "contacts.sqlite-wal").exists()


@pytest.mark.parametrize("meta", ["meta (key TEXT PRIMARY KEY, value TEXT)", "meta (name TEXT, setting TEXT)"])
def test_a_database_with_a_meta_table_of_its_own_is_refused_and_its_bytes_and_mode_left_as_they_were(tmp_path, meta):
    """Another program's `meta` table, shaped as ours or not, names no schema of this peer: the
    file is someone else's. It was adopted (our tables added, its meta written), or refused after
    it had been switched to WAL and narrowed to 0600."""
    import os
    path = tmp_path / "app.db"
    with closing(sqlite3.connect(path)) as theirs:
        theirs.executescript(f"CREATE TABLE {meta}; CREATE TABLE users (name TEXT); INSERT INTO users VALUES ('Ada');")
    os.chmod(path, 0o644)
    before = path.read_bytes()
    with pytest.raises(DurableError, match="holds tables of something else"):
        open_store(str(path))
    assert path.read_bytes() == before and os.stat(path).st_mode & 0o777 == 0o644
    assert not (tmp_path / "app.db-wal").exists()


def test_a_file_that_is_no_database_is_refused_with_its_mode_left_as_it_was(tmp_path):
    import os
    path = tmp_path / "notes.txt"
    path.write_text("shopping: milk\n" * 20)
    os.chmod(path, 0o644)
    with pytest.raises(DurableError, match="not a SQLite database"):
        open_store(str(path))
    assert path.read_text() == "shopping: milk\n" * 20 and os.stat(path).st_mode & 0o777 == 0o644


def test_a_refused_store_file_is_let_go_at_once_so_the_same_process_may_try_it_again(tmp_path):
    """Refused as it opens (a newer schema) or as it is read back (a row this peer did not write), the
    file is not left locked until the collector happens by: fixed, it opens in the same process.
    The collector is kept off, as it is between its passes in a long-lived caller."""
    import gc
    path = tmp_path / "billing.db"
    peer, call = durable_billing(path)
    call("SendMessage", refund("m-1", "ORD-1"))
    peer.store.file.close()
    for tamper, mend, why in (("UPDATE meta SET value = '99' WHERE key = 'schema'",
                               "UPDATE meta SET value = '3' WHERE key = 'schema'", "newer version"),
                              ("UPDATE effects SET seq = 4611686018427387904", "UPDATE effects SET seq = 1", "cannot read")):
        with closing(sqlite3.connect(path)) as db:
            db.execute(tamper)
            db.commit()
        gc.disable()
        try:
            with pytest.raises(DurableError, match=why):
                open_store(str(path))
            with closing(sqlite3.connect(path, timeout=0)) as db:  # locked: "database is locked" at once
                db.execute(mend)
                db.commit()
        finally:
            gc.enable()
    store, ledger = open_store(str(path))
    assert len(store.tasks) == 1 and len(ledger.effects) == 1
    store.file.close()


def test_every_change_is_on_disk_before_anyone_is_told_of_it(tmp_path):
    peer, call = durable_billing(tmp_path / "billing.db")
    seen = []

    def listener(task, owner, gone):  # as a webhook is told: the file must already say the same
        (body,) = peer.store.file.rows(f"SELECT body FROM tasks WHERE id = '{task.id}'")[0]
        seen.append((task.state.value, json.loads(body)["lifecycle"]["$tuple"][-1]["$state"]))
    peer.changes.follow(listener)
    call("SendMessage", refund("m-1", "ORD-1"))
    assert seen and all(told == kept for told, kept in seen), seen


def test_the_ledgers_bound_holds_on_disk(tmp_path):
    store, ledger = open_store(str(tmp_path / "billing.db"), max_effects=3)
    peer = billing.billing_agent(store=store, ledger=ledger)
    transport = InProcessTransport({billing.BASE_URL: PeerApp(peer, wire_v10, token="t0k")})
    for number in range(6):
        transport.post(billing.BASE_URL + "/a2a", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                       "params": refund(f"m-{number}", f"ORD-{number}")}).encode(), HEADERS)
    assert peer.store.file.rows("SELECT COUNT(*) FROM effects")[0][0] == len(peer.ledger.effects) == 3


@pytest.mark.parametrize("commits", [False, True], ids=["in one commit", "a commit after each"])
def test_an_effect_recorded_again_keeps_its_place_and_a_restart_reads_every_effect_back(tmp_path, commits):
    """A paused refund's claim, another order's refund, then the first one's result: in memory the
    first stays oldest, and so in the file; a restart reads back every effect, in that order,
    whatever the bound (a ledger forgets no effect done: its bound only stops new claims)."""
    path = str(tmp_path / "billing.db")
    store, ledger = open_store(path, max_effects=2)
    claim = Effect("bearer:o", "task-1", '{"order_id": "ORD-1"}', "nothing yet: the task waits for its caller")
    for key, effect in [("refund of ORD-1", claim), ("refund of ORD-2", claim._replace(task_id="task-2")),
                        ("refund of ORD-1", claim._replace(summary="refund of $5.00 issued"))]:
        ledger.record(key, effect)
        if commits:
            store.flush()
    store.file.close()
    store, ledger = open_store(path, max_effects=2)
    assert list(ledger.effects) == ["refund of ORD-1", "refund of ORD-2"]
    assert ledger.effects["refund of ORD-1"].summary == "refund of $5.00 issued"
    ledger.record("refund of ORD-3", claim._replace(task_id="task-3"))
    store.file.close()
    store, ledger = open_store(path, max_effects=2)
    assert list(ledger.effects) == ["refund of ORD-1", "refund of ORD-2", "refund of ORD-3"], "none forgotten"
    assert not ledger.room_for("refund of ORD-4", "bearer:o") and ledger.room_for("refund of ORD-1", "bearer:o"), \
        "its share full: no new claim"
    assert ledger.room_for("refund of ORD-4", "bearer:other"), "another caller's share is its own"
    store.file.close()


def test_effects_a_file_kept_under_a_larger_bound_all_stay_in_the_file_and_no_order_is_refunded_again(tmp_path):
    path = tmp_path / "billing.db"
    peer, call = durable_billing(path)
    first = [call("SendMessage", refund(f"m-{number}", f"ORD-{number}"))["result"]["task"] for number in range(5)]
    peer.store.file.close()
    store, ledger = open_store(str(path), max_effects=2)
    again = billing.billing_agent(store=store, ledger=ledger, new_task_id=counter_ids("again"))
    restarted(again, str(path))
    transport = InProcessTransport({billing.BASE_URL: PeerApp(again, wire_v10, token="t0k")})
    answers = []
    for number in (0, 5):  # an old order under a new messageId; a new order, the ledger full
        frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                            "params": refund(f"m-{number}-again", f"ORD-{number}")}).encode()
        answers.append(json.loads(transport.post(billing.BASE_URL + "/a2a", frame, HEADERS).body)["result"]["task"])
    assert answers[0]["id"] == first[0]["id"], "the order asked again: its first task, not a second refund"
    assert answers[1]["status"]["state"] == "TASK_STATE_REJECTED", answers[1]
    assert "forgets none of them" in answers[1]["status"]["message"]["parts"][0]["text"]
    again.store.file.close()
    with closing(sqlite3.connect(path)) as db:
        assert [key for (key,) in db.execute("SELECT key FROM effects ORDER BY seq")] == [
            f"refund of ORD-{number}" for number in range(5)], "every refund kept, none new"


@pytest.mark.parametrize("seed", range(40))
def test_after_records_forgets_and_restarts_under_any_bound_the_ledger_comes_back_as_the_process_had_it(tmp_path, seed):
    """Seeded runs of records (a claim's result among them: a key recorded again), forgets,
    commits and restarts under a bound drawn anew each time, some of the processes dying
    with changes staged and not committed. After each start the ledger holds what the
    process had at its last commit, oldest first, all of it whatever the new bound."""
    rng, path = random.Random(seed), str(tmp_path / "billing.db")
    bound = rng.randint(1, 6)
    store, ledger = open_store(path, max_effects=bound)
    committed: list[str] = []  # the ledger, oldest first, as the last commit left the file
    for step in range(60):
        key, move = f"refund of ORD-{rng.randint(0, 9)}", rng.random()
        if move < 0.55:
            ledger.record(key, Effect("bearer:o", f"task-{step}", "{}", rng.choice([BEING_DONE, "refund issued"])))
        elif move < 0.7:
            ledger.forget(key)
        elif move < 0.82:
            store.flush()
            committed = list(ledger.effects)
        else:
            if rng.random() < 0.5:
                committed = list(ledger.effects)  # (read from the file, what is staged committed first)
                store.file.close()  # a clean stop: what is staged is committed
            else:
                store.file.db.close()  # the process dies (kill -9): what is staged never reaches the file
            bound = rng.randint(1, 6)
            store, ledger = open_store(path, max_effects=bound)
            assert list(ledger.effects) == committed, f"seed {seed}, step {step}"
    store.file.close()


def test_effects_recorded_from_many_threads_come_back_after_a_restart_in_the_order_memory_had_them(tmp_path):
    """Eight threads record, forget and commit together (each thread's moves seeded; how they
    interleave is the scheduler's): whatever the interleaving, a restart reads back the order
    memory had, because memory and the seq change together under the ledger's lock."""
    path = str(tmp_path / "billing.db")
    store, ledger = open_store(path, max_effects=7)

    start = threading.Barrier(8, timeout=10)

    def work(number: int) -> None:
        rng = random.Random(number)
        start.wait()  # all at once: their records interleave
        for step in range(300):
            key, move = f"refund of ORD-{rng.randint(0, 15)}", rng.random()
            if move < 0.6:
                ledger.record(key, Effect("bearer:o", f"task-{number}-{step}", "{}", "refund issued"))
            elif move < 0.8:
                ledger.forget(key)
            else:
                store.flush()  # group commits, while the other threads go on recording
    threads = [threading.Thread(target=work, args=(number,)) for number in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    had = list(ledger.effects)
    store.file.close()
    store, ledger = open_store(path, max_effects=7)
    assert list(ledger.effects) == had
    store.file.close()


@pytest.mark.parametrize("row", ['{"$": "Effect", "owner": "o", "task_id": "t", "payload": "", "summary": ""}',
                                 "7", '{"$": "Task", "id": "task-x", "lifecycle": ["working"]}', "[" * 5000])
def test_a_task_row_this_peer_did_not_write_is_one_line_naming_the_file(tmp_path, row):
    path = tmp_path / "billing.db"
    peer, call = durable_billing(path)
    call("SendMessage", refund("m-1", "ORD-1"))
    peer.store.file.write([("UPDATE tasks SET body = ?", (row,))])
    peer.store.file.close()
    with pytest.raises(DurableError, match="holds a row this peer cannot read") as raised:
        open_store(str(path))
    assert "\n" not in str(raised.value)


def a_store_whose_task_row_holds(tmp_path, field, value, size=None):
    """billing's store file after one refund, its task's row then holding `field` = `value` (and the `size` given)."""
    path = tmp_path / "billing.db"
    peer, call = durable_billing(path)
    call("SendMessage", refund("m-1", "ORD-1"))
    (body,), = peer.store.file.rows("SELECT body FROM tasks")
    grown = json.dumps({**json.loads(body), field: value})
    peer.store.file.write([("UPDATE tasks SET body = ?, size = COALESCE(?, size)", (grown, size))])
    peer.store.file.close()
    return path


@pytest.mark.parametrize("field, value", [("artifacts", 5), ("history", "a message"), ("lifecycle", [{"$state": "working"}]),
                                          ("timestamp", 7), ("status_data", [1])])
def test_a_task_row_with_a_field_of_another_type_is_refused_as_it_is_read_not_mid_request(tmp_path, field, value):
    """Each field as the record declares it, or the row was not this peer's: a completed task whose
    artifacts were a number stopped `serve` with a traceback as it started, and a history that was
    a string answered every ListTasks -32603."""
    path = a_store_whose_task_row_holds(tmp_path, field, value)
    with pytest.raises(DurableError, match=rf"holds a row this peer cannot read .task \S+ is not a task this peer wrote "
                                           rf"\(Task\.{field}\)"):
        open_store(str(path))


@pytest.mark.parametrize("field, value", [("metadata", {"x": float("nan")}), ("metadata", {"x": float("-inf")}),
                                          ("status_data", {"x": 1e999}), ("lifecycle", {"$tuple": [{"$state": "unknown"}]}),
                                          ("history", {"$tuple": [{"$": "Message", "message_id": "m", "role": "system",
                                                                    "parts": {"$tuple": []}}]})],
                         ids=["NaN", "-Infinity", "1e999", "an unknown state", "a role of neither side"])
def test_a_task_row_holding_a_value_this_peer_never_writes_is_refused_as_it_is_read_not_answered_with_500s(
        tmp_path, field, value):
    """Of the right type, but no value this peer makes: a NaN or an infinity (no JSON a client may
    send holds one), a state ours never are, a message neither the user's nor the agent's. Each
    opened, and then GetTask, ListTasks and a resend of the task's message answered -32603 every
    time (the state one also printed a restart thread's traceback)."""
    path = a_store_whose_task_row_holds(tmp_path, field, value)
    with pytest.raises(DurableError, match="holds a row this peer cannot read") as raised:
        open_store(str(path))
    assert "\n" not in str(raised.value)


MARKED = {"a state": {"$state": "working"}, "bytes": {"$bytes": "AAAA"}, "a part": {"$": "Part", "text": "hi"}}


@pytest.mark.parametrize("field, inner", [("metadata", "a state"), ("status_data", "bytes"), ("metadata", "a part"),
                                          ("history", "a state")])
def test_a_task_row_whose_json_holds_a_value_json_cannot_carry_is_refused_as_it_is_read_not_answered_with_500s(
        tmp_path, field, inner):
    """What a client sent, or the peer said, as data is JSON, and a client's own "$" keys are escaped
    ($dict): a store's marker inside it (a state, bytes, a record) is no row this peer wrote. Each was
    read back as a TaskState, bytes or a Part inside the data, and every GetTask and ListTasks of the
    task's caller (and a resend of its message) answered -32603 (TaskState is not JSON serializable)."""
    value = {"x": [MARKED[inner]]}
    if field == "history":  # deep in a part's data, where the refund's order is
        value = {"$tuple": [{"$": "Message", "message_id": "m-1", "role": "user", "parts": {"$tuple": [
            {"$": "Part", "data": {"order_id": MARKED[inner], "amount": 5}}]}}]}
    path = a_store_whose_task_row_holds(tmp_path, field, value)
    with pytest.raises(DurableError, match=r"holds a row this peer cannot read .task \S+ is not a task this peer wrote") \
            as raised:
        open_store(str(path))
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize("schema, table, seq", [(3, "effects", "'a'"), (3, "effects", "x'00'"), (3, "effects", "1e300"),
                                                (3, "effects", "0"), (4, "effects", str(2**63 - 1)),
                                                (4, "tasks", str(2**63 - 1)), (5, "effects", "'a'"), (5, "tasks", "1e300"),
                                                (5, "tasks", "0"), (5, "effects", str(2**63 - 1))],
                         ids=["text", "a blob", "a real", "none counted", "SQLite's largest", "a task's at SQLite's largest",
                              "text (schema 5)", "a task's real (schema 5)", "a task's none counted (schema 5)",
                              "SQLite's largest (schema 5)"])
def test_a_seq_this_peer_could_not_count_on_from_is_one_line_naming_the_file(tmp_path, schema, table, seq):
    """The next effect's (or task's) seq is one more than the file's largest. One that is text
    or a blob opened, and the next refund raised TypeError in the ledger (its effect in memory,
    not in the file); at SQLite's largest, the next commit raised OverflowError and lost what
    it carried: every refund from then on was -32603. At 1e300 one more is the same number, so
    every later effect shared it and a restart read them back in the keys' order, not as made.
    Schema 4 kept an effect's seq as its row's, an integer: the others come in schema 3's files. Schema 5
    keeps it in a column of its own, where SQLite takes any of them."""
    path = tmp_path / "billing.db"
    peer, call = durable_billing(path)
    call("SendMessage", refund("m-1", "ORD-1"))
    peer.store.file.close()
    from test_durable_schema import as_schema_3, as_schema_4  # here: that module reads this one's helpers
    (as_schema_3 if schema == 3 else as_schema_4 if schema == 4 else lambda path: None)(path)
    with closing(sqlite3.connect(path)) as db:
        db.execute(f"UPDATE {table} SET seq = {seq}")
        db.commit()
    with pytest.raises(DurableError, match="holds a row this peer cannot read") as raised:
        open_store(str(path))
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize("schema, tamper", [(3, "UPDATE effects SET seq = 1"),
                                            (5, "UPDATE effects SET seq = 1"),
                                            (5, "UPDATE tasks SET seq = 1"),
                                            (5, "UPDATE effects SET key = 'refund of ORD-1'"),
                                            (5, "UPDATE effects SET key = x'00'")],
                         ids=["one seq given twice (schema 3)", "one seq given twice", "one task's seq given twice",
                              "one key twice", "a key that is not text"])
def test_effects_this_peer_did_not_write_are_one_line_naming_the_file(tmp_path, schema, tamper):
    """Two effects of one place in the ledger's order, or of one key (a restart kept the later,
    its first record's place lost), or a key that is not text: not rows this peer wrote."""
    path = tmp_path / "billing.db"
    peer, call = durable_billing(path)
    call("SendMessage", refund("m-1", "ORD-1"))
    call("SendMessage", refund("m-2", "ORD-2"))
    peer.store.file.close()
    if schema == 3:
        from test_durable_schema import as_schema_3
        as_schema_3(path)
    with closing(sqlite3.connect(path)) as db:
        db.execute(tamper)
        db.commit()
    with pytest.raises(DurableError, match="holds a row this peer cannot read") as raised:
        open_store(str(path))
    assert "\n" not in str(raised.value)


def test_effects_are_kept_in_the_order_they_were_made_not_their_keys_order(tmp_path):
    """While the ledger is not full, each new effect is appended to its table's tree, as each new
    task is while the store is not: kept in their keys' order (schema 3), a new one landed
    mid-tree and split its pages, and a full store's commit wrote 6.5 pages, not 5. The file's
    own order, no ORDER BY, is the order made (once full, a new effect takes the oldest's slot:
    test_durable_slots.py)."""
    path = tmp_path / "billing.db"
    peer, call = durable_billing(path)
    for number, order in enumerate(("ORD-3", "ORD-10", "ORD-1", "ORD-2")):
        call("SendMessage", refund(f"m-{number}", order))
    peer.store.file.close()
    with closing(sqlite3.connect(path)) as db:
        assert [key for (key,) in db.execute("SELECT key FROM effects NOT INDEXED")] == [  # its own tree, not the
            "refund of ORD-3", "refund of ORD-10", "refund of ORD-1", "refund of ORD-2"]  # index's key order


def test_a_task_id_made_again_after_a_restart_is_the_new_tasks_alone_and_the_store_keeps_working(tmp_path):
    """A peer on a store file with ids from a counter (the default) makes task-1 again after a
    restart. The task that had the id went on being counted as its first caller's, a ghost:
    once that caller held the most, making room chose it, and every SendMessage from then on
    was -32603, whoever sent it; and its row stayed in the file (a commit staged a row by its
    id, so the new task's row replaced the old one's deletion), read back on the next start."""
    path = tmp_path / "billing.db"
    peer, call = durable_billing(path)
    assert call("SendMessage", refund("a-0", "ORD-A0"))["result"]["task"]["id"] == "task-1"
    peer.store.file.close()
    for restart in range(2):
        peer = on_file(path, max_tasks=2)
        transport = InProcessTransport({billing.BASE_URL: PeerApp(peer, wire_v10, token="t0k", other_tokens=("b0b",))})

        def send(message_id, token):
            frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                                "params": refund(message_id, message_id.upper())}).encode()
            return json.loads(transport.post(billing.BASE_URL + "/a2a", frame,
                                             {**HEADERS, "Authorization": f"Bearer {token}"}).body)
        answers = [send(f"b{restart}-{n}", "b0b") for n in range(3)] + [send(f"a{restart}-{n}", "t0k") for n in range(3)]
        assert [answer.get("error") for answer in answers] == [None] * 6, answers
        assert answers[0]["result"]["task"]["id"] == "task-1", "the id made again, for another caller"
        resent = send("a-0", "t0k")
        assert "B0" not in json.dumps(resent), "a resend is never answered with another caller's task"
        assert all(peer.store.owners[task_id] == owner for owner, ids in peer.store.held.items() for task_id in ids)
        assert sorted(peer.store.held) == sorted(set(peer.store.owners.values()))
        peer.store.file.close()
        with closing(sqlite3.connect(path)) as kept:
            assert sorted(kept.execute("SELECT id FROM tasks").fetchall()) == sorted((t,) for t in peer.store.tasks)


def test_a_store_file_holding_one_task_id_twice_reads_back_the_later_task_alone(tmp_path):
    """As a file the case above wrote before it was fixed holds: two rows of task-1, each a
    caller's. Read back, the earlier one is forgotten (its row deleted), not left counted as
    its caller's, nor its messages pointing at the other caller's task."""
    path = tmp_path / "billing.db"
    peer, call = durable_billing(path)
    call("SendMessage", refund("a-0", "ORD-A0"))
    call("SendMessage", refund("b-0", "ORD-B0"))
    peer.store.file.close()
    from test_durable_schema import as_schema_2
    as_schema_2(path)  # the schema of the files that case wrote
    with closing(sqlite3.connect(path)) as old:
        old.executescript("UPDATE tasks SET id = 'task-1', body = replace(body, 'task-2', 'task-1'), "
                          "owner = owner || 'b' WHERE id = 'task-2';"
                          "UPDATE messages SET task_id = 'task-1', owner = owner || 'b' WHERE task_id = 'task-2';")
    peer, call = durable_billing(path, max_tasks=2)
    assert list(peer.store.tasks) == ["task-1"] and set(peer.store.held) == set(peer.store.owners.values())
    resent = call("SendMessage", refund("a-0", "ORD-A0"))
    assert "ORD-B0" not in json.dumps(resent), "never answered with another caller's task"
    assert [call("SendMessage", refund(f"a-{n}", f"ORD-A{n}")).get("error") for n in range(1, 5)] == [None] * 4
    peer.store.file.close()
    with closing(sqlite3.connect(path)) as kept:
        assert sorted(kept.execute("SELECT id FROM tasks").fetchall()) == sorted((t,) for t in peer.store.tasks)


@pytest.mark.parametrize("state", ["working", "submitted", "input-required"])
def test_a_task_whose_effect_the_ledger_shows_it_did_is_completed_on_start_in_any_state_never_run_again(tmp_path, state):
    """The ledger says the task did its refund; its row says it is still going (edited by hand). Working,
    it was completed with the ledger's result; submitted or paused, it was run again: its refund issued a
    second time, or, its order gone from billing's book meanwhile, the re-run failed and let go of the
    ledger's record of the refund done, so the order could be refunded again by any later request."""
    path = tmp_path / "billing.db"
    peer, call = durable_billing(path)
    task = call("SendMessage", refund("m-1", "ORD-1"))["result"]["task"]
    peer.store.file.close()
    with closing(sqlite3.connect(path)) as edited:
        (body,), = edited.execute("SELECT body FROM tasks").fetchall()
        row = json.loads(body)
        row["lifecycle"] = {"$tuple": [{"$state": "submitted"}] + ([{"$state": state}] if state != "submitted" else [])}
        del row["artifacts"]
        edited.execute("UPDATE tasks SET body = ?", (json.dumps(row),))
        edited.commit()
    peer, call = durable_billing(path, orders={"ORD-2": 10.0})  # billing's book no longer has ORD-1
    done = "refund of $5.00 issued for ORD-1 (ref BILL-ORD-1)"
    assert peer.ledger.effects["refund of ORD-1"].summary == done, "the refund done stays done"
    again = peer.store.tasks[task["id"]]
    assert again.state is TaskState.COMPLETED and [a.text for a in again.artifacts] == [done], "not run again (it fails)"
    peer.store.file.close()


def test_a_task_whose_refund_the_ledger_shows_it_did_is_completed_on_start_under_any_claim_never_run_again(tmp_path):
    """As above, and a second effect row names the task too, as a claim being done (a file edited by hand). The
    task's claim as the restart read it was that one, so its own refund, done, was claimed over and run again, and
    the re-run failing (its order gone from billing's book) let go of the record of the refund done; then, that
    fixed, the task was failed saying nothing was done and a retry is safe, while the ledger shows its refund done.
    It is completed with the ledger's result, as a task whose own claim the ledger shows done is, the record kept,
    and its stray claim is let go."""
    path = tmp_path / "billing.db"
    peer, call = durable_billing(path)
    task = call("SendMessage", refund("m-1", "ORD-1"))["result"]["task"]
    peer.ledger.record("refund of ORD-9", Effect(peer.store.owners[task["id"]], task["id"], "{}", BEING_DONE))
    peer.store.file.close()
    with closing(sqlite3.connect(path)) as edited:
        edited.execute("UPDATE tasks SET body = json_set(json_remove(body, '$.artifacts'), '$.lifecycle', "
                       "json('{\"$tuple\": [{\"$state\": \"submitted\"}]}'))")
        edited.commit()
    peer, call = durable_billing(path, orders={"ORD-2": 10.0})  # billing's book no longer has ORD-1
    done = "refund of $5.00 issued for ORD-1 (ref BILL-ORD-1)"
    assert peer.ledger.effects["refund of ORD-1"].summary == done, "the record of the refund done, kept"
    got = call("GetTask", {"id": task["id"]})["result"]
    assert got["status"]["state"] == "TASK_STATE_COMPLETED", got["status"]
    assert [part["text"] for artifact in got["artifacts"] for part in artifact["parts"]] == [done]
    assert "refund of ORD-9" not in peer.ledger.effects, "the claim that did nothing, let go"
    peer.store.file.close()

def test_a_claim_a_completed_task_never_made_is_let_go_on_start_never_marked_done_with_its_refund(tmp_path):
    """A second effect row names a completed task as a claim being done, for another order (a file edited by
    hand). It was marked done with the task's result, as the task's own claim would be: the other order's
    refund was then never done, every request for it told it was done already. It is let go, and that order
    can be refunded."""
    path = tmp_path / "billing.db"
    peer, call = durable_billing(path)
    task = call("SendMessage", refund("m-1", "ORD-1"))["result"]["task"]
    peer.ledger.record("refund of ORD-9", Effect(peer.store.owners[task["id"]], task["id"], "{}", BEING_DONE))
    peer.store.file.close()
    peer, call = durable_billing(path)
    assert peer.ledger.effects["refund of ORD-1"].summary == "refund of $5.00 issued for ORD-1 (ref BILL-ORD-1)"
    assert "refund of ORD-9" not in peer.ledger.effects, "a claim the task never made, let go"
    other = call("SendMessage", refund("m-2", "ORD-9"))["result"]["task"]
    assert other["status"]["state"] == "TASK_STATE_COMPLETED", other["status"]
    assert [part["text"] for artifact in other["artifacts"] for part in artifact["parts"]] == [
        "refund of $5.00 issued for ORD-9 (ref BILL-ORD-9)"]
    peer.store.file.close()


def test_after_a_restart_a_resent_message_gets_the_task_it_made_not_the_task_that_later_did_its_order(tmp_path):
    """m-1's refund failed (billing's book lacked the order), safe to retry; after a restart whose book has it,
    m-2 asks again and is refunded. m-1 resent, as a client whose answer was lost resends it, was answered with
    m-2's task, the one the ledger names for the order: A2A's same messageId answers with the task it made."""
    path = tmp_path / "billing.db"
    peer, call = durable_billing(path, orders={"ORD-2": 10.0}, new_task_id=unguessable_task_ids())
    failed = call("SendMessage", refund("m-1", "ORD-1"))["result"]["task"]
    assert failed["status"]["state"] == "TASK_STATE_FAILED"
    peer.store.file.close()
    peer, call = durable_billing(path, new_task_id=unguessable_task_ids())
    done = call("SendMessage", refund("m-2", "ORD-1"))["result"]["task"]
    resent = call("SendMessage", refund("m-1", "ORD-1"))["result"]["task"]
    assert (resent["id"], resent["status"]["state"]) == (failed["id"], "TASK_STATE_FAILED"), resent["status"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED" and len(peer.ledger.effects) == 1
    peer.store.file.close()


@pytest.mark.parametrize("order", ["ORD-1", "ORD-9"], ids=["its own order", "another order"])
@pytest.mark.parametrize("summary", [BEING_DONE, WAITING])
def test_a_claim_a_failed_task_holds_is_let_go_on_start_so_its_order_can_be_refunded(tmp_path, order, summary):
    """A failed task did nothing, and let go of its claim as it failed; a claim naming it (a file edited by hand,
    or the claim's release lost) was kept on every start, as a restart settles only unfinished and completed
    tasks: the order was never refunded, each request for it told another task was doing it or had done it."""
    path = tmp_path / "billing.db"
    peer, call = durable_billing(path, orders={"ORD-2": 10.0}, new_task_id=unguessable_task_ids())
    failed = call("SendMessage", refund("m-1", "ORD-1"))["result"]["task"]
    assert failed["status"]["state"] == "TASK_STATE_FAILED" and peer.ledger.effects == {}
    peer.ledger.record(f"refund of {order}", Effect(peer.store.owners[failed["id"]], failed["id"], "{}", summary))
    peer.store.file.close()
    peer, call = durable_billing(path, new_task_id=unguessable_task_ids())
    assert peer.ledger.effects == {}, "the claim that did nothing, let go"
    done = call("SendMessage", refund("m-2", order))["result"]["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED", done["status"]
    assert peer.ledger.effects[f"refund of {order}"].task_id == done["id"]
    assert call("GetTask", {"id": failed["id"]})["result"]["status"]["state"] == "TASK_STATE_FAILED"
    peer.store.file.close()


def test_a_completed_task_whose_claim_was_not_yet_marked_done_is_marked_on_start(tmp_path):
    path = tmp_path / "billing.db"
    peer, call = durable_billing(path)
    task = call("SendMessage", refund("m-1", "ORD-1"))["result"]["task"]
    key, effect = next(iter(peer.ledger.effects.items()))
    peer.ledger.record(key, effect._replace(summary=BEING_DONE))  # as if it died between the two writes
    peer.store.file.close()
    peer, call = durable_billing(path)
    assert peer.ledger.effects[key].summary == "refund of $5.00 issued for ORD-1 (ref BILL-ORD-1)"
    assert call("SendMessage", refund("m-2", "ORD-1"))["result"]["task"]["id"] == task["id"]



APPROVAL = {"approval": {"order_id": "ORD-2", "amount": 6000.0, "currency": "USD"}}


@pytest.mark.parametrize("edit", ["DELETE FROM effects WHERE key = ?", "UPDATE effects SET key = 'acme/' || key WHERE key = ?",
                                  "SELECT ?",
                                  "UPDATE effects SET body = json_set(body, '$.summary', '%s') WHERE key = ?" % WAITING],
                         ids=["its row deleted", "moved to another tenant", "left as written", "shown as a paused claim"])
def test_a_completed_refund_the_ledger_no_longer_holds_is_learnt_again_on_start_and_never_done_twice(tmp_path, edit):
    """The ledger is what stops a second refund; the file's effects rows edited by hand (one deleted, or
    its key moved to another tenant, or shown as a claim a paused task holds, which is let go as that task
    is not paused) while the completed tasks that made the refunds are still kept. Both orders were
    refunded again, each under a new messageId, by a new task: a one-turn refund and an approved one."""
    path = tmp_path / "billing.db"
    peer, call = durable_billing(path, new_task_id=unguessable_task_ids())
    one = call("SendMessage", refund("m-1", "ORD-1"))["result"]["task"]
    paused = call("SendMessage", refund("m-2", "ORD-2", 6000))["result"]["task"]
    approved = call("SendMessage", {"message": {"messageId": "m-3", "role": "ROLE_USER", "taskId": paused["id"],
                                                "parts": [{"data": APPROVAL}]}})["result"]["task"]
    assert approved["status"]["state"] == "TASK_STATE_COMPLETED"
    peer.store.file.close()
    with closing(sqlite3.connect(path)) as edited:
        for order in ("ORD-1", "ORD-2"):
            edited.execute(edit, (f"refund of {order}",))
        edited.commit()
    peer, call = durable_billing(path, new_task_id=unguessable_task_ids())
    again = [call("SendMessage", refund(f"n-{n}", order, amount))["result"]["task"]
             for n, (order, amount) in enumerate([("ORD-1", 5), ("ORD-2", 6000)])]
    assert [task["id"] for task in again] == [one["id"], paused["id"]], "the tasks that did them, not new ones"
    assert {key: (effect.task_id, effect.summary) for key, effect in peer.ledger.effects.items()
            if not key.startswith("acme/")} == {
        "refund of ORD-1": (one["id"], "refund of $5.00 issued for ORD-1 (ref BILL-ORD-1)"),
        "refund of ORD-2": (paused["id"], "refund of $6,000.00 issued for ORD-2 (ref BILL-ORD-2)")}
    peer.store.file.close()

def test_a_completed_task_and_its_effect_are_on_disk_together_before_anyone_is_told(tmp_path):
    peer, call = durable_billing(tmp_path / "billing.db")
    seen = []

    def listener(task, owner, gone):
        if task.state is TaskState.COMPLETED:
            (body,) = peer.store.file.rows("SELECT body FROM effects")[0]
            seen.append(json.loads(body)["summary"])
    peer.changes.follow(listener)
    call("SendMessage", refund("m-1", "ORD-1"))
    assert seen == ["refund of $5.00 issued for ORD-1 (ref BILL-ORD-1)"], "marked done in the same transaction"



def test_a_clients_metadata_can_never_pass_for_the_stores_own_markers(tmp_path):
    path = tmp_path / "billing.db"
    peer, call = durable_billing(path)
    tricks = [{"$state": "completed"}, {"x": {"$": "Effect"}}, {"$bytes": "!!"}, {"$dict": {"$tuple": [1]}}]
    made = [call("SendMessage", refund(f"m-{n}", f"ORD-{n}", metadata=trick))["result"]["task"]["id"]
            for n, trick in enumerate(tricks)]
    peer.store.file.close()
    peer, call = durable_billing(path)  # found by a reviewer: one such message made the file unreadable
    for task_id, trick in zip(made, tricks):
        task = call("GetTask", {"id": task_id})["result"]
        assert task["history"][0]["metadata"] == trick


def test_a_claim_whose_task_is_gone_is_let_go_on_start(tmp_path):
    path = tmp_path / "billing.db"
    peer, call = durable_billing(path)
    peer.ledger.record("refund of ORD-77", Effect("t0k", "task-gone", "{}", BEING_DONE))  # its task trimmed away
    peer.store.file.close()
    peer, call = durable_billing(path)
    assert "refund of ORD-77" not in peer.ledger.effects
    assert call("SendMessage", refund("m-77", "ORD-77"))["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


def test_a_task_a_later_turn_granted_is_not_continued_but_failed_saying_why_and_its_claim_let_go(tmp_path):
    path = tmp_path / "billing.db"
    task = interrupted_mid_work(path)
    peer, _ = durable_billing(path)  # continued once (one turn): completed; now make one of two turns
    approval = wire_v10.send_request(refund("m-9b", "ORD-9")).message
    two_turns = peer.store.update(peer.store.tasks[task.id]._replace(
        lifecycle=(TaskState.SUBMITTED, TaskState.WORKING), history=peer.store.tasks[task.id].history + (approval,)))
    key = next(iter(peer.ledger.effects))
    peer.ledger.record(key, peer.ledger.effects[key]._replace(summary=BEING_DONE))
    peer.store.file.close()
    peer, call = durable_billing(path)
    found = call("GetTask", {"id": two_turns.id})["result"]["status"]
    assert found["state"] == "TASK_STATE_FAILED"
    assert found["message"]["parts"][0]["text"].endswith("(not continued: a later turn's grant is needed again)")
    assert peer.ledger.effects == {}, "its claim let go: the order can be asked for again"


def test_a_row_leaves_out_fields_at_their_default_and_a_row_that_wrote_them_all_still_reads_back():
    """A task's row holds what differs from the record's defaults (most of a task's fields are
    None or empty); a row read back takes the defaults again, and a row written with every
    field, keys sorted (as the store wrote before), reads back the same task."""
    from peers.a2a.model import Message, Part, Task
    from peers.durable_codec import from_json, to_json
    message = Message("m-1", "user", (Part(data={"order_id": "ORD-1", "$x": 1}, media_type="application/json"),),
                      "context-1", "task-1", metadata={"skillId": "process_refund"})
    task = Task("task-1", (TaskState.SUBMITTED, TaskState.WORKING), context_id="context-1", history=(message,),
                status_message="")
    row = to_json(task)
    assert from_json(row, Task) == task
    assert '"raw"' not in row and '"timestamp"' not in row and '"extensions"' not in row, "defaults left out"
    assert '"status_message":""' in row, "an empty string is not None: kept"

    def every_field(value):  # the older writer's shape: every field named, keys sorted
        if isinstance(value, tuple) and hasattr(value, "_fields"):
            return {"$": type(value).__name__, **{name: every_field(item) for name, item in zip(value._fields, value)}}
        if isinstance(value, TaskState):
            return {"$state": value.value}
        if isinstance(value, tuple):
            return {"$tuple": [every_field(item) for item in value]}
        if isinstance(value, dict):
            plain = {key: every_field(item) for key, item in value.items()}
            return {"$dict": plain} if any(key.startswith("$") for key in plain) else plain
        return value
    older = json.dumps(every_field(task), separators=(",", ":"), sort_keys=True)
    assert len(older) > len(row) and from_json(older, Task) == task


def test_a_database_holding_only_a_view_is_refused_and_left_as_it_was(tmp_path):
    """A trigger or a view is never this peer's, tables or none: a file with a view alone was read
    as new, and had the peer's tables made beside it."""
    path = tmp_path / "views.db"
    with closing(sqlite3.connect(path)) as theirs:
        theirs.execute("CREATE VIEW answer AS SELECT 42")
    before = path.read_bytes()
    with pytest.raises(DurableError, match="has a view"):
        open_store(str(path))
    assert path.read_bytes() == before


def test_a_restart_whose_continued_task_fills_the_ledger_settles_every_other_task_first(tmp_path):
    """A paused task's claim in a full ledger is recorded again as the restart continues it.
    When a full ledger pushed out its oldest, that claim pushed out an effect settling then
    read: KeyError, and `serve --store` stopped with a traceback on every start from that file
    (or exit 70, a write after the file was closed). A full ledger forgets nothing now."""
    path = tmp_path / "billing.db"
    store, ledger = open_store(str(path), max_effects=3)
    peer = billing.billing_agent(store=store, ledger=ledger)
    restarted(peer, str(path))
    transport = InProcessTransport({billing.BASE_URL: PeerApp(peer, wire_v10, token="t0k")})

    def send(message_id, order, amount):
        frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                            "params": refund(message_id, order, amount)}).encode()
        return json.loads(transport.post(billing.BASE_URL + "/a2a", frame, HEADERS).body)["result"]["task"]
    paused = send("m-1", "ORD-1", 6000)
    done = [send(f"m-{n}", f"ORD-{n}", 5) for n in (2, 3)]
    peer.store.file.close()
    for _ in range(2):
        store, ledger = open_store(str(path), max_effects=3)
        again = billing.billing_agent(store=store, ledger=ledger, new_task_id=counter_ids("again"))
        restarted(again, str(path))
        assert again.store.tasks[paused["id"]].state is TaskState.INPUT_REQUIRED, "continued: it waits again"
        assert [again.store.tasks[task["id"]].state for task in done] == [TaskState.COMPLETED] * 2
        assert len(again.ledger.effects) == 3
        again.store.file.close()


def test_a_restart_under_smaller_bounds_cuts_first_and_never_continues_or_keeps_a_claim_for_a_task_it_cut(tmp_path):
    """A file kept under larger bounds: the store is cut before any task is continued, and the
    claims of tasks it cut go with them. The claim of a paused task cut at the restart outlived
    it (let go before the cut), and a task cut while it was being continued lost its claim while
    its refund still ran, so a resend in that moment could refund again."""
    path = tmp_path / "billing.db"
    peer, call = durable_billing(path)
    paused = call("SendMessage", refund("m-1", "ORD-1", 6000))["result"]["task"]  # the oldest: cut below
    done = [call("SendMessage", refund(f"m-{n}", f"ORD-{n}"))["result"]["task"] for n in (2, 3, 4)]
    peer.store.file.close()
    store, ledger = open_store(str(path), max_tasks=2)
    continued = []
    settle(store, ledger, lambda task, owner: continued.append(task.id))
    assert list(store.tasks) == [done[1]["id"], done[2]["id"]] and continued == [], "cut, so never continued"
    assert sorted(ledger.effects) == ["refund of ORD-2", "refund of ORD-3", "refund of ORD-4"], \
        "the cut paused task's claim let go; a done refund kept, though its task was cut"
    store.file.close()
    assert paused["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"


def test_of_two_peers_opening_one_new_store_file_at_once_one_opens_it(tmp_path):
    """A new file's opening ran under rollback's locks once its log was set only after the rows were
    read: each peer held the lock the other's commit needed, and both were refused, "locked"."""
    for trial in range(6):
        path = str(tmp_path / f"new{trial}.db")
        go, said = threading.Barrier(2), []

        def opening():
            go.wait()
            try:
                said.append(open_store(path)[0])
            except DurableError as exc:
                said.append(str(exc))
        both = [threading.Thread(target=opening) for _ in range(2)]
        for thread in both:
            thread.start()
        for thread in both:
            thread.join(10)
        opened = [one for one in said if not isinstance(one, str)]
        assert len(opened) == 1 and "locked" in next(one for one in said if isinstance(one, str)), (trial, said)
        opened[0].file.close()


def test_a_restart_claims_no_effect_past_its_callers_share(tmp_path):
    """A paused refund whose hold ran out lost its claim to a later request (then canceled), and its
    caller's share filled meanwhile: the restart, continuing the paused task, recorded its claim all
    the same, past the bound. It now ends the task saying why, and claims nothing."""
    import time
    from peers.stamps import utc_now

    def on(life, **options):
        store, ledger = open_store(str(tmp_path / "billing.db"), max_effects=2)
        peer = billing.billing_agent(store=store, ledger=ledger, clock=utc_now, new_task_id=counter_ids(life), **options)
        restarted(peer, str(tmp_path / "billing.db"))
        transport = InProcessTransport({billing.BASE_URL: PeerApp(peer, wire_v10, token="t0k")})

        def call(method, params):
            frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
            return json.loads(transport.post(billing.BASE_URL + "/a2a", frame, HEADERS).body)["result"]
        return peer, call
    peer, call = on("a", hold_seconds=0.2)
    old = call("SendMessage", refund("m-1", "BIG", 6000))["task"]  # paused: its claim held until its hold ends
    time.sleep(0.5)
    later = call("SendMessage", refund("m-2", "BIG", 6000))["task"]  # the hold over: this one takes the claim
    call("CancelTask", {"id": later["id"]})  # and lets it go
    for n in range(2):
        call("SendMessage", refund(f"f-{n}", f"ORD-{n}", 1))  # the share full
    peer.store.file.close()
    again, _ = on("b")
    assert len(again.ledger.effects) == 2 and "refund of BIG" not in again.ledger.effects
    ended = again.store.tasks[old["id"]]
    assert ended.state is TaskState.FAILED and "its share of at most 2" in ended.status_message, ended
    again.store.file.close()


def test_the_crash_double_refuses_a_refund_past_a_full_share_saying_why(tmp_path):
    """`--crash-at` wraps the ledger (peers/doubles.py): a refund past its caller's share is refused
    in words, as without the double; the double lacked the share's count and the answer was an error."""
    process, base, _ = served(str(tmp_path / "billing.db"), "--crash-at", "after-commit", "--max-effects", "0")
    try:
        answer = send(base, "m-1", "ORD-1")
    finally:
        process.kill()
        process.communicate(timeout=10)
    task = answer["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_REJECTED" and "its share of at most 0" in \
        task["status"]["message"]["parts"][0]["text"], answer


def rpc(base, method, params, token):
    from transports.network import HttpTransport
    frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    transport = HttpTransport(timeout=10)
    try:
        return json.loads(transport.post(f"{base}/a2a", frame, {**HEADERS, "Authorization": f"Bearer {token}"}).body)
    finally:
        transport.close()


def approval(message_id, task_id, order, amount):
    """The next turn of a paused refund: its proposal, sent back (billing pins no approver key here)."""
    proposal = {"order_id": order, "amount": float(amount), "currency": "USD"}
    return {"message": {"messageId": message_id, "role": "ROLE_USER", "taskId": task_id,
                        "parts": [{"data": {"approval": proposal}}]}}


@pytest.mark.parametrize("first", [0, 1], ids=["the first to pause approves first", "the second approves first"])
def test_a_restart_continues_two_callers_paused_refunds_of_one_order_in_turn_and_refunds_it_once(tmp_path, first):
    """Two callers' refunds of one order, each paused for its approval (another caller's paused
    claim holds nothing against a caller: Ledger.held), and the process killed. The restart
    continued both at once, in threads, and failed the one whose claim the ledger no longer showed
    "(not continued: another task holds its effect)"; let go on, which of the two went on raced with
    the other's re-run holding the claim as being done. Tasks of one effect are continued one after
    another, in the store's order: each pauses again (the later holds the claim), both approvals are
    taken, and whichever comes first refunds the order; the other does nothing."""
    from peers.ledger import WAITING
    path, callers, amounts = str(tmp_path / "billing.db"), ("tok-1", "b0b"), (6000, 7000)
    process, base, _ = served(path, "--other-token", "b0b")
    try:
        paused = [rpc(base, "SendMessage", refund(f"m-{n}", "ORD-X", amounts[n]), callers[n])["result"]["task"]
                  for n in (0, 1)]
    finally:
        process.kill()  # as a crash: each pause was on disk before its caller was told of it
        process.communicate(timeout=10)
    assert [task["status"]["state"] for task in paused] == ["TASK_STATE_INPUT_REQUIRED"] * 2, paused
    process, base, lines = served(path, "--other-token", "b0b")
    try:
        said = [line.rstrip() for line in lines]  # the claim is its last re-run's: the one the crash left, its holder, runs first
        assert f"[serve] ledger: refund of ORD-X: {WAITING} (task {paused[0]['id']})" in said, lines
        for task, token in zip(paused, callers):
            status = rpc(base, "GetTask", {"id": task["id"]}, token)["result"]["status"]
            assert status["state"] == "TASK_STATE_INPUT_REQUIRED", ("continued: it waits again", status)
        answers = {n: rpc(base, "SendMessage", approval(f"m-{n}a", paused[n]["id"], "ORD-X", amounts[n]),
                          callers[n])["result"]["task"]["status"] for n in (first, 1 - first)}
    finally:
        process.terminate()
        process.communicate(timeout=10)
    assert answers[first]["state"] == "TASK_STATE_COMPLETED", answers
    late = answers[1 - first]
    assert late["state"] == "TASK_STATE_FAILED" and "already did this meanwhile" in late["message"]["parts"][0]["text"]
    with closing(sqlite3.connect(path)) as kept:
        rows = [json.loads(body) for (body,) in kept.execute("SELECT body FROM effects")]
    assert [(row["task_id"], row["summary"]) for row in rows] == [(paused[first]["id"], (
        f"refund of ${amounts[first]:,.2f} issued for ORD-X (ref BILL-ORD-X)"))], "refunded once, never twice"


def test_restarts_continue_each_orders_paused_refunds_in_the_stores_order_whatever_the_threads_do(tmp_path):
    """As above, in process: three callers' paused refunds of each of three orders, and the
    interpreter switching threads as often as it can. An order's tasks continued at once, each in
    a thread, raced: one's re-run held the claim as being done as another looked, and that one was
    failed (every run of this test, so). Restarted again and again, every task pauses again, each
    order's claim held by one of them, waiting; then each order is refunded once, by its first
    approval, and the others do nothing."""
    import sys
    from peers.ledger import WAITING
    path, callers, orders = tmp_path / "billing.db", ("t0k", "b0b", "c4r"), ("ORD-A", "ORD-B", "ORD-C")
    peer, call = durable_billing(path, other_tokens=callers[1:], new_task_id=unguessable_task_ids())
    paused = {order: [call("SendMessage", refund(f"m-{order}-{n}", order, 6000 + n), token)["result"]["task"]
                      for n, token in enumerate(callers)] for order in orders}
    peer.store.file.close()
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _ in range(4):  # bounded: each restart continues all nine, as `serve --store` does
            peer, call = durable_billing(path, other_tokens=callers[1:], new_task_id=unguessable_task_ids())
            for order, tasks in paused.items():
                kept = [peer.store.tasks[task["id"]] for task in tasks]
                assert [task.state for task in kept] == [TaskState.INPUT_REQUIRED] * 3, (order, kept)
                held = peer.ledger.effects[f"refund of {order}"]
                assert held.task_id in {task["id"] for task in tasks} and held.summary == WAITING, (order, held)
            peer.store.file.close()
    finally:
        sys.setswitchinterval(before)
    peer, call = durable_billing(path, other_tokens=callers[1:], new_task_id=unguessable_task_ids())
    for order, tasks in paused.items():
        ended = [call("SendMessage", approval(f"a-{order}-{n}", task["id"], order, 6000 + n), token)["result"]["task"]
                 for n, (task, token) in enumerate(zip(tasks, callers))]
        assert [task["status"]["state"] for task in ended] == ["TASK_STATE_COMPLETED"] + ["TASK_STATE_FAILED"] * 2
        assert peer.ledger.effects[f"refund of {order}"].task_id == tasks[0]["id"]
    assert len(peer.ledger.effects) == 3, "each order refunded once"
    peer.store.file.close()


@pytest.mark.parametrize("size, padding", [(1, 20 << 20), (MAX_TASK_BYTES + 1, 0)],
                         ids=["a body far past its size", "a size past a task's bound"])
def test_a_task_row_larger_than_a_task_can_be_is_refused_before_it_is_read(tmp_path, size, padding):
    """The row's `size` (the bytes of messages its task keeps: what the store's bounds count) was taken
    as written: a 20 MiB body said to keep 1 byte was read whole and served whole, past the store's
    bounds; a size no task can reach (MAX_TASK_BYTES) counted against them as if it could."""
    path = a_store_whose_task_row_holds(tmp_path, "metadata", {"pad": "x" * padding} if padding else None, size)
    with pytest.raises(DurableError, match="holds a row this peer cannot read") as raised:
        open_store(str(path))
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize("table, column", [("tasks", "messages"), ("effects", "body")])
def test_a_row_whose_other_text_is_larger_than_this_peer_writes_is_refused_before_it_is_read(tmp_path, table, column):
    """Only a task's body was bounded: 20 MiB of a task's messages (pairs each as this peer writes them), or an
    effect whose summary is 20 MiB, were read whole and kept; the summary was then printed as serve started,
    and sent in every answer about its order, far past what a client reads."""
    path = tmp_path / "billing.db"
    peer, call = durable_billing(path)
    call("SendMessage", refund("m-1", "ORD-1"))
    (text,), = peer.store.file.rows(f"SELECT {column} FROM {table}")
    grown = json.loads(text)
    if table == "tasks":
        grown += [[f"m-{n:07}", "0" * 64] for n in range((20 << 20) // 80)]
    else:
        grown["summary"] += "x" * (20 << 20)
    peer.store.file.write([(f"UPDATE {table} SET {column} = ?", (json.dumps(grown),))])
    peer.store.file.close()
    with pytest.raises(DurableError, match="holds a row this peer cannot read") as raised:
        open_store(str(path))
    assert "\n" not in str(raised.value) and len(str(raised.value)) < 400


def test_the_ledger_lines_serve_prints_as_it_starts_are_one_line_each_whatever_an_effect_row_holds(tmp_path):
    """An effect's key and summary as the file holds them (edited by hand: a newline, a line of ours after it):
    the forged line was printed as serve's own, before the real one, saying a bearer token was made and shown."""
    path = tmp_path / "billing.db"
    peer, call = durable_billing(path)
    call("SendMessage", refund("m-1", "ORD-1"))
    peer.store.file.close()
    forged = "\n[serve] bearer token made for this run, shown this once: not-yours\r"
    with closing(sqlite3.connect(path)) as edited:
        edited.execute("UPDATE effects SET key = key || ?, body = json_set(body, '$.summary', "
                       "json_extract(body, '$.summary') || ? || ?)", (forged, forged, "x" * 100_000))
        edited.commit()
    store, ledger = open_store(str(path))
    lines = restarted(billing.billing_agent(store=store, ledger=ledger), str(path))
    store.file.close()
    assert [line for line in lines if "ORD-1" in line], lines
    assert all(line.isprintable() and len(line) < 1000 for line in lines), lines
