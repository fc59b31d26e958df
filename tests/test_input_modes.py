"""A part in a media type the skill does not take is refused before any task (A2A 1.0
section 3.1.1, ContentTypeNotSupportedError -32005; HTTP+JSON: 400): a mediaType
it provides against the skill's inputModes, else the agent's defaults, `*/*` taking
anything. conformance-agent takes the file parts its card lists (text/plain). Real
frames through the real app, over JSON-RPC (1.0 and 0.3) and HTTP+JSON."""
import json

import pytest

from conftest import serving
from peers import billing
from peers.a2a import wire_v10
from peers.a2a.model import AgentSkill
from peers.app import PeerApp
from peers.conformance import conformance_agent
from peers.peer import Peer
from peers.skill import Skill
from transports.inprocess import InProcessTransport
from transports.network import HttpTransport

BASE = "https://agent.example"
V10 = {"Content-Type": "application/json", "A2A-Version": "1.0"}
V03 = {"Content-Type": "application/json"}
REFUND = {"order_id": "ORD-1", "amount": 5}


def caller(peer, headers=V10):
    transport = InProcessTransport({BASE: PeerApp(peer, wire_v10)})

    def call(method, params):
        frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
        return json.loads(transport.post(BASE + "/a2a", frame, headers).body)
    return call


def send(call, parts, message_id="m-1"):
    return call("SendMessage", {"message": {"messageId": message_id, "role": "ROLE_USER", "parts": parts}})


@pytest.mark.parametrize("media_type", ["text/csv", "application/xml", "*/*"])
def test_billing_refuses_a_data_part_in_a_media_type_it_does_not_take(media_type):
    """`*/*` on a part is no type billing lists: only a skill's `*/*` takes anything."""
    peer = billing.billing_agent()
    error = send(caller(peer), [{"data": REFUND, "mediaType": media_type}])["error"]
    assert error["code"] == -32005 and repr(media_type) in error["message"] and "application/json" in error["message"]
    assert not peer.store.tasks, "refused before any task"


@pytest.mark.parametrize("media_type", [None, "application/json", "Application/JSON; charset=utf-8"])
def test_billing_takes_a_data_part_in_its_media_type_or_none_declared(media_type):
    part = {"data": REFUND, **({"mediaType": media_type} if media_type else {})}
    task = send(caller(billing.billing_agent()), [part])["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["history"][0]["parts"] == [part], "the part comes back as it was sent"


def test_over_http_json_the_refusal_is_400_content_type_not_supported():
    with serving(PeerApp(billing.billing_agent(), wire_v10), idle_timeout=2.0) as server:
        host, port = server.server_address[:2]
        web = HttpTransport(timeout=5)
        try:
            body = {"message": {"messageId": "m-1", "role": "ROLE_USER",
                                "parts": [{"data": REFUND, "mediaType": "text/csv"}]}}
            answer = web.post(f"http://{host}:{port}/a2a/message:send", json.dumps(body).encode(), V10)
        finally:
            web.close()
    status = json.loads(answer.body)["error"]
    assert answer.status == 400 and status["status"] == "INVALID_ARGUMENT"
    assert status["details"][0]["reason"] == "CONTENT_TYPE_NOT_SUPPORTED"


@pytest.mark.parametrize("file", [{"raw": "dGNr", "mediaType": "text/plain", "filename": "in.txt"},
                                  {"url": "https://example.com/in.txt", "mediaType": "text/plain; charset=utf-8"},
                                  {"raw": "dGNr"}])  # no media type provided: nothing to refuse
def test_conformance_agent_takes_a_file_part_its_input_modes_list_and_keeps_it(file):
    call = caller(conformance_agent())
    task = send(call, [file], "tck-artifact-text-file")["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"] == [{"text": "Generated text content"}], "its messageId says what it does"
    assert call("GetTask", {"id": task["id"]})["result"]["history"][0]["parts"] == [file]


@pytest.mark.parametrize("part", [{"raw": "dGNr", "mediaType": "application/pdf"},
                                  {"data": {"a": 1}, "mediaType": "text/csv"},
                                  {"text": "a,b", "mediaType": "text/csv"}])
def test_conformance_agent_refuses_a_part_in_a_type_it_does_not_take(part):
    peer = conformance_agent()
    for message_id in ("tck-complete-task-1", "tck-message-response-1"):  # a task, or a direct reply
        error = send(caller(peer), [{"text": "hi"}, part], message_id)["error"]
        assert error["code"] == -32005 and "message.parts[1]" in error["message"]
    assert not peer.store.tasks


def test_0_3_file_parts_are_checked_by_their_mime_type():
    call = caller(conformance_agent(), V03)

    def file(mime):
        part = {"kind": "file", "file": {"bytes": "dGNr", "mimeType": mime}}
        return call("message/send", {"message": {"kind": "message", "messageId": "tck-complete-task-1",
                                                  "role": "user", "parts": [part]}})
    assert file("text/plain")["result"]["status"]["state"] == "completed"
    assert file("image/png")["error"]["code"] == -32005


def skill_taking(*modes):
    skill = Skill(AgentSkill("echo", "Echoes its data", input_modes=modes), lambda payload: json.dumps(payload))
    return Peer(billing.billing_agent().card._replace(skills=(skill.card,)), [skill])


@pytest.mark.parametrize("modes, media_type, taken", [
    (("*/*",), "text/csv", True),  # */* takes anything
    (("text/*",), "text/csv", True),
    (("text/*",), "application/json", False),
    ((), "text/plain", True),  # no modes of its own: the agent's defaults (application/json, text/plain)
    ((), "text/csv", False),
])
def test_a_skill_s_input_modes_or_the_agent_s_defaults_decide(modes, media_type, taken):
    answer = send(caller(skill_taking(*modes)), [{"data": {"a": 1}, "mediaType": media_type}])
    assert ("result" in answer) is taken and (taken or answer["error"]["code"] == -32005)


def test_a_skill_that_reads_data_still_refuses_files_of_a_type_it_takes():
    error = send(caller(billing.billing_agent()), [{"raw": "dGNr", "mediaType": "application/json"}])["error"]
    assert error["code"] == -32005 and "not files" in error["message"]
