"""A2A 1.0 and 0.3 beside the essay's frames: the specification's shapes field for field,
the version rules, the error table, idempotency, scoping, and the card each wire serves."""
import json

import pytest

import re

import a2a_delegation as story
from conftest import Client, serving, support_agent
from peers import billing, rogue
from peers.a2a import errors, wire_format as wire_formats
from peers.a2a.model import Message, Part
from peers.app import PeerApp
from peers.methods import OPERATIONS
from peers.stamps import utc_now
from peers.support.calling.config import AllowEntry
from transports.inprocess import InProcessTransport
from transports.network import HttpTransport

ENDPOINT = "https://billing.acme.example/a2a"
AUTH = {"Content-Type": "application/json", "Authorization": "Bearer t0k"}
V1 = {**AUTH, "A2A-Version": "1.0"}


@pytest.fixture
def app():
    return PeerApp(billing.billing_agent(), wire_formats.by_name("1.0"), token="t0k")


def rpc(app, method, params, headers=V1, rid=1):
    frame = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode()
    response = InProcessTransport({billing.BASE_URL: app}).post(ENDPOINT, frame, headers)
    assert response.status == 200
    return json.loads(response.body)


def text_message(text, message_id="m-1", roles=("ROLE_USER", None)):
    return {"message": {"messageId": message_id, "role": roles[0], "parts": [{"text": text}]}}


# -- A2A 1.0 ------------------------------------------------------------------------------

def test_a_spec_shaped_1_0_send_message_gets_a_task_as_the_spec_spells_it(app):
    reply = rpc(app, "SendMessage", text_message("Please refund $180 on order ORD-3300"))
    task = reply["result"]["task"]
    assert set(task) == {"id", "contextId", "status", "artifacts", "history"}
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    answer = task["status"]["message"]
    assert answer["role"] == "ROLE_AGENT" and "kind" not in answer
    assert answer["parts"] == [{"text": "refund of $180.00 issued for ORD-3300 (ref BILL-ORD-3300)"}]
    assert task["artifacts"] == [{"artifactId": f"{task['id']}-result", "parts": answer["parts"]}]
    assert task["history"] == [{"messageId": "m-1", "contextId": task["contextId"], "taskId": task["id"],
                                "role": "ROLE_USER", "parts": [{"text": "Please refund $180 on order ORD-3300"}]}]


def test_a_data_part_with_a_media_type_is_the_skills_typed_input(app):
    params = {"message": {"messageId": "m-9", "role": "ROLE_USER", "parts": [
        {"data": {"order_id": "ORD-5", "amount": 2.5}, "mediaType": "application/json"}]}}
    task = rpc(app, "SendMessage", params)["result"]["task"]
    assert "ORD-5" in task["status"]["message"]["parts"][0]["text"]


@pytest.mark.parametrize("version", [None, "", "0.3", "0", "2.0", "1.1", "2"])
def test_a_1_0_method_without_version_1_0_is_minus_32009_with_error_info(app, version):
    headers = dict(AUTH) if version is None else {**AUTH, "A2A-Version": version}
    reply = rpc(app, "SendMessage", text_message("refund $1 for ORD-1"), headers)
    assert reply["error"]["code"] == -32009
    assert reply["error"]["data"] == [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                                       "reason": "VERSION_NOT_SUPPORTED", "domain": "a2a-protocol.org",
                                       "metadata": {}}]
    assert app.peer.store.tasks == {}


def test_get_task_answers_the_bare_task_and_minus_32001_for_an_unknown_id(app):
    task = rpc(app, "SendMessage", text_message("refund $3 for ORD-3"))["result"]["task"]
    got = rpc(app, "GetTask", {"id": task["id"], "historyLength": 0})["result"]
    assert got["id"] == task["id"] and "task" not in got and "history" not in got
    missing = rpc(app, "GetTask", {"id": "task-404"})["error"]
    assert missing["code"] == -32001 and missing["data"][0]["reason"] == "TASK_NOT_FOUND"


def test_cancelling_a_completed_task_is_minus_32002(app):
    task = rpc(app, "SendMessage", text_message("refund $3 for ORD-3"))["result"]["task"]
    error = rpc(app, "CancelTask", {"id": task["id"]})["error"]
    assert error["code"] == -32002 and error["data"][0]["reason"] == "TASK_NOT_CANCELABLE"


def test_list_tasks_pages_through_the_callers_tasks(app):
    for n in range(5):
        rpc(app, "SendMessage", text_message(f"refund $1 for ORD-{n}", message_id=f"m-{n}"))
    first = rpc(app, "ListTasks", {"pageSize": 2})["result"]
    assert first["totalSize"] == 5 and len(first["tasks"]) == 2 and first["nextPageToken"]
    second = rpc(app, "ListTasks", {"pageSize": 2, "pageToken": first["nextPageToken"]})["result"]
    last = rpc(app, "ListTasks", {"pageSize": 2, "pageToken": second["nextPageToken"]})["result"]
    assert len(last["tasks"]) == 1 and last["nextPageToken"] == "" and last["totalSize"] == 5
    listed = [t["id"] for page in (first, second, last) for t in page["tasks"]]
    assert listed == [f"task-{n}" for n in (5, 4, 3, 2, 1)], "newest first, each once"
    assert rpc(app, "ListTasks", {"status": "TASK_STATE_WORKING"})["result"]["totalSize"] == 0
    assert rpc(app, "ListTasks", {"pageSize": 0})["error"]["code"] == -32602


def test_one_client_cannot_read_another_clients_task_even_knowing_its_id():
    app = PeerApp(billing.billing_agent(), wire_formats.by_name("1.0"), token="t0k")
    task = rpc(app, "SendMessage", text_message("refund $3 for ORD-3"))["result"]["task"]
    app.token = "other"  # a second client, with its own credentials
    other = {**V1, "Authorization": "Bearer other"}
    assert rpc(app, "GetTask", {"id": task["id"]}, other)["error"]["code"] == -32001
    assert rpc(app, "ListTasks", {}, other)["result"]["totalSize"] == 0


def test_a_repeated_message_id_returns_the_same_task_and_refunds_once(app):
    first = rpc(app, "SendMessage", text_message("refund $7 for ORD-7", message_id="dup-1"))
    again = rpc(app, "SendMessage", text_message("refund $7 for ORD-7", message_id="dup-1"), rid=2)
    assert first["result"] == again["result"]
    assert len(app.peer.store.tasks) == 1


@pytest.mark.parametrize("params, code", [
    ({}, -32602),
    ({"message": {"role": "ROLE_USER", "parts": [{"text": "x"}]}}, -32602),  # no messageId
    ({"message": {"messageId": "m", "role": "user", "parts": [{"text": "refund $1 for A-1"}]}}, -32602),  # 0.3 role
    ({"message": {"messageId": "m", "role": "ROLE_USER", "parts": []}}, -32602),
    ({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hello"}]}}, -32602),
    ({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"raw": "iVBORw==", "mediaType": "image/png"}]}}, -32005),
])
def test_bad_1_0_messages_get_the_right_error(app, params, code):
    assert rpc(app, "SendMessage", params)["error"]["code"] == code


@pytest.mark.parametrize("named", ["pushNotificationConfig", "push_notification_config"])
def test_a_1_0_send_with_0_3s_name_for_its_webhook_is_refused_not_left_without_pushes(app, named):
    message = {"messageId": "m", "role": "ROLE_USER", "parts": [{"data": {"order_id": "ORD-7", "amount": 5}}]}
    answer = rpc(app, "SendMessage", {"message": message, "configuration": {named: {"url": "https://example.com/hook"}}})
    assert answer["error"]["code"] == -32602 and "in 1.0 it is taskPushNotificationConfig" in answer["error"]["message"]
    assert len(app.peer.store.tasks) == 0


@pytest.mark.parametrize("role, said", [([1], "message.role (an array) is not one of"),
                                        ({"a": 1}, "message.role (an object) is not one of"),
                                        ("user", "message.role 'user' is not one of")])
def test_a_role_of_the_wrong_kind_is_named_in_jsons_words(app, role, said):
    params = {"message": {"messageId": "m", "role": role, "parts": [{"text": "x"}]}}
    error = rpc(app, "SendMessage", params)["error"]
    assert error["code"] == -32602 and said in error["message"], error


def test_the_error_table_has_every_a2a_code_with_the_spec_numbers():
    expected = {"TaskNotFound": -32001, "TaskNotCancelable": -32002, "PushNotificationNotSupported": -32003,
                "UnsupportedOperation": -32004, "ContentTypeNotSupported": -32005, "InvalidAgentResponse": -32006,
                "ExtendedAgentCardNotConfigured": -32007, "ExtensionSupportRequired": -32008,
                "VersionNotSupported": -32009}
    for name, code in expected.items():
        error = getattr(errors, name)("x")
        assert error.code == code and error.to_wire()["code"] == code
        assert errors.error_details(error)[0]["reason"] == errors.A2AErrorCode(code).name


# -- A2A 0.3 ------------------------------------------------------------------------------

def test_a_spec_shaped_0_3_message_send_gets_a_bare_task_with_kinds(app):
    params = {"message": {"kind": "message", "messageId": "m-1", "role": "user",
                          "parts": [{"kind": "text", "text": "refund $12.50 for ORD-12"}]},
              "configuration": {"blocking": True}}
    task = rpc(app, "message/send", params, AUTH)["result"]
    assert task["kind"] == "task" and task["status"]["state"] == "completed"
    assert task["status"]["message"]["kind"] == "message" and task["status"]["message"]["role"] == "agent"
    assert task["artifacts"][0]["parts"] == [{"kind": "text", "text": "refund of $12.50 issued for ORD-12 (ref BILL-ORD-12)"}]
    got = rpc(app, "tasks/get", {"id": task["id"]}, AUTH)["result"]
    assert got["id"] == task["id"] and got["kind"] == "task"
    assert rpc(app, "tasks/cancel", {"id": task["id"]}, AUTH)["error"] == {
        "code": -32002, "message": f"Task cannot be canceled: task '{task['id']}' is already completed"}


@pytest.mark.parametrize("message, part, said", [
    (["message"], "data", "message.kind is \"['message']\"; a message has kind 'message'"),
    ("task", "data", "message.kind is 'task'; a message has kind 'message'"),
    ("message", {"a": 1}, "message.parts[0].kind is \"{'a': 1}\"; a part with data has kind 'data'"),
    ("message", "text", "message.parts[0].kind is 'text'; a part with data has kind 'data'"),
])
def test_a_0_3_kind_of_the_wrong_type_or_value_is_refused_naming_it_not_ignored(app, message, part, said):
    params = {"message": {"kind": message, "messageId": "m-1", "role": "user",
                          "parts": [{"kind": part, "data": {"order_id": "ORD-12", "amount": 5}}]}}
    assert rpc(app, "message/send", params, AUTH)["error"] == {"code": -32602, "message": f"Invalid params: {said}"}
    params["message"]["kind"], params["message"]["parts"][0]["kind"] = "message", "data"
    assert rpc(app, "message/send", params, AUTH)["result"]["status"]["state"] == "completed", "nothing was done before"


# -- cards, and the support agent choosing the wire -----------------------------------------

def test_each_wire_serves_its_own_card():
    def card(name):
        app = PeerApp(billing.billing_agent(), wire_formats.by_name(name))
        return json.loads(InProcessTransport({billing.BASE_URL: app}).get(
            "https://billing.acme.example/.well-known/agent-card.json", {}).body)
    v1, v03, essay = card("1.0"), card("0.3"), card("essay")
    assert v1["supportedInterfaces"] == [*({"url": ENDPOINT, "protocolBinding": "JSONRPC", "protocolVersion": version}
                                           for version in ("1.0", "0.3")),
                                         {"url": ENDPOINT, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}], \
        "one endpoint answers both versions, and 1.0's HTTP+JSON routes below it"
    assert v1["securitySchemes"] == {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}}
    assert v1["securityRequirements"] == [{"schemes": {"bearer": {"list": []}}}]
    assert v1["skills"][0] == {"id": "process_refund", "name": "Process refund",
                               "description": "Issue a refund for an order", "tags": ["billing", "refunds"],
                               "inputModes": ["application/json", "text/plain"],
                               "outputModes": ["text/plain", "application/json"]}, "the modes its card file gives"
    assert v03["skills"][0] == v1["skills"][0]
    assert essay["skills"][0]["outputModes"] == ["application/json"], "the essay's card, as the essay prints it"
    assert "url" not in v1 and "protocolVersion" not in v1
    assert (v03["url"], v03["preferredTransport"], v03["protocolVersion"]) == (ENDPOINT, "JSONRPC", "0.3.0")
    assert v03["security"] == [{"bearer": []}]
    assert essay["authentication"] == {"schemes": ["bearer"]}


def test_the_support_agent_speaks_the_wire_each_card_declares():
    allow = [AllowEntry("billing-agent", ENDPOINT), AllowEntry("refund-bot-9000", "https://refunds-r-us.example/a2a")]
    agent, printer, _ = support_agent(allow, wire="1.0", apps={
        rogue.BASE_URL: PeerApp(rogue.refund_bot_9000(), wire_formats.by_name("0.3"))})
    cards = [f"{base}/.well-known/agent-card.json" for base in (billing.BASE_URL, rogue.BASE_URL)]
    outcomes = story.run(agent, cards)
    methods = [json.loads(f.body)["method"] for f in printer.frames if f.http_method == "POST" and f.direction == "-->"]
    assert methods == ["SendMessage", "message/send"]
    assert printer.frames[2].headers["A2A-Version"] == "1.0"
    assert outcomes[0].result == "refund of $180.00 issued for ORD-3300 (ref BILL-ORD-3300)"


def test_no_method_name_is_claimed_by_two_wires_and_each_names_a_known_operation():
    claimed = [method for name in wire_formats.NAMES for method in wire_formats.by_name(name).METHODS]
    assert len(claimed) == len(set(claimed)) == 1 + 10 + 11  # essay, 0.3, 1.0
    assert {op for name in wire_formats.NAMES for op in wire_formats.by_name(name).METHODS.values()} == set(OPERATIONS)


def test_a_client_written_as_in_seed_000_gets_the_refund_text_over_http():
    with serving(None) as server:  # bind first: the port is part of the card's URL
        base = server.base_url
        server.app = PeerApp(billing.billing_agent(base), wire_formats.by_name("0.3"), token="t0k")
        http = HttpTransport(timeout=5)
        card = json.loads(http.get(f"{base}/.well-known/agent-card.json", {}).body)
        body = json.dumps({"jsonrpc": "2.0", "method": "message/send", "params": {"message": {
            "messageId": "msg-1234", "role": "user", "parts": [{"text": "refund $42 on ORD-42"}]}}, "id": 1})
        envelope = json.loads(http.post(card["url"], body.encode(), AUTH).body)
        reply = "".join(p.get("text", "") for p in envelope["result"]["status"]["message"]["parts"])
        assert reply == "refund of $42.00 issued for ORD-42 (ref BILL-ORD-42)"


def test_the_task_store_is_bounded_and_forgets_evicted_message_ids():
    peer = billing.billing_agent(max_tasks=3)
    for n in range(5):
        peer.send_message(Message(f"m-{n}", "user", (Part(text=f"refund $1 for ORD-{n}"),)))
    assert list(peer.store.tasks) == ["task-3", "task-4", "task-5"]
    assert ("", "m-0") not in peer.store.by_message and len(peer.store.by_message) == 3
    again = peer.send_message(Message("m-4", "user", (Part(text="refund $1 for ORD-4"),)))
    assert again.id == "task-5" and len(peer.store.tasks) == 3, \
        "a kept message id is still idempotent"


def test_a_served_peer_stamps_each_state_with_utc_milliseconds():
    app = PeerApp(billing.billing_agent(clock=utc_now), wire_formats.by_name("1.0"), token="t0k")
    status = rpc(app, "SendMessage", text_message("refund $2 for ORD-2"))["result"]["task"]["status"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", status["timestamp"])


def test_the_served_clock_writes_a_second_out_once_yet_moves_on_with_the_next(monkeypatch):
    import time
    moments = iter([1_700_000_000.75, 1_700_000_001.25, 1_700_000_001.5])
    monkeypatch.setattr(time, "time", lambda: next(moments))
    assert [utc_now() for _ in range(3)] == ["2023-11-14T22:13:20.750Z", "2023-11-14T22:13:21.250Z",
                                             "2023-11-14T22:13:21.500Z"]


@pytest.mark.parametrize("method, headers, code", [
    ("SendStreamingMessage", V1, -32004), ("SubscribeToTask", V1, -32004),
    ("CreateTaskPushNotificationConfig", V1, -32003), ("GetExtendedAgentCard", V1, -32004),
    ("message/stream", AUTH, -32004), ("tasks/pushNotificationConfig/set", AUTH, -32003),
    ("agent/getAuthenticatedExtendedCard", AUTH, -32007),
])
def test_capabilities_the_card_does_not_declare_get_their_own_error_not_method_not_found(method, headers, code):
    peer = billing.billing_agent()
    # billing does all three; this one declares none of them
    peer.card = peer.card._replace(streaming=False, push_notifications=False, extended_card=False)
    peer.extended_card = None
    app = PeerApp(peer, wire_formats.by_name("1.0"), token="t0k")
    error = rpc(app, method, {}, headers)["error"]
    assert error["code"] == code
    assert ("data" in error) == (headers is V1), "1.0 errors carry ErrorInfo details; 0.3 ones do not"


def test_0_3_reads_neither_null_nor_an_empty_string_as_a_default_as_1_0_reads_them():
    """ProtoJSON's null and "" as a field's default are 1.0's: 0.3's JSON schema has no null. A
    0.3 task with "contextId": null was taken for a while, and a learner was no longer told that
    peer broke the protocol; "5" was read as historyLength 5; credentials "" as none."""
    import pytest
    from peers.a2a import wire_v03, wire_v10
    from peers.a2a.fields import WireError
    task = {"kind": "task", "id": "t-1", "contextId": None, "status": {"state": "completed"}}
    with pytest.raises(WireError, match="contextId"):
        wire_v03.task_from_wire(task)
    assert wire_v10.task_query({"id": "t-1", "historyLength": "5"}) == ("t-1", 5)
    with pytest.raises(WireError, match="historyLength"):
        wire_v03.task_query({"id": "t-1", "historyLength": "5"})
    config = {"taskId": "t-1", "pushNotificationConfig": {"url": "https://example.com/hook", "authentication": {
        "schemes": ["Bearer"], "credentials": ""}}}
    with pytest.raises(WireError, match="credentials"):
        wire_v03.push_config(config)
    one = {"taskId": "t-1", "url": "https://example.com/hook", "authentication": {"scheme": "Bearer", "credentials": ""}}
    assert wire_v10.push_config(one).authentication == (("Bearer",), None)
    sent = {"message": {"messageId": "m-1", "role": "ROLE_USER", "contextId": None, "parts": [{"text": "hi"}]},
            "configuration": {"returnImmediately": None}}
    assert wire_v10.send_request(sent).message.context_id is None
    with pytest.raises(WireError, match="blocking"):
        wire_v03.send_request({"message": {"kind": "message", "messageId": "m-1", "role": "user", "parts": [
            {"kind": "text", "text": "hi"}]}, "configuration": {"blocking": None}})


@pytest.mark.parametrize("method, params", [
    ("tasks/get", {"id": "task-1", "metadata": "s"}), ("tasks/cancel", {"id": "task-1", "metadata": []}),
    ("tasks/resubscribe", {"id": "task-1", "metadata": 1}),
    ("tasks/pushNotificationConfig/get", {"id": "task-1", "metadata": 1}),
    ("tasks/pushNotificationConfig/list", {"id": "task-1", "metadata": "x"}),
    ("tasks/pushNotificationConfig/delete", {"id": "task-1", "pushNotificationConfigId": "c", "metadata": []}),
])
def test_a_0_3_requests_metadata_is_an_object_on_every_method_as_on_message_send(method, params):
    """0.3's TaskQueryParams, TaskIdParams and the push config params carry metadata, an object:
    message/send refused a string there, these took it."""
    client = Client("in-process", wire=wire_formats.by_name("0.3"))
    client.call("message/send", {"message": {"kind": "message", "messageId": "m-1", "role": "user", "parts": [
        {"kind": "data", "data": {"order_id": "ORD-1", "amount": 5}}]}}, {"Authorization": "Bearer t0k"})
    answer = client.call(method, params, {"Authorization": "Bearer t0k", "Content-Type": "application/json"})
    error = answer.get("error") or {}
    assert error.get("code") == -32602 and "params.metadata" in error.get("message", ""), answer
