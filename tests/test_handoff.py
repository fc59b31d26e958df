"""Seed 004's envelope: a handoff carries permitted actions with limits and an expiry, a
contract version and a hop limit, and billing judges them before any effect. Real
frames through the real billing app, in process and over HTTP; hostile envelopes too."""
import json
import random

import pytest

from conftest import Client, cli
from peers.a2a import wire_v03
from peers.contracts import handoff
from transports.jsonrpc import InvalidParams

ENVELOPE = handoff.Envelope("refund ORD-7 in full", (handoff.Permit("refund", 50.0, "USD"),),
                            "2099-01-01T00:00:00Z", "support-agent")


def send(client, message_id, amount, envelope):
    return client.send(message_id, {"order_id": "ORD-7", "amount": amount},
                       metadata={"skillId": "process_refund", "handoff": envelope})


@pytest.mark.parametrize("envelope, why", [
    (ENVELOPE._replace(permitted=(handoff.Permit("refund", 49.99, "USD"),)), "permits refund up to 49.99 USD, not 50.00"),
    (ENVELOPE._replace(expires_at="2020-01-01T00:00:00Z"), "expired at 2020-01-01T00:00:00Z"),
    (ENVELOPE._replace(permitted=(handoff.Permit("refund", 50.0, "EUR"),)), "does not permit refund in USD"),
    (ENVELOPE._replace(permitted=(handoff.Permit("credit", 50.0, "USD"),)), "does not permit refund in USD"),
    (ENVELOPE._replace(hops=("a", "b", "c")), "made 3 hops (a -> b -> c), its limit; support-agent owns this decision"),
])
def test_an_envelope_that_does_not_cover_the_refund_is_rejected_before_it_and_a_good_one_still_works(client, envelope, why):
    rejected = send(client, "m-1", 50.0, handoff.to_wire(envelope))["result"]["task"]
    assert rejected["status"]["state"] == "TASK_STATE_REJECTED"
    assert why in rejected["status"]["message"]["parts"][0]["text"] and client.refunds() == []
    done = send(client, "m-2", 50.0, handoff.to_wire(ENVELOPE))["result"]["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED", "a rejection claims nothing in the ledger"
    assert client.refunds() == ["refund of $50.00 issued for ORD-7 (ref BILL-ORD-7)"]


@pytest.mark.parametrize("change, named", [
    ({"contract": "refund-handoff/2"}, "this agent supports refund-handoff/1"),
    ({"token": "t0k"}, "metadata.handoff.token is a credential: a bearer token sitting in a handoff payload is a "
                       "permission escalation with extra steps"),
    ({"expiresAt": "tomorrow"}, "metadata.handoff.expiresAt"),
    ({"permitted": []}, "metadata.handoff.permitted must hold at least 1"),
    ({"maxHops": 0}, "metadata.handoff.maxHops must be at least 1"),
    ({"hops": [{"agent": "x"}]}, "metadata.handoff.hops[0] must be a string"),
    ({"expiresAt": "\u0662\u0660\u0662\u0660-01-01T00:00:00Z"}, "metadata.handoff.expiresAt"),  # Arabic-Indic 2020
    ({"expiresAt": "\uff12\uff10\uff12\uff10-01-01T00:00:00Z"}, "metadata.handoff.expiresAt"),  # full-width 2020
    ({"expiresAt": "2099-01-01T00:00:00.5Z"}, "metadata.handoff.expiresAt"),  # to the second, or text misorders
])
def test_an_unsupported_or_malformed_envelope_is_invalid_params_naming_it_and_makes_no_task(client, change, named):
    error = send(client, "m-1", 5.0, {**handoff.to_wire(ENVELOPE), **change})["error"]
    assert error["code"] == -32602 and named in error["message"]
    assert client.call("ListTasks", {})["result"]["tasks"] == [] and client.refunds() == []


def test_the_0_3_wire_carries_the_envelope_too():
    client = Client("in-process", wire=wire_v03)
    answer = client.call("message/send", {"message": {
        "kind": "message", "messageId": "m-1", "role": "user", "parts": [{"kind": "data", "data": {
            "order_id": "ORD-7", "amount": 80.0}}], "metadata": {"skillId": "process_refund",
                                                                  "handoff": handoff.to_wire(ENVELOPE)}}},
        {"Content-Type": "application/json", "Authorization": "Bearer t0k"})["result"]
    assert answer["status"]["state"] == "rejected" and client.refunds() == []


def test_two_thousand_mutated_envelopes_are_each_admitted_rejected_or_refused_never_crashed():
    rng, valid, outcomes = random.Random(7), handoff.to_wire(ENVELOPE), set()
    hostile = [None, True, -1, 1e308, 10**40, "", "x" * 5000, [], {}, [[]], {"a": {}}, "2099-01-01T00:00:00Z"]
    for _ in range(2000):
        envelope = json.loads(json.dumps(valid))
        for _ in range(rng.randint(1, 3)):
            holder = envelope if rng.random() < 0.6 else envelope["permitted"][0] if envelope.get("permitted") \
                and isinstance(envelope["permitted"], list) and isinstance(envelope["permitted"][0], dict) else envelope
            key = rng.choice(sorted(holder) + ["extra"])
            if rng.random() < 0.2:
                holder.pop(key, None)
            else:
                holder[key] = rng.choice(hostile)
        try:
            note = handoff.refusal(handoff.read(envelope), "refund", 10.0, "USD", "2026-11-30T00:00:00Z")
            outcomes.add("admitted" if note is None else "rejected")
        except InvalidParams as refused:
            assert "\n" not in str(refused) and len(str(refused)) < 400
            outcomes.add("refused")
    assert outcomes == {"admitted", "rejected", "refused"}


def test_the_authority_lesson_admits_only_the_last_envelope_on_both_transports():
    runs = [cli("--scenario", "authority", *extra) for extra in ([], ["--transport", "http"])]
    shown = [[line for line in done.stdout.splitlines() if not line.startswith("[transport]")] for done in runs]
    assert shown[0] == shown[1] and runs[0].stderr == runs[1].stderr
    answers = [json.loads(line[4:]) for line in shown[0] if line.startswith("<-- {")]
    states = [a["result"]["task"]["status"]["state"] if "result" in a else a["error"]["code"] for a in answers]
    assert states == ["TASK_STATE_REJECTED", "TASK_STATE_REJECTED", -32602, "TASK_STATE_REJECTED",
                      "TASK_STATE_COMPLETED"], "six envelopes tried, five sent: the smuggled token never left"
    sent = [json.loads(line[4:]) for line in shown[0] if line.startswith("--> {")]
    assert len(sent) == 5 and all("t0k" not in json.dumps(m) and "token" not in m["params"]["message"]["metadata"]
                                  ["handoff"] for m in sent), "no credential in an envelope"
    said = "\n".join(shown[0])
    assert ("billing-agent: not sent: metadata.handoff.token is a credential: a bearer token sitting in a handoff "
            "payload is a permission escalation with extra steps (seed 004)") in said
    assert "unknown field 'token'" not in said
    assert runs[0].returncode == 0 and runs[0].stderr == "", "the refusals are the lesson, on stdout"
    assert sum("delegation failed: Invalid params" in line for line in shown[0]) == 1


def test_the_authority_lessons_help_counts_the_sends_it_makes():
    done = cli("--scenario", "authority", "--help")
    assert "tries the same refund six times" in done.stdout and "and sends five" in done.stdout
    assert "five times" not in done.stdout.replace("six times", "")


SECRET = "s3cr3t-t0ken-of-ours"


@pytest.mark.parametrize("envelope_extra, where", [
    ({"token": "t0k"}, "metadata.handoff.token"),
    ({"access_token": "x"}, "metadata.handoff.access_token"),
    ({"API-Key": "x"}, "metadata.handoff.API-Key"),
    ({"objective": "Bearer abc.def-123"}, "metadata.handoff.objective"),
    ({"hops": ["support-agent", SECRET]}, "metadata.handoff.hops[1]"),  # ours, whatever its member is called
])
def test_the_support_agent_puts_no_credential_in_an_envelope_and_sends_nothing(envelope_extra, where):
    import a2a_delegation as story
    from conftest import BILLING, BILLING_CARD, support_agent
    agent, printer, _ = support_agent([BILLING], wire="1.0")
    agent.credentials[f"https://elsewhere.example/a2a"] = SECRET
    card = agent.find(BILLING_CARD)
    outcome = agent.gate_then_delegate(card, story.SKILL, {"order_id": "ORD-7", "amount": 5.0},
                                       handoff={**handoff.to_wire(ENVELOPE), **envelope_extra})
    assert outcome.task is None and outcome.error.startswith(f"not sent: {where} ")
    assert "permission escalation with extra steps" in outcome.error
    assert [frame.http_method for frame in printer.frames if frame.direction == "-->"] == ["GET"], "only the card"
    assert SECRET not in outcome.error, "the reason names where the secret sits, never the secret"


@pytest.mark.parametrize("extra, where", [
    ({"evidence": [{"note": {"Authorization": "Basic dXNlcjpwYXNz"}}]}, "metadata.handoff.evidence[0].note.Authorization"),
    ({"objective": "basic dXNlcjpwYXNz"}, "metadata.handoff.objective"),
    ({"permitted": [{"action": "refund", "maxAmount": 5, "currency": "USD", "password": "x"}]},
     "metadata.handoff.permitted[0].password"),
])
def test_billing_refuses_a_raw_frame_whose_envelope_carries_a_credential_naming_the_escalation(client, extra, where):
    error = send(client, "m-1", 5.0, {**handoff.to_wire(ENVELOPE), **extra})["error"]
    assert error["code"] == -32602 and f"{where} " in error["message"]
    assert "permission escalation with extra steps" in error["message"] and "unknown field" not in error["message"]
    assert client.call("ListTasks", {})["result"]["tasks"] == [] and client.refunds() == []


@pytest.mark.parametrize("text, credential", [
    ("basic plan", False), ("Bearer bonds", False), ("Basic refund of ORD-7, in full", False),
    ("Bearer t0k", True), ("basic dXNlcjpwYTU1", True), ("Bearer eyJhbGciOiJSUzI1NiJ9.e30.sig", True),
    ("bearer abcdefghijklmnopqrstuvwxyz", True), ("BASIC dXNlcjpwYXNz", True), ("basic understanding", False),
])
def test_text_is_a_credential_when_it_reads_like_an_authorization_value_not_like_words(text, credential):
    assert (handoff.credential_in({"note": text}, "v") is not None) is credential


def test_an_objective_that_merely_starts_with_basic_is_no_credential(client):
    done = send(client, "m-1", 5.0, handoff.to_wire(ENVELOPE._replace(objective="Basic refund of ORD-7, in full")))
    assert done["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


def test_a_deep_or_huge_envelope_is_judged_in_bounded_time_without_a_crash():
    deep: object = "Bearer x"
    for _ in range(5000):
        deep = {"a": deep}
    assert handoff.credential_in(deep, "v") is None, "deeper than 32 levels carries no envelope: not walked"
    wide = {f"k{i}": [i] * 50 for i in range(2000)}
    wide["zz"] = {"token": 1}
    assert handoff.credential_in(wide, "v") in (None, "v.zz.token is a credential: " + handoff.ESCALATION)
    assert handoff.credential_in({1: {None: "x"}, "ok": [[], {}]}, "v") is None


def test_a_grant_that_expires_while_the_task_waits_for_approval_releases_nothing():
    import time
    from datetime import datetime, timedelta, timezone
    client = Client("in-process")
    soon = (datetime.now(timezone.utc) + timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    grant = handoff.to_wire(ENVELOPE._replace(permitted=(handoff.Permit("refund", 9000.0, "USD"),), expires_at=soon))
    task = send(client, "m-1", 6000.0, grant)["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    while datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ") < soon:  # at most ~1 s
        time.sleep(0.05)
    approval = task["status"]["message"]["parts"][1]["data"]
    done = client.send("m-2", approval, taskId=task["id"])["result"]["task"]
    assert done["status"]["state"] == "TASK_STATE_FAILED" and "expired" in done["status"]["message"]["parts"][0]["text"]
    assert client.refunds() == []
