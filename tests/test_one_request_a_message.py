"""One request a message: a message whose parts ask for two things is refused (-32602, before
any task or effect), never half done with the other dropped unseen: two data parts, or a
data part beside a text that names another effect (billing: another order id, with an amount
or not). A text that is prose, or names the same order, goes with its data part. Real
frames through billing's app, over JSON-RPC (A2A 1.0), in process."""
import json

import pytest

from peers import billing
from peers.a2a import wire_v10
from peers.app import PeerApp
from transports.inprocess import InProcessTransport

BASE = "https://agent.example"
HEADERS = {"Content-Type": "application/json", "A2A-Version": "1.0"}


@pytest.fixture
def send():
    transport = InProcessTransport({BASE: PeerApp(billing.billing_agent(BASE, log=lambda line: None), wire_v10)})
    numbers = iter(range(1, 100))

    def sending(*parts):
        number = next(numbers)
        frame = json.dumps({"jsonrpc": "2.0", "id": number, "method": "SendMessage", "params": {"message": {
            "messageId": f"m-{number}", "role": "ROLE_USER", "parts": list(parts)}}}).encode()
        return json.loads(transport.post(BASE + "/a2a", frame, HEADERS).body)
    return sending


def data(order, amount=5):
    return {"data": {"order_id": order, "amount": amount}}


def said(answer):
    return answer["result"]["task"]["status"]["message"]["parts"][0]["text"]


@pytest.mark.parametrize("parts, named", [
    ([data("ORD-1"), data("ORD-2")], "takes one data part a message; this one has 2"),
    ([{"text": "Please refund $5 on order ORD-2"}, data("ORD-1")],
     "the text part names the refund of ORD-2, the data part asks for the refund of ORD-1"),
    ([data("ORD-1"), {"text": '{"order_id": "ORD-2", "amount": 5}'}], "the text part names the refund of ORD-2"),
    ([{"text": "Refund ORD-2 as well"}, data("ORD-1")], "the text part names the refund of ORD-2"),  # no amount
    ([{"text": "ORD-1 and ORD-2, $5 each"}, data("ORD-1")], "the text part names the refund of ORD-2"),
    ([{"text": "also refund INV-7 for $5"}, data("ORD-1")], "the text part names the refund of INV-7"),
])
def test_a_message_asking_for_two_refunds_is_refused_and_neither_is_made(send, parts, named):
    refused = send(*parts)
    assert refused["error"]["code"] == -32602 and named in refused["error"]["message"], refused
    for order in ("ORD-1", "ORD-2"):  # neither was refunded: each, asked alone now, is refunded now
        assert said(send(data(order))) == f"refund of $5.00 issued for {order} (ref BILL-{order})"


@pytest.mark.parametrize("text", ["Please refund this order, the customer was charged twice",
                                  "Refund ORD-1 for $5", "Refund $5.00 on ORD-1, thanks",
                                  "Ticket text is UTF-8; the charge was on 2026-11-30 (ISO-8601), see RFC-3339"])
def test_a_text_that_is_prose_or_asks_for_the_same_order_goes_with_its_data_part(send, text):
    assert said(send({"text": text}, data("ORD-1"))) == "refund of $5.00 issued for ORD-1 (ref BILL-ORD-1)"
