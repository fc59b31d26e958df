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
from peers.support.calling.contracts import CONTRACTS
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


# -- enum and default: read, or the schema is refused -----------------------------------------

WITH_CURRENCY = {"type": "object", "required": ["order_id", "amount"], "additionalProperties": False,
                 "properties": {"order_id": {"type": "string"}, "amount": {"type": "number"},
                                "currency": {"type": "string", "enum": ["USD", "EUR"], "default": "USD"}}}


@pytest.mark.parametrize("value, problem", [
    ({"order_id": "A", "amount": 5, "currency": "GBP"}, "input.currency 'GBP' is not one of 'USD', 'EUR'"),
    ({"order_id": "A", "amount": 5, "currency": ["USD"]}, "input.currency (a list) is not one of"),
    ({"order_id": "A", "amount": 5, "currency": {"x": 1}}, "input.currency (an object) is not one of"),
    ({"order_id": "A", "amount": 5, "currency": "USD"}, None), ({"order_id": "A", "amount": 5}, None),
])
def test_a_value_outside_an_enum_is_refused_naming_the_field(value, problem):
    found = check(value, WITH_CURRENCY)
    assert found == problem if problem is None else problem in found


def test_enum_compares_as_json_does_true_is_not_one_and_one_is_one_point_oh():
    assert check(True, {"enum": [1]}) is not None and check(1, {"enum": [True]}) is not None
    assert check(1.0, {"type": "number", "enum": [1]}) is None and check(None, {"enum": [None]}) is None
    assert check(0, {"enum": [None, False, ""]}) is not None


@pytest.mark.parametrize("schema, problem", [
    ({"type": "string", "enum": [{"a": 1}]}, "compares no objects or lists"),  # unhashable members
    ({"type": "string", "enum": [["USD"]]}, "compares no objects or lists"),
    ({"type": "string", "enum": list(map(str, range(1001)))}, ".enum must be a list of 1 to 1000"),  # huge
    ({"type": "string", "enum": []}, ".enum must be a list of 1 to 1000"), ({"enum": "USD"}, ".enum must be a list"),
    ({"type": "number", "enum": [float("nan")]}, "finite numbers"),
    ({"type": "string", "default": 5}, "schema.default must be a string: a default must fit its own field"),
    ({"type": "string", "enum": ["USD"], "default": "EUR"}, "schema.default 'EUR' is not one of 'USD'"),
    ({"type": "number", "maximum": 10, "default": 11}, "schema.default must be at most 10"),
    ({"type": "object", "required": ["c"], "properties": {"c": {"type": "string", "default": "USD"}}},
     "schema.properties.c is required and has a default"),
    ({"const": "USD"}, "uses 'const', which this checker does not read"),
    ({"type": "array", "maxItems": 3}, "uses 'maxItems'"), ({"oneOf": [{}]}, "uses 'oneOf'"),
    ({"properties": {"a": {"type": "number", "exclusiveMaximum": 5}}}, "schema.properties.a uses 'exclusiveMaximum'"),
])
def test_a_schema_using_enum_or_default_wrongly_or_a_keyword_the_checker_does_not_read_is_unreadable(schema, problem):
    found = unreadable(schema)
    assert found is not None and problem in found and "\n" not in found


def test_annotations_and_names_that_are_no_keyword_are_still_ignored():
    assert unreadable({"type": "string", "title": "t", "description": "d", "format": "date-time",
                       "examples": ["x"], "x-vendor": {}}) is None
    assert unreadable(WITH_CURRENCY) is None


def test_defaults_are_filled_in_by_the_receiver_for_a_missing_optional_field_only_and_never_shared():
    from peers.a2a.schema import with_defaults
    assert with_defaults({"order_id": "A", "amount": 5}, WITH_CURRENCY)["currency"] == "USD"
    assert with_defaults({"order_id": "A", "amount": 5, "currency": "EUR"}, WITH_CURRENCY)["currency"] == "EUR"
    listed = {"type": "object", "properties": {"tags": {"type": "array", "default": []}}}
    first = with_defaults({}, listed)
    first["tags"].append("x")
    assert with_defaults({}, listed) == {"tags": []} and listed["properties"]["tags"]["default"] == []


def currency_peer():
    """A peer whose skill publishes WITH_CURRENCY and answers with the input it received."""
    from peers import billing
    from peers.app import PeerApp
    from peers.peer import Peer
    from peers.skill import Skill
    card = billing.billing_agent().card
    published = card.skills[0]._replace(input_schema=WITH_CURRENCY)
    peer = Peer(card._replace(skills=(published,)), [Skill(published, lambda given: json.dumps(given, sort_keys=True))])
    transport = InProcessTransport({billing.BASE_URL: PeerApp(peer, wire_v10, token="t0k")})

    def send(data):
        frame = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
            "messageId": "m-1", "role": "ROLE_USER", "parts": [{"data": data}], "metadata": {"skillId": published.id}}}}
        headers = {"Content-Type": "application/json", "A2A-Version": "1.0", "Authorization": "Bearer t0k"}
        return json.loads(transport.post(billing.BASE_URL + "/a2a", json.dumps(frame).encode(), headers).body)
    return send


def test_over_real_frames_the_receiver_refuses_a_value_outside_the_enum_and_fills_in_a_default():
    send = currency_peer()
    error = send({"order_id": "A", "amount": 5, "currency": "GBP"})["error"]
    assert error["code"] == -32602 and "currency 'GBP' is not one of 'USD', 'EUR'" in error["message"]
    task = send({"order_id": "B", "amount": 5})["result"]["task"]
    assert json.loads(task["artifacts"][0]["parts"][0]["text"]) == {"amount": 5, "currency": "USD", "order_id": "B"}
