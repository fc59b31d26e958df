"""A2A 1.0's HTTP+JSON binding on the server side (spec section 11), over a real socket.

Each test serves a peer on 127.0.0.1 (port 0) and speaks to it with http.client, the
way any REST client would: the same operations as JSON-RPC, at their own routes, with
the spec's status codes and google.rpc.Status error bodies.
"""
import http.client
import json
import random
import subprocess
import sys
import urllib.request

import pytest

from conftest import ROOT, base_url, serving
from peers import billing, conformance, demo, rest
from peers.a2a import wire_card, wire_v10
from peers.a2a.wire_format import by_name
from peers.app import PeerApp
from peers.conformance import conformance_agent
from peers.methods import OPERATIONS

TOKEN = "t0k"
V1 = {"A2A-Version": "1.0", "Authorization": f"Bearer {TOKEN}"}
REFUND = {"message": {"messageId": "m-1", "role": "ROLE_USER",
                      "parts": [{"data": {"order_id": "ORD-42", "amount": 42}}]}}


@pytest.fixture
def billing_rest():
    """billing, serving its 1.0 card; `call(verb, path, body, headers)` -> (status, headers, JSON)."""
    app = PeerApp(billing.billing_agent(), by_name("1.0"), token=TOKEN)
    with serving(app, idle_timeout=2.0) as server:
        yield Client(server.server_address[:2])


class Client:
    def __init__(self, address):
        self.address = address

    def raw(self, verb, path, body=b"", headers=None):
        connection = http.client.HTTPConnection(*self.address, timeout=5)
        try:
            connection.request(verb, path, body=body, headers={**V1, **(headers or {})})
            response = connection.getresponse()
            return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
        finally:
            connection.close()

    def __call__(self, verb, path, body=None, headers=None):
        sent = b"" if body is None else json.dumps(body).encode()
        status, answer_headers, data = self.raw(verb, path, sent, {"Content-Type": "application/json",
                                                                   **(headers or {})} if sent else headers)
        return status, answer_headers, json.loads(data) if data and not data.startswith(b"data:") else data


def error_of(body):
    """The google.rpc.Status in a REST error body, and its ErrorInfo's reason."""
    status = body["error"]
    reason = next(detail["reason"] for detail in status["details"]
                  if detail["@type"] == "type.googleapis.com/google.rpc.ErrorInfo")
    return status["code"], status["status"], reason


def test_every_operation_a_1_0_json_rpc_method_asks_for_has_an_http_json_route_onto_the_same_table():
    assert {route.operation for route in rest.ROUTES} == set(wire_v10.METHODS.values())
    assert all(route.operation in OPERATIONS for route in rest.ROUTES)


def test_a_refund_sent_over_http_json_is_the_same_task_json_rpc_reads_back(billing_rest):
    status, headers, sent = billing_rest("POST", "/a2a/message:send", REFUND)
    assert status == 200 and headers["content-type"] == "application/json", "in the media type the client used"
    assert billing_rest("POST", "/a2a/message:send", REFUND, {"Content-Type": "application/a2a+json"}
                        )[1]["content-type"] == "application/a2a+json"
    task = sent["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    frame = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": task["id"]}}
    _, _, over_rpc = billing_rest("POST", "/a2a", frame)
    status, _, over_rest = billing_rest("GET", f"/a2a/tasks/{task['id']}")
    assert status == 200 and over_rest == over_rpc["result"] == task, "the binding changes the envelope only"


def test_get_task_reads_history_length_from_the_query_and_a_tenant_the_card_does_not_name_is_refused(billing_rest):
    task = billing_rest("POST", "/a2a/message:send", REFUND)[2]["task"]
    status, _, none_shown = billing_rest("GET", f"/a2a/tasks/{task['id']}?historyLength=0")
    assert status == 200 and none_shown["id"] == task["id"] and "history" not in none_shown
    status, _, refused = billing_rest("GET", f"/a2a/acme/tasks/{task['id']}")  # never served as untenanted
    assert status == 400 and refused["error"]["status"] == "INVALID_ARGUMENT", refused
    assert "serves no tenants" in refused["error"]["message"]


def test_list_tasks_reads_its_query_parameters_as_section_11_5_spells_them(billing_rest):
    for n in (1, 2, 3):
        billing_rest("POST", "/a2a/message:send", {"message": {**REFUND["message"], "messageId": f"m-{n}",
                                                   "parts": [{"data": {"order_id": f"ORD-{n}", "amount": n}}]}})
    status, _, page = billing_rest("GET", "/a2a/tasks?pageSize=2&status=TASK_STATE_COMPLETED&includeArtifacts=true")
    assert status == 200 and len(page["tasks"]) == 2 and page["totalSize"] == 3 and page["nextPageToken"]
    assert page["tasks"][0]["artifacts"], "includeArtifacts=true is the boolean true"
    status, _, rest = billing_rest("GET", "/a2a/tasks?pageSize=2&status=TASK_STATE_COMPLETED&pageToken="
                                   + page["nextPageToken"])  # a cursor is URL-safe as it is
    assert status == 200 and rest["nextPageToken"] == "" and len(rest["tasks"]) == 1
    assert {t["id"] for t in page["tasks"] + rest["tasks"]} == {t["id"] for t in
                                                              billing_rest("GET", "/a2a/tasks")[2]["tasks"]}
    status, _, body = billing_rest("GET", "/a2a/tasks?pageSize=2&pageToken=" + page["nextPageToken"])
    assert (status, error_of(body)[2]) == (400, "INVALID_PARAMS"), "a cursor is for the filters it was made with"
    for query, why in [("pageSize=abc", "pageSize"), ("pageSize=1&pageSize=2", "more than once"),
                       ("pageSize=--5", "pageSize"), ("pageSize=-", "pageSize"), ("pageSize=5-", "pageSize"),
                       ("pageSize=%EF%BC%95", "pageSize"), ("historyLength=--1", "historyLength"),
                       ("&".join(f"f{n}=1" for n in range(30)), "query parameters")]:
        status, _, body = billing_rest("GET", f"/a2a/tasks?{query}")
        assert (status, error_of(body)[2]) == (400, "INVALID_PARAMS") and why in body["error"]["message"]


@pytest.mark.parametrize("verb, path, body, headers, expected", [
    ("GET", "/a2a/tasks/no-such-task", None, {}, (404, "NOT_FOUND", "TASK_NOT_FOUND")),
    ("POST", "/a2a/tasks/no-such-task:cancel", None, {}, (404, "NOT_FOUND", "TASK_NOT_FOUND")),
    ("POST", "/a2a/message:send", REFUND, {"A2A-Version": "0.3"}, (400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED")),
    ("POST", "/a2a/message:send", REFUND, {"Authorization": "Bearer wrong"}, (401, "UNAUTHENTICATED", "UNAUTHENTICATED")),
    ("POST", "/a2a/message:send", {"message": {"role": "ROLE_USER"}}, {}, (400, "INVALID_ARGUMENT", "INVALID_PARAMS")),
    ("POST", "/a2a/message:send", {**REFUND, "configuration": {"acceptedOutputModes": ["image/png"]}}, {},
     (400, "INVALID_ARGUMENT", "CONTENT_TYPE_NOT_SUPPORTED")),
])
def test_errors_are_google_rpc_statuses_under_the_http_status_section_5_4_gives_them(billing_rest, verb, path, body,
                                                                                     headers, expected):
    status, answer_headers, answer = billing_rest(verb, path, body, headers)
    assert (status, *error_of(answer)[1:]) == expected and answer["error"]["code"] == status
    assert answer_headers["content-type"] == "application/json"
    assert ("www-authenticate" in answer_headers) == (status == 401)


def test_cancelling_a_finished_task_is_400_failed_precondition_as_a2a_1_0_1_maps_it(billing_rest):
    task = billing_rest("POST", "/a2a/message:send", REFUND)[2]["task"]
    status, _, body = billing_rest("POST", f"/a2a/tasks/{task['id']}:cancel")
    assert (status, *error_of(body)[1:]) == (400, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE")


def test_a_route_asked_with_the_wrong_verb_is_405_with_allow_and_no_route_is_404(billing_rest):
    status, headers, body = billing_rest("DELETE", "/a2a/message:send")
    assert status == 405 and headers["allow"] == "POST" and body["error"]["status"] == "UNIMPLEMENTED"
    status, _, body = billing_rest("GET", "/a2a/no/such/route/here")
    assert status == 404 and body["error"]["code"] == 404
    status, _, _ = billing_rest("GET", "/a2a/tasks/x:subscribe")  # GET is the proto's verb: a stream, or an error
    assert status == 404, "an unknown task, not an unknown route"


def test_message_stream_sends_bare_stream_responses_as_server_sent_events(billing_rest):
    status, headers, body = billing_rest("POST", "/a2a/message:stream", REFUND)
    events = [json.loads(line[len(b"data: "):]) for line in body.splitlines() if line.startswith(b"data: ")]
    assert status == 200 and headers["content-type"] == "text/event-stream"
    assert "jsonrpc" not in events[0] and "task" in events[0], "no JSON-RPC envelope: the StreamResponse itself"
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    status, _, finished = billing_rest("POST", f"/a2a/tasks/{events[0]['task']['id']}:subscribe")
    assert (status, error_of(finished)[2]) == (400, "UNSUPPORTED_OPERATION"), "a finished task has no more events"


def test_push_configs_are_created_read_listed_and_deleted_at_their_routes():
    peer = billing.billing_agent(allow_private_webhooks=True)
    with serving(PeerApp(peer, by_name("1.0"), token=TOKEN), idle_timeout=2.0) as server:
        call = Client(server.server_address[:2])
        task = call("POST", "/a2a/message:send", REFUND)[2]["task"]
        where = f"/a2a/tasks/{task['id']}/pushNotificationConfigs"
        status, _, made = call("POST", where, {"id": "hook-1", "url": "http://127.0.0.1:9/hook", "token": "s3cret"})
        assert status == 200 and (made["taskId"], made["id"]) == (task["id"], "hook-1")
        assert call("GET", f"{where}/hook-1")[2] == made
        assert call("GET", where)[2]["configs"] == [made]
        assert call("DELETE", f"{where}/hook-1")[:3:2] == (200, {})
        assert call("GET", where)[2]["configs"] == []


def test_the_extended_card_is_at_its_route_for_a_caller_with_the_token(billing_rest):
    status, _, card = billing_rest("GET", "/a2a/extendedAgentCard")
    assert status == 200 and card["description"].endswith(billing.EXTENDED_NOTE)
    assert billing_rest("GET", "/a2a/extendedAgentCard", headers={"Authorization": ""})[0] == 401


def test_hostile_bodies_and_paths_get_one_line_errors_never_a_500():
    shapes = [b"[1, 2]", b"{", b"\xff\xfe", b'{"a": 1, "a": 2}', b"[" * 5000, b"1e999", b'"text"']
    rng = random.Random(22)
    shapes += [bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200))) for _ in range(40)]
    with serving(PeerApp(billing.billing_agent(), by_name("1.0"), token=TOKEN), idle_timeout=2.0) as server:
        call = Client(server.server_address[:2])
        for body in shapes:
            status, headers, data = call.raw("POST", "/a2a/message:send", body, {"Content-Type": "application/json"})
            answer = json.loads(data)["error"]
            assert 400 <= status < 500 and answer["code"] == status and "\n" not in answer["message"]
        status, _, _ = call.raw("POST", "/a2a/message:send", b"{" + b" " * (2 << 20) + b"}",
                                {"Content-Type": "application/json"})
        assert status == 413
        for path in ["/a2a/tasks/%00%ff", "/a2a/" + "x/" * 300, "/a2a/tasks/" + "%2F" * 50, "/a2a/:cancel"]:
            assert 400 <= call.raw("GET", path)[0] < 500


# -- item 5: modes and text the way other SDKs send them -------------------------------------

def test_a_skill_that_lists_no_modes_takes_the_cards_defaults_as_proto3_means_it():
    card = {"defaultInputModes": ["application/json"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "process_refund", "inputModes": [], "outputModes": []},
                       {"id": "draw", "outputModes": ["image/png"]}]}
    refund, draw = wire_card.skills_from_wire(card)
    assert (refund.input_modes, refund.output_modes) == (("application/json",), ("text/plain",))
    assert (draw.input_modes, draw.output_modes) == (("application/json",), ("image/png",))


def test_billing_reads_a_json_object_sent_as_a_text_part_as_the_python_sdk_server_does(billing_rest):
    as_text = {"message": {**REFUND["message"], "parts": [{"text": '{"order_id": "ORD-7", "amount": 7}'}]}}
    status, _, sent = billing_rest("POST", "/a2a/message:send", as_text)
    assert status == 200 and "ORD-7" in sent["task"]["artifacts"][0]["parts"][0]["text"]
    bad = {"message": {**REFUND["message"], "messageId": "m-2", "parts": [{"text": '{"order_id": "ORD-8"'}]}}
    assert billing_rest("POST", "/a2a/message:send", bad)[0] == 400


def test_accepted_output_modes_are_honoured_where_the_skill_answers_in_one_and_refused_where_it_cannot(billing_rest):
    for accepted, expected in [(["text/*"], 200), (["*/*"], 200), (["application/json"], 200), (["image/png"], 400)]:
        message = {**REFUND["message"], "messageId": f"m-{accepted[0]}"}
        answer = billing_rest("POST", "/a2a/message:send", {"message": message,
                                                            "configuration": {"acceptedOutputModes": accepted}})
        assert answer[0] == expected, accepted
    frame = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
             "params": {**REFUND, "configuration": {"acceptedOutputModes": ["image/png"]}}}
    assert billing_rest("POST", "/a2a", frame)[2]["error"]["code"] == -32005, "the same refusal over JSON-RPC"


# -- conformance-agent's shapes (item 4) -----------------------------------------------------

def test_conformance_agent_declares_each_shape_the_kit_needs():
    plain = by_name("1.0").card_to_wire(conformance_agent().card)
    assert plain["capabilities"]["streaming"] and plain["capabilities"]["pushNotifications"]
    shaped = conformance_agent(no_streaming=True, no_push=True, extended_card="served",
                               require_extension="urn:a2a:tck:required-extension")
    caps = by_name("1.0").card_to_wire(shaped.card)["capabilities"]
    assert (caps["streaming"], caps["pushNotifications"], caps["extendedAgentCard"]) == (False, False, True)
    assert {"uri": "urn:a2a:tck:required-extension", "required": True} in caps["extensions"]


EXTENDED_CARD_ASKED = [("GET", "/a2a/extendedAgentCard", None),  # HTTP+JSON
                       ("POST", "/a2a", {"jsonrpc": "2.0", "id": 6, "method": "GetExtendedAgentCard"}),
                       ("POST", "/a2a", {"jsonrpc": "2.0", "id": 6, "method": "agent/getAuthenticatedExtendedCard"})]


def version_for(body):
    """0.3's method is asked for under 0.3: under 1.0 (the client's default here) it is no method."""
    return {"A2A-Version": "0.3"} if body is not None and "/" in body["method"] else {}


@pytest.mark.parametrize("verb, path, body", EXTENDED_CARD_ASKED)
@pytest.mark.parametrize("credential", ["", "Bearer guess", "Bearer " + TOKEN])
def test_the_extended_card_asks_for_authentication_exactly_as_a_task_operation_does(verb, path, body, credential):
    # Spec 3.1.11 and 13.3: GetExtendedAgentCard MUST require authentication under the
    # card's schemes. The refusal is the one a task operation gets, byte for byte.
    peer = conformance_agent(extended_card="served")
    peer.card = peer.card._replace(auth_schemes=("bearer",))  # as `serve --auth bearer` declares it
    app = PeerApp(peer, by_name("1.0"), token=TOKEN)
    with serving(app, idle_timeout=2.0) as server:
        call = Client(server.server_address[:2])
        status, headers, answer = call.raw(verb, path, b"" if body is None else json.dumps(body).encode(),
                                           {"Authorization": credential, "Content-Type": "application/json",
                                            **version_for(body)})
        task_op = call.raw(verb, "/a2a/tasks" if body is None else path, b"" if body is None else json.dumps(
            {**body, "method": "ListTasks"}).encode(), {"Authorization": credential, "Content-Type": "application/json"})
        public = json.loads(call.raw("GET", "/.well-known/agent-card.json")[2])
    assert public["capabilities"]["extendedAgentCard"] is True and list(public["securitySchemes"]) == ["bearer"]
    if credential.endswith(TOKEN):
        card = json.loads(answer)
        card = card["result"] if body is not None else card
        assert status == 200 and card["description"].endswith(conformance.EXTENDED_NOTE)
        return
    invalid = ', error="invalid_token"' if credential.startswith("Bearer ") else ""  # RFC 6750 3.1: one presented
    assert (status, headers["www-authenticate"]) == (401, 'Bearer realm="conformance-agent"' + invalid)
    assert (task_op[0], task_op[1]["www-authenticate"], task_op[2]) == (status, headers["www-authenticate"], answer)
    refused = json.loads(answer)["error"]
    if body is None:
        assert (refused["code"], refused["status"], refused["details"][0]["reason"]) == (401, "UNAUTHENTICATED",
                                                                                         "UNAUTHENTICATED")
    else:
        assert (refused["code"], refused["data"][0]["reason"]) == (-32041, "UNAUTHENTICATED")


@pytest.mark.parametrize("verb, path, body", EXTENDED_CARD_ASKED)
def test_an_agent_that_checks_no_credentials_shows_its_extended_card_to_nobody(verb, path, body):
    # With no scheme there is no one to authenticate, so nobody gets it (-32007), and an
    # unconfigured one is -32007 as the spec says; `serve` refuses the first (below).
    for shape in ("served", "unconfigured"):
        with serving(PeerApp(conformance_agent(extended_card=shape), by_name("1.0")), idle_timeout=2.0) as server:
            status, _, answer = Client(server.server_address[:2])(verb, path, body, {"Authorization": "Bearer x",
                                                                                   **version_for(body)})
        if body is None:
            assert (status, error_of(answer)[2]) == (400, "EXTENDED_AGENT_CARD_NOT_CONFIGURED")
        else:
            assert status == 200 and answer["error"]["code"] == -32007 and "result" not in answer


def test_serve_will_not_show_an_extended_card_where_its_card_declares_no_scheme():
    said = []
    options = type("Options", (), {"peer": "conformance-agent", "no_push": False, "no_streaming": False,
                                   "extended_card": "served", "require_extension": None, "auth": None})()
    assert demo.serve(options, by_name("1.0"), say=said.append, fail=said.append) == 2
    assert said == ["--extended-card served: an extended card is only for authenticated callers (A2A 13.3), "
                    "and this card declares no security scheme: add --auth KIND"]


def test_a_required_extension_is_refused_until_activated_on_either_binding():
    uri = "urn:a2a:tck:required-extension"
    app = PeerApp(conformance_agent(require_extension=uri), by_name("1.0"))
    with serving(app, idle_timeout=2.0) as server:
        call = Client(server.server_address[:2])
        message = {"message": {"messageId": "tck-complete-task-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}
        status, _, body = call("POST", "/a2a/message:send", message)
        assert (status, error_of(body)[2]) == (400, "EXTENSION_SUPPORT_REQUIRED")
        status, headers, _ = call("POST", "/a2a/message:send", message, {"A2A-Extensions": uri})
        assert status == 200 and headers["a2a-extensions"] == uri


def test_shape_flags_are_refused_for_a_peer_served_only_in_its_own_cards_shape():
    said = []
    options = type("Options", (), {"peer": "billing-agent", "no_push": True, "no_streaming": False,
                                   "extended_card": None, "require_extension": None})()
    assert demo.serve(options, by_name("1.0"), say=said.append, fail=said.append) == 2
    assert said == ["--no-push: billing-agent is served only in its own card's shape"]


def test_the_default_run_never_loads_the_http_json_binding():
    probe = ("import contextlib, io, runpy, sys\n"
             "sys.argv = ['a2a_delegation.py']\n"
             "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
             "    runpy.run_path('a2a_delegation.py', run_name='__main__')\n"
             "print('peers.app' in sys.modules, 'peers.rest' in sys.modules, 'peers.modes' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.stdout.split() == ["True", "False", "False"], result.stderr[-500:]


def test_get_tasks_id_subscribe_on_a_live_task_streams_it_rather_than_being_taken_for_get_task():
    app = PeerApp(billing.billing_agent(), by_name("1.0"), token=TOKEN)
    big = {"message": {"messageId": "m-big", "role": "ROLE_USER",
                       "parts": [{"data": {"order_id": "ORD-7", "amount": 6000}}]}}
    with serving(app, idle_timeout=2.0) as server:
        task = Client(server.server_address[:2])("POST", "/a2a/message:send", big)[2]["task"]
        assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", "paused for approval: live, not finished"
        for verb in ("GET", "POST"):  # GET is a2a.proto's verb, POST section 11.3's
            connection = http.client.HTTPConnection(*server.server_address[:2], timeout=5)
            try:
                connection.request(verb, f"/a2a/tasks/{task['id']}:subscribe", headers=V1)
                response = connection.getresponse()
                assert response.status == 200 and response.getheader("Content-Type") == "text/event-stream", verb
                line = b""
                while not line.startswith(b"data: "):  # bounded: the connection's timeout ends a silent stream
                    line = response.fp.readline(65536)
                    assert line, "the stream ended before its first event"
                first = json.loads(line[len(b"data: "):])
                assert first["task"]["id"] == task["id"]
                assert first["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
            finally:
                connection.close()


def test_a_step_up_follow_up_without_its_scope_is_permission_denied_on_either_binding():
    # A caller billing knows, whose token lacks the scope the paused task asks for: 403 over
    # HTTP+JSON, with the challenge naming the scope (RFC 6750 3 and 3.1: a MUST, which it lacked);
    # over JSON-RPC (answered by the method, under HTTP 200) the server's -32043.
    # Both name PERMISSION_DENIED, and the task stays paused.
    app = PeerApp(billing.billing_agent(step_up_above=1000.0), by_name("1.0"), token=TOKEN,
                  step_ups={"up-t0k": billing.STEP_UP_SCOPE})
    with serving(app, idle_timeout=2.0) as server:
        call = Client(server.server_address[:2])
        big = {"message": {"messageId": "m-1", "role": "ROLE_USER",
                           "parts": [{"data": {"order_id": "ORD-7", "amount": 2000}}]}}
        task = call("POST", "/a2a/message:send", big)[2]["task"]
        assert task["status"]["state"] == "TASK_STATE_AUTH_REQUIRED"
        follow_up = {"message": {"messageId": "m-2", "role": "ROLE_USER", "taskId": task["id"], "parts": [{"text": "go"}]}}
        challenge = f'Bearer error="insufficient_scope", scope="{billing.STEP_UP_SCOPE}"'
        for route in ("/a2a/message:send", "/a2a/message:stream"):
            status, headers, body = call("POST", route, follow_up)
            assert (status, *error_of(body)) == (403, 403, "PERMISSION_DENIED", "PERMISSION_DENIED"), route
            assert headers.get("www-authenticate") == challenge, (route, headers)
        frame = {"jsonrpc": "2.0", "id": 7, "method": "SendMessage", "params": follow_up}
        status, _, body = call("POST", "/a2a", frame)
        assert status == 200 and body["error"]["code"] == -32043, body
        assert body["error"]["data"][0]["reason"] == "PERMISSION_DENIED"
        assert call("GET", f"/a2a/tasks/{task['id']}")[2]["status"]["state"] == "TASK_STATE_AUTH_REQUIRED"
        done = call("POST", "/a2a/message:send", follow_up, {"Authorization": "Bearer up-t0k"})[2]["task"]
        assert done["status"]["state"] == "TASK_STATE_COMPLETED"




def test_the_servers_own_refusals_are_worded_as_the_route_asked_words_its_errors():
    """A body over the limit (413), a target too long (414), too many header lines (431) and a
    request too slow to arrive (408) are refused by the server before the peer sees them. On an
    HTTP+JSON route they came as JSON-RPC errors; they now come as that route's google.rpc.Status,
    as every other error there does. The JSON-RPC endpoint, and the card, keep JSON-RPC's."""
    import socket
    import time

    def refused(address, head, wait=0.0):
        with socket.create_connection(address, timeout=5) as sock:
            sock.sendall(head)
            time.sleep(wait)
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        status_line, _, rest = answer.partition(b"\r\n")
        return int(status_line.split()[1]), json.loads(rest.partition(b"\r\n\r\n")[2])

    heads = {413: lambda path: b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n" % path,
             414: lambda path: b"GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % (path + b"x" * 9000),
             431: lambda path: b"GET %s HTTP/1.1\r\nHost: x\r\n%s\r\n" % (path, b"X-A: 1\r\n" * 120),
             408: lambda path: b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n{" % path,
             501: lambda path: b"POST %s HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n" % path}
    named = {408: "DEADLINE_EXCEEDED", 501: "UNIMPLEMENTED"}  # google.rpc's name for the status
    app = PeerApp(billing.billing_agent(), by_name("1.0"), token=TOKEN)
    with serving(app, idle_timeout=2.0, request_timeout=0.3, max_body=1000) as server:
        address = server.server_address[:2]
        for status, head in heads.items():
            for path in (b"/a2a/message:send", b"/a2a/tasks/t-1"):
                got, body = refused(address, head(path), wait=0.5 if status == 408 else 0.0)
                assert got == status and body["error"]["code"] == status, body
                assert body["error"]["status"] == named.get(status, "INVALID_ARGUMENT"), body
            for path in (b"/a2a", b"/.well-known/agent-card.json"):
                got, body = refused(address, head(path), wait=0.5 if status == 408 else 0.0)
                assert got == status and body["jsonrpc"] == "2.0" and body["error"]["code"] == -32600, body

    from transports.base import HttpResponse
    for wrong in (RuntimeError("a hook's bug"), {"error": "a dict"}, "text", HttpResponse(413, {}, iter([b"x"]))):
        class Broken(PeerApp):
            def refused(self, path, status, error, wrong=wrong):
                if isinstance(wrong, Exception):
                    raise wrong
                return wrong
        with serving(Broken(billing.billing_agent(), by_name("1.0"), token=TOKEN), max_body=1000) as server:
            for _ in range(2):  # and the server serves on
                got, body = refused(server.server_address[:2], heads[413](b"/a2a/message:send"))
                assert got == 413 and body["error"]["code"] == -32600, ("said, whatever the hook does", wrong)


@pytest.mark.parametrize("length", [1_000_000_000, 2 ** 31 - 1, "2", "0", 0, 2 ** 31, 10 ** 30, -1])
def test_a_history_length_reads_the_same_in_the_query_as_in_json_rpc_params(billing_rest, length):
    """Spec 5.1: the same request answers alike on every binding. The query read 9 digits at most,
    so historyLength=1000000000 was refused over HTTP+JSON and kept all the history over JSON-RPC,
    which took 10**30; it is an int32, which ProtoJSON also reads from a string ("2")."""
    task = billing_rest("POST", "/a2a/message:send", REFUND)[2]["task"]
    frame = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": task["id"], "historyLength": length}}
    over_rpc = billing_rest("POST", "/a2a", frame)[2]
    status, _, over_rest = billing_rest("GET", f"/a2a/tasks/{task['id']}?historyLength={length}")
    if length in (2 ** 31, 10 ** 30, -1):
        assert status == 400 and over_rpc["error"]["code"] == -32602
        assert over_rest["error"]["message"] == over_rpc["error"]["message"] == "Invalid params: " + \
            "historyLength must be a whole number from 0 to 2,147,483,647"
    else:  # the task has one message: 0 shows none, any more shows it
        assert status == 200 and over_rest == over_rpc["result"]
        assert over_rest.get("history") == (None if int(length) == 0 else task["history"])


@pytest.mark.parametrize("auth", ["bearer", "apikey"])
def test_the_extended_card_declares_the_scheme_the_public_card_declares(auth):
    """Spec 3.1.11: a client SHOULD replace its public card with the extended one. Served with
    --auth bearer, the conformance agent's extended card said no scheme at all, the public one did."""
    from conftest import start_serve
    process, banner = start_serve("conformance-agent", "--wire", "1.0", "--auth", auth, "--token", "T0k-secret-1",
                                  "--extended-card", "served")
    try:
        url = next(base_url(line) for line in banner if "listening on" in line)
        with urllib.request.urlopen(url + "/.well-known/agent-card.json", timeout=10) as answer:
            public = json.load(answer)
        credential = {"Authorization": "Bearer T0k-secret-1"} if auth == "bearer" else {"X-API-Key": "T0k-secret-1"}
        frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard", "params": {}}).encode()
        asked = urllib.request.Request(url + "/a2a", frame, {"Content-Type": "application/json", "A2A-Version": "1.0",
                                                             **credential})
        with urllib.request.urlopen(asked, timeout=10) as answer:
            extended = json.load(answer)["result"]
    finally:
        process.stop()
    assert public["securitySchemes"] and public["securityRequirements"]
    assert (extended["securitySchemes"], extended["securityRequirements"]) == (public["securitySchemes"],
                                                                               public["securityRequirements"])


@pytest.mark.parametrize("where", ["messageId", "text", "key", "metadata"])
def test_an_unpaired_surrogate_is_refused_on_both_bindings_and_nothing_is_kept(billing_rest, where):
    """A "\\ud800" escape is valid JSON but no text. Kept with a task, it went out in every answer
    about it, and the official SDK's parser refused the whole answer: GetTask, and ListTasks for
    every task of that caller. A pair of surrogate escapes is a character, and is kept."""
    message = {"messageId": "m-\ud800" if where == "messageId" else "m-1", "role": "ROLE_USER",
               "metadata": {"skillId": "process_refund", **({"note": "\udc00"} if where == "metadata" else {})},
               "parts": [{"data": {"order_id": "ORD-7", "amount": 5, **({"\ud83d": 1} if where == "key" else {})}},
                         *([{"text": "for ORD-7 \ud800"}] if where == "text" else [])]}
    body = json.dumps({"message": message}).encode()  # json.dumps writes each surrogate as its \u escape
    assert b"\\ud" in body or b"\\udc" in body
    status, _, answer = billing_rest.raw("POST", "/a2a/message:send", body, {"Content-Type": "application/json"})
    assert status == 400 and b"unpaired surrogate" in answer
    frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}).encode()
    status, _, answer = billing_rest.raw("POST", "/a2a", frame, {"Content-Type": "application/json"})
    refused = json.loads(answer)
    assert status == 200 and refused["error"]["code"] == -32600 and "unpaired surrogate" in refused["error"]["message"]
    assert refused["id"] == 1, "the frame is JSON: its id is known, and echoed"
    assert billing_rest("GET", "/a2a/tasks")[2]["tasks"] == []
    kept = {**message, "messageId": "m-\U0001f600", "parts": [{"data": {"order_id": "ORD-8", "amount": 5}}],
            "metadata": {"skillId": "process_refund"}}
    sent = billing_rest("POST", "/a2a/message:send", {"message": kept})[2]["task"]
    assert sent["history"][0]["messageId"] == "m-\U0001f600"


def test_a_field_that_cannot_be_read_is_named_in_a_bad_request_detail_on_both_bindings(billing_rest):
    """Spec 9.5 and 11.6: validation errors SHOULD carry google.rpc.BadRequest; the field was named
    only inside the message's text. An error that names no one field (a part with no content at
    all) carries the ErrorInfo alone."""
    message = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": 5}]}
    frame = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    over_rpc = billing_rest("POST", "/a2a", frame)[2]["error"]["data"]
    status, _, over_rest = billing_rest("POST", "/a2a/message:send", {"message": message})
    bad = {"@type": "type.googleapis.com/google.rpc.BadRequest",
           "fieldViolations": [{"field": "message.parts[0].text", "description": "message.parts[0].text must be a string"}]}
    assert over_rpc[1] == bad and status == 400 and over_rest["error"]["details"][1] == bad
    assert over_rpc[0]["reason"] == over_rest["error"]["details"][0]["reason"] == "INVALID_PARAMS"
    status, _, listed = billing_rest("GET", "/a2a/tasks?pageSize=500")
    assert status == 400 and listed["error"]["details"][1]["fieldViolations"][0]["field"] == "pageSize"
    status, _, listed = billing_rest("GET", "/a2a/tasks?historyLength=-1&pageSize=5")
    assert listed["error"]["details"][1]["fieldViolations"] == [
        {"field": "historyLength", "description": "historyLength must be a whole number from 0 to 2,147,483,647"}]
    good = {**message, "parts": [{"text": "a"}]}
    for params, field in [({"message": {**good, "parts": []}}, "message.parts"),
                          ({"message": {**good, "messageId": ""}}, "message.messageId"),
                          ({"message": {**good, "parts": [{"raw": "%%"}]}}, "message.parts[0].raw")]:
        data = billing_rest("POST", "/a2a", {**frame, "params": params})[2]["error"]["data"]
        assert data[1]["fieldViolations"][0]["field"] == field, data
    wrong = billing_rest("POST", "/a2a", {**frame, "params": {"message": {**message, "parts": [{"text": "a"}, {}]}}})
    assert [detail["@type"] for detail in wrong[2]["error"]["data"]] == ["type.googleapis.com/google.rpc.ErrorInfo"]


def test_an_empty_path_segment_names_no_tenant_and_no_route(billing_rest):
    """/a2a//tasks was served as ListTasks of tenant "": a {tenant} is one segment, never an empty one."""
    billing_rest("POST", "/a2a/message:send", REFUND)
    for path in ("/a2a//tasks", "/a2a//message:send", "/a2a//tasks/x"):
        status, _, answer = billing_rest("GET" if "tasks" in path else "POST", path, None if "tasks" in path else REFUND)
        assert status == 404 and "tasks" not in answer, path
    assert len(billing_rest("GET", "/a2a/tasks")[2]["tasks"]) == 1


def test_a_status_filter_reads_the_same_in_the_query_as_in_json_rpc_params(billing_rest):
    """ProtoJSON reads an enum by its name or its number, digits too: ?status=3 was refused over
    HTTP+JSON where {"status": 3} filtered over JSON-RPC (spec 5.1); 0 is unset, no filter."""
    task = billing_rest("POST", "/a2a/message:send", REFUND)[2]["task"]
    for status, ids in (("3", [task["id"]]), ("TASK_STATE_COMPLETED", [task["id"]]), ("4", []), ("0", [task["id"]])):
        frame = {"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {"status": int(status) if
                                                                               status.isdigit() else status}}
        over_rpc = [t["id"] for t in billing_rest("POST", "/a2a", frame)[2]["result"]["tasks"]]
        answer = billing_rest("GET", f"/a2a/tasks?status={status}")
        assert answer[0] == 200 and [t["id"] for t in answer[2]["tasks"]] == over_rpc == ids, status
    assert billing_rest("GET", "/a2a/tasks?status=9")[0] == 400


@pytest.mark.parametrize("verb, path, body, named", [
    ("POST", "/a2a/message:send", {**REFUND, "configuration": {"historyLength": "many"}}, "configuration.historyLength"),
    ("POST", "/a2a/message:send", {**REFUND, "configuration": {"pushNotificationConfig": {"url": "http://x"}}},
     "configuration.pushNotificationConfig"),
    ("POST", "/a2a/message:send", {"message": {**REFUND["message"], "messageId": ""}}, "message.messageId"),
    ("GET", "/a2a/tasks/task-1?historyLength=-1", None, "historyLength"),
], ids=["a body's field", "a field named in its 0.3 spelling", "a message's field", "a query parameter"])
def test_an_http_json_error_names_the_field_where_this_binding_has_it_not_within_json_rpcs_params(
        billing_rest, verb, path, body, named):
    """The wire's readers name a field within JSON-RPC's `params`; over HTTP+JSON there is none:
    the field is in the body (or the query), and the message says so."""
    status, _, answer = billing_rest(verb, path, body)
    assert status == 400 and answer["error"]["status"] == "INVALID_ARGUMENT", answer
    assert named in answer["error"]["message"] and "params." not in json.dumps(answer), answer


def test_an_http_json_error_says_a_value_that_holds_params_as_it_was_sent(billing_rest):
    sent = {"message": {**REFUND["message"], "role": "params.ROLE_X"}}
    status, _, answer = billing_rest("POST", "/a2a/message:send", sent)
    assert status == 400 and "'params.ROLE_X'" in answer["error"]["message"], answer


@pytest.mark.parametrize("verb, place", [("POST", "body"), ("GET", "query"), ("DELETE", "query")])
def test_a_task_the_path_names_and_the_body_or_query_names_otherwise_by_its_proto_name_is_refused(verb, place):
    """ProtoJSON reads `task_id` as `taskId`, and so does the wire: a body or query naming another
    task so was silently overruled by the path (a webhook set on the path's task while the body
    named another's), where the same request spelled `taskId` is refused, as two tasks named are."""
    peer = billing.billing_agent(allow_private_webhooks=True)
    with serving(PeerApp(peer, by_name("1.0"), token=TOKEN), idle_timeout=2.0) as server:
        call = Client(server.server_address[:2])
        first = call("POST", "/a2a/message:send", REFUND)[2]["task"]["id"]
        other = call("POST", "/a2a/message:send", {"message": {**REFUND["message"], "messageId": "m-2", "parts": [
            {"data": {"order_id": "ORD-43", "amount": 43}}]}})[2]["task"]["id"]
        where = f"/a2a/tasks/{first}/pushNotificationConfigs"
        assert call("POST", where, {"id": "hook-1", "url": "http://127.0.0.1:9/hook"})[0] == 200
        for spelled in ("taskId", "task_id"):
            if place == "body":
                status, _, answer = call(verb, where, {spelled: other, "id": "hook-2", "url": "http://127.0.0.1:9/h"})
            else:
                status, _, answer = call(verb, f"{where}/hook-1?{spelled}={other}")
            assert status == 400 and "the path names taskId" in answer["error"]["message"], (spelled, answer)
        assert [config["id"] for config in call("GET", where)[2]["configs"]] == ["hook-1"]


@pytest.mark.parametrize("metadata", [5, "x", [1], True])
def test_a_cancel_whose_metadata_is_not_an_object_is_invalid_params_on_both_bindings_as_a_sends_is(billing_rest,
                                                                                                   metadata):
    """1.0's CancelTaskRequest carries metadata, a Struct: `metadata: 5` was taken, and the task
    canceled (or, finished, refused as not cancelable) as if none had been sent. GetTask's and
    SubscribeToTask's requests have no metadata: one there is a field nobody asked for (5.7)."""
    task = billing_rest("POST", "/a2a/message:send", REFUND)[2]["task"]
    frame = {"jsonrpc": "2.0", "id": 1, "method": "CancelTask", "params": {"id": task["id"], "metadata": metadata}}
    refused = billing_rest("POST", "/a2a", frame)[2]["error"]
    assert refused["code"] == -32602 and "params.metadata must be an object" in refused["message"], refused
    status, _, body = billing_rest("POST", f"/a2a/tasks/{task['id']}:cancel", {"metadata": metadata})
    assert (status, error_of(body)[1]) == (400, "INVALID_ARGUMENT") and "metadata must be an object" in body["error"][
        "message"], body
    read = billing_rest("POST", "/a2a", {**frame, "method": "GetTask", "params": {"id": task["id"], "metadata": 5}})
    assert read[2]["result"]["id"] == task["id"]
    kept = billing_rest("POST", "/a2a", {**frame, "params": {"id": task["id"], "metadata": {"why": "late"}}})[2]
    assert kept["error"]["code"] == -32002, "an object is read as before: the finished task is not cancelable"


def test_no_answer_of_the_binding_may_be_stored_by_a_cache_so_none_reaches_a_stranger_asking_the_same_url():
    """An API key travels in X-API-Key, not Authorization, so RFC 9111 3.5 does not keep a shared cache
    in front of the agent from storing an answer to it: a GET's 200 (or 404) with no Cache-Control is
    heuristically cacheable (RFC 9111 4.2.2; Varnish keeps one 120 s by default), and the caller's task
    list, task, webhook configs (their tokens too) and extended card went, from the cache, to anyone asking
    the same URL with no key at all. Every answer says no-store; a stream keeps its no-cache."""
    from conftest import exchange
    from peers.serving import scheme_for
    from transports.server import PeerServer
    server = PeerServer(None, "127.0.0.1", 0, idle_timeout=2.0)
    peer = billing.billing_agent(server.base_url)
    scheme, _ = scheme_for("apikey", "k3y-42", server.base_url, peer, None, pytest.fail)
    server.app = PeerApp(peer, by_name("1.0"), scheme=scheme, log=lambda line: None)
    server.start()

    def ask(verb, path, body=None):  # the key in its header, and no Authorization: all a cache goes by
        sent = b"" if body is None else json.dumps(body).encode()
        status, headers, answer = exchange(http.client.HTTPConnection(*server.server_address[:2], timeout=5), verb,
                                           path, sent, {"X-API-Key": "k3y-42", "A2A-Version": "1.0",
                                                        **({"Content-Type": "application/json"} if sent else {})})
        return status, {name.lower(): value for name, value in headers.items()}, answer
    try:
        task = json.loads(ask("POST", "/a2a/message:send", REFUND)[2])["task"]["id"]
        webhook = {"url": "https://hooks.example/a2a", "token": "webhook-secret"}
        assert ask("POST", f"/a2a/tasks/{task}/pushNotificationConfigs", webhook)[0] == 200
        for verb, path, expected in [
                ("GET", "/a2a/tasks", 200), ("GET", f"/a2a/tasks/{task}", 200),
                ("GET", f"/a2a/tasks/{task}/pushNotificationConfigs", 200),
                ("GET", f"/a2a/tasks/{task}/pushNotificationConfigs/{task}", 200),
                ("GET", "/a2a/extendedAgentCard", 200), ("GET", "/a2a/tasks/no-such-task", 404),
                ("GET", "/a2a/tasks?pageSize=0", 400), ("POST", f"/a2a/tasks/{task}:cancel", 400)]:
            status, headers, answer = ask(verb, path)
            assert status == expected and "no-store" in headers.get("cache-control", ""), (path, status, headers)
        assert b"webhook-secret" in ask("GET", f"/a2a/tasks/{task}/pushNotificationConfigs")[2], "what was at stake"
    finally:
        server.stop()
