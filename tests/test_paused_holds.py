"""Paused tasks and the orders they hold (issue 30, item 9).

A paused task holds its order against its own caller only: that caller's request for the
same refund again gets the waiting task. Another caller's refund of that order goes ahead
at once (nothing was done, and whether it will be is only the paused task's caller's
word); the paused task, approved later, finds the refund done and does nothing. Each test
plays the attacker, a token holder, over real frames on 127.0.0.1, bounded in size.
"""
from conftest import serving
from peers import billing
from peers.a2a import wire_v10
from peers.app import PeerApp
from peers.pause import MAX_PAUSED_PER_CALLER
from peers.stamps import utc_now
from test_caller_shares import call, refund

PROPOSAL = {"order_id": "ORD-9", "amount": 6000.0, "currency": "USD"}


def approval(message_id, task_id):
    return {"message": {"messageId": message_id, "role": "ROLE_USER", "taskId": task_id,
                        "parts": [{"data": {"approval": PROPOSAL}}]}}


def state(answer):
    return answer["result"]["task"]["status"]["state"]


def text(answer):
    return answer["result"]["task"]["status"]["message"]["parts"][0]["text"]


def test_a_strangers_paused_refunds_never_turn_away_the_orders_honest_refunds():
    peer = billing.billing_agent(clock=utc_now)  # the holds' stated time is 10 minutes: never reached here
    with serving(PeerApp(peer, wire_v10, token="attacker")) as attacker, \
            serving(PeerApp(peer, wire_v10, token="honest")) as honest:
        held = [call(attacker.base_url, "attacker", "SendMessage", refund(f"a-{n}", f"ORD-{n}", 999_999))
                for n in range(MAX_PAUSED_PER_CALLER)]
        assert [state(answer) for answer in held] == ["TASK_STATE_INPUT_REQUIRED"] * MAX_PAUSED_PER_CALLER
        again = call(attacker.base_url, "attacker", "SendMessage", refund("a-again", "ORD-0", 999_999))
        assert again["result"]["task"]["id"] == held[0]["result"]["task"]["id"], "its caller's copy: the waiting task"
        other = call(attacker.base_url, "attacker", "SendMessage", refund("a-other", "ORD-0", 5))
        assert state(other) == "TASK_STATE_REJECTED" and "is paused, waiting for its caller" in text(other), \
            "against its own caller the hold stands"
        done = [state(call(honest.base_url, "honest", "SendMessage", refund(f"h-{n}", f"ORD-{n}", 25)))
                for n in range(MAX_PAUSED_PER_CALLER)]
        assert done == ["TASK_STATE_COMPLETED"] * MAX_PAUSED_PER_CALLER, "every honest refund done at once"
        assert len([effect for effect in peer.ledger.effects.values() if effect.summary.startswith("refund of")]) == \
            MAX_PAUSED_PER_CALLER


def test_a_paused_task_approved_after_another_caller_refunded_its_order_does_nothing():
    peer = billing.billing_agent()
    with serving(PeerApp(peer, wire_v10, token="first")) as first, \
            serving(PeerApp(peer, wire_v10, token="second")) as second:
        waiting = call(first.base_url, "first", "SendMessage", refund("m-1", "ORD-9", 6000))
        assert state(waiting) == "TASK_STATE_INPUT_REQUIRED"
        also = call(second.base_url, "second", "SendMessage", refund("m-1", "ORD-9", 6000))
        assert state(also) == "TASK_STATE_INPUT_REQUIRED", "the second caller's own request pauses too"
        assert state(call(second.base_url, "second", "SendMessage",
                          approval("m-2", also["result"]["task"]["id"]))) == "TASK_STATE_COMPLETED"
        late = call(first.base_url, "first", "SendMessage", approval("m-2", waiting["result"]["task"]["id"]))
        assert state(late) == "TASK_STATE_FAILED" and "already did this meanwhile" in text(late)
        said = late["result"]["task"]["status"]["message"]["parts"][1]["data"]  # seed 004's failure, as data
        assert said == {"retrySafe": True, "effectsLanded": ["refund of ORD-9"]}, "landed, by the other; a retry finds it"
        refunds = [effect.summary for effect in peer.ledger.effects.values()]
        assert refunds == ["refund of $6,000.00 issued for ORD-9 (ref BILL-ORD-9)"], "refunded once, never twice"


def test_a_paused_task_approved_while_another_callers_refund_is_only_under_way_says_no_refund_landed_that_did_not():
    """Another caller's refund of the order claimed it (BEING_DONE) but had not done it when the paused task was
    approved, and then did nothing (its step-up paused it). The approved task's failure says as data that the
    refund landed and that a retry finds it done: neither is so, and the caller's retry goes ahead instead."""
    import threading
    import time
    from peers.ledger import BEING_DONE, WAITING
    peer = billing.billing_agent(slow=2.0, step_up_above=10.0)  # each refund takes 2 s; above $10 a step-up
    with serving(PeerApp(peer, wire_v10, token="first")) as first, \
            serving(PeerApp(peer, wire_v10, token="second")) as second:
        waiting = call(first.base_url, "first", "SendMessage", refund("m-1", "ORD-9", 6000))
        assert state(waiting) == "TASK_STATE_INPUT_REQUIRED"
        answers = []
        other = threading.Thread(target=lambda: answers.append(call(
            second.base_url, "second", "SendMessage", refund("s-1", "ORD-9", 25))), daemon=True)
        other.start()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and getattr(peer.ledger.get("refund of ORD-9"), "summary", "") != BEING_DONE:
            time.sleep(0.01)  # until the other caller's refund has claimed the order: under way, nothing done yet
        assert peer.ledger.get("refund of ORD-9").summary == BEING_DONE
        late = call(first.base_url, "first", "SendMessage", approval("m-2", waiting["result"]["task"]["id"]))
        other.join(10)
        assert not other.is_alive() and answers, "the other caller's refund was answered"
        assert state(answers[0]) == "TASK_STATE_AUTH_REQUIRED", "the other refund paused for a step-up: nothing done"
        assert peer.ledger.get("refund of ORD-9").summary == WAITING, "no refund of ORD-9 landed"
        parts = late["result"]["task"]["status"]["message"]["parts"]
        landed = parts[1]["data"]["effectsLanded"] if len(parts) > 1 else []
        assert landed == [] and "finds it done" not in text(late), (
            f"the approved task says {landed} landed and {text(late)!r}, yet nothing was refunded")
