"""What a client sends on a message and its parts comes back as it was sent (A2A 1.0 section
4.1): extensions, referenceTaskIds, metadata, a part's metadata and a text part's mediaType,
in GetTask's history and ListTasks, over JSON-RPC (1.0 and 0.3) and HTTP+JSON, in memory
and in a durable store across a restart. A skill's Task.metadata and its artifact's
description, metadata and extensions are sent where it gives them, and absent where not.
A field of the wrong type is -32602 naming it. Real frames through the real app."""
import json

import pytest

from conftest import serving
from peers import billing
from peers.a2a import wire_v10
from peers.a2a.model import AgentSkill, Artifact, Part
from peers.app import PeerApp
from peers.conformance import conformance_agent
from peers.durable import open_store
from peers.peer import Peer
from peers.restart import restarted
from peers.skill import Result, Skill
from transports.inprocess import InProcessTransport
from transports.network import HttpTransport

BASE = "https://conformance.example"
V10 = {"Content-Type": "application/json", "A2A-Version": "1.0"}
V03 = {"Content-Type": "application/json"}  # no A2A-Version: 0.3 (spec 3.6.2)
KEPT = {"metadata": {"source": "form", "nested": {"depth": [1, 2, {"three": None}]}},
        "extensions": ["https://example.com/ext/trace/v1"],
        "referenceTaskIds": ["task-earlier-1", "task-earlier-2"]}
PARTS_10 = [{"text": "hi", "mediaType": "text/plain", "metadata": {"lang": "en"}},
            {"data": {"k": [1, "two"]}, "mediaType": "application/json", "metadata": {"$ref": "not a marker"}}]
PARTS_03 = [{"kind": "text", "text": "hi", "metadata": {"lang": "en"}},
            {"kind": "data", "data": {"k": [1, "two"]}, "metadata": {"$ref": "not a marker"}}]


def rpc(transport, headers):
    def call(method, params):
        frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
        return json.loads(transport.post(BASE + "/a2a", frame, headers).body)
    return call


def message_10(message_id, parts=PARTS_10, **fields):
    return {"messageId": message_id, "role": "ROLE_USER", "parts": parts, **KEPT, **fields}


def assert_kept(sent, got):
    """Every field sent is in the history entry, as sent (ids the peer adds aside)."""
    assert {key: got[key] for key in sent} == sent


def test_a_1_0_message_keeps_every_field_through_get_task_and_list_tasks():
    call = rpc(InProcessTransport({BASE: PeerApp(conformance_agent(), wire_v10)}), V10)
    sent = message_10("tck-complete-task-kept")
    task = call("SendMessage", {"message": sent})["result"]["task"]
    assert_kept(sent, task["history"][0])
    assert_kept(sent, call("GetTask", {"id": task["id"]})["result"]["history"][0])
    listed = call("ListTasks", {})["result"]["tasks"]
    assert_kept(sent, next(t for t in listed if t["id"] == task["id"])["history"][0])


def test_a_0_3_message_keeps_its_fields_and_part_metadata_through_tasks_get():
    call = rpc(InProcessTransport({BASE: PeerApp(conformance_agent(), wire_v10)}), V03)
    sent = {"kind": "message", "messageId": "tck-complete-task-03", "role": "user", "parts": PARTS_03, **KEPT}
    task = call("message/send", {"message": sent})["result"]
    assert task["kind"] == "task"
    assert_kept(sent, task["history"][0])
    assert_kept(sent, call("tasks/get", {"id": task["id"]})["result"]["history"][0])


def test_over_http_json_the_fields_come_back_from_get_and_list():
    with serving(PeerApp(conformance_agent(), wire_v10), idle_timeout=2.0) as server:
        host, port = server.server_address[:2]
        web, address = HttpTransport(timeout=5), f"http://{host}:{port}/a2a"
        try:
            sent = message_10("tck-complete-task-rest")
            answer = web.post(address + "/message:send", json.dumps({"message": sent}).encode(), V10)
            task = json.loads(answer.body)["task"]
            got = json.loads(web.get(f"{address}/tasks/{task['id']}", V10).body)
            listed = json.loads(web.get(f"{address}/tasks", V10).body)["tasks"]
        finally:
            web.close()
    assert_kept(sent, got["history"][0])
    assert_kept(sent, listed[0]["history"][0])


def test_a_durable_store_keeps_every_field_across_a_restart(tmp_path):
    path = str(tmp_path / "tasks.db")

    def started():
        store, ledger = open_store(path)
        peer = conformance_agent(store=store, ledger=ledger)
        restarted(peer, path)
        return peer, rpc(InProcessTransport({BASE: PeerApp(peer, wire_v10)}), V10)
    peer, call = started()
    sent = message_10("tck-complete-task-durable", PARTS_10 + [  # a file's bytes too
        {"raw": "dGNr", "filename": "a.txt", "mediaType": "text/plain", "metadata": {"m": 1}}])
    task_id = call("SendMessage", {"message": sent})["result"]["task"]["id"]
    peer.store.file.close()
    peer, call = started()  # the same file, a new process's worth of objects
    assert_kept(sent, call("GetTask", {"id": task_id})["result"]["history"][0])
    assert_kept(sent, call("ListTasks", {})["result"]["tasks"][0]["history"][0])
    peer.store.file.close()


def noted(payload):
    return Result(Artifact("", (Part(text=f"noted {payload['n']}"),), "note", "what was noted",
                           {"pages": 1}, ("https://example.com/ext/notes/v1",)), {"ledger": "L-7"})


def test_a_skill_gives_task_metadata_and_artifact_description_metadata_and_extensions():
    skill = Skill(AgentSkill("note", "Notes a number", input_modes=("application/json",)), noted)
    peer = Peer(billing.billing_agent().card._replace(skills=(skill.card,)), [skill])
    call = rpc(InProcessTransport({BASE: PeerApp(peer, wire_v10)}), V10)
    task = call("SendMessage", {"message": {"messageId": "m-1", "role": "ROLE_USER",
                                            "parts": [{"data": {"n": 7}}]}})["result"]["task"]
    assert task["metadata"] == {"ledger": "L-7"}
    assert task["artifacts"] == [{"artifactId": f"{task['id']}-result", "name": "note",
                                  "description": "what was noted", "parts": [{"text": "noted 7"}],
                                  "metadata": {"pages": 1}, "extensions": ["https://example.com/ext/notes/v1"]}]
    v03 = rpc(InProcessTransport({BASE: PeerApp(peer, wire_v10)}), V03)
    again = v03("tasks/get", {"id": task["id"]})["result"]
    assert again["metadata"] == {"ledger": "L-7"} and again["artifacts"][0]["description"] == "what was noted"


def test_billing_gives_none_of_them_so_they_are_absent():
    call = rpc(InProcessTransport({BASE: PeerApp(billing.billing_agent(), wire_v10)}), V10)
    task = call("SendMessage", {"message": {"messageId": "m-1", "role": "ROLE_USER",
                                            "parts": [{"data": {"order_id": "ORD-1", "amount": 5}}]}})
    task = task["result"]["task"]
    assert "metadata" not in task
    assert not {"description", "metadata", "extensions"} & set(task["artifacts"][0])


@pytest.mark.parametrize("fields, named", [
    ({"metadata": "x"}, "message.metadata must be an object"),
    ({"metadata": [1]}, "message.metadata must be an object"),
    ({"extensions": "https://e"}, "message.extensions must be an array"),
    ({"extensions": [1]}, "message.extensions must hold strings"),
    ({"extensions": [{"a": 1}]}, "message.extensions must hold strings"),
    ({"referenceTaskIds": {"a": 1}}, "message.referenceTaskIds must be an array"),
    ({"referenceTaskIds": [None]}, "message.referenceTaskIds must hold strings"),
    ({"parts": [{"text": "hi", "metadata": "x"}]}, "message.parts[0].metadata must be an object"),
    ({"parts": [{"text": "hi", "mediaType": 5}]}, "message.parts[0].mediaType must be a string"),
    ({"parts": [{"data": {}, "mediaType": ["text/csv"]}]}, "message.parts[0].mediaType must be a string"),
    ({"parts": [{"raw": "dGNr", "mediaType": {"a": 1}}]}, "message.parts[0].mediaType must be a string"),
])
def test_a_field_of_the_wrong_type_is_invalid_params_naming_it(fields, named):
    call = rpc(InProcessTransport({BASE: PeerApp(conformance_agent(), wire_v10)}), V10)
    message = {"messageId": "tck-complete-task-bad", "role": "ROLE_USER", "parts": [{"text": "hi"}], **fields}
    error = call("SendMessage", {"message": message})["error"]
    assert error["code"] == -32602 and named in error["message"] and "\n" not in error["message"]


def test_0_3_checks_the_same_fields_types():
    call = rpc(InProcessTransport({BASE: PeerApp(conformance_agent(), wire_v10)}), V03)
    message = {"kind": "message", "messageId": "m", "role": "user",
               "parts": [{"kind": "text", "text": "hi", "metadata": 3}]}
    error = call("message/send", {"message": message})["error"]
    assert error["code"] == -32602 and "message.parts[0].metadata must be an object" in error["message"]


@pytest.mark.parametrize("fields", [
    {"extensions": ["https://e/" + "x" * 70_000]},
    {"referenceTaskIds": [f"t-{n}" for n in range(20_000)]},
    {"parts": [{"text": "hi", "metadata": {"blob": "y" * 70_000}}]},
])
def test_fields_past_the_kept_size_are_refused_before_any_task(fields):
    peer = conformance_agent()
    call = rpc(InProcessTransport({BASE: PeerApp(peer, wire_v10)}), V10)
    message = {"messageId": "tck-complete-task-big", "role": "ROLE_USER", "parts": [{"text": "hi"}], **fields}
    error = call("SendMessage", {"message": message})["error"]
    assert error["code"] == -32602 and "bytes" in error["message"]
    assert not peer.store.tasks


def test_metadata_nested_past_the_codec_depth_is_refused_before_any_task():
    peer = conformance_agent()
    call = rpc(InProcessTransport({BASE: PeerApp(peer, wire_v10)}), V10)
    deep = {}
    for _ in range(40):
        deep = {"d": deep}
    error = call("SendMessage", {"message": message_10("tck-complete-task-deep", metadata=deep)})["error"]
    assert error["code"] == -32700 and "deeper" in error["message"] and not peer.store.tasks
