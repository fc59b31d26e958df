"""A restart continues the paused tasks of one effect one after another (peers/restart.py
settle): one task's re-run (billing `slow`: a refund's seconds pass before it asks for its
approval again) may outlast the CONTINUE_SECONDS the restart waits, and then the peer
serves while the order's later paused tasks still wait their turn. Each of those is shown
to its caller as input-required, as before the restart, but the store holds nothing it
waits for (its pause was a running function, made again only by its re-run): its
caller's approval was refused "-32004 ... is input-required and takes no more messages",
and its cancel "cannot be stopped midway", however long the tasks before it take.
A paused task a caller can see takes the turn it asks for, or is not shown as paused.

Review finding: billing on a real SQLite store file (tmp_path), restarted in process as
`serve --store` restarts it; no mocks of the project's code."""
import time

from peers.a2a.model import PAUSED, TaskState
from peers.stamps import unguessable_task_ids
from test_durable import approval, durable_billing, refund

SLOW, WAIT = 1.0, 0.4  # a refund's seconds in billing (as `serve billing-agent --slow`), past the restart's wait (its 5 s, here 0.4)


def test_a_paused_task_shown_to_its_caller_after_a_restart_takes_its_approval(tmp_path):
    path, callers = tmp_path / "billing.db", ("t0k", "b0b")
    peer, call = durable_billing(path, other_tokens=callers[1:], new_task_id=unguessable_task_ids())
    paused = [call("SendMessage", refund(f"m-{n}", "ORD-X", 6000 + n), token)["result"]["task"]
              for n, token in enumerate(callers)]  # two callers' refunds of one order, each paused for approval
    assert [task["status"]["state"] for task in paused] == ["TASK_STATE_INPUT_REQUIRED"] * 2, paused
    peer.store.file.close()
    peer, call = durable_billing(path, other_tokens=callers[1:], new_task_id=unguessable_task_ids(), slow=SLOW, wait=WAIT)
    try:  # serving now; one task's re-run has not paused again yet, the other waits its turn
        shown = {task["id"]: call("GetTask", {"id": task["id"]}, token)["result"]["status"]["state"]
                 for task, token in zip(paused, callers)}
        assert "TASK_STATE_SUBMITTED" in shown.values(), shown  # the one waiting its turn, shown so
        for n, (task, token) in enumerate(zip(paused, callers)):
            answer = call("SendMessage", approval(f"a-{n}", task["id"], "ORD-X", 6000 + n), token)
            if shown[task["id"]] == "TASK_STATE_INPUT_REQUIRED":
                assert "error" not in answer, ("a task its caller sees as input-required refused its approval", answer)
    finally:  # bounded: both re-runs end (each pauses again) before the file is let go
        deadline = time.monotonic() + 4 * SLOW
        while time.monotonic() < deadline and not all(
                peer.store.tasks[task["id"]].state.is_terminal or (peer.store.tasks[task["id"]].state in PAUSED
                                                                   and task["id"] in peer.store.waiting)
                for task in paused):
            time.sleep(0.05)
        peer.store.file.close()
