"""Seed 000's typed payload: the support agent checks every payload against the skill's
contract before sending, so one that breaks it never leaves (naming the field), on every
wire. Its own copy of the refund contract (for the essay's card, which cannot carry a
schema) must not drift from what billing publishes on its 1.0 card. A contract a peer
publishes is hostile input: one that cannot be run is refused, never half-applied."""
import json
import random

import pytest

import a2a_delegation as story
from conftest import BILLING, BILLING_CARD, support_agent
from peers import demo
from peers.a2a import wire_v10
from peers.a2a.schema import check, unreadable
from peers.support.contracts import CONTRACTS
from transports.inprocess import InProcessTransport


def test_the_support_agents_copy_of_the_refund_contract_matches_billings_published_card():
    network = demo.network(wire_v10, log=lambda line: None)
    document = json.loads(InProcessTransport(network.apps).get(BILLING_CARD, {}).body)
    published = {skill.id: skill.input_schema for skill in wire_v10.card_from_wire(document).skills}
    assert published == CONTRACTS



@pytest.mark.parametrize("wire", ["essay", "0.3", "1.0"])
@pytest.mark.parametrize("payload, field", [
    ({"order_id": "ORD-1", "amount": "ten"}, "payload.amount must be a number"),
    ({"order_id": "ORD-1"}, "payload.amount is missing"),
    ({"order_id": "ORD-1", "amount": -5}, "payload.amount must be more than 0"),
    ({"order_id": "ORD 1; DROP", "amount": 5}, "payload.order_id 'ORD 1; DROP' does not match"),
    ({"order_id": "ORD-1", "amount": 5, "note": "x"}, "has an unknown field 'note'"),
])
def test_a_payload_that_breaks_the_contract_never_leaves_and_the_field_is_named(wire, payload, field):
    agent, printer, _ = support_agent([BILLING], wire=wire)
    outcome = agent.handle(BILLING_CARD, story.SKILL, payload)
    assert outcome.error.startswith("not sent: the payload breaks its 'process_refund' skill's input contract")
    assert field in outcome.error
    assert [frame.direction for frame in printer.frames] == ["-->", "<--"], "only the card was fetched"
    assert printer.frames[0].http_method == "GET"


@pytest.mark.parametrize("schema, problem", [
    ([], "must be an object"), ({"type": {}}, ".type must be one of"), ({"type": "float"}, ".type must be one of"),
    ({"maximum": "9"}, ".maximum must be a number"), ({"minLength": True}, ".minLength must be a count"),
    ({"multipleOf": -1}, ".multipleOf must be a number"), ({"maximum": 10**400}, ".maximum must be a number"),
    ({"pattern": "("}, ".pattern is not a regular expression"), ({"pattern": "a" * 1001}, ".pattern must be text"),
    ({"required": "amount"}, ".required must be a list"), ({"required": [{}]}, ".required must be a list"),
    ({"properties": []}, ".properties must be an object"), ({"additionalProperties": {}}, "additionalProperties"),
    ({"properties": {"a": {"items": {"type": []}}}}, "schema.properties.a.items.type must be one of"),
])
def test_a_schema_check_cannot_run_is_named_as_unreadable(schema, problem):
    assert problem in unreadable(schema)


def test_a_card_publishing_an_unreadable_contract_is_refused_in_one_line():
    from test_hostile_replies import ScriptedPeer, outcomes_for, real_exchange
    from peers import billing
    card, reply = real_exchange("1.0")
    card["capabilities"]["extensions"][0]["params"]["process_refund"]["properties"]["amount"]["maximum"] = {"$gt": 1}
    app = ScriptedPeer(b"", b"")
    (outcome,), _ = outcomes_for(InProcessTransport({billing.BASE_URL: app}), app, [card],
                                 lambda m: json.dumps(m).encode(), lambda m: json.dumps(reply).encode())
    assert "card fetch failed: the card is malformed: the input schema of 'process_refund'" in outcome.error
    assert ".properties.amount.maximum must be a number in range" in outcome.error


def garbage(rng, depth=0):
    choices = [None, True, -1, 0, 2.5, 10**30, "", "x" * rng.randint(0, 50), "(a", "^[a-z]+$", "object", "string"]
    if depth < 3:
        choices += [[garbage(rng, depth + 1) for _ in range(rng.randint(0, 3))],
                    {rng.choice(KEYWORDS): garbage(rng, depth + 1) for _ in range(rng.randint(0, 4))}]
    return rng.choice(choices)


KEYWORDS = ["type", "properties", "required", "items", "additionalProperties", "pattern", "minLength",
            "maxLength", "minItems", "minimum", "maximum", "exclusiveMinimum", "multipleOf", "amount", "order_id"]


def test_three_thousand_random_schemas_are_judged_and_a_readable_one_always_runs():
    rng, readable = random.Random(404), 0
    for _ in range(3000):
        schema = garbage(rng)
        if unreadable(schema) is None:
            readable += 1
            for value in (None, 5, "ORD-1", [1, "a"], {"order_id": "ORD-1", "amount": 5}, {"a": [[]]}):
                result = check(value, schema)
                assert result is None or isinstance(result, str)
    assert readable > 30, "the generator reaches schemas that pass"
