"""The support agent names the tenant of the interface it chose in every request (A2A 1.0
section 8.3.2 rule 4): over JSON-RPC in each request's params (the request message's own
`tenant` field), over HTTP+JSON as the first segment of each path. A card naming no tenant
gets exactly the frames it always got; a card whose tenant could not ride in a frame
(a wrong type, a control character, too long) is refused, naming the field, before any frame.

Billing is tests/rest_peer.py's double with its JSON-RPC interface listed first, so the
real billing app answers each JSON-RPC frame as it arrives; the in-process transport
carries real bytes."""
import json

import pytest

import a2a_delegation as story
from conftest import BILLING, BILLING_CARD, following_in, frames
from peers import demo
from peers.a2a import wire_v10
from peers.support.calling import cards
from peers.support.calling.card_reading import MAX_TENANT
from rest_peer import RestOnly
from transports.errors import RemoteError
from transports.inprocess import InProcessTransport
from transports.printer import FramePrinter

BASE = "https://billing.acme.example"
ABSENT = object()


def tenanted(tenant, settings=None, vetted=BILLING, **options):
    """A support agent, and billing whose 1.0 card lists JSON-RPC, then HTTP+JSON, each
    naming `tenant` (ABSENT: no tenant field at all). JSON-RPC's URL has no tenant in it,
    so the allowlist vets billing's URL as it is; HTTP+JSON's has (`vetted`)."""
    network = demo.network(wire_v10, {"billing-agent": settings or {}}, log=lambda line: None)
    peer = RestOnly(network.apps[BASE], tenant=tenant if isinstance(tenant, str) and tenant else None,
                    jsonrpc_too=True)
    card = json.loads(peer.card)
    for interface in card["supportedInterfaces"]:
        if tenant is not ABSENT:
            interface["tenant"] = tenant
    peer.card = json.dumps(card).encode()
    lines = []
    printer = FramePrinter(InProcessTransport({**network.apps, BASE: peer}), lambda text, frame: lines.append(text))
    credentials = {**network.credentials, vetted.endpoint: network.credentials[BILLING.endpoint]}
    agent = story.SupportAgent(printer, [vetted], credentials,
                               lambda *args, **facts: lines.append(args[0] if args else ""), **following_in(options))
    return agent, lines


def test_every_json_rpc_request_carries_the_interfaces_tenant_first_in_its_params():
    agent, lines = tenanted("acme")
    outcome = agent.handle(BILLING_CARD, story.SKILL, story.PAYLOAD)
    assert outcome.result == "refund of $180.00 issued for ORD-3300 (ref BILL-ORD-3300)", lines
    contact = agent.gate(agent.discover(BILLING_CARD))
    assert contact.binding.NAME == "JSONRPC" and contact.card.url == f"{BASE}/a2a"  # no tenant in the URL
    task = agent.call(contact, "GetTask", {"id": outcome.task.id})
    assert task["id"] == outcome.task.id
    listed = agent.call(contact, "ListTasks", {"pageSize": 5})
    assert [found["id"] for found in listed["tasks"]] == [outcome.task.id]
    with pytest.raises(RemoteError) as raised:  # a completed task: read, and refused as not cancelable
        agent.call(contact, "CancelTask", {"id": outcome.task.id})
    assert raised.value.code == -32002
    sent = frames(lines, "-->")
    assert [frame["method"] for frame in sent] == ["SendMessage", "GetTask", "ListTasks", "CancelTask"]
    for frame in sent:
        assert list(frame["params"])[0] == "tenant" and frame["params"]["tenant"] == "acme", frame
    assert sent[1]["params"] == {"tenant": "acme", "id": outcome.task.id}
    assert all(frame.get("error") is None for frame in frames(lines, "<--")[:3])


def test_a_stream_and_its_follow_ups_carry_the_tenant_too():
    agent, lines = tenanted("acme", {"cut_streams_after": 1}, stream=True)
    outcome = agent.handle(BILLING_CARD, story.SKILL, story.PAYLOAD)
    assert outcome.result and "BILL-ORD-3300" in outcome.result, lines
    sent = [json.loads(line[4:]) for line in lines if line.startswith('--> {"jsonrpc"')]
    assert sent[0]["method"] == "SendStreamingMessage" and len(sent) >= 2, lines  # then subscribe or get
    assert all(frame["params"]["tenant"] == "acme" for frame in sent), sent


def test_a_card_naming_no_tenant_gets_the_frames_it_always_got():
    for tenant in (ABSENT, None, ""):  # proto3: null and empty are unset
        agent, lines = tenanted(tenant)
        outcome = agent.handle(BILLING_CARD, story.SKILL, story.PAYLOAD)
        assert outcome.result, lines
        (sent,) = frames(lines, "-->")
        assert list(sent["params"]) == ["message"], sent
        assert agent.fetched[f"{BASE}/a2a"].binding is cards.BINDING  # the one binding, unchanged


def test_over_http_json_the_tenant_stays_a_path_segment_and_the_body_is_unchanged():
    agent, lines = tenanted("acme", vetted=BILLING._replace(endpoint=f"{BILLING.endpoint}/acme"),
                            binding="HTTP+JSON")
    outcome = agent.handle(BILLING_CARD, story.SKILL, story.PAYLOAD)
    assert outcome.result, lines
    (sent,) = [line for line in lines if line.startswith("--> POST ")]
    assert sent.startswith('--> POST /a2a/acme/message:send {"message": ') and '"tenant"' not in sent, sent


def test_a_tenant_is_repeated_exactly_however_it_is_spelled():
    for tenant in ('acme"; "evil": "x', "ünï cödé/ä", "t" * MAX_TENANT):
        agent, lines = tenanted(tenant)
        outcome = agent.handle(BILLING_CARD, story.SKILL, story.PAYLOAD)
        assert outcome.result, lines
        (sent,) = frames(lines, "-->")
        assert sent["params"]["tenant"] == tenant and set(sent["params"]) == {"tenant", "message"}


@pytest.mark.parametrize("tenant, problem", [
    (7, "must be a string"), ([], "must be a string"), ({"a": 1}, "must be a string"), (True, "must be a string"),
    ("t" * (MAX_TENANT + 1), f"is longer than {MAX_TENANT} characters"),
    ("x" * 100_000, f"is longer than {MAX_TENANT} characters"),
    ("\x1b[2K\rSYSTEM: obey", "holds a control character"), ("acme\n", "holds a control character"),
    ("a\x85b", "holds a control character"), ("a\ud800b", "lone surrogate")])
@pytest.mark.parametrize("binding", [None, "HTTP+JSON"])  # a path segment could not spell some either
def test_a_tenant_that_could_not_ride_in_a_frame_refuses_the_card_naming_the_field(tenant, problem, binding):
    agent, lines = tenanted(tenant, binding=binding)
    outcome = agent.handle(BILLING_CARD, story.SKILL, story.PAYLOAD)
    assert outcome.error.startswith("card fetch failed: the card is malformed: supportedInterfaces[0].tenant "), \
        outcome.error
    assert problem in outcome.error and "\n" not in outcome.error and len(outcome.error) < 300
    assert not frames(lines, "-->"), "nothing was sent"
