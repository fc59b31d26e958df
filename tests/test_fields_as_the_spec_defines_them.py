"""Fields a served peer read or wrote otherwise than A2A 1.0 (and 0.3) define them: a Part's
content is one of text, raw, url or data (a proto oneof), never two with one silently
dropped; a server's Message names its context; ListTasks leaves out artifacts unless asked,
not the status's message; a task id is required, so an empty one is invalid params, not
an unknown task. Real frames through the served app."""
import json

import pytest

from peers import billing
from peers.a2a import wire_v03, wire_v10
from peers.app import PeerApp
from peers.conformance import conformance_agent
from transports.inprocess import InProcessTransport

HEADERS = {"Content-Type": "application/json", "Authorization": "Bearer t0k", "A2A-Version": "1.0"}


def served(peer, wire=wire_v10):
    transport = InProcessTransport({billing.BASE_URL: PeerApp(peer, wire, token="t0k")})

    def call(method, params, headers=HEADERS):
        frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
        return json.loads(transport.post(billing.BASE_URL + "/a2a", frame, headers).body)
    return call


@pytest.mark.parametrize("part", [{"text": "a", "data": {"order_id": "ORD-1", "amount": 5}},
                                  {"data": {"order_id": "ORD-1", "amount": 5}, "url": "https://x.example/f"},
                                  {"raw": "aGk=", "url": "https://x.example/f"},
                                  {"text": "a", "raw": "aGk=", "url": "https://x.example/f", "data": {}}])
def test_a_part_with_two_contents_is_invalid_params_naming_them_and_nothing_is_done(part):
    call = served(billing.billing_agent())
    refused = call("SendMessage", {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [part]}})
    assert refused["error"]["code"] == -32602
    assert "message.parts[0] must have one of text, raw, url, data, not " in refused["error"]["message"]
    assert all(name in refused["error"]["message"] for name in part)
    assert call("ListTasks", {})["result"]["tasks"] == [], "no task was made"


@pytest.mark.parametrize("params, named", [
    ({"parts": [{"kind": "text", "text": "a", "data": {"order_id": "ORD-1", "amount": 5}}]}, "not text, data"),
    ({"parts": [{"kind": "file", "file": {"bytes": "aGk=", "uri": "https://x.example/f"}}]}, "bytes or uri, not both"),
    ({"parts": [{"kind": "data", "data": {"order_id": "ORD-1", "amount": 5}}], "metadata": 5}, "params.metadata"),
])
def test_on_0_3_a_part_with_two_contents_a_file_with_bytes_and_uri_or_metadata_not_an_object_is_refused(params, named):
    """Each was taken, one content silently dropped (a file's uri), or the metadata ignored."""
    call = served(billing.billing_agent(), wire_v03)
    message = {"kind": "message", "messageId": "m-1", "role": "user", "parts": params["parts"]}
    refused = call("message/send", {"message": message, **({"metadata": params["metadata"]} if "metadata" in params
                                                           else {})}, {"Content-Type": "application/json",
                                                                        "Authorization": "Bearer t0k"})
    assert refused["error"]["code"] == -32602 and named in refused["error"]["message"], refused


def test_on_1_0_a_requests_metadata_that_is_not_an_object_is_refused():
    call = served(billing.billing_agent())
    refused = call("SendMessage", {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [
        {"data": {"order_id": "ORD-1", "amount": 5}}]}, "metadata": ["x"]})
    assert refused["error"]["code"] == -32602 and "params.metadata" in refused["error"]["message"]


def test_a_part_with_one_content_and_its_metadata_and_media_type_is_read_as_before():
    call = served(billing.billing_agent())
    task = call("SendMessage", {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [
        {"data": {"order_id": "ORD-1", "amount": 5}, "mediaType": "application/json", "metadata": {"k": 1}}]}})
    assert task["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


@pytest.mark.parametrize("context", [None, "ctx-given"])
def test_a_direct_message_reply_names_a_context_the_one_sent_or_a_new_one(context):
    call = served(conformance_agent(billing.BASE_URL))
    message = {"messageId": "tck-message-response-1", "role": "ROLE_USER", "parts": [{"text": "hello"}]}
    reply = call("SendMessage", {"message": {**message, **({"contextId": context} if context else {})}})
    said = reply["result"]["message"]
    assert said["role"] == "ROLE_AGENT" and "taskId" not in said, "no task was made"
    assert said["contextId"] == (context or "context-tck-message-response-1-reply")


def test_list_tasks_without_artifacts_still_carries_each_tasks_status_message():
    call = served(billing.billing_agent())
    made = call("SendMessage", {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [
        {"data": {"order_id": "ORD-1", "amount": 5}}]}})["result"]["task"]
    got = call("GetTask", {"id": made["id"]})["result"]
    listed = call("ListTasks", {})["result"]["tasks"][0]
    assert "artifacts" not in listed and "artifacts" in got
    assert listed["status"] == got["status"] and listed["status"]["message"]["parts"][0]["text"].startswith("refund of")


@pytest.mark.parametrize("method, wire, headers", [
    ("GetTask", wire_v10, HEADERS), ("CancelTask", wire_v10, HEADERS), ("SubscribeToTask", wire_v10, HEADERS),
    ("tasks/get", wire_v03, {k: v for k, v in HEADERS.items() if k != "A2A-Version"})])
def test_an_empty_task_id_is_invalid_params_not_an_unknown_task(method, wire, headers):
    refused = served(billing.billing_agent(), wire)(method, {"id": ""}, headers)
    assert refused["error"]["code"] == -32602 and "params.id" in refused["error"]["message"]
