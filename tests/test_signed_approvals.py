"""A person's approval, bound to a person: billing, pinning the approver's public key
(the demo setting `signed_approvals`), goes on with a paused refund only for an approval
that is exactly its proposal and carries the approver's RS256 signature over that proposal
and this task's id. Unsigned, another key's, altered, for another task, or used again:
each is refused with its reason, and nothing is refunded. Real frames through the real
billing app, in process; the lesson through the real CLI."""
import json

import pytest

from conftest import cli_once
from peers import billing
from peers.a2a import wire_v10
from peers.app import PeerApp
from peers.demo import approver_key
from peers.signing import approval_signature, rs256
from peers.support.lessons.approval import ANOTHER_KEY, APPROVER_KEY, key_at
from transports.inprocess import InProcessTransport

PROPOSAL = {"order_id": "ORD-9", "amount": 6000.0, "currency": "USD"}
ENDPOINT = billing.BASE_URL + "/a2a"  # the agent an approval is addressed to


@pytest.fixture
def call():
    peer = billing.billing_agent(approver=approver_key())
    transport = InProcessTransport({billing.BASE_URL: PeerApp(peer, wire_v10, token="t0k")})
    ids = iter(range(1, 1000))

    def send(data, method="SendMessage", **fields):
        message = {"messageId": f"m-{next(ids)}", "role": "ROLE_USER", "parts": [{"data": data}], **fields}
        params = {"message": message} if method == "SendMessage" else data
        frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
        headers = {"Content-Type": "application/json", "A2A-Version": "1.0", "Authorization": "Bearer t0k"}
        return json.loads(transport.post(billing.BASE_URL + "/a2a", frame.encode(), headers).body)
    send.peer = peer
    return send


def paused(call, order="ORD-9"):
    task = call({"order_id": order, "amount": 6000.0})["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert "signed by the approver key billing pins" in task["status"]["message"]["parts"][0]["text"]
    return task


def refused(answer, reason):
    assert "error" in answer, answer
    assert answer["error"]["code"] == -32602 and reason in answer["error"]["message"], answer["error"]["message"]


def test_an_unsigned_approval_is_an_agents_say_so_and_is_refused(call):
    task = paused(call)
    refused(call({"approval": PROPOSAL}, taskId=task["id"]), "the approval is unsigned")
    still = call({"id": task["id"]}, method="GetTask")["result"]
    assert still["status"]["state"] == "TASK_STATE_INPUT_REQUIRED" and "artifacts" not in still


def test_an_approval_signed_by_another_key_is_refused_naming_both_keys(call):
    task = paused(call)
    forged = approval_signature.sign(PROPOSAL, ENDPOINT, task["id"], key_at(ANOTHER_KEY))
    refused(call({"approval": PROPOSAL, "signature": forged}, taskId=task["id"]), "names another key")


def test_an_approval_altered_after_it_was_signed_is_refused(call):
    task = paused(call)
    signed = approval_signature.sign({**PROPOSAL, "amount": 600.0}, ENDPOINT, task["id"], key_at(APPROVER_KEY))
    # The proposal sent is billing's, but the signature approved $600: it is not the person's yes to this.
    refused(call({"approval": PROPOSAL, "signature": signed}, taskId=task["id"]), "does not verify under the approver key the peer pins, for this proposal")
    # And a bigger amount than proposed is not the proposal at all.
    more = {**PROPOSAL, "amount": 9000.0}
    refused(call({"approval": more, "signature": approval_signature.sign(more, ENDPOINT, task["id"], key_at(APPROVER_KEY))},
                 taskId=task["id"]), "approving exactly what it proposed")


@pytest.mark.parametrize("signature", [{}, "x", [], {"protected": "!!", "signature": "a"}, {"protected": 5},
                                       {"protected": rs256.b64url(b'{"alg": "none"}'), "signature": ""}])
def test_a_signature_that_is_not_an_rs256_jws_is_refused_in_one_line(call, signature):
    task = paused(call)
    refused(call({"approval": PROPOSAL, "signature": signature}, taskId=task["id"]), "is not an RS256 JWS")


def test_the_approvers_signature_releases_the_refund_once_and_never_again(call):
    task = paused(call)
    signed = approval_signature.sign(PROPOSAL, ENDPOINT, task["id"], key_at(APPROVER_KEY))
    done = call({"approval": PROPOSAL, "signature": signed}, taskId=task["id"])["result"]["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    again = call({"approval": PROPOSAL, "signature": signed}, taskId=task["id"])
    assert again["error"]["code"] == -32004, "the task went on once: the same approval releases nothing more"


def test_a_signed_approval_replayed_on_another_task_for_the_same_refund_is_refused(call):
    first = paused(call)
    signed = approval_signature.sign(PROPOSAL, ENDPOINT, first["id"], key_at(APPROVER_KEY))
    # The person declines; the same refund is asked for again: a new task, the same proposal.
    assert call({"id": first["id"]}, method="CancelTask")["result"]["status"]["state"] == "TASK_STATE_CANCELED"
    second = paused(call)
    assert second["id"] != first["id"] and second["status"]["message"]["parts"][1]["data"]["approval"] == PROPOSAL
    refused(call({"approval": PROPOSAL, "signature": signed}, taskId=second["id"]), "signed for another task or agent")


def test_the_approval_lesson_shows_the_unsigned_and_forged_refused_and_the_signed_accepted():
    done = cli_once("--scenario", "approval")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    said = done.stdout
    assert "[support] billing refused it (Invalid params: the approval is unsigned" in said
    assert "[support] billing refused it (Invalid params: the approval's signature names another key" in said
    assert "[person] approves exactly" in said and "signing it with the approver's key" in said
    assert "refund of $6,200.00 issued for ORD-4100" in said
    assert "[support] what billing checked: the approval is exactly its proposal, signed (RS256) by the approver" \
        in said
    assert "on an agent's say-so" not in said or "unsigned" in said


def test_an_approval_addressed_to_another_agent_is_refused_even_for_the_same_task_id():
    peer = billing.billing_agent(approver=approver_key())
    assert peer.card.url == ENDPOINT
    elsewhere = billing.billing_agent("https://billing.other.example", approver=approver_key())
    transport = InProcessTransport({"https://billing.other.example": PeerApp(elsewhere, wire_v10, token="t0k")})
    headers = {"Content-Type": "application/json", "A2A-Version": "1.0", "Authorization": "Bearer t0k"}

    def send(data, **fields):
        message = {"messageId": f"m-{len(data)}-{fields.get('taskId')}", "role": "ROLE_USER",
                   "parts": [{"data": data}], **fields}
        frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}})
        return json.loads(transport.post("https://billing.other.example/a2a", frame.encode(), headers).body)
    task = send({"order_id": "ORD-9", "amount": 6000.0})["result"]["task"]
    assert task["id"] == "task-1", "another billing, the same task id and the same proposal"
    meant_for_us = approval_signature.sign(PROPOSAL, ENDPOINT, "task-1", key_at(APPROVER_KEY))
    refused(send({"approval": PROPOSAL, "signature": meant_for_us}, taskId="task-1"), "signed for another task or agent")
