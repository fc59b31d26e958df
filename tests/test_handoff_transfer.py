"""What a handoff transfers (seed 004): who advances the task after it, its current
authoritative status, who keeps the customer (the delay notice), and a span its work is
linked to. --scenario transfer through the real CLI on both transports, and billing's
judgement of the transfer fields through real frames, hostile ones too."""
import pytest

from conftest import cli_together, frames, lesson as both_transports
from peers.contracts import handoff, transfer
from peers.support.lessons.transfer import MEANINGS, OUR_SPAN, STATUS, TRACE

ENVELOPE = handoff.Envelope("refund ORD-7 in full", (handoff.Permit("refund", 50.0, "USD"),),
                            "2099-01-01T00:00:00Z", "support-agent")
WHOLE = transfer.Transfer("billing-agent", STATUS, "support-agent", TRACE, OUR_SPAN)


def lesson(*extra):
    """The transfer lesson over both transports, which print the same (conftest): its lines."""
    done, lines = both_transports("transfer", *extra)
    assert done.returncode == 0 and done.stderr == ""
    return lines


def test_the_tool_call_is_not_sent_the_ownerless_transfer_is_refused_and_the_whole_one_is_taken_on():
    lines = lesson()
    sent, answers = frames(lines, "-->"), frames(lines, "<--")
    assert [frame["method"] for frame in sent] == ["SendMessage", "SendMessage", "GetTask"]
    envelopes = [frame["params"]["message"]["metadata"]["handoff"] for frame in sent[:2]]
    assert all(envelope["advancedBy"] == "billing-agent" for envelope in envelopes), \
        "the draft that kept the plan with the support agent never left"
    assert "userOwner" not in envelopes[0] and envelopes[1]["userOwner"] == "support-agent"
    assert envelopes[1]["status"]["source"] == "orders-db, record ORD-4100"
    assert envelopes[1]["span"] == {"traceId": "trace-ticket-4100", "spanId": "support-1"}
    ownerless, whole = (answer["result"]["task"]["status"] for answer in answers[:2])
    assert ownerless["state"] == "TASK_STATE_REJECTED"
    assert "names no owner of the customer during the transfer" in ownerless["message"]["parts"][0]["text"]
    assert whole["state"] == "TASK_STATE_INPUT_REQUIRED", "taken on: it waits at billing for a person"
    said = "\n".join(lines)
    assert "[support] not sent as a handoff: support-agent would still advance the task, so it is a tool call " \
           "wearing a handoff's clothes" in said
    notice = next(n for n, line in enumerate(lines) if line.startswith("[support] delay notice to the customer, "
                                                                        "sent by support-agent (the envelope's userOwner)"))
    assert notice > next(n for n, line in enumerate(lines) if "task task-2 state: input-required" in line)
    assert lines[-1] == ("[trace]   task task-2    billing-agent  advances the refund, linked to support-1: "
                         "the task keeps the handoff that carried it")
    kept = answers[2]["result"]["history"][0]["metadata"]["handoff"]["span"]
    assert kept == envelopes[1]["span"], "billing's task keeps the span it was handed"


def test_the_lesson_prints_every_field_of_the_contract_as_a_row_and_each_has_a_meaning():
    assert list(MEANINGS) == list(handoff.SCHEMA["properties"]), "a new field needs a row"
    lines = lesson()
    rows = [line.split()[0] for line in lines if line.startswith("  ") and line.split()[0].rstrip("*") in MEANINGS]
    required = set(handoff.SCHEMA["required"])
    assert rows == [name + ("*" if name in required else "") for name in handoff.SCHEMA["properties"]]


def send(client, message_id, envelope):
    return client.send(message_id, {"order_id": "ORD-7", "amount": 50.0},
                       metadata={"skillId": "process_refund", "handoff": envelope})


@pytest.mark.parametrize("moved, why", [
    (WHOLE._replace(advanced_by="support-agent"), "says support-agent advances the task after it, not billing-agent: "
                                                  "that is a tool call wearing a handoff's clothes"),
    (WHOLE._replace(status=None), "carries no current authoritative status"),
    (WHOLE._replace(user_owner=None), "names no owner of the customer during the transfer"),
])
def test_billing_takes_on_only_a_transfer_to_itself_with_a_status_and_an_owner_of_the_customer(client, moved, why):
    rejected = send(client, "m-1", handoff.to_wire(ENVELOPE._replace(transfer=moved)))["result"]["task"]
    assert rejected["status"]["state"] == "TASK_STATE_REJECTED"
    assert why in rejected["status"]["message"]["parts"][0]["text"] and client.refunds() == []
    done = send(client, "m-2", handoff.to_wire(ENVELOPE._replace(transfer=WHOLE)))["result"]["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert client.refunds() == ["refund of $50.00 issued for ORD-7 (ref BILL-ORD-7)"]


def test_an_envelope_that_names_no_transfer_is_judged_as_before(client):
    done = send(client, "m-1", handoff.to_wire(ENVELOPE))["result"]["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"


@pytest.mark.parametrize("change, named", [
    ({"advancedBy": 5}, "metadata.handoff.advancedBy must be a string"),
    ({"advancedBy": ""}, "metadata.handoff.advancedBy"),
    ({"userOwner": "x" * 201}, "metadata.handoff.userOwner"),
    ({"status": "charged"}, "metadata.handoff.status must be an object"),
    ({"status": {"state": "charged", "source": "db"}}, "metadata.handoff.status.asOf is missing"),
    ({"status": {"state": "s", "source": "db", "asOf": "2026-12-01T09:00:00Z", "transcript": "..."}},
     "metadata.handoff.status has an unknown field 'transcript'"),
    ({"span": {"traceId": "t", "spanId": "s\n1"}}, "metadata.handoff.span.spanId"),
    ({"span": {"traceId": "t" * 65, "spanId": "s"}}, "metadata.handoff.span.traceId"),
    ({"span": {"traceId": "t", "spanId": "s", "token": "t0k"}}, "metadata.handoff.span.token is a credential"),
    ({"span": [TRACE, OUR_SPAN]}, "metadata.handoff.span must be an object"),
])
def test_a_malformed_transfer_field_is_invalid_params_naming_it_and_makes_no_task(client, change, named):
    wire = {**handoff.to_wire(ENVELOPE._replace(transfer=WHOLE)), **change}
    error = send(client, "m-1", wire)["error"]
    assert error["code"] == -32602 and named in error["message"]
    assert client.call("ListTasks", {})["result"]["tasks"] == [] and client.refunds() == []


def test_a_transfer_survives_the_envelope_round_trip_unchanged():
    envelope = ENVELOPE._replace(transfer=WHOLE)
    assert handoff.read(handoff.to_wire(envelope)) == envelope
    assert handoff.read(handoff.to_wire(ENVELOPE)).transfer is None


def test_on_0_3_the_transfer_is_judged_and_linked_the_same_way():
    (done,) = cli_together(("--scenario", "transfer", "--wire", "0.3"))
    assert done.returncode == 0 and done.stderr == "" and "message/send" in done.stdout
    lines = done.stdout.splitlines()
    states = [answer["result"]["status"]["state"] for answer in frames(lines, "<--")[:2]]
    assert states == ["rejected", "input-required"]
    assert any(line.startswith("[support] delay notice to the customer, sent by support-agent") for line in lines)
    assert lines[-1].endswith("advances the refund, linked to support-1: the task keeps the handoff that carried it")


@pytest.mark.parametrize("kept", [None, [], "x", {"metadata": []}, {"metadata": {"handoff": "x"}},
                                  {"metadata": {"handoff": {"span": [TRACE]}}}, {"metadata": {"handoff": None}}])
def test_a_kept_message_that_carries_no_span_is_read_as_none_never_a_crash(kept):
    from peers.support.lessons.transfer import carried_span
    assert carried_span(kept) in (None, [TRACE])
    assert carried_span({"metadata": {"handoff": {"span": {"traceId": TRACE}}}}) == {"traceId": TRACE}
