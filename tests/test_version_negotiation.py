"""A2A-Version on the serving side (A2A 1.0 section 3.6): read from the header or the
request parameter, `1` taken as 1.0, a 0.3 name under 1.0 answered with 1.0's semantics,
and every hostile value one VersionNotSupported, on JSON-RPC and HTTP+JSON alike."""
import http.client
import json
from urllib.parse import quote

import pytest

from conftest import serving
from peers import billing
from peers.a2a.wire_format import by_name
from peers.app import PeerApp
from transports.inprocess import InProcessTransport

BASE = billing.BASE_URL + "/a2a"
AUTH = {"Content-Type": "application/json", "Authorization": "Bearer t0k"}
SEND_1_0 = {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "refund $5 for ORD-5"}]}}
SEND_0_3 = {"message": {"kind": "message", "messageId": "m-1", "role": "user",
                        "parts": [{"kind": "text", "text": "refund $5 for ORD-5"}]}}
HOSTILE = ["1.0.0.0", "01.0", "1.", ".1", "1..0", "v1.0", "1.0-rc1", "+1.0", "1.0, 0.3", "1.0,1.0", "\u00b2",
           "\u0661.0", "1.0\x00", "9" * 100_000, "1" + ".0" * 5000, "NaN", "1.0 ; q=1"]
VERSION_INFO = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "VERSION_NOT_SUPPORTED",
                 "domain": "a2a-protocol.org", "metadata": {}}]


@pytest.fixture
def app():
    logged = []
    app = PeerApp(billing.billing_agent(), by_name("1.0"), token="t0k", log=logged.append)
    app.logged = logged
    return app


def rpc(app, method, params, headers, query="", rid=7):
    frame = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode()
    answer = InProcessTransport({billing.BASE_URL: app}).post(BASE + query, frame, {**AUTH, **headers})
    assert answer.status == 200
    return json.loads(answer.body)


def rest(app, verb, route, body=None, headers=None):
    transport = InProcessTransport({billing.BASE_URL: app})
    sent = {**AUTH, **(headers or {})}
    answer = (transport.get(f"{BASE}/{route}", sent) if verb == "GET" else
              transport.post(f"{BASE}/{route}", b"" if body is None else json.dumps(body).encode(), sent))
    return answer.status, json.loads(answer.body)


# -- where the version comes from ---------------------------------------------------------

@pytest.mark.parametrize("headers, query", [({"A2A-Version": "1.0"}, ""), ({}, "?A2A-Version=1.0"),
                                            ({"A2A-Version": ""}, "?A2A-Version=1.0"), ({}, "?x=1&A2A-Version=1"),
                                            ({"A2A-Version": "1"}, ""), ({"A2A-Version": "1.0.9"}, ""),
                                            ({"A2A-Version": " 1.0\t"}, ""), ({"A2A-Version": "1"}, "?A2A-Version=1.0")])
def test_1_0_is_asked_for_by_header_or_request_parameter_and_1_means_1_0(app, headers, query):
    reply = rpc(app, "SendMessage", SEND_1_0, headers, query)
    assert reply["id"] == 7 and reply["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    task_id = reply["result"]["task"]["id"]
    assert rpc(app, "GetTask", {"id": task_id}, headers, query)["result"]["id"] == task_id


@pytest.mark.parametrize("name", ["a2a-version", "A2A-VERSION", "a2A-vErsion"])
def test_the_request_parameter_is_named_in_any_case_as_a_service_parameter_is(app, name):
    """Spec 3.2.6: service parameters have case-insensitive keys. ?a2a-version=1.0 was not read
    (a 1.0 route refused as 0.3), and beside the header it was not seen to differ."""
    status, sent = rest(app, "POST", f"message:send?{name}=1.0", SEND_1_0)
    assert status == 200 and sent["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert rpc(app, "GetTask", {"id": sent["task"]["id"]}, {}, f"?{name}=1")["result"]["id"] == sent["task"]["id"]
    status, refused = rest(app, "GET", f"tasks/{sent['task']['id']}?{name}=0.3", headers={"A2A-Version": "1.0"})
    assert status == 400 and "differ" in refused["error"]["message"]


def test_the_http_json_routes_take_the_request_parameter_and_do_not_read_it_as_a_field(app):
    status, sent = rest(app, "POST", "message:send?A2A-Version=1.0", SEND_1_0)
    assert status == 200 and sent["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    task_id = sent["task"]["id"]
    assert rest(app, "GET", f"tasks/{task_id}?A2A-Version=1&historyLength=0")[1]["id"] == task_id
    listed = rest(app, "GET", "tasks?pageSize=1&A2A-Version=1.0")[1]
    assert [task["id"] for task in listed["tasks"]] == [task_id]
    assert rest(app, "GET", f"tasks/{task_id}", headers={"A2A-Version": "1"})[1]["id"] == task_id
    # Without it, a route is 0.3 (section 3.6.2), which HTTP+JSON does not serve: as before.
    status, refused = rest(app, "GET", f"tasks/{task_id}")
    assert (status, refused["error"]["status"], refused["error"]["details"]) == (400, "FAILED_PRECONDITION",
                                                                                  VERSION_INFO)


# -- 1.0's semantics under 1.0; no version keeps 0.3's ---------------------------------------

@pytest.mark.parametrize("method, params", [("message/send", SEND_0_3), ("tasks/get", {"id": "task-1"}),
                                            ("tasks/cancel", {"id": "task-1"}),
                                            ("tasks/send", {"skill": "process_refund",
                                                            "input": {"order_id": "ORD-5", "amount": 5.0}})])
@pytest.mark.parametrize("headers, query", [({"A2A-Version": "1.0"}, ""), ({}, "?A2A-Version=1.0"),
                                            ({"A2A-Version": "1"}, "")])
def test_an_older_name_under_1_0_is_no_method_as_1_0_answers_any_name_it_lacks(app, method, params, headers, query):
    reply = rpc(app, method, params, headers, query)
    assert reply["id"] == 7 and reply["error"]["code"] == -32601 and "result" not in reply
    assert "A2A 1.0" in reply["error"]["message"] and "\n" not in reply["error"]["message"]
    assert app.peer.store.tasks == {}


@pytest.mark.parametrize("headers, query", [({}, ""), ({"A2A-Version": ""}, ""), ({"A2A-Version": "0.3"}, ""),
                                            ({}, "?A2A-Version=0.3"), ({"A2A-Version": "0"}, "")])
def test_with_no_version_or_0_3_the_0_3_and_essay_methods_are_answered_as_before(app, headers, query):
    task = rpc(app, "message/send", SEND_0_3, headers, query)["result"]
    assert task["kind"] == "task" and task["status"]["state"] == "completed"
    assert rpc(app, "tasks/get", {"id": task["id"]}, headers, query)["result"]["id"] == task["id"]
    essay = rpc(app, "tasks/send", {"skill": "process_refund", "input": {"order_id": "ORD-6", "amount": 6.0}},
                headers, query)
    assert essay["result"]["lifecycle"][-1] == "completed"
    refused = rpc(app, "SendMessage", SEND_1_0, headers, query)["error"]  # a 1.0 name: -32009, as before
    assert refused["code"] == -32009 and refused["data"] == VERSION_INFO


# -- hostile values: one VersionNotSupported each, whatever the method ------------------------

@pytest.mark.parametrize("value", HOSTILE)
@pytest.mark.parametrize("method, params", [("SendMessage", SEND_1_0), ("message/send", SEND_0_3)])
def test_a_malformed_version_is_one_version_not_supported_on_json_rpc(app, value, method, params):
    for headers, query in (({"A2A-Version": value}, ""), ({}, "?A2A-Version=" + quote(value, safe=""))):
        if len(query) > 8000:
            continue  # a URL that long never reaches an app over HTTP (the server's head limit)
        error = rpc(app, method, params, headers, query)["error"]
        assert error["code"] == -32009 and "is not a version" in error["message"]
        assert len(error["message"]) < 200 and "\n" not in error["message"]
    assert app.peer.store.tasks == {} and app.logged == []


@pytest.mark.parametrize("value", HOSTILE)
def test_a_malformed_version_is_a_400_failed_precondition_on_http_json(app, value):
    status, refused = rest(app, "POST", "message:send", SEND_1_0, {"A2A-Version": value})
    assert (status, refused["error"]["status"], refused["error"]["details"]) == (400, "FAILED_PRECONDITION",
                                                                                  VERSION_INFO)
    assert "is not a version" in refused["error"]["message"] and app.peer.store.tasks == {}


@pytest.mark.parametrize("headers, query, why", [
    ({"A2A-Version": "1.0"}, "?A2A-Version=0.3", "differ"),  # which one a proxy judged by is unknown
    ({"A2A-Version": "0.3"}, "?A2A-Version=1", "differ"),
    ({}, "?A2A-Version=1.0&A2A-Version=1.0", "given 2 times"),
    ({"A2A-Version": "2.0"}, "", "not served here"), ({"A2A-Version": "1.1"}, "", "not served here"),
    ({}, "?A2A-Version=0.2", "not served here"), ({"A2A-Version": "7"}, "", "not served here"),
])
def test_versions_that_disagree_or_are_not_served_are_refused_on_both_bindings(app, headers, query, why):
    for method, params in (("SendMessage", SEND_1_0), ("message/send", SEND_0_3)):
        error = rpc(app, method, params, headers, query)["error"]
        assert error["code"] == -32009 and why in error["message"]
    status, refused = rest(app, "POST", "message:send" + query, SEND_1_0, headers)
    assert (status, refused["error"]["details"]) == (400, VERSION_INFO) and why in refused["error"]["message"]
    assert app.peer.store.tasks == {}


# -- over a real socket ----------------------------------------------------------------------

def ask(server, path, frame, headers):
    """POST with http.client, each (name, value) its own header line, as sent."""
    connection = http.client.HTTPConnection(*server.server_address[:2], timeout=5)
    try:
        connection.putrequest("POST", path)
        for name, value in [*headers, ("Content-Type", "application/json"), ("Authorization", "Bearer t0k"),
                            ("Content-Length", str(len(frame)))]:
            connection.putheader(name, value)
        connection.endheaders(frame)
        answer = connection.getresponse()
        return answer.status, json.loads(answer.read())
    finally:
        connection.close()


def test_over_a_socket_the_parameter_serves_1_0_and_two_headers_are_refused(app):
    frame = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "SendMessage", "params": SEND_1_0}).encode()
    with serving(app, idle_timeout=2.0) as server:
        status, sent = ask(server, "/a2a?A2A-Version=1.0", frame, [])
        assert status == 200 and sent["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        status, twice = ask(server, "/a2a", frame, [("A2A-Version", "1.0"), ("A2A-Version", "0.3")])
        status_same, same = ask(server, "/a2a", frame, [("A2A-Version", "1.0"), ("A2A-Version", "1.0")])
        old_name = ask(server, "/a2a", frame.replace(b'"SendMessage"', b'"message/send"'), [("A2A-Version", "1")])
    assert status == status_same == 200 and twice["id"] == same["id"] == 3
    for refused in (twice["error"], same["error"]):  # HTTP joins them ("1.0, 0.3"): no one version
        assert refused["code"] == -32009 and "header sent twice" in refused["message"]
    assert old_name[0] == 200 and old_name[1]["error"]["code"] == -32601
    assert len(app.peer.store.tasks) == 1 and app.logged == []
