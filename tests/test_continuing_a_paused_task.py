"""Our side continuing a paused task (A2A 1.0 section 3.1.1: the next turn of a task in
input-required or auth-required names it by taskId, in its contextId), as the live page's
"Any agent" and the lessons do, through the story's own steps. A peer that answers the next
turn with another task, or moves the task to another context, has done something else than
asked: taken as the task continued, the page would name that other task in the turn after,
and a refund's approval could be read as given to a task it was never sent to. A hostile
round's finding: such an answer was taken as the task continued, without a word.
The peer is an app of the test's own, on the in-process transport, each answer one JSON reply."""
import json

import pytest

from conftest import BILLING, BILLING_CARD, support_agent
from peers import billing
from peers.a2a import wire_v10
from peers.a2a.model import Part
from transports.base import HttpResponse
from transports.errors import ProtocolViolation


def peer_answering(task_id, context_id, state="TASK_STATE_COMPLETED"):
    card = json.dumps(wire_v10.card_to_wire(billing.billing_agent().card)).encode()

    def app(request):
        if request.method == "GET":
            return HttpResponse(200, {"Content-Type": "application/json"}, card)
        frame = json.loads(request.body)
        task = {"id": task_id, "contextId": context_id, "status": {"state": state}}
        return HttpResponse(200, {"Content-Type": "application/a2a+json"},
                            json.dumps({"jsonrpc": "2.0", "id": frame["id"], "result": {"task": task}}).encode())
    return app


def peer_replying(streamed):
    """A peer answering the next turn with a direct Message (no task: A2A 1.0 allows it), in a stream or not."""
    card = json.dumps(wire_v10.card_to_wire(billing.billing_agent().card)).encode()

    def app(request):
        if request.method == "GET":
            return HttpResponse(200, {"Content-Type": "application/json"}, card)
        said = {"message": {"messageId": "m-9", "contextId": "c-1", "role": "ROLE_AGENT", "parts": [{"text": "noted"}]}}
        answer = json.dumps({"jsonrpc": "2.0", "id": json.loads(request.body)["id"], "result": said}).encode()
        if streamed:
            return HttpResponse(200, {"Content-Type": "text/event-stream"}, b"data: " + answer + b"\n\n")
        return HttpResponse(200, {"Content-Type": "application/a2a+json"}, answer)
    return app


def next_turn(app, stream=False):
    agent, _, _ = support_agent([BILLING], apps={billing.BASE_URL: app}, wire="1.0", stream=stream)
    steps = agent.steps()
    contact = steps.gate(steps.find(BILLING_CARD))
    message = steps.message(Part(text="the approval"), context_id="c-1", task_id="t-1")
    return steps.send(contact, message)


@pytest.mark.parametrize("task_id, context_id, said", [
    ("t-2", "c-1", "continued task 't-1', the peer answered with task 't-2'"),
    ("t-1", "c-2", "continued task 't-1' in context 'c-1', the peer answered in context 'c-2'"),
])
def test_a_next_turn_answered_with_another_task_or_context_is_a_protocol_violation(task_id, context_id, said):
    with pytest.raises(ProtocolViolation) as caught:
        next_turn(peer_answering(task_id, context_id))
    assert said in str(caught.value) and "\n" not in str(caught.value)


def test_a_next_turn_answered_with_a_paused_task_named_as_a_direct_reply_is_a_protocol_violation():
    """"(reply ...)" is how our side names a direct Message's answer; a task id is the peer's to choose, so a peer
    naming another task so must not pass for a reply: the next turn (an approval) would go to that task."""
    with pytest.raises(ProtocolViolation) as caught:
        next_turn(peer_answering("(reply m-9)", "c-1", state="TASK_STATE_INPUT_REQUIRED"))
    assert "continued task 't-1', the peer answered with task '(reply m-9)'" in str(caught.value)


def test_a_next_turn_answered_with_the_same_task_in_its_context_is_that_task():
    task = next_turn(peer_answering("t-1", "c-1"))
    assert (task.id, task.context_id, task.state.value) == ("t-1", "c-1", "completed")


@pytest.mark.parametrize("streamed", [False, True], ids=["answered", "streamed"])
def test_a_next_turn_answered_with_a_direct_message_is_that_reply_streamed_or_not(streamed):
    task = next_turn(peer_replying(streamed), stream=streamed)
    assert task.state.value == "completed" and "noted" in (task.status_message or "") + "".join(
        part.text or "" for made in task.artifacts for part in made.parts)
