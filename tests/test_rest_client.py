"""The support agent over A2A's HTTP+JSON binding (spec 1.0 section 11): chosen from the
card, every operation it uses spelled as a verb and a path, errors read as the A2A errors
they name, and cards it cannot speak refused as unsupported, never as malformed.

The agent offering only HTTP+JSON is tests/rest_peer.py's double (a real billing peer
behind a translation of each REST request); the official SDK's REST-only server is the
real one (tests/test_interop.py). Frames cross the real in-process transport, and real
sockets where a test says so."""
import json
import random

import re

import pytest

import a2a_delegation as story
from conftest import BILLING, BILLING_CARD, cli, following_in, serving
from peers import demo
from peers.a2a import wire_v10
from peers.support.calling import http_json
from peers.support.calling.cards import Unspeakable, chosen
from rest_peer import RestOnly
from transports.base import HttpResponse
from transports.errors import HttpRefusal, PeerError, ProtocolViolation, RemoteError
from transports.inprocess import InProcessTransport
from transports.network import HttpTransport
from transports.masking import mask_body
from transports.printer import FramePrinter

BASE = "https://billing.acme.example"


def rest_only(settings=None, tenant=None, transport=None, **options):
    """A support agent, and billing offering only HTTP+JSON (what `settings` ask of it); a
    tenant is part of where frames go, so the allowlist vets billing's URL with it."""
    network = demo.network(wire_v10, {"billing-agent": settings or {}}, log=lambda line: None)
    peer = RestOnly(network.apps[BASE], tenant=tenant)
    lines = []
    printer = FramePrinter(transport or InProcessTransport({**network.apps, BASE: peer}),
                           lambda text, frame: lines.append(text))
    vetted = BILLING._replace(endpoint=f"{BILLING.endpoint}/{tenant}") if tenant else BILLING
    credentials = {**network.credentials, vetted.endpoint: network.credentials[BILLING.endpoint]}
    agent = story.SupportAgent(printer, [vetted], credentials,
                               lambda *args, **facts: lines.append(args[0] if args else ""), **following_in(options))
    return agent, peer, lines


def test_a_card_offering_only_http_json_is_delegated_to_with_a_verb_and_a_path():
    agent, peer, lines = rest_only()
    outcome = agent.handle(BILLING_CARD, story.SKILL, story.PAYLOAD)
    assert outcome.result == "refund of $180.00 issued for ORD-3300 (ref BILL-ORD-3300)", lines
    assert peer.requests == [("POST", "/message:send")]
    assert any(line.startswith('--> POST /a2a/message:send {"message": ') for line in lines), lines
    assert any(line.startswith('<-- 200 {"task": ') for line in lines), lines
    assert not any('"jsonrpc"' in line for line in lines)  # no envelope: the binding changed it


def test_a_stream_over_http_json_is_its_bare_events_each_shown_as_it_arrives():
    agent, peer, lines = rest_only(stream=True)
    outcome = agent.handle(BILLING_CARD, story.SKILL, story.PAYLOAD)
    assert outcome.task.lifecycle[-1].value == "completed" and len(outcome.task.lifecycle) == 3, lines
    assert peer.requests == [("POST", "/message:stream")]
    events = [line for line in lines if line.startswith("<-- [")]
    assert [json.loads(line.split("] ", 1)[1]).popitem()[0] for line in events] == \
        ["task", "statusUpdate", "artifactUpdate", "statusUpdate"], lines


def test_a_broken_stream_is_joined_again_by_subscribing_over_http_json():
    agent, peer, lines = rest_only({"cut_streams_after": 1}, stream=True)
    outcome = agent.handle(BILLING_CARD, story.SKILL, story.PAYLOAD)
    assert outcome.result and "BILL-ORD-3300" in outcome.result, lines
    assert peer.requests[0] == ("POST", "/message:stream")
    task = outcome.task.id
    assert peer.requests[1] in (("POST", f"/tasks/{task}:subscribe"), ("GET", f"/tasks/{task}")), peer.requests


def test_no_wait_over_http_json_asks_again_with_get_and_the_task_in_the_path():
    agent, peer, lines = rest_only({"slow": 0.3}, no_wait="poll", patience=10)
    outcome = agent.handle(BILLING_CARD, story.SKILL, story.PAYLOAD)
    assert outcome.result and "BILL-ORD-3300" in outcome.result, lines
    task = outcome.task.id
    assert peer.requests[0] == ("POST", "/message:send") and ("GET", f"/tasks/{task}") in peer.requests
    assert f"--> GET /a2a/tasks/{task}" in lines, lines


def test_push_over_http_json_names_our_webhook_in_the_send_and_needs_no_get():
    agent, peer, lines = rest_only({"slow": 0.3}, no_wait="push", patience=10)
    outcome = agent.handle(BILLING_CARD, story.SKILL, story.PAYLOAD)
    assert outcome.result and "BILL-ORD-3300" in outcome.result, lines
    assert peer.requests == [("POST", "/message:send")], lines
    assert any('"taskPushNotificationConfig"' in line for line in lines if line.startswith("--> POST"))


def test_an_a2a_error_over_http_json_is_the_same_remote_error_as_over_json_rpc():
    agent, peer, lines = rest_only()
    contact = agent.gate(agent.discover(BILLING_CARD))
    with pytest.raises(RemoteError) as raised:
        agent.call(contact, "GetTask", {"id": "no-such-task"})
    assert raised.value.code == -32001 and raised.value.data[0]["reason"] == "TASK_NOT_FOUND"
    assert "<-- 404 " in "\n".join(lines)
    listed = agent.call(contact, "ListTasks", {"pageSize": 5, "includeArtifacts": True})
    assert listed["tasks"] == [] and peer.requests[-1] == ("GET", "/tasks")
    assert "--> GET /a2a/tasks?pageSize=5&includeArtifacts=true" in lines


def test_a_tenant_on_the_interface_is_the_first_segment_of_every_path():
    agent, peer, lines = rest_only(tenant="acme")
    outcome = agent.handle(BILLING_CARD, story.SKILL, story.PAYLOAD)
    assert outcome.result and peer.requests == [("POST", "/message:send")], lines
    assert any(line.startswith("--> POST /a2a/acme/message:send ") for line in lines)


def test_http_json_over_real_sockets_the_same_task():
    network = demo.network(wire_v10, {}, log=lambda line: None)
    with serving(RestOnly(network.apps[BASE])) as server:
        http = HttpTransport(resolve={"billing.acme.example": ("127.0.0.1", server.server_address[1])}, timeout=5)
        lines = []
        agent = story.SupportAgent(FramePrinter(http, lambda text, frame: lines.append(text)), [BILLING],
                                   network.credentials, lambda *args, **facts: None,
                                   **following_in({"stream": True}))
        try:
            outcome = agent.handle(BILLING_CARD, story.SKILL, story.PAYLOAD)
        finally:
            http.close()
    assert outcome.result and "BILL-ORD-3300" in outcome.result, lines
    assert sum(line.startswith("<-- [") for line in lines) == 4, lines


# -- choosing a binding from the card -----------------------------------------------------------

def test_json_rpc_is_chosen_where_offered_else_http_json_else_the_card_is_unsupported():
    rest, rpc, grpc = ("HTTP+JSON", "https://a/rest", None), ("JSONRPC", "https://a/rpc", None), ("GRPC", "https://a/g", None)
    assert chosen([rest, rpc])[0].NAME == "JSONRPC"
    assert chosen([grpc, rest]) == (http_json.BINDING, "https://a/rest")
    assert chosen([rpc, rest], "HTTP+JSON")[1] == "https://a/rest"
    assert chosen([("HTTP+JSON", "https://a/rest/", "acme corp")])[1] == "https://a/rest/acme%20corp"
    assert chosen([("JSONRPC", "https://a/rpc", "acme")])[1] == "https://a/rpc"  # JSON-RPC: not in the URL
    with pytest.raises(Unspeakable, match="offers GRPC, not JSONRPC or HTTP[+]JSON"):
        chosen([grpc])
    with pytest.raises(Unspeakable, match="offers JSONRPC, not the HTTP[+]JSON asked for"):
        chosen([rpc], "HTTP+JSON")
    with pytest.raises(Unspeakable, match="offers no interface"):
        chosen([])


def card_offering(*bindings, modes=None):
    document = json.loads(demo.network(wire_v10, {}, log=lambda line: None).apps[BASE].card_body)
    document["supportedInterfaces"] = [{"url": f"{BASE}/a2a", "protocolBinding": binding, "protocolVersion": "1.0"}
                                       for binding in bindings]
    if modes is not None:
        document["skills"][0]["inputModes"] = modes
    return document


def test_a_valid_card_whose_bindings_we_cannot_speak_is_refused_as_unsupported_not_malformed():
    card = json.dumps(card_offering("GRPC")).encode()
    printer = FramePrinter(InProcessTransport({BASE: lambda request: HttpResponse(200, {}, card)}))
    said = []
    agent = story.SupportAgent(printer, [BILLING], {}, lambda *args, **facts: said.append(args[0] if args else ""))
    outcome = agent.handle(BILLING_CARD, story.SKILL, story.PAYLOAD)
    assert outcome.error == "not sent: the card is not supported: it offers GRPC, not JSONRPC or HTTP+JSON"
    assert "malformed" not in "\n".join(said)
    assert [frame.http_method for frame in printer.frames if frame.direction == "-->"] == ["GET"]  # the card only


def test_binding_forces_one_the_card_offers_and_refuses_one_it_does_not():
    agent, peer, lines = rest_only(binding="JSONRPC")
    outcome = agent.handle(BILLING_CARD, story.SKILL, story.PAYLOAD)
    assert outcome.error.endswith("it offers HTTP+JSON, not the JSONRPC asked for") and not peer.requests


def test_a_skill_listing_no_input_modes_takes_the_cards_defaults():
    from peers.support.calling.card_reading import read_card
    fetched = read_card(wire_v10, card_offering("JSONRPC", modes=[]))
    assert fetched.card.skills[0].input_modes == ("application/json", "text/plain")
    from peers.support.calling.cards import refusal
    assert refusal(fetched.card, "process_refund", story.PAYLOAD) is None
    listed = read_card(wire_v10, card_offering("JSONRPC", modes=["text/plain"]))
    assert "takes ['text/plain'], not application/json" in refusal(listed.card, "process_refund", story.PAYLOAD)


# -- whatever an HTTP+JSON peer answers: one line ------------------------------------------------

@pytest.mark.parametrize("status, body, expected", [
    (404, b'{"error": {"code": 404, "status": "NOT_FOUND", "message": "no", "details": [{"@type": '
          b'"type.googleapis.com/google.rpc.ErrorInfo", "reason": "TASK_NOT_FOUND"}]}}', RemoteError),
    (400, b'{"error": {"code": 400, "message": "bad", "details": [{"@type": '
          b'"type.googleapis.com/google.rpc.ErrorInfo", "reason": "INVALID_PARAMS"}]}}', RemoteError),
    (500, b"<html>oops</html>", HttpRefusal),
    (400, b'{"error": {"details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": ["x"]}]}}',
     HttpRefusal),
    (400, b'{"error": "flat"}', HttpRefusal),
    (400, b"[" * 100_000, HttpRefusal),
    (401, b'{"error": {"details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", '
          b'"reason": "TASK_NOT_FOUND"}]}}', HttpRefusal),
])
def test_an_http_json_error_is_the_a2a_error_it_names_or_the_http_refusal_it_is(status, body, expected):
    error = http_json.error_of(status, body, {"Authorization": "Bearer x"}, f"{BASE}/a2a")
    assert type(error) is expected and "\n" not in str(error) and len(str(error)) < 300
    if expected is RemoteError:
        assert error.code in (-32001, -32602)


UNAUTHENTICATED = (b'{"error": {"code": %d, "message": "wrong", "details": [{"@type": '
                   b'"type.googleapis.com/google.rpc.ErrorInfo", "reason": "UNAUTHENTICATED"}]}}')


@pytest.mark.parametrize("status", [500, 503, 400, 200])
def test_unauthenticated_is_read_from_a_429_alone_not_from_a_status_that_may_have_acted(status):
    """A guess limit's 429 names UNAUTHENTICATED, and is advised as credentials to fix: read so from any status,
    a 500 that may have acted would be advised "retry once the credentials are fixed" by a peer's say-so."""
    error = http_json.error_of(status, UNAUTHENTICATED % status, {"Authorization": "Bearer x"}, f"{BASE}/a2a")
    assert type(error) is HttpRefusal and "credentials are fixed" not in error.retry_advice(), error.retry_advice()
    held = http_json.error_of(429, UNAUTHENTICATED % 429, {"Authorization": "Bearer x"}, f"{BASE}/a2a")
    assert "credentials are fixed" in held.retry_advice()


@pytest.mark.parametrize("data", [b"not json", b'{"error": {"message": "x"}}', b'{"a": NaN}', b"9" * 2_000_000])
def test_a_stream_event_that_is_not_a_stream_response_is_a_protocol_violation(data):
    with pytest.raises((ProtocolViolation, RemoteError)) as raised:
        http_json.event_of(data)
    assert "\n" not in str(raised.value) and len(str(raised.value)) < 300


def test_an_operation_the_binding_has_no_route_for_is_refused_before_sending():
    from transports.errors import TransportError
    with pytest.raises(TransportError, match="no route for tasks/pushNotificationConfig/delete"):
        http_json.request_for("tasks/pushNotificationConfig/delete", {"taskId": "t", "id": "c"})  # 0.3's name
    assert http_json.request_for("DeleteTaskPushNotificationConfig", {"taskId": "t", "id": "c"}) == \
        ("DELETE", "/tasks/t/pushNotificationConfigs/c", b"")  # check's, over a transport with every verb
    with pytest.raises(TransportError, match="needs id"):
        http_json.request_for("GetTask", {"id": 7})
    assert http_json.request_for("GetTask", {"id": "a/b?c", "historyLength": 2}) == \
        ("GET", "/tasks/a%2Fb%3Fc?historyLength=2", b"")


# -- the lesson: the same refund by each binding ------------------------------------------------

def test_the_bindings_lesson_sends_the_same_refund_by_each_binding_and_gets_the_same_task():
    from peers.support.lessons import bindings
    network = demo.network(wire_v10, {}, log=lambda line: None)
    peer = RestOnly(network.apps[BASE], jsonrpc_too=True)
    lines = []
    printer = FramePrinter(InProcessTransport({**network.apps, BASE: peer}), lambda text, frame: lines.append(text))
    agent = story.SupportAgent(printer, [BILLING], network.credentials,
                               lambda *args, **facts: lines.append(args[0] if args else ""))
    outcomes = bindings.run(agent.steps(), [BILLING_CARD])
    assert [outcome.result for outcome in outcomes] == ["refund of $75.00 issued for ORD-5100 (ref BILL-ORD-5100)"] * 2
    sent = [line for line in lines if line.startswith("--> ") and "GET" not in line]
    assert sent[0].startswith('--> {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": ')
    assert sent[1].startswith('--> POST /a2a/message:send {"message": ')
    assert peer.requests == [("POST", "/message:send")]  # one REST request; the JSON-RPC frame went by as it is
    assert "[bindings] the message: the same but for its messageId; the task: task-1 both times; the result: " \
           "the same" in "\n".join(lines)


def test_the_bindings_lesson_on_a_card_offering_only_json_rpc_says_so_and_shows_that_half():
    done = cli("--scenario", "bindings")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    cards = [line for line in done.stdout.splitlines() if line.startswith("<-- 200 card")]  # a lesson's card: one line
    offered = bool(cards) and "HTTP+JSON" in cards[0]
    if not offered:  # peers that serve JSON-RPC only: the lesson says what the card offers
        assert "the card is not supported: it offers JSONRPC, not the HTTP+JSON asked for: only the JSONRPC " \
               "half can be shown" in done.stderr
    assert "trusted result (from billing-agent): refund of $75.00 issued for ORD-5100" in done.stdout


def test_a_trace_and_a_diagram_name_each_http_json_exchange_by_its_operation_not_as_a_card():
    from peers.support.learner import diagram
    from peers.support.learner.trace import Recorder
    agent, peer, lines = rest_only({"slow": 0.3}, no_wait="poll", patience=10)
    recorder = Recorder("in-process")
    agent.transport.listeners.append(recorder.frame)  # the printer
    agent.handle(BILLING_CARD, story.SKILL, story.PAYLOAD)
    frames = [record for record in recorder.resolved() if record["kind"] == "frame"]
    assert [record["method"] for record in frames][:3] == ["GET agent card", "GET agent card", "SendMessage"]
    assert {record["method"] for record in frames[4:]} == {"GetTask"}
    assert all(record["binding"] == "HTTP+JSON" for record in frames[2:]) and "binding" not in frames[0]
    labels = [diagram.frame_label(record, diagram.body_of(record))[0] for record in frames[2:]]
    assert labels[0] == "SendMessage" and labels[1].startswith("task-1 ") and labels[-1] == "task-1 completed", labels
    assert not any("agent card" in label for label in labels)


def hostile_bodies(seed, count):
    """Seeded bodies an HTTP+JSON peer might answer with: JSON of every shape, near-misses of
    google.rpc.Status, and bytes that are not JSON at all."""
    rng = random.Random(seed)
    values = [None, True, 0, -32001, 1e308, "", "x" * 5000, [], {}, ["TASK_NOT_FOUND"], {"reason": 7}]
    for _ in range(count):
        shape = rng.randrange(4)
        if shape == 0:
            yield bytes(rng.randrange(256) for _ in range(rng.randrange(40)))
        elif shape == 1:
            yield json.dumps(rng.choice(values)).encode()
        else:
            info = {"@type": rng.choice([http_json.ERROR_INFO, "x", 5]), "reason": rng.choice(values + ["TASK_NOT_FOUND"])}
            error = {"code": rng.choice(values), "message": rng.choice(values), "details": rng.choice([[info], info, None])}
            yield json.dumps({"error": rng.choice([error, info, None, []])} if shape == 2 else error).encode()


def test_whatever_an_http_json_peer_answers_the_support_agent_ends_the_turn_in_one_line():
    network = demo.network(wire_v10, {}, log=lambda line: None)
    card = json.loads(RestOnly(network.apps[BASE]).card)
    answers = iter([(status, body) for status, body in zip(random.Random(5).choices([200, 400, 404, 500, 503], k=300),
                                                           hostile_bodies(22, 300))])

    def hostile(request):
        if request.url.endswith("agent-card.json"):
            return HttpResponse(200, {"Content-Type": "application/json"}, json.dumps(card).encode())
        status, body = next(answers)
        return HttpResponse(status, {"Content-Type": "application/a2a+json"}, body)
    agent = story.SupportAgent(FramePrinter(InProcessTransport({BASE: hostile})), [BILLING], network.credentials,
                               lambda *args, **facts: None)
    for _ in range(300):
        outcome = agent.handle(BILLING_CARD, story.SKILL, story.PAYLOAD)
        assert outcome.error is None or ("\n" not in outcome.error and len(outcome.error) < 600), outcome.error
        assert outcome.task is not None or outcome.error


def test_http_json_errors_and_events_of_any_shape_are_peer_errors_never_tracebacks():
    for body in hostile_bodies(7, 2000):
        assert isinstance(http_json.error_of(404, body, {}, BASE), PeerError)
        try:
            http_json.event_of(body)
        except PeerError as failure:
            assert "\n" not in str(failure) and len(str(failure)) < 600


def test_a_0_3_card_preferring_another_transport_is_unsupported_not_malformed():
    from peers import billing
    from peers.a2a import wire_v03
    from peers.support.calling.cards import Unspeakable
    from peers.support.calling.card_reading import read_card
    document = wire_v03.card_to_wire(billing.billing_agent().card)
    assert read_card(wire_v03, document).card.url == "https://billing.acme.example/a2a"
    for transport in ("HTTP+JSON", "GRPC"):
        with pytest.raises(Unspeakable, match=re.escape(f"it offers {transport} (A2A 0.3), not JSONRPC")):
            read_card(wire_v03, {**document, "preferredTransport": transport})


def test_our_credential_an_http_json_error_says_back_is_cut_whole_or_not_at_all_so_it_is_masked_where_it_is_shown():
    """An HTTP+JSON error's message is cut to 200 characters: cut inside our token, said back in it, the part before
    the cut was no secret we hold, and was shown and traced unmasked. It is cut between words, as a refusal's is."""
    agent, peer, _ = rest_only()

    def echoing(http):
        if http.method == "GET":
            return peer(http)
        token = http.header("Authorization").partition(" ")[2]
        words = "no " * ((200 - len(token) // 2) // 3)  # the token straddles the 200th character
        return HttpResponse(403, {"Content-Type": "application/json"}, json.dumps({"error": {
            "code": 403, "status": "PERMISSION_DENIED", "message": f"{words}{token} lacks a scope", "details": [
                {"@type": http_json.ERROR_INFO, "reason": "PERMISSION_DENIED", "domain": "a2a-protocol.org"}]}}).encode())
    agent.transport.inner.apps[BASE] = echoing
    outcome = agent.handle(BILLING_CARD, story.SKILL, story.PAYLOAD)
    shown = mask_body(outcome.error, tuple(agent.transport.held))
    (token,) = agent.transport.held
    assert "HTTP 403: no no" in shown and "(-32043)" in shown and token[:8] not in shown, shown
