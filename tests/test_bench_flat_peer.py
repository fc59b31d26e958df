"""bench/flat_peer.py, the one-function yardstick issue 36's benchmark serves beside the peer, is a fair
one: it answers the benchmark's SendMessage with the served peer's bytes (ids and times aside), and
refuses every request here the peer refuses, so its lower CPU is not work left undone. Not a timing."""
import json
import re
import sys
from pathlib import Path

import pytest

from peers import billing
from peers.a2a import wire_v10
from peers.app import PeerApp
from peers.stamps import unguessable_task_ids, utc_now
from transports.base import request

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from flat_peer import Yardstick  # noqa: E402

TOKEN = "bench-token"
URL = "http://127.0.0.1:8000/a2a"
HEADERS = {"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}", "A2A-Version": "1.0"}


def both():
    peer = PeerApp(billing.billing_agent("http://127.0.0.1:8000", new_task_id=unguessable_task_ids(), clock=utc_now),
                   wire_v10, token=TOKEN)
    return peer, Yardstick(TOKEN)


def frame(message_id="m-1", data=None, **changes):
    message = {"messageId": message_id, "role": "ROLE_USER", "metadata": {"skillId": "process_refund"},
               "parts": [{"data": {"order_id": "ORD-1", "amount": 180.0} if data is None else data}], **changes}
    return json.dumps({"jsonrpc": "2.0", "id": 7, "method": "SendMessage", "params": {"message": message}}).encode()


def said(app, body, headers=HEADERS):
    answer = app(request("POST", URL, headers, body))
    return answer.status, answer.body


def completed(answer):
    status, body = answer
    return status == 200 and b'"state": "TASK_STATE_COMPLETED"' in body


def plain(body):
    """An answer with its task ids, context ids and times made alike."""
    text = re.sub(rb"task-[0-9a-f]{24}", b"task-X", body)
    return json.loads(re.sub(rb'"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"', b'"T"', text))


def test_the_yardstick_answers_the_benchmarks_refund_with_the_peers_answer():
    peer, flat = both()
    mine, theirs = said(flat, frame()), said(peer, frame())
    assert mine[0] == theirs[0] == 200 and completed(mine)
    assert plain(mine[1]) == plain(theirs[1])
    again = said(flat, frame())  # the same message again: its task as it is
    assert plain(again[1]) == plain(mine[1]) and json.loads(again[1])["result"]["task"]["id"] == \
        json.loads(mine[1])["result"]["task"]["id"]


REFUSED = {
    "another token": (frame(), {**HEADERS, "Authorization": "Bearer wrong"}),
    "no version": (frame(), {k: v for k, v in HEADERS.items() if k != "A2A-Version"}),
    "text/plain": (frame(), {**HEADERS, "Content-Type": "text/plain"}),
    "a key twice": (frame().replace(b'"amount": 180.0', b'"amount": 1, "amount": 180.0'), HEADERS),
    "NaN": (frame().replace(b"180.0", b"NaN"), HEADERS),
    "a batch": (b"[" + frame() + b"]", HEADERS),
    "a bool id": (frame().replace(b'"id": 7', b'"id": true'), HEADERS),
    "amount 0": (frame(data={"order_id": "ORD-1", "amount": 0}), HEADERS),
    "amount below zero": (frame(data={"order_id": "ORD-1", "amount": -5}), HEADERS),
    "amount past a million": (frame(data={"order_id": "ORD-1", "amount": 1_000_001}), HEADERS),
    "a tenth of a cent": (frame(data={"order_id": "ORD-1", "amount": 0.001}), HEADERS),
    "amount as text": (frame(data={"order_id": "ORD-1", "amount": "180"}), HEADERS),
    "amount true": (frame(data={"order_id": "ORD-1", "amount": True}), HEADERS),
    "an empty order": (frame(data={"order_id": "", "amount": 1}), HEADERS),
    "an order with a space": (frame(data={"order_id": "ORD 1", "amount": 1}), HEADERS),
    "an order of 65 characters": (frame(data={"order_id": "O" * 65, "amount": 1}), HEADERS),
    "an order ending in a newline": (frame(data={"order_id": "ORD-1\n", "amount": 1}), HEADERS),
    "an order as a number": (frame(data={"order_id": 1, "amount": 1}), HEADERS),
    "a field more": (frame(data={"order_id": "ORD-1", "amount": 1, "note": "x"}), HEADERS),
    "no amount": (frame(data={"order_id": "ORD-1"}), HEADERS),
    "an agent's message": (frame(role="ROLE_AGENT"), HEADERS),
    "an empty messageId": (frame(message_id=""), HEADERS),
    "a messageId of 257 characters": (frame(message_id="m" * 257), HEADERS),
    "two data parts": (frame(parts=[{"data": {"order_id": "ORD-1", "amount": 1}},
                                    {"data": {"order_id": "ORD-2", "amount": 1}}]), HEADERS),
    "no parts": (frame(parts=[]), HEADERS),
}


@pytest.mark.parametrize("case", REFUSED)
def test_the_yardstick_refuses_what_the_peer_refuses(case):
    peer, flat = both()
    body, headers = REFUSED[case]
    assert not completed(said(peer, body, headers)), "the peer refuses it: the case is a refusal"
    assert not completed(said(flat, body, headers))


SECOND = {"the same messageId saying another amount": frame("m-1", {"order_id": "ORD-1", "amount": 90.0}),
          "the same order for another amount": frame("m-2", {"order_id": "ORD-1", "amount": 90.0})}


@pytest.mark.parametrize("second", SECOND)
def test_the_yardstick_refuses_a_second_refund_of_an_order_as_the_peer_does(second):
    peer, flat = both()
    for app in (peer, flat):
        assert completed(said(app, frame()))
        assert not completed(said(app, SECOND[second]))


def test_the_same_refund_under_a_new_messageId_gets_the_first_task_from_both():
    peer, flat = both()
    for app in (peer, flat):
        first, again = said(app, frame("m-1")), said(app, frame("m-2"))
        assert completed(again) and json.loads(again[1])["result"]["task"]["id"] == \
            json.loads(first[1])["result"]["task"]["id"], "the order refunded once: its task answered again"
