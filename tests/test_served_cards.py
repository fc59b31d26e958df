"""What a card file says, the served 0.3 and 1.0 cards say (peers/card_files.py ->
peers/a2a/wire_card.py), and each demo card says what its agent does.

Spec: A2A 1.0 section 4.4 (AgentCard, AgentProvider, AgentSkill, AgentInterface). A card
file is edited in a copy of the workbench and read there by the real loader and app; a
wrong type is the file's one line, exit 2, as every card file mistake is."""
import json
import subprocess
import sys

import pytest

from test_card_files import edit_card, run_copy, workbench  # noqa: F401 (a fixture)
from peers import billing
from peers.app import PeerApp
from peers.a2a.wire_format import by_name
from transports.inprocess import InProcessTransport

EXTRAS = {"provider": {"organization": "Acme Billing", "url": "https://acme.example"},
          "documentationUrl": "https://acme.example/docs/billing", "iconUrl": "https://acme.example/billing.png",
          "tenant": "acme-eu"}
SKILL_EXTRAS = {"examples": ["refund $180 for ORD-3300"],
                "securityRequirements": [{"schemes": {"bearer": {"list": ["refunds:write"]}}}]}
SERVED = """
import json, sys
from peers import billing
from peers.app import PeerApp
from peers.a2a.wire_format import by_name
from transports.inprocess import InProcessTransport
app = PeerApp(billing.billing_agent(), by_name(sys.argv[1]))
print(InProcessTransport({billing.BASE_URL: app}).get(billing.BASE_URL + "/.well-known/agent-card.json", {}).body.decode())
"""


def served_in(copy, version):
    done = subprocess.run([sys.executable, "-c", SERVED, version], cwd=copy, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def with_extras(card):
    card.update(EXTRAS)
    card["skills"][0].update(SKILL_EXTRAS)


def test_both_wires_serve_every_field_the_card_file_gives(workbench):
    edit_card(workbench, "billing-agent", with_extras)
    v10, v03 = served_in(workbench, "1.0"), served_in(workbench, "0.3")
    for card in (v10, v03):
        assert card["provider"] == EXTRAS["provider"]
        assert (card["documentationUrl"], card["iconUrl"]) == (EXTRAS["documentationUrl"], EXTRAS["iconUrl"])
        skill = card["skills"][0]
        assert skill["examples"] == SKILL_EXTRAS["examples"]
        assert (skill["inputModes"], skill["outputModes"]) == (["application/json", "text/plain"],
                                                               ["text/plain", "application/json"])
    assert v10["skills"][0]["securityRequirements"] == SKILL_EXTRAS["securityRequirements"]
    assert v03["skills"][0]["security"] == [{"bearer": ["refunds:write"]}], "0.3's name and shape for it"
    assert {interface["tenant"] for interface in v10["supportedInterfaces"]} == {"acme-eu"}
    assert "tenant" not in json.dumps(v03), "a 0.3 interface has no tenant"


def test_the_essays_run_is_the_same_with_the_extra_fields(workbench):
    from conftest import GOLDEN
    edit_card(workbench, "billing-agent", with_extras)
    assert run_copy(workbench).stdout == (GOLDEN / "default_run.txt").read_text(), "the essay's card has none of them"


@pytest.mark.parametrize("change, said", [
    (lambda card: card.update(provider="Acme"), "card.provider must be an object"),
    (lambda card: card.update(provider={"organization": "Acme"}), "card.provider.url is missing"),
    (lambda card: card.update(provider={"organization": "Acme", "url": "ftp://acme"}), "provider.url 'ftp://acme'"),
    (lambda card: card.update(documentationUrl=7), "card.documentationUrl must be a string"),
    (lambda card: card.update(iconUrl="x" * 5000), "card.iconUrl"),
    (lambda card: card.update(tenant=["eu"]), "card.tenant must be a string"),
    (lambda card: card.update(tenant="eu/../us"), "card.tenant"),
    (lambda card: card.update(tenant=".."), "tenant: '..' is not a tenant name"),  # as serve --tenant
    (lambda card: card["skills"][0].update(examples="refund"), "card.skills[0].examples must be an array"),
    (lambda card: card["skills"][0].update(examples=[{"text": "hi"}]), "card.skills[0].examples[0] must be a string"),
    (lambda card: card["skills"][0].update(securityRequirements={"bearer": []}),
     "card.skills[0].securityRequirements must be an array"),
    (lambda card: card["skills"][0].update(securityRequirements=[{"schemes": {"bearer": ["s"]}}]),
     "skills[0].securityRequirements[0].schemes.bearer must be"),
    (lambda card: card["skills"][0].update(securityRequirements=[{"schemes": {}}]), "must name 1 to 20 schemes"),
    (lambda card: card["skills"][0].update(inputModes="text/plain"), "card.skills[0].inputModes must be an array"),
])
def test_a_wrong_type_in_a_card_files_extra_fields_is_one_line_naming_the_file_and_field(workbench, change, said):
    edit_card(workbench, "billing-agent", change)
    done = run_copy(workbench)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert "billing-agent.json: " in done.stderr and said in done.stderr, done.stderr


def test_a_huge_card_file_is_refused_in_one_line(workbench):
    edit_card(workbench, "billing-agent", lambda card: card["skills"][0].update(examples=["refund"] * 20_000))
    done = run_copy(workbench)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "billing-agent.json" in done.stderr, done.stderr


def media_types(parts):
    """Each part's media type, as A2A 1.0 implies it where a part names none."""
    return {part.get("mediaType") or ("text/plain" if "text" in part else "application/json") for part in parts}


def sender(peer, base):
    transport = InProcessTransport({base: PeerApp(peer, by_name("1.0"))})
    card = json.loads(transport.get(base + "/.well-known/agent-card.json", {}).body)

    def send(message_id, parts, metadata=None):
        params = {"message": {"messageId": message_id, "role": "ROLE_USER", "parts": parts, "metadata": metadata or {}}}
        frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params}).encode()
        headers = {"Content-Type": "application/json", "A2A-Version": "1.0", "Authorization": "Bearer t0k"}
        return json.loads(transport.post(base + "/a2a", frame, headers).body)["result"]
    return card, send


def answered(result):
    """The media types of every part an answer carries: artifacts, status message, or a message."""
    task = result.get("task")
    if task is None:
        return media_types(result["message"]["parts"])
    parts = [part for artifact in task.get("artifacts", []) for part in artifact["parts"]]
    return media_types(parts + task["status"].get("message", {}).get("parts", []))


def test_billings_card_says_what_billing_answers_and_takes():
    card, send = sender(billing.billing_agent(orders=billing.ORDER_BOOK), billing.BASE_URL)
    skill = card["skills"][0]
    refund = {"skillId": "process_refund"}
    done = send("m-1", [{"data": {"order_id": "ORD-3300", "amount": 180.0}}], refund)
    assert done["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert media_types(done["task"]["artifacts"][0]["parts"]) == {"text/plain"} <= set(skill["outputModes"])
    as_text = send("m-2", [{"text": "refund ORD-5100 $75.00"}], refund)
    assert as_text["task"]["status"]["state"] == "TASK_STATE_COMPLETED" and "text/plain" in skill["inputModes"]
    assert "application/json" in skill["inputModes"]
    paused = send("m-3", [{"data": {"order_id": "ORD-4100", "amount": 6200.0}}], refund)
    assert paused["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert answered(paused) == {"text/plain", "application/json"} == set(skill["outputModes"])


def test_conformance_agents_card_says_what_it_answers_and_takes():
    from peers.conformance import BEHAVIOURS, DIRECT_REPLY, conformance_agent
    card, send = sender(conformance_agent(), "https://conformance.example")
    skill = card["skills"][0]
    seen = set()
    for prefix in [*(p for p in BEHAVIOURS if not p.startswith(("tck-stream", "test-resubscribe"))), DIRECT_REPLY]:
        seen |= answered(send(f"{prefix}-1", [{"text": "hi"}]))
        seen |= answered(send(f"{prefix}-2", [{"data": {"ask": "hi"}}]))
    assert seen == set(skill["outputModes"]) == {"text/plain", "application/json"}
    assert set(skill["inputModes"]) == {"text/plain", "application/json"}, "it took both above"
