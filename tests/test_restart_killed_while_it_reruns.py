"""A restart killed while it re-runs an order's paused refunds (peers/restart.py settle) must not
renew their holds. A paused refund states when its hold on the order ends ("holdsUntil", HOLD_SECONDS
after it first paused), and a restart promises "its hold ending at the time stated before the
restart, not renewed" (restart.py, pause.py), so that no caller can hold an order for ever.

The restart shows an order's later tasks, waiting their turn, as submitted, their status data (the
hold's end with it) cleared, and the first re-run's commit writes them so to the file. Killed then
(SIGKILL, before the last re-run paused its task again), the next start finds those tasks submitted,
with no hold stated, and re-runs them as new ones: each pauses with a hold of a fresh HOLD_SECONDS
from now. Every crash while a restart runs renews them again.

Hostile review finding: real `serve --store` processes on 127.0.0.1 (port from the banner), SIGKILL,
the store file read read-only (sqlite3, mode=ro) between runs; no mocks of the project's code."""
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing

from conftest import ROOT
from test_durable import approval, refund, rpc, served  # noqa: F401 - approval: the frame this file's kin send

CALLERS = ("tok-1", "b0b")
PAUSED_EACH = 20  # a caller's cap of paused tasks (pause.MAX_PAUSED_PER_CALLER): the most the file can hold


def states_on_disk(path):
    """Each task's state, as the file holds it (read only: the server is down)."""
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)) as kept:
        return {task_id: json.loads(body)["lifecycle"]["$tuple"][-1]["$state"]
                for task_id, body in kept.execute("SELECT id, body FROM tasks")}


def hold_of(task):
    return next((part["data"].get("holdsUntil") for part in task["status"]["message"]["parts"]
                 if isinstance(part.get("data"), dict)), None)


def written(path):
    """When the store's log (its -wal file) was last written: the server holds the file itself (locking_mode
    EXCLUSIVE), so its commits are watched from outside, not read."""
    try:
        return os.stat(path + "-wal").st_mtime_ns
    except FileNotFoundError:
        return None


def killed_at_a_commit(path, commits, seconds):
    """`serve --store path`, SIGKILLed once its log's mtime has changed `commits` times (writes within one tick
    are one change; one of them is the restart's first re-run, which writes the order's later tasks as waiting
    their turn), or after `seconds`: watched, not timed, so neither a busy machine nor a fast one moves the
    kill off the re-runs."""
    before, seen = written(path), 0
    process = subprocess.Popen([sys.executable, str(ROOT / "a2a_delegation.py"), "serve", "billing-agent", "--wire",
                                "1.0", "--port", "0", "--store", path, "--other-token", CALLERS[1]],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env={**os.environ, "A2A_SERVE_TOKEN": CALLERS[0]})
    try:
        end = time.monotonic() + seconds
        while time.monotonic() < end and process.poll() is None and seen < commits:
            now = written(path)
            seen, before = seen + (now != before), now
            time.sleep(0.0002)  # bounded by `seconds`
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(10)


def test_a_restart_killed_while_it_reruns_an_orders_paused_refunds_does_not_renew_their_holds(tmp_path):
    path = str(tmp_path / "billing.db")
    process, base, _ = served(path, "--other-token", CALLERS[1])
    try:  # two callers' refunds of one order, alternating (another caller's pause holds nothing), each paused
        holds = {}
        for n in range(PAUSED_EACH):
            for token in CALLERS:
                task = rpc(base, "SendMessage", refund(f"m-{token}-{n}", "ORD-X", 6001 + n), token)["result"]["task"]
                assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", task["status"]
                holds[task["id"]] = (token, hold_of(task))
    finally:
        process.kill()
        process.communicate(timeout=10)
    time.sleep(1.1)  # a hold made again now ends visibly later than the one first stated
    mid = None
    for commits in range(1, 13):  # bounded: the writes before the re-runs' (opening the file ...) let pass, one more each time
        killed_at_a_commit(path, commits, 15)
        waiting = {task_id: state for task_id, state in states_on_disk(path).items() if state in ("submitted", "working")}
        if waiting:
            mid = waiting
            break
    assert mid is not None, "no kill landed while the restart re-ran the tasks"
    process, base, _ = served(path, "--other-token", CALLERS[1])
    try:
        deadline, shown = time.monotonic() + 15, {}
        while time.monotonic() < deadline:  # bounded: the restart's re-runs end
            shown = {task_id: rpc(base, "GetTask", {"id": task_id}, token)["result"]
                     for task_id, (token, _) in holds.items()}
            if all(task["status"]["state"] not in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")
                   for task in shown.values()):
                break
            time.sleep(0.1)
    finally:
        process.terminate()
        process.communicate(timeout=10)
    assert all(task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED" for task in shown.values()), \
        {task_id: task["status"]["state"] for task_id, task in shown.items()}
    renewed = {task_id: (holds[task_id][1], hold_of(task)) for task_id, task in shown.items()
               if hold_of(task) != holds[task_id][1]}
    assert not renewed, (f"{len(renewed)} of the {len(mid)} tasks the kill found waiting their turn had their "
                         f"holds renewed (first stated -> now): {list(renewed.items())[:3]}")


def test_a_task_a_restart_runs_again_keeps_its_holds_end_while_it_works(tmp_path):
    """Killed while a re-run works (billing's refund takes its time before it asks again), the task was
    working with no hold stated, and the next start paused it with a fresh one: it keeps the end, unshown."""
    from peers.a2a.model import PAUSED, TaskState
    from peers.stamps import utc_now
    from test_durable import durable_billing
    path = tmp_path / "billing.db"
    peer, call = durable_billing(path, clock=utc_now)  # a served peer's clock: a pause states its hold's end
    task = call("SendMessage", refund("m-1", "ORD-H", 6000))["result"]["task"]
    until = hold_of(task)
    assert until is not None, task
    peer.store.file.close()
    peer, call = durable_billing(path, slow=1.0, wait=0.2, clock=utc_now)  # the re-run still works when the restart is done
    try:
        working = peer.store.tasks[task["id"]]
        assert working.state is TaskState.WORKING and (working.status_data or {}).get("holdsUntil") == until, working
        assert "message" not in call("GetTask", {"id": task["id"]})["result"]["status"], "the hold's end is not shown"
    finally:  # bounded: the re-run pauses again before the file is let go
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and peer.store.tasks[task["id"]].state not in PAUSED:
            time.sleep(0.05)
        again = call("GetTask", {"id": task["id"]})["result"]
        peer.store.file.close()
    assert hold_of(again) == until, "paused again, its hold as first stated"
