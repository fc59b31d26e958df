"""A paused task answered the moment it pauses: approved, or canceled, before the thread
that paused it has gone on. Its hold on the order must already be in the ledger then:
written after, it overwrote the refund the approval had just recorded (another caller's
refund of that order then went ahead: two refunds), or stood for a task already canceled
(its own caller refused that order for as long as the task was kept). The moment is made
exact, not raced for: a follower of the peer's change feed (the hook streams and pushes
use) sends the answer as it hears the pause, in the same thread. Real frames, in process.
"""
import json

from peers import billing
from peers.a2a import wire_v10
from peers.a2a.model import TaskState
from peers.app import PeerApp
from peers.store import TaskStore
from test_paused_holds import approval
from test_resource_attacks import refund
from transports.inprocess import InProcessTransport


def caller(peer, token):
    """SendMessage and its kin, as the holder of `token`, through the in-process transport."""
    transport = InProcessTransport({billing.BASE_URL: PeerApp(peer, wire_v10, token=token)})

    def call(method, params):
        frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
        return json.loads(transport.post(billing.BASE_URL + "/a2a", frame, {
            "Content-Type": "application/json", "Authorization": f"Bearer {token}", "A2A-Version": "1.0"}).body)
    return call


def answered_as_it_pauses(peer, answer):
    """Send `answer(task_id)` once, the moment a task is heard paused; what it got back."""
    got = []

    def hear(task, owner, gone):
        if task.state is TaskState.INPUT_REQUIRED and not got:
            got.append(None)
            got[0] = answer(task.id)
    peer.changes.follow(hear)
    return got


def state(answer):
    return answer["result"]["task"]["status"]["state"]


def refunds(peer):
    return [effect for effect in peer.ledger.effects.values() if effect.summary.startswith("refund of")]


def test_an_approval_the_moment_a_task_pauses_is_the_one_refund_and_another_callers_is_refused():
    peer = billing.billing_agent()
    first, second = caller(peer, "first-token"), caller(peer, "second-token")
    approved = answered_as_it_pauses(peer, lambda task_id: first("SendMessage", approval("m-2", task_id)))
    paused = first("SendMessage", refund("m-1", "ORD-9", 6000))
    assert state(paused) == "TASK_STATE_INPUT_REQUIRED" and state(approved[0]) == "TASK_STATE_COMPLETED"
    assert refunds(peer)[0].summary.startswith("refund of $6,000.00 issued for ORD-9"), "the refund is on record"
    other = second("SendMessage", refund("s-1", "ORD-9", 10))
    assert state(other) == "TASK_STATE_REJECTED", other
    assert "already done for another caller" in other["result"]["task"]["status"]["message"]["parts"][0]["text"]
    assert len(refunds(peer)) == 1


def test_a_cancel_the_moment_a_task_pauses_leaves_its_caller_free_to_ask_for_that_order_again():
    peer = billing.billing_agent()
    first = caller(peer, "first-token")
    canceled = answered_as_it_pauses(peer, lambda task_id: first("CancelTask", {"id": task_id}))
    paused = first("SendMessage", refund("m-1", "ORD-9", 6000))
    assert state(paused) == "TASK_STATE_INPUT_REQUIRED"
    assert canceled[0]["result"]["status"]["state"] == "TASK_STATE_CANCELED"
    again = first("SendMessage", refund("m-2", "ORD-9", 25))
    assert state(again) == "TASK_STATE_COMPLETED", again
    assert [effect.summary for effect in refunds(peer)] == ["refund of $25.00 issued for ORD-9 (ref BILL-ORD-9)"]


class StoreWithAMomentBeforeEachPause(TaskStore):
    """The real store, with `before_pause(task)` called just before a pause is kept: the moment
    between a task's hold going into the ledger and its pause being kept, made exact."""

    def __init__(self, before_pause):
        super().__init__()
        self.before_pause = before_pause

    def pause(self, task, waiting):
        self.before_pause(task)
        return super().pause(task, waiting)


def test_the_same_callers_request_for_the_order_just_before_the_pause_is_kept_is_refused_naming_that_task():
    asked = []
    peer = billing.billing_agent(store=StoreWithAMomentBeforeEachPause(
        lambda task: asked or asked.append(first("SendMessage", refund("m-2", "ORD-9", 25)))))
    first = caller(peer, "first-token")
    paused = first("SendMessage", refund("m-1", "ORD-9", 6000))
    assert state(paused) == "TASK_STATE_INPUT_REQUIRED" and refunds(peer) == []
    said = asked[0]["result"]["task"]["status"]["message"]["parts"][0]["text"]  # another amount: refused, named
    assert f"task {paused['result']['task']['id']} is paused, waiting for its caller" in said
    approved = first("SendMessage", approval("m-3", paused["result"]["task"]["id"]))
    assert state(approved) == "TASK_STATE_COMPLETED", "the hold stood: the approval does the refund"
    assert [effect.summary for effect in refunds(peer)] == ["refund of $6,000.00 issued for ORD-9 (ref BILL-ORD-9)"]
