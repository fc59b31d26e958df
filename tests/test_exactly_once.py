"""Duplicate delivery is harmless (seed 004): an order is refunded once, however often, by
whichever wire, under whatever messageId, by however many threads, and after its task
has left the store's window. Driven through real frames into the real billing app."""
import json
import time
import urllib.request
import threading

import pytest

from conftest import JSON_AUTH, base_url, refund_frame, start_serve
from peers import billing
from peers.a2a import wire_essay, wire_v10
from peers.app import PeerApp
from transports.inprocess import InProcessTransport

ENDPOINT = "https://billing.acme.example/a2a"
V1 = {**JSON_AUTH, "A2A-Version": "1.0"}


def post(app, frame, headers=JSON_AUTH):
    response = InProcessTransport({billing.BASE_URL: app}).post(ENDPOINT, frame, headers)
    return json.loads(response.body)


def send_v1(app, order, amount, message_id, headers=V1):
    frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
        "messageId": message_id, "role": "ROLE_USER", "metadata": {"skillId": "process_refund"},
        "parts": [{"data": {"order_id": order, "amount": amount}}]}}}).encode()
    return post(app, frame, headers)


def refunds(app):
    return [effect.summary for effect in app.peer.ledger.effects.values()]


@pytest.fixture
def app():
    return PeerApp(billing.billing_agent(max_tasks=3), wire_v10, token="t0k")


def test_repeating_the_essays_tasks_send_answers_with_the_same_task_and_refunds_once(app):
    first, again = post(app, refund_frame("ORD-3300", 180.0)), post(app, refund_frame("ORD-3300", 180.0))
    assert first == again and first["result"]["status"]["state"] == "completed"
    assert refunds(app) == ["refund of $180.00 issued for ORD-3300 (ref BILL-ORD-3300)"]


def test_the_same_order_under_a_new_message_id_gets_the_original_task(app):
    first = send_v1(app, "ORD-7", 7.0, "m-1")["result"]["task"]
    again = send_v1(app, "ORD-7", 7.0, "m-2")["result"]["task"]
    assert again["id"] == first["id"] and len(refunds(app)) == 1


@pytest.mark.parametrize("first, then", [(180, 180.0), (180.0, 180)])
def test_the_same_amount_spelled_as_another_json_number_is_the_same_request(app, first, then):
    """180 and 180.0 are one JSON number (a JavaScript client re-encoding 180.0 sends 180): the
    same refund asked again, answered with its task, not rejected as a request that differs."""
    done = send_v1(app, "ORD-7", first, "m-1")["result"]["task"]
    again = send_v1(app, "ORD-7", then, "m-2")["result"]["task"]
    assert again["id"] == done["id"] and len(refunds(app)) == 1, again["status"]


def test_the_same_order_for_another_amount_is_rejected_naming_the_refund_already_made(app):
    first = send_v1(app, "ORD-7", 7.0, "m-1")["result"]["task"]
    other = send_v1(app, "ORD-7", 70.0, "m-2")["result"]["task"]
    assert other["status"]["state"] == "TASK_STATE_REJECTED"
    note = other["status"]["message"]["parts"][0]["text"]
    assert f"task {first['id']} already did this: refund of $7.00 issued for ORD-7" in note
    assert refunds(app) == ["refund of $7.00 issued for ORD-7 (ref BILL-ORD-7)"]


def test_another_caller_asking_for_the_same_refund_learns_nothing_of_the_first(app):
    first = send_v1(app, "ORD-7", 7.0, "m-1")["result"]["task"]
    app.token = "other"  # a second client, with its own credentials
    other = send_v1(app, "ORD-7", 7.0, "m-1", {**V1, "Authorization": "Bearer other"})["result"]["task"]
    note = other["status"]["message"]["parts"][0]["text"]
    assert other["status"]["state"] == "TASK_STATE_REJECTED" and first["id"] not in note and "$7.00" not in note
    assert len(refunds(app)) == 1


def test_a_message_id_reused_for_a_different_request_is_refused_naming_the_conflict(app):
    send_v1(app, "ORD-1", 1.0, "m-1")
    error = send_v1(app, "ORD-2", 2.0, "m-1")["error"]
    assert error["code"] == -32602 and "messageId 'm-1' was already used for a different message" in error["message"]


def test_an_order_is_never_refunded_again_after_its_task_left_the_store(app):
    send_v1(app, "ORD-1", 1.0, "m-1")
    for n in range(2, 6):  # the store keeps 3 tasks: ORD-1's is forgotten
        send_v1(app, f"ORD-{n}", 1.0, f"m-{n}")
    late = send_v1(app, "ORD-1", 1.0, "m-99")["result"]["task"]
    assert late["status"]["state"] == "TASK_STATE_REJECTED"
    assert "already done by task task-1" in late["status"]["message"]["parts"][0]["text"]
    assert len(refunds(app)) == 5


def canceled_then_done_by_another(app):
    """m-1 asks for ORD-77's refund, which waits for approval, and is canceled; m-2 asks for it again and is
    approved (m-3): the refund is done, by m-2's task. (m-1's task, m-2's task)."""
    approval = {"approval": {"order_id": "ORD-77", "amount": 6000.0, "currency": "USD"}}
    canceled = send_v1(app, "ORD-77", 6000.0, "m-1")["result"]["task"]
    post(app, json.dumps({"jsonrpc": "2.0", "id": 2, "method": "CancelTask", "params": {"id": canceled["id"]}}).encode(), V1)
    other = send_v1(app, "ORD-77", 6000.0, "m-2")["result"]["task"]
    post(app, json.dumps({"jsonrpc": "2.0", "id": 3, "method": "SendMessage", "params": {"message": {
        "messageId": "m-3", "role": "ROLE_USER", "taskId": other["id"], "parts": [{"data": approval}]}}}).encode(), V1)
    return canceled, other


def test_a_resent_message_gets_the_task_it_made_not_the_task_that_later_did_its_order(app):
    """A2A: the same messageId answers with its task. m-1's refund waited for approval and was
    canceled; m-2 asked for it again and was approved. m-1 resent (its answer lost) was answered
    with m-2's task, as the ledger names it for the order: the canceled task is the one m-1 made."""
    canceled, other = canceled_then_done_by_another(app)
    resent = send_v1(app, "ORD-77", 6000.0, "m-1")["result"]["task"]
    assert (resent["id"], resent["status"]["state"]) == (canceled["id"], "TASK_STATE_CANCELED"), resent["status"]
    assert send_v1(app, "ORD-77", 6000.0, "m-4")["result"]["task"]["id"] == other["id"], "a new message: the refund's task"
    assert len(refunds(app)) == 1


@pytest.mark.parametrize("durable", [False, True], ids=["in memory", "--store, restarted"])
def test_a_message_resent_after_its_task_left_the_store_is_answered_as_a_new_message_for_its_order(tmp_path, durable):
    """m-1's refund waited for approval and was canceled; m-2 asked for the same order, was approved and
    refunded it. Then m-1's task left the store's window, and its messageId with it (a task's messages live
    and go with it: the store's bounds hold them too), and m-1 was resent. To the peer it is a new message,
    answered as any new message for that order is: with the order's task, m-2's, still kept; once that is
    gone too, with a rejection naming it. Both are true of the order, refunded once, by that task; neither
    is m-1's own canceled task, which is forgotten. Kept so on purpose: A2A lets a server drop a message
    whose messageId it has seen and asks nothing of one it no longer keeps, and exactly-once is the
    ledger's (the effect never happens twice), which task answers is secondary; remembering every
    messageId ever seen would grow without bound, as the whole ledger read back at each start did."""
    from peers.durable import open_store
    from peers.restart import restarted
    from peers.stamps import unguessable_task_ids

    def billing_on_its_store():  # (task ids of their own in each life, as `serve` gives them)
        if not durable:
            return billing.billing_agent(max_tasks=3, new_task_id=unguessable_task_ids())
        store, ledger = open_store(str(tmp_path / "billing.db"), max_tasks=3)
        peer = billing.billing_agent(store=store, ledger=ledger, new_task_id=unguessable_task_ids())
        restarted(peer, str(tmp_path / "billing.db"))
        return peer
    app = PeerApp(billing_on_its_store(), wire_v10, token="t0k")
    canceled, other = canceled_then_done_by_another(app)
    for n in range(2):  # the store keeps 3 tasks: m-1's, the oldest, is forgotten
        send_v1(app, f"ORD-{n}", 1.0, f"f-{n}")
    if durable:
        app.peer.store.file.close()
        app = PeerApp(billing_on_its_store(), wire_v10, token="t0k")
    assert canceled["id"] not in app.peer.store.tasks and other["id"] in app.peer.store.tasks
    resent, new = send_v1(app, "ORD-77", 6000.0, "m-1")["result"]["task"], send_v1(app, "ORD-77", 6000.0, "m-9")
    assert (resent["id"], resent["status"]["state"]) == (other["id"], "TASK_STATE_COMPLETED"), resent["status"]
    assert new["result"]["task"]["id"] == other["id"], "as a new message for the order is answered"
    for n in range(2, 5):  # m-2's task forgotten too (and the rejections the resends made)
        send_v1(app, f"ORD-{n}", 1.0, f"f-{n}")
    late = send_v1(app, "ORD-77", 6000.0, "m-2")["result"]["task"]
    assert late["status"]["state"] == "TASK_STATE_REJECTED"
    assert f"already done by task {other['id']}: refund of $6,000.00 issued for ORD-77" in \
        late["status"]["message"]["parts"][0]["text"]
    assert sorted(refunds(app)) == sorted([f"refund of $1.00 issued for ORD-{n} (ref BILL-ORD-{n})" for n in range(5)] +
                                          ["refund of $6,000.00 issued for ORD-77 (ref BILL-ORD-77)"]), "each once"
    if durable:
        app.peer.store.file.close()


def test_the_bearer_scheme_in_any_case_is_the_same_caller(app):
    tasks = [send_v1(app, "ORD-9", 9.0, "m-1", {**V1, "Authorization": f"{scheme} t0k"})["result"]["task"]["id"]
             for scheme in ("Bearer", "bearer", "BEARER")]
    assert len(set(tasks)) == 1 and len(refunds(app)) == 1


def test_duplicates_arriving_together_refund_once():
    app = PeerApp(billing.billing_agent(), wire_essay, token="t0k")
    answers = []

    def client(order):
        answers.append(post(app, refund_frame(order, 3.0))["result"]["id"])
    threads = [threading.Thread(target=client, args=(f"ORD-{n % 4}",)) for n in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert len(answers) == 16 and len(set(answers)) == 4
    assert sorted(refunds(app)) == [f"refund of $3.00 issued for ORD-{n} (ref BILL-ORD-{n})" for n in range(4)]


def test_a_message_too_big_to_keep_is_refused_before_any_task(app):
    error = send_v1(app, "ORD-1", 1.0, "m-big", {**V1})  # a normal one first
    huge = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "SendMessage", "params": {"message": {
        "messageId": "m-2", "role": "ROLE_USER", "metadata": {"skillId": "process_refund", "note": "x" * 70_000},
        "parts": [{"data": {"order_id": "ORD-2", "amount": 2.0}}]}}}).encode()
    refused = post(app, huge, V1)["error"]
    assert refused["code"] == -32602 and "this agent takes messages of at most 65,536 bytes" in refused["message"]
    assert "result" in error and len(app.peer.store.tasks) == 1


def test_the_task_store_forgets_oldest_tasks_to_stay_within_its_byte_budget():
    from peers.store import TaskStore
    from peers.a2a.model import Task
    store = TaskStore(max_tasks=1000, max_bytes=10_000)
    for number in range(10):
        store.add(lambda: Task(f"t-{number}"), "", f"m-{number}", "x" * 3_000)
    assert list(store.tasks) == ["t-7", "t-8", "t-9"] and store.kept_bytes == 9_000


@pytest.mark.parametrize("durable", [False, True], ids=["in memory", "--store"])
def test_a_flood_of_cheap_refunds_cannot_push_an_order_out_of_the_ledger_to_refund_it_again(tmp_path, durable):
    """A hostile round's attack: one caller's $1,000 refund, then another caller's $0.01 refunds
    enough to fill the ledger, then the first order asked again under a new messageId. When a full
    ledger forgot its oldest effect, that order was refunded twice. `serve` over HTTP: the order
    gets its first task back; the flooding caller's refunds past its share are refused saying why,
    and the first caller's share is its own: its next order is refunded."""
    store = ["--store", str(tmp_path / "billing.db")] if durable else []
    process, banner = start_serve("billing-agent", "--wire", "1.0", "--token", "t0k", "--other-token", "b0b",
                                  "--max-effects", "4", *store)
    try:
        url = base_url(banner[0]) + "/a2a"

        def send(order, amount, message_id, token):
            frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
                "messageId": message_id, "role": "ROLE_USER", "metadata": {"skillId": "process_refund"},
                "parts": [{"data": {"order_id": order, "amount": amount}}]}}}).encode()
            request = urllib.request.Request(url, frame, {**V1, "Authorization": f"Bearer {token}"})
            with urllib.request.urlopen(request, timeout=10) as answer:
                return json.loads(answer.read())["result"]["task"]
        first = send("ORD-X", 1000.0, "m-1", "t0k")
        floods = [send(f"FILL-{n}", 0.01, f"f-{n}", "b0b") for n in range(6)]
        again = send("ORD-X", 1000.0, "m-2", "t0k")
        next_order = send("ORD-Y", 10.0, "m-3", "t0k")
    finally:
        process.stop()
    assert first["status"]["state"] == "TASK_STATE_COMPLETED"
    assert again["id"] == first["id"], "the order asked again: its first task, not a second refund"
    assert [task["status"]["state"] for task in floods] == ["TASK_STATE_COMPLETED"] * 4 + ["TASK_STATE_REJECTED"] * 2
    assert "holds 4 effects asked for with this credential, its share of at most 4" in \
        floods[-1]["status"]["message"]["parts"][0]["text"]
    assert next_order["status"]["state"] == "TASK_STATE_COMPLETED", "another caller's flood fills only its share"


def test_claims_are_the_same_json_numbers_by_value_true_is_no_1_and_none_is_made_longer_than_sent():
    """A claim is the payload as canonical JSON, spelled as sent (a payload of `1e308`s, five characters
    each, is no longer as a claim); two claims are compared as JSON, numbers by value, true apart from 1."""
    from peers.skill import canonical, same_claim
    assert same_claim(canonical({"amount": 180.0}), canonical({"amount": 180}))
    assert same_claim(canonical([1e308, {"a": 2 ** 53}]), canonical([1e308, {"a": 2.0 ** 53}]))
    assert not same_claim(canonical({"ok": True}), canonical({"ok": 1}))
    assert not same_claim(canonical({"amount": 180.5}), canonical({"amount": 180}))
    assert not same_claim(canonical({"a": [1, 2]}), canonical({"a": [1, 2, 3]}))
    assert len(canonical([1e308] * 1000)) < 10 * 1000, "no amplification"


def test_a_full_share_lets_go_of_its_paused_tasks_claims_whose_holds_are_over_before_refusing():
    """A paused refund holds its claim until its hold ends; a share full of such claims, all over, took
    no new refund: nothing had been done by any of them. They are let go first, and the refund made."""
    from peers.ledger import Ledger
    from peers.stamps import utc_now
    app = PeerApp(billing.billing_agent(ledger=Ledger(3), clock=utc_now, hold_seconds=0.2), wire_v10, token="t0k")
    paused = [send_v1(app, f"BIG-{n}", 6000.0, f"p-{n}")["result"]["task"] for n in range(3)]
    assert {task["status"]["state"] for task in paused} == {"TASK_STATE_INPUT_REQUIRED"}
    time.sleep(0.5)  # every hold over (0.2 s)
    task = send_v1(app, "ORD-1", 10.0, "m-1")["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
    assert refunds(app) == ["refund of $10.00 issued for ORD-1 (ref BILL-ORD-1)"]


def test_each_callers_count_of_claims_holds_under_refunds_finishing_together():
    """A share is counted as claims are recorded; a skill's result is recorded outside the ledger's
    lock, so it must not touch the counts, or two finishing at once lose an update (seeded threads,
    the interpreter switching between them as often as it can)."""
    from collections import Counter
    import sys
    app = PeerApp(billing.billing_agent(max_tasks=2000), wire_v10, token="t0k", other_tokens=("b0b",))
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        def client(number):
            for order in range(40):
                send_v1(app, f"ORD-{number}-{order}", 1.0, f"m-{number}-{order}",
                        {**V1, "Authorization": f"Bearer {('t0k', 'b0b')[number % 2]}"})
        threads = [threading.Thread(target=client, args=(number,)) for number in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
    finally:
        sys.setswitchinterval(before)
    ledger = app.peer.ledger
    assert len(ledger.effects) == 320
    assert {owner: n for owner, n in ledger.owned.items() if n} == dict(Counter(e.owner for e in ledger.effects.values()))


def test_a_paused_task_continued_after_its_claim_went_and_its_share_filled_fails_saying_why():
    """A paused refund's claim let go (its hold over, taken by a later request, that one canceled),
    its caller's share filled meanwhile: the step-up turn that continues it claims nothing past the
    share, and its task fails saying why, with nothing done."""
    from peers.ledger import Ledger
    from peers.stamps import utc_now
    peer = billing.billing_agent(step_up_above=1000.0, ledger=Ledger(2), clock=utc_now, hold_seconds=0.2)
    app = PeerApp(peer, wire_v10, token="t0k", step_ups={"up-t0k": billing.STEP_UP_SCOPE})
    old = send_v1(app, "BIG", 2000.0, "m-1")["result"]["task"]
    time.sleep(0.5)  # its hold over
    later = send_v1(app, "BIG", 2000.0, "m-2")["result"]["task"]
    post(app, json.dumps({"jsonrpc": "2.0", "id": 2, "method": "CancelTask", "params": {"id": later["id"]}}).encode(), V1)
    for n in range(2):
        send_v1(app, f"O-{n}", 1.0, f"f-{n}")
    turn = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "SendMessage", "params": {"message": {
        "messageId": "m-3", "role": "ROLE_USER", "taskId": old["id"], "contextId": old["contextId"],
        "metadata": {"skillId": "process_refund"}, "parts": [{"text": "go on"}]}}}).encode()
    task = post(app, turn, {**V1, "Authorization": "Bearer up-t0k"})["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_FAILED", task["status"]
    assert "its share of at most 2" in task["status"]["message"]["parts"][0]["text"]
    assert task["status"]["message"]["parts"][1]["data"] == {"retrySafe": True, "effectsLanded": []}, "as every failure"
    assert sorted(refunds(app)) == [f"refund of $1.00 issued for O-{n} (ref BILL-O-{n})" for n in range(2)]


def test_a_full_share_takes_no_other_callers_paused_claim_over_and_the_sweep_sees_only_its_own():
    """A caller whose share was full could still refund an order another caller's paused task held
    (a claim taken over counted as room), past its share, and so learn which orders others had paused.
    And a full share's sweep read the whole ledger under its lock; it reads its own paused claims."""
    from peers.ledger import WAITING, Ledger
    app = PeerApp(billing.billing_agent(ledger=Ledger(1)), wire_v10, token="TA", other_tokens=("TB",))

    def send(order, amount, message_id, token):
        return send_v1(app, order, amount, message_id, {**V1, "Authorization": f"Bearer {token}"})["result"]["task"]
    assert send("ORD-9", 6000.0, "b-1", "TB")["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert send("ORD-1", 10.0, "a-1", "TA")["status"]["state"] == "TASK_STATE_COMPLETED"  # A's share full
    untouched, paused = send("ORD-2", 10.0, "a-2", "TA"), send("ORD-9", 10.0, "a-3", "TA")
    assert untouched["status"]["state"] == paused["status"]["state"] == "TASK_STATE_REJECTED", paused["status"]
    ledger = app.peer.ledger
    assert ledger.effects["refund of ORD-9"].summary == WAITING, "still B's paused claim"
    assert sorted(ledger.owned.values()) == [1, 1], "each caller holds one: A's share never passed"
    assert {owner: keys for owner, keys in ledger.waiting.items() if keys} == {
        effect.owner: {key} for key, effect in ledger.effects.items() if effect.summary == WAITING}


def test_letting_go_of_a_tasks_claim_never_forgets_an_effect_that_task_did():
    """`release` is for a claim that ended with nothing done; the entry it found for the task was let go
    whatever it said, so a task that somehow ended badly after its effect was recorded (a restart running
    it again, on a file edited by hand, did) erased the record of the effect, and the next request did it again."""
    from peers.ledger import BEING_DONE, Effect, Ledger
    ledger = Ledger()
    ledger.record("refund of ORD-1", Effect("o", "task-1", "{}", "refund of $5.00 issued for ORD-1"))
    ledger.record("refund of ORD-2", Effect("o", "task-1", "{}", BEING_DONE))
    ledger.release("refund of ORD-1", "task-1")
    ledger.release("refund of ORD-2", "task-1")
    assert list(ledger.effects) == ["refund of ORD-1"] and ledger.owned == {"o": 1}
