"""A restart re-runs an order's interrupted tasks one after another, in the store's order (peers/restart.py
settle), and fails one whose effect "another task holds" (go_on). But it judges the first of them
against the claim the dead process left in the ledger, not against what its own re-runs have claimed:
- a caller's paused refund, approvable before the crash, is failed because the same caller's later
  paused refund of that order held the claim when the process died (T, T2, T: each let through, since
  another caller's pause holds nothing against it). Without the crash its approval is taken; with
  T, T2, T, T2 (the claim T2's) it survives: whether it does turns on which task claimed last;
- another caller's paused refund is failed by the claim of a later task that was mid-work as the process
  died (BEING_DONE on disk: a group commit carries another request's staged changes, or a restart killed
  mid-way leaves its re-run so). That claim is the dead process's: the task holding it is re-run after,
  or is failed and its claim let go, so nobody holds the order, yet the paused refund was failed
  "(not continued: another task holds its effect)".
Nothing is refunded twice; a pause its caller could approve is lost, its caller told something false.

Hostile review finding: real `serve --store` processes on 127.0.0.1 (port from the banner), SIGKILL;
the mid-work state written as test_durable's interrupted_mid_work writes one; no mocks of the project's code."""
import pytest

from test_durable import approval, refund, rpc, served

CALLERS = ("tok-1", "b0b")


def test_a_paused_refund_survives_a_restart_whichever_task_of_its_order_claimed_last(tmp_path):
    path = str(tmp_path / "billing.db")
    process, base, _ = served(path, "--other-token", CALLERS[1])
    try:
        paused = [rpc(base, "SendMessage", refund(f"m-{n}", "ORD-X", 6000 + n), CALLERS[n % 2])["result"]["task"]
                  for n in range(3)]  # tok-1, b0b, tok-1: each paused, each approvable
    finally:
        process.kill()  # as a crash
        process.communicate(timeout=10)
    assert [task["status"]["state"] for task in paused] == ["TASK_STATE_INPUT_REQUIRED"] * 3, paused
    process, base, _ = served(path, "--other-token", CALLERS[1])
    try:
        status = rpc(base, "GetTask", {"id": paused[0]["id"]}, CALLERS[0])["result"]["status"]
        answer = rpc(base, "SendMessage", approval("a-0", paused[0]["id"], "ORD-X", 6000), CALLERS[0])
    finally:
        process.terminate()
        process.communicate(timeout=10)
    assert status["state"] == "TASK_STATE_INPUT_REQUIRED", status["message"]["parts"][0]["text"]
    assert answer.get("result", {}).get("task", {}).get("status", {}).get("state") == "TASK_STATE_COMPLETED", answer


@pytest.mark.parametrize("turn", ["first", "approved"])
def test_a_paused_refund_is_not_failed_by_a_claim_the_dead_process_was_working_on(tmp_path, turn):
    from peers import billing
    from peers.a2a import wire_v10
    from peers.a2a.model import TaskState
    from peers.app import owner_of_bearer
    from peers.durable import open_store
    from peers.ledger import BEING_DONE, Effect
    from peers.pause import asked
    path = str(tmp_path / "billing.db")
    process, base, _ = served(path, "--other-token", CALLERS[1])
    try:  # b0b's refund paused; then tok-1's of the same order (b0b's pause holds nothing against it)
        paused = rpc(base, "SendMessage", refund("m-1", "ORD-X", 6000), CALLERS[1])["result"]["task"]
        later = rpc(base, "SendMessage", refund("m-2", "ORD-X", 7000), CALLERS[0])["result"]["task"]
    finally:
        process.kill()
        process.communicate(timeout=10)
    assert (paused["status"]["state"], later["status"]["state"]) == ("TASK_STATE_INPUT_REQUIRED",) * 2
    store, ledger = open_store(path)  # ... as the file is when tok-1's task was mid-work as the process died
    billing.billing_agent(store=store, ledger=ledger)
    task = store.tasks[later["id"]]
    if turn == "first":  # its first turn's work, before it paused
        store.update(task._replace(lifecycle=task.lifecycle[:1], status_message=None, status_data=None)
                     .advance(TaskState.WORKING))
    else:  # approved, and doing the refund
        turn_two = wire_v10.send_request(approval("m-2a", later["id"], "ORD-X", 7000)).message
        store.update(task._replace(history=task.history + (asked(task), turn_two._replace(
            context_id=task.context_id))).advance(TaskState.WORKING))
    ledger.record("refund of ORD-X", Effect(owner_of_bearer(CALLERS[0]), later["id"],
                                            '{"amount": 7000, "order_id": "ORD-X"}', BEING_DONE))
    store.file.close()
    process, base, _ = served(path, "--other-token", CALLERS[1])
    try:
        status = rpc(base, "GetTask", {"id": paused["id"]}, CALLERS[1])["result"]["status"]
    finally:
        process.terminate()
        process.communicate(timeout=10)
    assert status["state"] == "TASK_STATE_INPUT_REQUIRED", status["message"]["parts"][0]["text"]
