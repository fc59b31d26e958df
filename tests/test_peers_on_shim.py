"""The peers answer hostile frames correctly over the in-process shim: real bytes through
the real transport to the real billing app, as a misbehaving caller would send them."""
import json

import pytest

from peers import billing
from peers.a2a import wire_essay
from peers.app import PeerApp
from peers.a2a.model import AgentCard, AgentSkill
from peers.peer import Peer, Skill
from transports.inprocess import InProcessTransport

ENDPOINT = "https://billing.acme.example/a2a"
JSON = {"Content-Type": "application/json"}


@pytest.fixture
def billing_app():
    return PeerApp(billing.billing_agent(), wire_essay)


def post(app, body: bytes | str, headers=JSON, url=ENDPOINT):
    transport = InProcessTransport({billing.BASE_URL: app})
    data = body.encode() if isinstance(body, str) else body
    return transport.post(url, data, headers)


def send(app, params, rid=1):
    frame = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tasks/send", "params": params})
    response = post(app, frame)
    assert response.status == 200
    return json.loads(response.body)


def error_code(reply):
    assert "result" not in reply, reply
    return reply["error"]["code"]


def test_a_good_refund_runs_the_skill_and_computes_its_text(billing_app):
    reply = send(billing_app, {"skill": "process_refund", "input": {"order_id": "ORD-42", "amount": 1234.5}})
    task = reply["result"]
    assert task["artifacts"][0]["text"] == "refund of $1,234.50 issued for ORD-42 (ref BILL-ORD-42)"
    assert task["lifecycle"] == ["submitted", "working", "completed"]


def test_task_ids_count_up_per_peer(billing_app):
    ids = [send(billing_app, {"skill": "process_refund", "input": {"order_id": f"A{n}", "amount": 1}})["result"]["id"]
           for n in range(3)]
    assert ids == ["task-1", "task-2", "task-3"]


@pytest.mark.parametrize("frame, code", [
    ("this is not json", -32700),
    ('{"jsonrpc": "2.0", "id": 1, "method": "tasks/send", "params": {"skill": "process_refund", "input": {"order_id": "A", "amount": NaN}}}', -32700),
    ('["not", "a", "request"]', -32600),
    ('{"jsonrpc": "1.0", "id": 1, "method": "tasks/send", "params": {}}', -32600),
    ('{"jsonrpc": "2.0", "id": true, "method": "tasks/send", "params": {}}', -32600),
    ('{"jsonrpc": "2.0", "id": 2.5, "method": "tasks/send", "params": {}}', -32600),
    ('[{"jsonrpc": "2.0", "id": 1, "method": "tasks/send", "params": {}}]', -32600),
    ('{"jsonrpc": "2.0", "id": 1, "method": "tasks/send", "params": null}', -32600),
    ('{"jsonrpc": "2.0", "id": 1, "method": "tasks/refund_everything", "params": {}}', -32601),
])
def test_a_broken_envelope_gets_the_json_rpc_error_code_for_what_is_wrong(billing_app, frame, code):
    response = post(billing_app, frame)
    assert response.status == 200
    assert error_code(json.loads(response.body)) == code


@pytest.mark.parametrize("params, mentions", [
    ([1, 2], "params"),
    ({"input": {"order_id": "A", "amount": 1}}, "skill"),
    ({"skill": "process_refund"}, "input"),
    ({"skill": "transfer_funds", "input": {"order_id": "A", "amount": 1}}, "unknown skill"),
    ({"skill": "process_refund", "input": {"order_id": "ORD-1"}}, "amount"),
    ({"skill": "process_refund", "input": {"amount": 5}}, "order_id"),
    ({"skill": "process_refund", "input": {"order_id": "ORD-1", "amount": -180.0}}, "amount"),
    ({"skill": "process_refund", "input": {"order_id": "ORD-1", "amount": 0}}, "amount"),
    ({"skill": "process_refund", "input": {"order_id": "ORD-1", "amount": "180"}}, "amount"),
    ({"skill": "process_refund", "input": {"order_id": "ORD-1", "amount": True}}, "amount"),
    ({"skill": "process_refund", "input": {"order_id": "ORD-1", "amount": 1.005}}, "multiple of 0.01"),
    ({"skill": "process_refund", "input": {"order_id": "ORD-1", "amount": 1e12}}, "amount"),
    ({"skill": "process_refund", "input": {"order_id": 3300, "amount": 1}}, "order_id"),
    ({"skill": "process_refund", "input": {"order_id": "ORD 1; DROP", "amount": 1}}, "order_id"),
    ({"skill": "process_refund", "input": {"order_id": "ORD-1\n", "amount": 1}}, "order_id"),
    ({"skill": "process_refund", "input": {"order_id": "ORD-1", "amount": 1, "note": "x"}}, "unknown field 'note'"),
])
def test_missing_or_mistyped_params_are_minus_32602_and_create_no_task(billing_app, params, mentions):
    reply = send(billing_app, params)
    assert error_code(reply) == -32602
    assert mentions in reply["error"]["message"]
    assert billing_app.peer.store.tasks == {}, "a refused payload must never become a task"


def test_an_internal_failure_is_a_bare_minus_32603_and_the_detail_stays_in_the_log():
    def crash(payload):
        raise KeyError("ledger row 7 for customer alice@example.com")
    card = AgentCard("crashy", "", "https://billing.acme.example/a2a", "1", (AgentSkill("s", ""),))
    logged = []
    app = PeerApp(Peer(card, [Skill(card.skills[0], crash)]), wire_essay, log=logged.append)
    response = post(app, '{"jsonrpc": "2.0", "id": 7, "method": "tasks/send", "params": {"skill": "s", "input": {}}}')
    assert json.loads(response.body) == {"jsonrpc": "2.0", "id": 7,
                                         "error": {"code": -32603, "message": "Internal error"}}
    assert b"alice" not in response.body
    assert "alice@example.com" in logged[0] and logged[0].startswith("[crashy]")


@pytest.mark.parametrize("method, url, headers, status", [
    ("POST", ENDPOINT, {"Content-Type": "text/plain"}, 415),
    ("POST", ENDPOINT, {}, 415),
    ("POST", "https://billing.acme.example/admin", JSON, 404),
    ("GET", ENDPOINT, {}, 405),
    ("POST", "https://billing.acme.example/.well-known/agent-card.json", JSON, 405),
])
def test_http_level_refusals_carry_a_json_rpc_error(billing_app, method, url, headers, status):
    transport = InProcessTransport({billing.BASE_URL: billing_app})
    call = transport.get(url, headers) if method == "GET" else transport.post(url, b"{}", headers)
    assert call.status == status
    # A wrong Content-Type is A2A's ContentTypeNotSupportedError; the others, Invalid Request.
    assert json.loads(call.body)["error"]["code"] == (-32005 if status == 415 else -32600)


def test_an_oversize_body_is_413(billing_app):
    app = PeerApp(billing.billing_agent(), wire_essay, max_body=100)
    assert post(app, "x" * 101).status == 413


def test_a_notification_gets_no_body():
    app = PeerApp(billing.billing_agent(), wire_essay)
    response = post(app, '{"jsonrpc": "2.0", "method": "tasks/send", "params": {"skill": "process_refund", "input": {"order_id": "A", "amount": 1}}}')
    assert response.status == 204 and response.body == b""


def test_a_bearer_token_is_enforced_when_the_app_has_one():
    app = PeerApp(billing.billing_agent(), wire_essay, token="s3cret")
    frame = '{"jsonrpc": "2.0", "id": 1, "method": "tasks/send", "params": {"skill": "process_refund", "input": {"order_id": "A", "amount": 1}}}'
    refused = post(app, frame, {**JSON, "Authorization": "Bearer guess"})
    assert refused.status == 401 and refused.header("www-authenticate").startswith("Bearer")
    assert app.peer.store.tasks == {}
    assert post(app, frame, {**JSON, "Authorization": "Bearer s3cret"}).status == 200
