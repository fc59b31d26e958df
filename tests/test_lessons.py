"""The handoff lessons (--scenario NAME) beyond approval, duplicate and authority: each
runs through the real CLI on both transports with the same frames, and ends as its
seed says it must. A lesson that stopped showing its point fails here."""
import ast
import json
import os
import re
import shutil
import subprocess
import sys

import time

import pytest

import a2a_delegation as story
from conftest import ROOT, cli, cli_once, cli_together, frames, lesson, serving
from peers import billing
from peers.a2a import wire_v10
from peers.app import PeerApp
from peers.support.calling.config import AllowEntry
from peers.support.calling.follow import Following
from peers.support.lessons import slow
from transports.network import HttpTransport
from transports.printer import FramePrinter




def test_the_outcomes_lesson_ends_each_refund_in_its_own_named_variant_then_prints_the_legend():
    done, lines = lesson("outcomes")
    assert done.returncode == 0 and done.stderr == "", done.stderr
    states = [answer["result"].get("task", answer["result"])["status"]["state"] for answer in frames(lines, "<--")]
    assert states == ["TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_REJECTED",
                      "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_CANCELED"]
    failed = frames(lines, "<--")[1]["result"]["task"]["status"]["message"]["parts"][1]["data"]
    assert failed == {"retrySafe": True, "effectsLanded": []}, "a failure says as data what a retry would do"
    said = "\n".join(lines)
    assert "[as data: retry is safe; effects landed: none] -> escalating to a human" in said
    assert '[support] rejected (terminal): "billing-agent" says "ORD-42 was charged $42.00; a refund of $420.00 is more than that' in said
    assert "[support] approval required (interrupted): " in said and "[support] canceled (terminal)" in said
    assert [m["method"] for m in frames(lines, "-->")][-1] == "CancelTask"
    after = lines[lines.index("[support] every variant, and what the support agent does with it:") + 1:]
    legend, note = after[:after.index("")], after[after.index("") + 1:]
    assert note[0] == ("[support] seed 004 counts input required, approval required and timed out as terminal "
                       "states of a handoff; A2A calls the first two interrupted and the third active. Both are right:")
    assert "the workflow that handed the work off" in note[1] and "the task at the peer: it has not ended" in note[2]
    assert [line.split("->")[0].strip() for line in legend] == [
        "terminal:", "completed", "failed", "rejected", "referred", "needs evidence", "canceled", "interrupted:",
        "input-required",
        "approval required", "auth-required", "active:", "working", "timed out", "no task:", "not delegated"]
    assert sum("refund of $" in line and "issued" in line for line in lines if line.startswith("[support] trusted")) == 1


def test_the_outcomes_lesson_speaks_0_3_too():
    done = cli_once("--scenario", "outcomes", "--wire", "0.3")
    assert done.returncode == 0 and done.stderr == ""
    for variant in ("failed (terminal)", "rejected (terminal)", "approval required (interrupted)", "canceled (terminal)"):
        assert f"[support] {variant}" in done.stdout


def test_the_slow_lesson_finds_the_task_after_its_timeout_instead_of_retrying():
    done, lines = lesson("slow")
    assert done.returncode == 0, done.stderr
    assert "no reply within 0.5s (read timeout)" in done.stderr, "the timeout is reported as the failure it is"
    sent = [m["method"] for m in frames(lines, "-->")]
    assert sent[:2] == ["SendMessage", "ListTasks"] and set(sent[2:]) == {"GetTask"}, "no second SendMessage"
    found = frames(lines, "<--")[0]["result"]["tasks"]
    assert [(t["id"], t["contextId"], t["status"]["state"]) for t in found] == [
        ("task-1", "ticket-8800", "TASK_STATE_WORKING")], "the peer went on after we stopped waiting"
    assert frames(lines, "<--")[-1]["result"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert lines[-1].startswith("[support] task task-1 ended completed while nobody waited: nothing to retry")


def test_the_slow_lesson_on_0_3_resends_the_same_message_and_gets_the_same_task():
    done = cli_once("--scenario", "slow", "--wire", "0.3")
    sent = [json.loads(line[4:]) for line in done.stdout.splitlines() if line.startswith("--> {")]
    sends = [m["params"]["message"]["messageId"] for m in sent if m["method"] == "message/send"]
    assert sends == ["msg-1", "msg-1"] and done.returncode == 0
    assert "ended completed while nobody waited" in done.stdout


def test_the_slow_lesson_under_no_wait_follows_the_task_it_was_named_instead_of_looking_for_it():
    done = cli("--scenario", "slow", "--no-wait")
    sent = [json.loads(line[4:])["method"] for line in done.stdout.splitlines() if line.startswith("--> {")]
    assert done.returncode == 0 and sent[0] == "SendMessage" and set(sent[1:]) == {"GetTask"}, sent
    assert "ListTasks" not in sent and done.stdout.splitlines()[-1].startswith(
        "[support] task task-1 ended completed while nobody waited"), done.stdout[-600:]


def test_the_crash_lesson_whose_billing_answers_instead_of_dying_says_so_and_ends_at_once():
    """--push: billing's own process refuses our loopback webhook, so it answers and never dies."""
    done = cli("--scenario", "crash", "--push")
    assert "Traceback" not in done.stderr and done.returncode == 1
    assert done.stdout.splitlines()[-1] == "[support] billing answered (above), so it never reached the moment it " \
        "dies, after the refund and before the answer: this lesson cannot be shown this way"
    assert "billing exited" not in done.stdout, "nothing waited for a death that was not coming"


def test_a_look_that_times_out_in_the_slow_lesson_says_to_look_again_and_never_sends_the_refund_anew():
    """A look (ListTasks) is lost too: the refund may have landed, so the lesson ends saying
    to look again, never to send it anew, and the one refund is all billing made."""
    printer = FramePrinter(HttpTransport(timeout=0.3), lambda text, frame: None)
    with serving(None, idle_timeout=2.0) as server:
        peer = billing.billing_agent(server.base_url, slow=1.0)
        app = PeerApp(peer, wire_v10, token="demo-token", log=lambda line: None)
        server.app = lambda request: (time.sleep(1.0) if b'"ListTasks"' in request.body else None) or app(request)
        endpoint = server.base_url + "/a2a"
        agent = story.SupportAgent(printer, [AllowEntry("billing-agent", endpoint)], {endpoint: "demo-token"},
                                   lambda *said, **facts: None, following=Following(patience=0.3))
        try:
            [outcome] = slow.run(agent.steps(), [server.base_url + "/.well-known/agent-card.json"])
            deadline = time.monotonic() + 5  # the refund, made while nobody waited: bounded
            while not peer.ledger.effects and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            printer.inner.close()
    assert outcome.error.startswith("looking for the task failed: no reply within 0.3s (read timeout); the refund "
                                    "may still have been made: look again, never send a new request"), outcome.error
    sent = [json.loads(frame.body)["method"] for frame in printer.frames if frame.direction == "-->" and frame.body]
    assert sent == ["SendMessage", "ListTasks"], "nothing sent anew"
    assert [effect.summary for effect in peer.ledger.effects.values()] == [
        "refund of $95.00 issued for ORD-8800 (ref BILL-ORD-8800)"], "the one refund, made while nobody heard"


@pytest.mark.parametrize("name, lacks", [("approval", "taskId"), ("auth", "auth-required state"),
                                         ("authority", "metadata"), ("bounce", "metadata"), ("evidence", "metadata"),
                                         ("slow", "contextId"), ("versions", "metadata"),
                                         ("auth-schemes", "security schemes")])
def test_a_lesson_on_the_essays_wire_says_what_the_wire_lacks_and_how_to_run_it_and_exits_2(name, lacks):
    done = cli_once("--scenario", name, "--wire", "essay")
    assert "Traceback" not in done.stderr and done.returncode == 2, done.stderr[-300:]
    assert f"warning: [support] the essay's tasks/send has no {lacks}" in done.stderr
    assert "run with --wire 1.0 or --wire 0.3" in done.stderr


def test_the_in_process_shim_keeps_a_deadline_only_when_given_one_and_the_peer_finishes_anyway():
    import threading
    import time

    from transports.base import HttpResponse
    from transports.errors import TransportError
    from transports.inprocess import InProcessTransport
    seen, finished = [], threading.Event()

    def slow_app(request):
        seen.append(threading.current_thread())
        time.sleep(0.3)
        finished.set()
        return HttpResponse(200, {}, b"{}")
    with pytest.raises(TransportError) as raised:
        InProcessTransport({"https://x.example": slow_app}, timeout=0.05).get("https://x.example/c", {})
    assert raised.value.timed_out and raised.value.sent and "no reply within 0.05s" in str(raised.value)
    assert finished.wait(2), "the peer finished its work after the caller stopped waiting"
    assert InProcessTransport({"https://x.example": slow_app}).get("https://x.example/c", {}).status == 200
    assert seen[-1] is threading.current_thread(), "without a deadline the app runs in the caller's thread"


def test_the_auth_lesson_continues_the_same_task_once_the_step_up_token_is_in_authorization():
    done, lines = lesson("auth")
    assert done.returncode == 0 and done.stderr == "", done.stderr
    answers = frames(lines, "<--")
    assert answers[0]["result"]["task"]["status"]["state"] == "TASK_STATE_AUTH_REQUIRED"
    assert answers[0]["result"]["task"]["status"]["message"]["parts"][1]["data"] == {
        "credential": {"scheme": "bearer", "scope": "refunds:large"}}
    refused = answers[1]["error"]
    assert refused["code"] == -32043, "the ordinary token does not release it: permission denied, not bad params"
    assert refused["data"][0]["reason"] == "PERMISSION_DENIED" and "nothing was done" in refused["message"]
    finished = answers[2]["result"]["task"]
    assert (finished["id"], finished["status"]["state"]) == ("task-1", "TASK_STATE_COMPLETED")
    sent = frames(lines, "-->")
    assert [m["params"]["message"].get("taskId") for m in sent] == [None, "task-1", "task-1"]
    assert [m["params"]["message"]["parts"] for m in sent[1:]] == [
        [{"text": "continuing with the credential asked for (in Authorization)"}]] * 2, "no credential in a message"


def test_the_auth_lesson_shows_both_tokens_only_masked():
    done = cli("--scenario", "auth", "--verbose")
    shown = re.findall(r"Authorization: Bearer (\*{4}#[0-9a-f]{4})", done.stdout)
    assert len(shown) == 3, "the card fetch sends none; three POSTs do"
    assert shown[0] == shown[1] != shown[2], "the step-up is another credential, and the fingerprints say so"
    assert not re.search(r"Bearer (?!\*\*\*\*)", done.stdout), "no token value is ever printed"
    assert "another credential than the first" in cli_once("--scenario", "auth").stdout


def step_up_client(carrier_server=None):
    from peers import billing
    from peers.app import PeerApp
    from peers.a2a import wire_v10
    from transports.inprocess import InProcessTransport
    peer = billing.billing_agent(step_up_above=1000.0)
    app = PeerApp(peer, wire_v10, token="t0k", step_ups={"up-t0k": billing.STEP_UP_SCOPE})
    transport = InProcessTransport({billing.BASE_URL: app})

    def call(method, params, token="t0k"):
        headers = {"Content-Type": "application/json", "A2A-Version": "1.0", "Authorization": f"Bearer {token}"}
        frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
        response = transport.post(billing.BASE_URL + "/a2a", frame, headers)
        return response.status, json.loads(response.body)
    return peer, call


def message(message_id, parts, **fields):
    return {"message": {"messageId": message_id, "role": "ROLE_USER", "parts": parts,
                        "metadata": {"skillId": "process_refund"}, **fields}}


def test_a_step_up_token_is_the_same_caller_and_only_it_releases_the_paused_refund():
    peer, call = step_up_client()
    _, paused = call("SendMessage", message("m-1", [{"data": {"order_id": "ORD-1", "amount": 2000}}]))
    task = paused["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_AUTH_REQUIRED" and peer.ledger.effects
    # Neither a token in the message nor a made-up one releases it; a stranger's token is a 401.
    smuggled = [{"data": {"credential": {"scheme": "bearer", "scope": "refunds:large", "token": "up-t0k"}}}]
    assert call("SendMessage", message("m-2", smuggled, taskId=task["id"]))[1]["error"]["code"] == -32043
    assert call("SendMessage", message("m-3", [{"text": "go"}], taskId=task["id"]), token="up-t0kX")[0] == 401
    assert call("GetTask", {"id": task["id"]}, token="up-t0k")[1]["result"]["status"]["state"] == "TASK_STATE_AUTH_REQUIRED"
    _, done = call("SendMessage", message("m-4", [{"text": "go"}], taskId=task["id"]), token="up-t0k")
    assert done["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert [e.summary for e in peer.ledger.effects.values()] == ["refund of $2,000.00 issued for ORD-1 (ref BILL-ORD-1)"]
    # Meanwhile the same order asked again got the paused task's claim, not a second refund.
    _, again = call("SendMessage", message("m-5", [{"data": {"order_id": "ORD-1", "amount": 2000}}]))
    assert again["result"]["task"]["id"] == task["id"]


def test_while_a_task_waits_for_its_step_up_it_holds_its_order():
    peer, call = step_up_client()
    task = call("SendMessage", message("m-1", [{"data": {"order_id": "ORD-1", "amount": 2000}}]))[1]["result"]["task"]
    held = call("SendMessage", message("m-2", [{"data": {"order_id": "ORD-1", "amount": 2000}}]))[1]["result"]["task"]
    assert held["id"] == task["id"] and held["status"]["state"] == "TASK_STATE_AUTH_REQUIRED", "the waiting task"
    other = call("SendMessage", message("m-3", [{"data": {"order_id": "ORD-1", "amount": 1500}}]))[1]["result"]["task"]
    assert other["status"]["state"] == "TASK_STATE_REJECTED" and f"task {task['id']} is paused" in json.dumps(other)


def test_a_task_paused_for_a_step_up_can_be_canceled_and_then_releases_its_claim():
    peer, call = step_up_client()
    task = call("SendMessage", message("m-1", [{"data": {"order_id": "ORD-2", "amount": 1500}}]))[1]["result"]["task"]
    assert call("CancelTask", {"id": task["id"]})[1]["result"]["status"]["state"] == "TASK_STATE_CANCELED"
    assert peer.ledger.effects == {}, "nothing was done, so nothing is claimed"
    gone = call("SendMessage", message("m-2", [{"text": "go"}], taskId=task["id"]), token="up-t0k")[1]
    assert gone["error"]["code"] == -32004


def test_the_bindings_lesson_on_the_essays_wire_or_0_3_sends_the_learner_to_the_one_wire_showing_both():
    essay, v03 = cli_together(("--scenario", "bindings", "--wire", "essay"), ("--scenario", "bindings", "--wire", "0.3"))
    assert "has no second binding (A2A 1.0 cards list their interfaces): run with --wire 1.0 (0.3's" in essay.stderr
    assert "--wire 0.3" not in essay.stderr and "Traceback" not in essay.stderr + v03.stderr
    assert "only the JSONRPC half can be shown (a card listing both, as billing's 1.0 card does, shows both: " \
           "--wire 1.0)" in v03.stderr


def test_the_duplicate_and_outcomes_lessons_on_the_essays_wire_claim_no_messageid_and_say_the_ending_they_lack():
    duplicate, outcomes = cli_together(("--scenario", "duplicate", "--wire", "essay"),
                                       ("--scenario", "outcomes", "--wire", "essay"))
    assert duplicate.returncode == 0 and "messageId" not in "".join(
        line for line in duplicate.stdout.splitlines() if not line.startswith("[support] suppose"))
    assert "the same refund again (the essay's wire has no messageId: billing knows it by its order)" in duplicate.stdout
    assert "the canceled ending needs --wire 1.0 or --wire 0.3" in outcomes.stderr and "Traceback" not in outcomes.stderr
    assert "supply what it asks as the next turn" not in outcomes.stdout, "the legend says what this wire allows"
    assert outcomes.stdout.count("escalating to a human: tasks/send has no taskId") == 4  # the paused refund, 3 rows


def test_the_contract_lesson_on_the_essays_wire_says_the_contract_is_the_support_agents_own_copy():
    done = cli_once("--scenario", "contract", "--wire", "essay")
    assert done.returncode == 0 and "Traceback" not in done.stderr
    assert "billing's card publishes no contract for process_refund (the essay's card has no place for one)" in done.stdout
    assert "card publishes process_refund's input" not in done.stdout and "the card's contract" not in done.stdout
    assert done.stdout.count("checked against the support agent's copy of billing's contract first") == 3


def test_the_contract_lesson_stops_three_broken_payloads_before_any_frame_and_billing_checks_again():
    done, lines = lesson("contract")
    assert done.returncode == 0
    said = "\n".join(lines)
    assert "(urn:a2a-delegation-workbench:skill-input-schema:v1): fields ['amount', 'order_id']" in said
    assert ("(urn:a2a-delegation-workbench:skill-results:v1): completed, failed, rejected, input-required, "
            "auth-required, canceled") in said
    refused = [line for line in done.stdout.splitlines() if "not sent: the payload breaks" in line]
    assert done.stderr == "", "the lesson's point goes to stdout: `> out.txt` keeps it"
    assert [line.rsplit(": ", 1)[1] for line in refused] == [
        "payload.amount is missing", "payload.amount must be a number", "payload.amount must be more than 0"]
    sent = frames(lines, "-->")
    assert len(sent) == 2, "the three broken payloads sent nothing; the careless client and the valid one did"
    assert frames(lines, "<--")[0]["error"]["code"] == -32602 and "input.amount is missing" in frames(lines, "<--")[0]["error"]["message"]
    assert frames(lines, "<--")[1]["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


def test_the_versions_lesson_reads_the_supported_versions_from_the_error_and_hands_off_in_one_both_speak():
    for wire in ("1.0", "0.3"):
        done, lines = lesson("versions", "--wire", wire)
        assert done.returncode == 0, done.stderr
        contracts = [m["params"]["message"]["metadata"]["handoff"]["contract"] for m in frames(lines, "-->")]
        assert contracts == ["refund-handoff/2", "refund-handoff/1"]
        refusal, answer = frames(lines, "<--")
        assert refusal["error"]["code"] == -32602 and "supports refund-handoff/1" in refusal["error"]["message"]
        assert answer["result"].get("task", answer["result"])["status"]["state"] in ("TASK_STATE_COMPLETED", "completed")


@pytest.mark.parametrize("data, named", [
    ([{"metadata": {"supportedContracts": "refund-handoff/1 refund-handoff/0"}}], ["refund-handoff/1", "refund-handoff/0"]),
    ({"supportedContracts": "refund-handoff/1"}, ["refund-handoff/1"]),
    (None, None), ([], None), ([None], None), ("refund-handoff/1", None), ({"supportedContracts": ["x"]}, None),
    ({"supportedContracts": "a b c d e f g h i j k"}, None),  # more than ten: not a version list
    ({"supportedContracts": "x" * 100}, None), ({"supportedContracts": "\x1b[2Kv1"}, None),
    ([{"metadata": [1]}], None), ({"supportedContracts": {"$ne": 1}}, None),
])
def test_a_peers_list_of_versions_is_read_only_when_it_is_one(data, named):
    from peers.support.lessons.versions import supported_by
    assert supported_by(data) == named


@pytest.mark.parametrize("results", [[], "x", {"done": "y"}, {"completed": 5}, {"completed": "x" * 400}, 0])
def test_a_card_whose_result_variants_cannot_be_read_is_refused_naming_them(results):
    from peers import billing
    from peers.a2a import wire_v10
    from peers.a2a.fields import WireError
    document = json.loads(json.dumps(wire_v10.card_to_wire(billing.billing_agent().card)))
    extension = document["capabilities"]["extensions"][1]
    assert extension["uri"] == "urn:a2a-delegation-workbench:skill-results:v1"
    extension["params"]["process_refund"] = results
    with pytest.raises(WireError, match="the result variants of 'process_refund'"):
        wire_v10.card_from_wire(document)


def test_the_remote_as_local_pipeline_calls_run_on_both_stages_and_only_the_remote_one_makes_frames():
    done, lines = lesson("remote-as-local")
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert [line for line in lines if line.startswith("[pipeline] stage ") and ".run(" in line] == [
        '[pipeline] stage 1: triage.run({"ticket": "Order ORD-3300 arrived broken. I\'d like my money back, please."})',
        '[pipeline] stage 2: billing-agent.run({"order_id": "ORD-3300", "amount": 180.0})']
    first_frame = next(n for n, line in enumerate(lines) if line.startswith("--> {"))
    assert first_frame > lines.index("[pipeline] stage 1 ended completed"), "stage one crossed nothing"
    sent = frames(lines, "-->")
    assert len(sent) == 1 and sent[0]["params"]["input"] == {"order_id": "ORD-3300", "amount": 180.0}, \
        "stage one's data is stage two's payload (on the essay's wire, by default)"


def test_the_remote_and_local_agents_answer_the_same_call_with_a_task():
    from peers.support.lessons.remote_as_local import triage
    from peers.support.lessons.stages import LocalAgent
    agent = LocalAgent("triage", triage)
    done, refused = agent.run({"ticket": "about ORD-42"}), agent.run({"ticket": "no order here"})
    assert (done.state.value, [p.data for p in done.artifacts[0].parts][1]) == ("completed", {"order_id": "ORD-42", "amount": 42.0})
    assert refused.lifecycle[-1].value == "rejected" and refused.id == "triage-task-2"


def test_the_bounce_lesson_is_stopped_by_the_hop_limit_naming_who_owns_the_decision():
    done, lines = lesson("bounce")
    assert done.returncode == 0 and done.stderr == "", done.stderr
    hops = [m["params"]["message"]["metadata"]["handoff"]["hops"] for m in frames(lines, "-->")]
    assert hops == [["support-agent"], ["support-agent", "billing-agent", "disputes-agent"]]
    first, last = (answer["result"]["task"] for answer in frames(lines, "<--"))
    assert first["status"]["message"]["parts"][1]["data"] == {"referTo": "disputes-agent"}
    assert last["status"]["state"] == "TASK_STATE_REJECTED"
    assert "its limit; support-agent (the customer's owner) owns this decision" in last["status"]["message"]["parts"][0]["text"]
    assert "[support] disputes-agent refers it to billing-agent" in "\n".join(lines)
    assert lines[-1].startswith("[support] the support agent owns this decision")


@pytest.mark.parametrize("asked", [{"scheme": "basic", "scope": "refunds:large"}, {"scheme": "bearer"},
                                   {"scheme": "bearer", "scope": "x y"}, {"scheme": "bearer", "scope": "s", "token": "t"},
                                   ["bearer"], "bearer", None])
def test_a_credential_request_the_support_agent_cannot_read_is_never_looked_up(asked):
    from peers.a2a.schema import check
    from peers.support.lessons.auth import ASKED
    assert check(asked, ASKED, "asked") is not None


def test_the_evidence_lesson_refreshes_the_stale_fact_and_never_promotes_the_inference():
    import re
    runs = [cli("--scenario", "evidence", *carrier) for carrier in ([], ["--transport", "http"])]
    when = re.compile(r"20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z")
    shown = [[when.sub("<time>", line) for line in done.stdout.splitlines() if not line.startswith("[transport]")]
             for done in runs]
    assert shown[0] == shown[1], "the same frames on both transports, bar the clock"
    lines = runs[0].stdout.splitlines()
    sends = [m for m in frames(lines, "-->") if m["method"] == "SendMessage"]
    answers = [a for a in frames(lines, "<--") if "task" in a.get("result", {})]
    assert [a["result"]["task"]["status"]["state"] for a in answers] == [
        "TASK_STATE_REJECTED", "TASK_STATE_REJECTED", "TASK_STATE_COMPLETED"]
    assert "not within the last 15 minutes (or in the future): refresh it" in json.dumps(answers[0])
    assert "only inferred in the handoff's evidence" in json.dumps(answers[1])
    final = sends[-1]["params"]["message"]["metadata"]["handoff"]["evidence"]
    assert [(c["class"], c["source"]["system"]) for c in final] == [
        ("observed", "orders-tool"), ("reported", "tickets"), ("inferred", "triage-agent")], "no class changed"
    methods = [m["method"] for m in frames(lines, "-->")]
    assert methods.index("tools/call") < len(methods) - 1 and methods[-1] == "SendMessage", "refreshed, then sent"
    assert runs[0].returncode == 0
    # What it says it does with each rejection is what it then does: refresh and hand off, not escalate.
    handled = [line for line in lines if line.startswith("[support] needs evidence (terminal): ")]
    assert len(handled) == 2 and all(line.endswith("refresh it from its record, then hand off again (a new task)")
                                     for line in handled)
    assert "escalating to a human" not in runs[0].stdout
    needed = [a["result"]["task"]["status"]["message"]["parts"][1]["data"]["needsEvidence"] for a in answers[:2]]
    assert needed == [{"claim": "charged", "subject": "ORD-3300", "klass": "observed", "maxAgeSeconds": 900}] * 2


def test_a_rejection_that_no_fresh_observation_would_settle_still_goes_to_a_person():
    from peers.support.calling.outcomes import Variant, variant_of
    from peers.a2a import wire_v10
    peer, send = evidence_client()
    task = send("m-1", 50.0, [claim(value=49.99)])["result"]["task"]
    assert "needsEvidence" not in json.dumps(task), "observed and fresh, but short: not a refresh's to fix"
    assert variant_of(wire_v10.task_from_wire(task)) is Variant.REJECTED


def evidence_client():
    from peers import billing
    from peers.app import PeerApp
    from peers.a2a import wire_v10
    from transports.inprocess import InProcessTransport
    peer = billing.billing_agent()
    transport = InProcessTransport({billing.BASE_URL: PeerApp(peer, wire_v10, token="t0k")})

    def send(message_id, amount, claims):
        from peers.contracts import handoff
        envelope = handoff.to_wire(handoff.Envelope("refund ORD-1", (handoff.Permit("refund", 500.0, "USD"),),
                                                    "2099-01-01T00:00:00Z", "support-agent"))
        envelope["evidence"] = claims
        params = message(message_id, [{"data": {"order_id": "ORD-1", "amount": amount}}])
        params["message"]["metadata"]["handoff"] = envelope
        headers = {"Content-Type": "application/json", "A2A-Version": "1.0", "Authorization": "Bearer t0k"}
        frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params}).encode()
        return json.loads(transport.post(billing.BASE_URL + "/a2a", frame, headers).body)
    return peer, send


def claim(**change):
    from peers.contracts.evidence import utc_second
    base = {"claim": "charged", "subject": "ORD-1", "value": 50.0, "class": "observed",
            "source": {"system": "orders", "recordId": "ORD-1", "retrieve": "lookup"}, "retrievedAt": utc_second()}
    return {**base, **change}


@pytest.mark.parametrize("changes, why", [
    ([{"row": {"order_id": "ORD-1", "charged": 50}}], "has an unknown field 'row'"),  # a copied row
    ([{"class": "fact"}], "evidence[0].class"),
    ([{"source": {"system": "orders", "recordId": "ORD-1", "retrieve": "lookup", "rows": []}}], "unknown field 'rows'"),
    ([{"retrievedAt": "yesterday"}], "evidence[0].retrievedAt"),
    ([{"value": "50"}], "evidence[0].value must be a number"),
    ([{"value": [50]}], "evidence[0].value must be a number"),
])
def test_evidence_that_is_not_a_classed_dated_reference_is_refused_before_any_effect(changes, why):
    peer, send = evidence_client()
    error = send("m-1", 50.0, [claim(**change) for change in changes])["error"]
    assert error["code"] == -32602 and why in error["message"] and peer.ledger.effects == {}


@pytest.mark.parametrize("changes, why", [  # each claim made when the test runs: "fresh" is now
    ([], None),
    ([{}], None),
    ([{"retrievedAt": "2020-01-01T00:00:00Z"}], "not within the last 15 minutes"),
    ([{"retrievedAt": "2099-01-01T00:00:00Z"}], "not within the last 15 minutes"),  # dated in the future
    ([{"class": "inferred"}], "only inferred"),
    ([{"class": "reported"}, {"class": "inferred"}], "only inferred and reported"),
    ([{"value": 49.99}], "less than $50.00"),
    ([{"subject": "ORD-2"}], "says nothing of what ORD-1 was charged"),
    ([{"claim": "owed"}], "says nothing of what ORD-1 was charged"),
])
def test_billing_refunds_only_what_an_observed_fresh_charge_covers(changes, why):
    peer, send = evidence_client()
    task = send("m-1", 50.0, [claim(**change) for change in changes])["result"]["task"]
    if why is None:
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    else:
        assert task["status"]["state"] == "TASK_STATE_REJECTED" and why in task["status"]["message"]["parts"][0]["text"]
        assert peer.ledger.effects == {}


@pytest.mark.parametrize("answer, state", [("y\n", "TASK_STATE_COMPLETED"), ("yes\n", "TASK_STATE_COMPLETED"),
                                           ("n\n", "TASK_STATE_CANCELED"), ("", "TASK_STATE_CANCELED"),
                                           ("maybe\n", "TASK_STATE_CANCELED")])
def test_with_interactive_the_person_at_the_terminal_decides_the_paused_refund(answer, state):
    done = cli("--scenario", "approval", "--interactive", stdin=answer)
    assert done.returncode == 0 and "Traceback" not in done.stderr
    assert "[person] approve a refund of $6,200.00 for ORD-4100 (USD)? [y/N]" in done.stdout
    answers = frames(done.stdout.splitlines(), "<--")
    final = answers[-1]["result"].get("task", answers[-1]["result"])
    assert (final["id"], final["status"]["state"]) == ("task-1", state)
    assert len(answers) == 2, "one question, one answer carried out: no scripted extra turns"


def test_a_reader_that_stops_reading_ends_the_run_quietly_not_with_a_traceback():
    import subprocess
    import sys
    from conftest import ROOT
    import os
    buffered = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}
    for args, env in (([], buffered), ([], os.environ), (["--scenario", "duplicate", "--transport", "http"], buffered)):
        run = subprocess.Popen([sys.executable, str(ROOT / "a2a_delegation.py"), *args],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        run.stdout.close()  # before its first line: whatever it writes meets a closed pipe
        _, err = run.communicate(timeout=30)
        assert run.returncode == 141 and "Traceback" not in err, err


def test_the_diagram_draws_every_turn_of_a_task_as_that_task(tmp_path):
    drawn = tmp_path / "approval.mmd"
    assert cli("--scenario", "approval", "--diagram", str(drawn)).returncode == 0
    arrows = [line.strip() for line in drawn.read_text().splitlines()
              if ("SendMessage" in line or "task-1" in line) and not line.strip().startswith("Note")]
    assert arrows == ["L0->>L3: SendMessage (id 1)", "L3-->>L0: task-1 input-required (id 1)",
                      "L0->>L3: SendMessage (id 2): next turn of task-1", "L0->>L3: SendMessage (id 3): next turn of task-1",
                      "L0->>L3: SendMessage (id 4): next turn of task-1",
                      "L3-->>L0: task-1 completed (id 4)", "L0->>L3: SendMessage (id 5): next turn of task-1"]


ENDINGS = {"contract": "trusted result (from billing-agent): refund of $180.00",
           "outcomes": "[support] seed 004 counts input required, approval required and timed out as terminal",
           "approval": "[support] what billing checked: the approval is exactly its proposal, signed",
           "auth": "trusted result (from billing-agent): refund of $2,400.00",
           "duplicate": "[support] four deliveries: 3 answers are task task-1 itself; task-2 (rejected)",
           "slow": "ended completed while nobody waited", "authority": "refund of $180.00 issued for ORD-6200",
           "versions": "refund of $120.00 issued for ORD-7300", "evidence": "refund of $180.00 issued for ORD-3300",
           "bounce": "[support] the support agent owns this decision",
           "remote-as-local": "[pipeline] the pipeline called run() on each"}


@pytest.fixture(scope="module")
def on_0_3():
    """Every handoff lesson on 0.3, run side by side (each mostly waits on billing's timings)."""
    return dict(zip(ENDINGS, cli_together(*[("--scenario", name, "--wire", "0.3") for name in ENDINGS])))


@pytest.mark.parametrize("name", list(ENDINGS))
def test_every_handoff_lesson_speaks_0_3_too_and_reaches_its_end(on_0_3, name):
    done = on_0_3[name]
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "message/send" in done.stdout and "SendMessage" not in done.stdout
    last = [line for line in done.stdout.splitlines() if line.startswith("[")][-1]
    assert ENDINGS[name] in last, last


# -- what a hostile tester found, kept ----------------------------------------------------

def test_a_refund_above_the_approval_limit_needs_the_step_up_as_well_as_the_approval():
    peer, call = step_up_client()
    task = call("SendMessage", message("m-1", [{"data": {"order_id": "ORD-3", "amount": 6000}}]))[1]["result"]["task"]
    proposal = task["status"]["message"]["parts"][1]["data"]
    _, after = call("SendMessage", message("m-2", [{"data": proposal}], taskId=task["id"]))
    assert after["result"]["task"]["status"]["state"] == "TASK_STATE_AUTH_REQUIRED", "approved, not yet proven"
    assert [e.summary for e in peer.ledger.effects.values()] == ["nothing yet: the task waits for its caller"]
    _, done = call("SendMessage", message("m-3", [{"text": "go"}], taskId=task["id"]), token="up-t0k")
    assert done["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


def test_a_step_up_token_sent_with_the_request_itself_needs_no_second_turn():
    _, call = step_up_client()
    _, done = call("SendMessage", message("m-1", [{"data": {"order_id": "ORD-4", "amount": 2400}}]), token="up-t0k")
    assert done["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


def test_a_messageid_reused_to_name_another_task_is_refused_not_answered_with_the_first():
    _, call = step_up_client()
    first, second = (call("SendMessage", message(f"m-{n}", [{"data": {"order_id": f"ORD-{n}", "amount": 2000}}]))[1]
                     ["result"]["task"] for n in (1, 2))
    go = [{"text": "go"}]
    assert call("SendMessage", message("f-1", go, taskId=first["id"]), token="up-t0k")[1]["result"]["task"]["id"] == first["id"]
    reused = call("SendMessage", message("f-1", go, taskId=second["id"]), token="up-t0k")[1]
    assert reused["error"]["code"] == -32602 and "already used for a different message" in reused["error"]["message"]
    assert call("GetTask", {"id": second["id"]})[1]["result"]["status"]["state"] == "TASK_STATE_AUTH_REQUIRED"


def test_another_caller_asking_for_a_held_refund_is_not_turned_away_by_the_hold():
    from peers import billing
    from peers.app import PeerApp
    from peers.a2a import wire_v10
    from transports.inprocess import InProcessTransport
    peer = billing.billing_agent()
    apps = [InProcessTransport({billing.BASE_URL: PeerApp(peer, wire_v10, token=token)}) for token in ("a", "b")]

    def send(transport, token):
        frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": message(
            "m-1", [{"data": {"order_id": "ORD-9", "amount": 6000}}])}).encode()
        headers = {"Content-Type": "application/json", "A2A-Version": "1.0", "Authorization": f"Bearer {token}"}
        return json.loads(transport.post(billing.BASE_URL + "/a2a", frame, headers).body)["result"]["task"]
    assert send(apps[0], "a")["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    other = send(apps[1], "b")  # a hold binds its own caller only (peers/pause.py): b's request is judged afresh
    assert other["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", "paused for b's own approval, not refused"


@pytest.mark.parametrize("amount", [5000.000000001, 4999.999999999, 180.000000001, 0.005])
def test_an_amount_that_is_not_whole_cents_is_refused_before_any_effect(amount):
    from conftest import Client
    client = Client("in-process")
    assert client.send("m-1", {"order_id": "ORD-1", "amount": amount})["error"]["code"] == -32602
    assert client.refunds() == []


def test_a_schema_step_too_small_to_divide_by_is_a_problem_not_a_crash():
    from peers.a2a.schema import check
    assert "multiple of" in check(1e300, {"type": "number", "multipleOf": 1e-300})


def test_observed_claims_that_disagree_about_a_charge_refund_nothing():
    peer, send = evidence_client()
    task = send("m-1", 50.0, [claim(), claim(value=4000.0, source={"system": "scratchpad", "recordId": "x",
                                                                     "retrieve": "trust me"})])["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_REJECTED" and "disagree ($50.00, $4,000.00)" in json.dumps(task)


@pytest.mark.parametrize("data, named", [({"referTo": "disputes-agent"}, "disputes-agent"), ({"referTo": ["x"]}, None),
                                         ({"referTo": {"a": 1}}, None), ({"referTo": ""}, None), ({"referTo": "x" * 65}, None),
                                         ({"referTo": "a\x1b[2J"}, None), ("referTo", None), (None, None)])
def test_only_a_short_plain_name_is_taken_as_a_referral(data, named):
    from peers.a2a.model import Task, TaskState
    from peers.support.calling.outcomes import Variant, referred_to, variant_of
    task = Task("t").advance(TaskState.REJECTED, data=data)
    assert referred_to(task) == named
    assert variant_of(task) is (Variant.REFERRED if named else Variant.REJECTED)


def test_no_control_character_from_anywhere_reaches_the_terminal_raw():
    import io
    from peers.support.output import Console
    out = io.StringIO()
    Console(out=out, colour=False).say("[support] task \x1b[2J\rforged\u202e line\nnext")
    assert out.getvalue() == "[support] task \\x1b[2J\\x0dforged\\u202e line\nnext\n"


def test_a_trace_that_cannot_be_written_names_its_file_and_fails_the_run():
    import os
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here to fill a disk with")
    done = cli("--trace", "/dev/full", "--quiet")
    assert done.returncode == 2 and "error: could not write /dev/full: No space left on device" in done.stderr


def test_trace_and_diagram_on_one_file_are_refused_before_the_run(tmp_path):
    same = tmp_path / "run.svg"
    done = cli("--trace", str(same), "--diagram", str(same))
    assert done.returncode == 2 and "--trace and --diagram need two different files" in done.stderr
    assert not same.exists() and done.stdout == ""


def test_a_request_a_lesson_would_ignore_is_warned_about():
    done = cli("--scenario", "duplicate", "--request", "Please refund $180 on order ORD-3300")
    assert "warning: --request does nothing with --scenario duplicate" in done.stderr


@pytest.mark.parametrize("name", ["approval", "auth", "contract", "outcomes", "remote-as-local", "slow", "versions"])
def test_a_lesson_whose_card_cannot_be_had_ends_with_that_one_line(name, tmp_path, closed_port):
    registry = tmp_path / "registry.json"
    registry.write_text(json.dumps({"peers": [{"cardUrl": f"http://127.0.0.1:{closed_port}/.well-known/agent-card.json"}]}))
    done = cli("--scenario", name, "--registry", str(registry), "--transport", "http")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert [line for line in done.stderr.splitlines() if line.startswith("error:")] == [
        f"error: http://127.0.0.1:{closed_port}/.well-known/agent-card.json: card fetch failed: could not connect "
        f"to 127.0.0.1:{closed_port}: connection refused (is the peer running?); fetching a card has no effect, "
        "so a retry is safe"]


# -- a lesson is one module: its data and its run(), found where it lives -------------------

def lesson_modules():
    from peers.support.lessons import every
    return every()


def test_every_lesson_module_is_found_and_its_data_is_complete_and_plain():
    from peers import demo
    from peers.support.cli import flags
    from peers.support.lessons import Lesson, name_of
    found = {name_of(module.__name__): module for module in lesson_modules()}
    with_run = {path.stem.replace("_", "-") for path in (ROOT / "peers/support/lessons").glob("*.py")
                if any(isinstance(node, ast.FunctionDef) and node.name == "run"
                       for node in ast.parse(path.read_text()).body)}
    assert set(found) == with_run and len(found) >= 17, "a module with a run() is a lesson, and is found"
    orders = [module.LESSON.order for module in found.values()]
    assert orders == sorted(orders) and len(set(orders)) == len(orders), "teaching order: one place each"
    run_flags = {flag.name for flag in flags.FLAGS}
    for name, module in found.items():
        lesson = module.LESSON
        assert isinstance(lesson, Lesson) and callable(module.run)
        assert lesson.about and "\n" not in lesson.about and lesson.teaches.startswith(("essay: ", "seed 0"))
        assert module.__doc__.startswith(f"--scenario {name}: ") and len(module.__doc__) > 300, name
        assert set(lesson.flags) | set(lesson.needs) | set(lesson.reads) <= run_flags, name
        assert all(isinstance(why, str) and why for _, why in lesson.needs.values()), "a need says why"
        assert all(peer in demo.PEERS and set(asked) <= set(demo.SETTINGS) for peer, asked in lesson.peers.items())
        assert json.loads(json.dumps(lesson.peers)) == lesson.peers, "what a peer is asked is plain data"


def test_every_lesson_says_its_point_in_about_a_screen():
    """What a learner sees is the product: a lesson is read, not scrolled. Each prints at most 62
    lines (outcomes, the longest, is four endings and the legend of every variant); auth-schemes
    printed 106, its first host's frames again at four more, before it said that pattern once."""
    names = [line.split()[0] for line in cli_once("--list-scenarios").stdout.splitlines()]
    runs = cli_together(*[("--scenario", name) for name in names])
    assert [done.returncode for done in runs] == [0] * len(names), [done.stderr[-200:] for done in runs]
    lengths = {name: len(done.stdout.splitlines()) for name, done in zip(names, runs)}
    assert max(lengths.values()) <= 62 and lengths["auth-schemes"] <= 56, lengths


def test_list_scenarios_prints_one_line_per_lesson_in_teaching_order_as_the_readme_lists_them():
    from peers.support.lessons import name_of
    listed = [line.split()[0] for line in cli("--list-scenarios").stdout.splitlines()]
    assert listed == [name_of(module.__name__) for module in lesson_modules()]
    lessons_part = (ROOT / "README.md").read_text().split("## Lessons")[1].split("\n## ")[0]
    tabled = re.findall(r"^\| `([a-z-]+)` \| ", lessons_part, re.M)
    assert tabled == listed, "the README's table of lessons, in the same order"
    teaches = [module.LESSON.teaches.split(":")[0] for module in lesson_modules()]
    assert teaches == sorted(teaches, key=["essay", "seed 004", "seed 004's tests", "seed 000"].index)


def test_a_lessons_help_is_its_docstring_and_what_it_sets_reads_and_asks_of_the_peers():
    done = cli("--scenario", "approval", "--help")
    assert done.returncode == 0 and done.stdout.startswith("--scenario approval: a refund above billing's limit")
    assert "runs as: --scenario approval --wire 1.0 (where those flags are not given)" in done.stdout
    assert "reads --interactive: you are the person asked to approve" in done.stdout
    assert "asks of billing-agent: slow=2.0, cut_streams_after=3" in cli("--help", "--scenario=broken-stream").stdout
    assert "usage:" in cli_once("--help").stdout and "usage:" not in done.stdout


def test_a_name_that_is_not_a_lesson_is_one_line_and_nothing_is_imported_by_it():
    for name in ("turns", "stages", "broken_stream", "../flags", "os", "x" * 10_000):
        done = cli("--scenario", name)
        assert done.returncode == 2 and "is not a lesson" in done.stderr and "(--list-scenarios lists them)" in done.stderr
        assert done.stderr.count("\n") == 1 and len(done.stderr) < 200


def test_a_lesson_that_needs_tls_runs_over_https_whatever_transport_says_and_the_readme_says_which():
    from peers.support.lessons import name_of
    needing = {name_of(module.__name__): module.LESSON.needs["--transport"] for module in lesson_modules()
               if module.LESSON.needs.get("--transport", ("",))[0] == "https"}
    intro = (ROOT / "README.md").read_text().split("## Lessons")[1].split("\n| lesson |")[0]
    claim = " ".join(intro.split())
    assert "Each runs over `--transport http` too, with the same frames" in claim
    assert set(re.findall(r"but for `([a-z-]+)`, which needs TLS", claim)) == set(needing), "the README names each"
    for name, (value, why) in needing.items():
        done, lines = lesson(name)  # the same frames whatever --transport says, in-process or http
        assert done.returncode == 0 and done.stderr == "", done.stderr
        assert lines[0] == f"[support] this lesson runs with --transport {value}, whatever the command line says: {why}"
        assert f"needs: --transport {value}, whatever is given ({why})" in cli("--scenario", name, "--help").stdout


def test_crash_says_it_runs_over_http_when_told_in_process_and_the_readme_says_so():
    from peers.support.lessons import crash
    value, why = crash.LESSON.needs["--transport"]
    done = cli("--scenario", "crash", "--transport", "in-process", timeout=90)
    lines = [line for line in done.stdout.splitlines() if not line.startswith("[transport]") and line]
    assert done.returncode == 0 and value == "http", done.stderr[-800:]
    assert lines[0] == f"[support] this lesson runs with --transport http, whatever the command line says: {why}"
    assert "\n[transport] HTTP JSON-RPC over real sockets" in done.stdout, "and it does"
    assert f"needs: --transport http, whatever is given ({why})" in cli("--scenario", "crash", "--help").stdout
    claim = " ".join((ROOT / "README.md").read_text().split("## Lessons")[1].split("\n| lesson |")[0].split())
    assert "and `crash`, whose billing is a process of its own (so that it can die), which only " \
           "`--transport http` reaches" in claim


def test_a_lessons_flags_give_way_to_the_ones_given():
    done = cli("--scenario", "slow", "--timeout", "5")
    assert "no reply within" not in done.stderr, "5 seconds is long enough to wait"
    assert "[support] trusted result (from billing-agent)" in done.stdout
    assert done.stderr.splitlines()[-1] == "warning: [support] billing answered within --timeout, so no deadline " \
        "passed: this lesson has nothing to show with a timeout longer than the refund", "and the lesson says it had none"
    assert done.returncode == 2, "a lesson this run's flags cannot show (--help's exit statuses)"
    assert '"method": "message/send"' in cli_once("--scenario", "duplicate", "--wire", "0.3").stdout


TINY = '''"""--scenario tiny: a lesson written by a test, to show that a lesson is one file.

It asks billing to take a moment over each refund, speaks A2A 0.3 unless --wire says,
and delegates one refund through the trust gate, as the essay's run does. Nothing else
in the workbench names it: --list-scenarios finds it, --scenario tiny --help prints this.
"""
from peers.a2a.model import AgentCard
from peers.support.lessons import Lesson
from peers.support.lessons.turns import open_lesson

LESSON = Lesson(about="one refund, from a lesson that is one file", teaches="essay: a test of the seam",
                order=15, flags={"--wire": "0.3"}, peers={"billing-agent": {"slow": 0.01}})


def run(story, card_urls):
    card = open_lesson(story, card_urls, "A lesson in one file.")
    if not isinstance(card, AgentCard):
        return card
    return [story.delegate(card, "process_refund", {"order_id": "ORD-3300", "amount": 180.0})]
'''


def test_adding_a_lesson_is_adding_one_file(tmp_path):
    copy = tmp_path / "workbench"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".git", "__pycache__", ".pytest_cache", "*.db", ".venv", ".sdk", ".js-sdk"))
    (copy / "peers/support/lessons/tiny.py").write_text(TINY)

    def run(*args):
        return subprocess.run([sys.executable, "a2a_delegation.py", *args], cwd=copy, capture_output=True,
                              text=True, timeout=30, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    listed = [line.split()[0] for line in run("--list-scenarios").stdout.splitlines()]
    assert listed[:3] == ["signed-card", "tiny", "spoof"], "in its place in the teaching order"
    done = run("--scenario", "tiny")
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert '"method": "message/send"' in done.stdout, "the wire it sets"
    assert "[support] trusted result (from billing-agent): refund of $180.00 issued" in done.stdout
    assert run("--scenario", "tiny", "--help").stdout.startswith("--scenario tiny: a lesson written by a test")


def names_lessons(path, names):
    """Where a module keys a table by lesson names, or compares a scenario with one."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, (ast.Compare, ast.Dict, ast.Tuple, ast.List, ast.Set)):
            continue  # the names inside other nodes are looked at in these (walking every node's: 3 s)
        strings = [item.value for item in ast.walk(node) if isinstance(item, ast.Constant) and item.value in names]
        if isinstance(node, ast.Compare) and strings and "scenario" in ast.unparse(node):
            found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)[:60]}")
        elif isinstance(node, (ast.Dict, ast.Tuple, ast.List, ast.Set)) and len(set(strings)) >= 3:
            found.append(f"{path.name}:{node.lineno}: a table of lessons")  # a field called "contract" is not
    return found


def test_no_module_outside_the_lessons_keeps_a_table_of_them_and_the_demo_peers_name_none():
    from peers.support.lessons import name_of
    names = {name_of(module.__name__) for module in lesson_modules()}
    # The workbench's own modules: not the tests or lessons, nor what is installed beside it
    # (.venv, where CI puts pytest and its dependencies, .sdk, .js-sdk) or .git.
    code = [path for path in ROOT.rglob("*.py") if not {"tests", "lessons"} & set(path.relative_to(ROOT).parts)
            and not any(part.startswith(".") for part in path.relative_to(ROOT).parts)]
    assert [hit for path in code for hit in names_lessons(path, names)] == []
    demo = (ROOT / "peers/demo.py").read_text().lower()
    assert "scenario" not in demo and "lesson" not in demo, "the demo network takes settings, never a lesson"


def test_the_essays_run_loads_no_lesson():
    probe = ("import contextlib, io, sys; import a2a_delegation\n"
             "with contextlib.redirect_stdout(io.StringIO()): a2a_delegation.main([])\n"
             "print(' '.join(sorted(sys.modules)))")
    loaded = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True,
                            timeout=30).stdout.split()
    assert "a2a_delegation" in loaded and not [name for name in loaded if name.startswith("peers.support.lessons")]


def test_with_no_card_it_can_use_the_model_is_not_asked_and_the_run_says_why():
    done = cli("--scenario", "injection", "--binding", "http+json")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1] == "error: [support] no card this run could use (each said above): there " \
        "is no peer to delegate to"
    assert "the model's delegation could not be used" not in done.stderr and "[model]" not in done.stdout
