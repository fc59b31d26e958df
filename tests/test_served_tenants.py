"""A served peer hosting tenants: each tenant its card names is a partition of its own.

Spec: a2a.proto's AgentInterface.tenant (a routing name the server interprets) and the
`tenant` field of every request message; A2A 1.0 section 8.3.2 rule 4 (a client sends
the chosen interface's tenant) and section 11's `/{tenant}/...` routes. A task made under
one tenant is no other tenant's, nor the untenanted interface's: GetTask, ListTasks,
CancelTask, SubscribeToTask, a follow-up turn and every push config method answer as if
it did not exist, on both bindings, and an effect happens once in each tenant. A tenant
the card does not name is refused (-32602, HTTP 400 INVALID_ARGUMENT), never served from
another partition. Everything is checked with raw HTTP frames on a real socket (127.0.0.1,
port 0); hostile tenants are seeded and bounded. Opt-in, as tests/test_interop*.py are: the
official Python (A2A_SDK_PYTHON) and JavaScript (A2A_JS_SDK) SDKs' clients on each binding.
"""
import contextlib
import http.client
import json
import os
import random
import shutil
import sqlite3
import subprocess
from urllib.parse import quote, urlencode

import pytest

import a2a_delegation as story
from conftest import BILLING, BILLING_CARD, ROOT, cli, following_in, frames, serving, start_serve
from peers import billing
from peers.a2a import wire_v10
from peers.a2a.errors import TooManyStreams
from peers.a2a.routes import ROUTES
from peers.app import PeerApp
from peers.durable import open_store
from peers.restart import restarted
from peers.streaming import Streams
from peers.tenants import in_tenant
from transports.inprocess import InProcessTransport
from transports.printer import FramePrinter

TOKEN = "t0k"
TENANTS = ("", "acme", "globex")  # the untenanted interfaces too: "no tenant" is a partition of its own
HEADERS = {"A2A-Version": "1.0", "Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
BINDINGS = ("JSONRPC", "HTTP+JSON")


def refund(message_id, order="ORD-7", amount=5, **fields):
    return {"messageId": message_id, "role": "ROLE_USER", "parts": [{"data": {"order_id": order, "amount": amount}}],
            **fields}


def tenanted_billing(tenants, base_url=None, **options):
    """billing, its card naming `tenants` as `serve --tenant` names them (peers/serving.py)."""
    peer = billing.billing_agent(base_url, allow_private_webhooks=True, **options)
    peer.card = peer.card._replace(tenants=tenants)
    return peer


class Wire:
    """Raw HTTP/1.1 to one served peer: each request on a connection of its own, read with a deadline."""

    def __init__(self, address, peer):
        self.address, self.peer = address, peer

    def http(self, verb, target, body=None, headers=HEADERS):
        connection = http.client.HTTPConnection(*self.address, timeout=5)
        try:
            connection.request(verb, target, body=None if body is None else json.dumps(body).encode(),
                               headers=headers)
            response = connection.getresponse()
            if (response.getheader("Content-Type") or "").startswith("text/event-stream"):
                return response.status, _first_event(response)  # a stream: its first event, then hang up
            return response.status, json.loads(response.read() or b"{}")
        finally:
            connection.close()

    def ask(self, binding, tenant, operation, **fields):
        """One operation under `tenant` (None: no tenant at all) over `binding`, in each
        binding's own place for a tenant: ("ok", the result) or ("error", its ErrorInfo reason)."""
        route = next(route for route in ROUTES if route.operation == operation)
        if binding == "JSONRPC":
            params = {**({"tenant": tenant} if tenant is not None else {}), **fields}
            status, answer = self.http("POST", "/a2a", {"jsonrpc": "2.0", "id": 1, "method": route.method,
                                                        "params": params})
            if status == 200 and "jsonrpc" in answer and "error" not in answer:
                answer = answer["result"]
            error = answer.get("error") if isinstance(answer, dict) else None
            return ("error", reason(error.get("data"))) if error else ("ok", answer)
        path = route.path
        for name in route.in_path:
            path = path.replace("{" + name + "}", quote(fields.pop(name), safe=""))
        target = "/a2a/" + (quote(tenant, safe="") + "/" if tenant else "") + path
        query = route.verbs[0] in ("GET", "DELETE")
        if query and fields:
            target += "?" + urlencode(fields)
        status, answer = self.http(route.verbs[0], target, None if query else fields)
        return ("ok", answer) if status == 200 else ("error", reason(answer["error"].get("details")))

    def listed(self, binding, tenant):
        outcome, page = self.ask(binding, tenant, "list")
        assert outcome == "ok", page
        return [task["id"] for task in page["tasks"]]


def _first_event(response):
    lines = []
    for _ in range(50):  # keep-alive comments before it, at most a few
        line = response.readline()
        if not line or (line.strip() == b"" and any(seen.startswith(b"data:") for seen in lines)):
            break
        lines.append(line)
    data = b"".join(line[5:].strip() for line in lines if line.startswith(b"data:"))
    event = json.loads(data)
    return event.get("result", event)  # JSON-RPC wraps each event; HTTP+JSON sends it bare


def reason(details):
    return next((detail["reason"] for detail in details or [] if "reason" in detail), None)


@contextlib.contextmanager
def served(tenants=TENANTS):
    with serving(None) as server:
        peer = tenanted_billing(tenants, server.base_url)
        server.app = PeerApp(peer, wire_v10, token=TOKEN, log=lambda line: None)
        yield Wire(server.server_address[:2], peer)


def test_the_card_lists_every_binding_once_for_each_tenant_it_serves():
    with served() as wire:
        status, card = wire.http("GET", "/.well-known/agent-card.json")
    offered = [(interface.get("tenant", ""), interface["protocolBinding"], interface["protocolVersion"])
               for interface in card["supportedInterfaces"]]
    assert status == 200 and offered == [(tenant, binding, version) for tenant in TENANTS for binding, version in
                                         (("JSONRPC", "1.0"), ("JSONRPC", "0.3"), ("HTTP+JSON", "1.0"))]
    assert "" not in [interface.get("tenant") for interface in card["supportedInterfaces"]], "unset, not empty"


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_task_made_under_one_tenant_is_no_other_tenants_nor_the_untenanted_ones(binding):
    with served() as wire:
        outcome, made = wire.ask(binding, "acme", "send", message=refund("m-1", amount=6000))  # paused: approval
        task = made["task"]
        assert outcome == "ok" and task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", made
        hook = {"url": "http://127.0.0.1:9/hook", "id": "cfg-1"}
        for other in ("globex", None, ""):  # another tenant, and no tenant (absent, or unset as proto3 has it)
            for operation, fields in (("get", {"id": task["id"]}), ("cancel", {"id": task["id"]}),
                                      ("subscribe", {"id": task["id"]}),
                                      ("push-set", {"taskId": task["id"], **hook}),
                                      ("push-list", {"taskId": task["id"]}),
                                      ("push-get", {"taskId": task["id"], "id": "cfg-1"}),
                                      ("push-delete", {"taskId": task["id"], "id": "cfg-1"}),
                                      ("send", {"message": refund("m-2", taskId=task["id"], parts=[
                                          {"data": {"approval": {"order_id": "ORD-7", "amount": 6000.0}}}])})):
                assert wire.ask(binding, other, operation, **fields) == ("error", "TASK_NOT_FOUND"), \
                    (other, operation)
            assert wire.listed(binding, other) == []
        assert wire.listed(binding, "acme") == [task["id"]]
        assert wire.ask(binding, "acme", "get", id=task["id"])[1]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        assert wire.ask(binding, "acme", "push-set", taskId=task["id"], **hook)[0] == "ok"
        assert wire.ask(binding, "globex", "push-get", taskId=task["id"], id="cfg-1") == ("error", "TASK_NOT_FOUND")
        assert len(wire.ask(binding, "acme", "push-list", taskId=task["id"])[1]["configs"]) == 1
        outcome, first = wire.ask(binding, "acme", "subscribe", id=task["id"])
        assert outcome == "ok" and first["task"]["id"] == task["id"], first
        outcome, canceled = wire.ask(binding, "acme", "cancel", id=task["id"])
        assert outcome == "ok" and canceled["status"]["state"] == "TASK_STATE_CANCELED"
        assert not wire.peer.ledger.effects, "nothing was refunded: the approval sent under other tenants found no task"


@pytest.mark.parametrize("binding", BINDINGS)
def test_each_push_config_answer_names_the_tenant_it_is_kept_under_and_an_untenanted_one_none(binding):
    """TaskPushNotificationConfig carries `tenant` (a2a.proto): set, get and list answer with the
    tenant the config is kept under, as the request named it; without one, the field is unset."""
    with served() as wire:
        for tenant in ("acme", "globex", None):
            outcome, made = wire.ask(binding, tenant, "send", message=refund(f"m-{tenant}", amount=6000))
            task_id = made["task"]["id"]
            hook = {"taskId": task_id, "url": "http://127.0.0.1:9/hook", "id": "cfg-1"}
            answers = [wire.ask(binding, tenant, "push-set", **hook),
                       wire.ask(binding, tenant, "push-get", taskId=task_id, id="cfg-1")]
            outcome, listed = wire.ask(binding, tenant, "push-list", taskId=task_id)
            answers += [("ok", config) for config in listed["configs"]]
            assert len(answers) == 3 and all(outcome == "ok" for outcome, _ in answers), answers
            for _, config in answers:
                assert config.get("tenant") == tenant and config["taskId"] == task_id, (tenant, config)
                assert config["url"] == hook["url"] and config["id"] == "cfg-1", config


@pytest.mark.parametrize("binding", BINDINGS)
def test_an_effect_happens_once_in_each_tenant_and_a_message_id_is_each_tenants_own(binding):
    with served() as wire:
        made = {tenant: wire.ask(binding, tenant, "send", message=refund("m-1"))[1]["task"] for tenant in TENANTS}
        assert len({task["id"] for task in made.values()}) == 3, "the same messageId, three tenants: three tasks"
        assert all(task["status"]["state"] == "TASK_STATE_COMPLETED" for task in made.values())
        again = wire.ask(binding, "acme", "send", message=refund("m-2"))[1]["task"]  # the same order, a new messageId
        assert again["id"] == made["acme"]["id"], "done in acme already: its task, and nothing done again"
        assert sorted(wire.peer.ledger.effects) == ["refund of ORD-7", "tenant:acme:refund of ORD-7",
                                                    "tenant:globex:refund of ORD-7"]
        for tenant in TENANTS:
            assert wire.listed(binding, tenant) == [made[tenant]["id"]]


def hostile_tenants(seed, count, longest=300):
    """Tenants no card here names, seeded: near misses of the real ones, path tricks,
    encodings, control characters, unicode and sizes."""
    rng = random.Random(seed)
    fixed = ["ACME", "acme ", " acme", "acme/", "ac/me", "..", ".", "%61cme", "acme%2F", "tenant:acme", "acme\x00",
             "\u202eemca", "ácme", "\U0001f600", "a" * longest, "globex/../acme", "\\acme", "acme?x=1", "acme#"]
    alphabet = "acmeglobx./%:?#\\ \x00\x1b\u00e9\u202e\U0001f600-_~"
    return fixed + ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40))) for _ in range(count)]


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_tenant_the_card_does_not_name_is_refused_and_nothing_is_done(binding):
    with served() as wire:
        tenants = [tenant for tenant in hostile_tenants(32, 24) if tenant not in TENANTS]
        for index, tenant in enumerate(tenants):
            for operation, fields in (("send", {"message": refund(f"h-{index}")}), ("list", {}),
                                      ("get", {"id": "task-1"})):
                outcome = wire.ask(binding, tenant, operation, **fields)
                assert outcome == ("error", "INVALID_PARAMS"), (tenant, operation, outcome)
        assert not wire.peer.store.tasks and not wire.peer.ledger.effects


def test_a_tenant_that_is_not_a_string_or_is_huge_is_refused_on_json_rpc_and_null_is_none():
    with served() as wire:
        for tenant in (7, 1.5, True, [], ["acme"], {"acme": 1}, "x" * 200_000):
            _, answer = wire.http("POST", "/a2a", {"jsonrpc": "2.0", "id": 1, "method": "ListTasks",
                                                   "params": {"tenant": tenant}})
            assert answer["error"]["code"] == -32602 and len(answer["error"]["message"]) < 300, answer
        _, answer = wire.http("POST", "/a2a", {"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                                               "params": {"tenant": None, "message": refund("m-1")}})
        owner = wire.peer.store.owners[answer["result"]["task"]["id"]]
        assert owner.startswith("bearer:"), "null is no tenant: the untenanted partition"


def test_raw_paths_with_dot_segments_slashes_and_encodings_never_reach_another_tenant():
    with served() as wire:
        task = wire.ask("HTTP+JSON", "acme", "send", message=refund("m-1"))[1]["task"]
        status, page = wire.http("GET", "/a2a/%61cme/tasks")  # RFC 3986 6.2.2.2: %61 is "a", so this is acme
        assert status == 200 and [found["id"] for found in page["tasks"]] == [task["id"]]
        for target in ("/a2a/../tasks", "/a2a/./tasks", "/a2a/acme/../globex/tasks", "/a2a/globex/../acme/tasks",
                       "/a2a/ac%2Fme/tasks", "/a2a/%2E%2E/tasks", "/a2a//acme/tasks", "/a2a/acme%00/tasks",
                       f"/a2a/globex/tasks/{task['id']}", f"/a2a/tasks/{task['id']}", "/a2a/" + "a" * 7000 + "/tasks",
                       f"/a2a/globex/tasks/{quote('acme/', safe='')}{task['id']}"):
            status, answer = wire.http("GET", target)
            assert status in (400, 404, 414), (target, status, answer)
            assert list(answer) == ["error"], target  # an error, never the task or a listing
        assert len(wire.peer.store.tasks) == 1


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_peer_serving_only_tenants_refuses_a_request_naming_none(binding):
    with served(("acme", "globex")) as wire:
        outcome = wire.ask(binding, None, "send", message=refund("m-1"))
        assert outcome == ("error", "INVALID_PARAMS") and not wire.peer.store.tasks
        assert wire.ask(binding, "acme", "send", message=refund("m-1"))[0] == "ok"


def test_a_path_and_a_body_naming_different_tenants_are_refused_seeded():
    """The path names the resource; a body (or query) naming another tenant is a request
    smuggling a second one, refused, where one agreeing (or unset) is served."""
    rng = random.Random(5)
    choices = [None, "", "acme", "globex", "initech", "acme/x"]
    with served() as wire:
        made = {tenant: 0 for tenant in TENANTS}
        for index in range(30):
            in_path, in_body = rng.choice(choices[1:]), rng.choice(choices)
            body = {"message": refund(f"p-{index}", order=f"ORD-{index}"),
                    **({} if in_body is None else {"tenant": in_body})}
            target = "/a2a/" + (quote(in_path, safe="") + "/" if in_path else "") + "message:send"
            status, answer = wire.http("POST", target, body)
            landed = in_path or in_body or ""
            if in_path and in_body not in (None, "", in_path) or landed not in TENANTS:
                assert status == 400 and answer["error"]["status"] == "INVALID_ARGUMENT", (in_path, in_body, answer)
                continue
            assert status == 200, (in_path, in_body, answer)
            made[landed] += 1
        for tenant in TENANTS:
            assert len(wire.listed("HTTP+JSON", tenant)) == made[tenant]
        assert sum(made.values()) == len(wire.peer.store.tasks) > 0
        status, answer = wire.http("GET", "/a2a/acme/tasks?tenant=globex")
        assert status == 400 and "the path names tenant 'acme', and the query another" in answer["error"]["message"]


def test_a_posts_query_naming_another_tenant_than_its_path_and_body_is_refused_not_ignored():
    """A POST's fields are its body's (section 11.5), so its query was never read: POST
    /a2a/acme/message:send?tenant=globex made a task in acme, and /a2a/message:send?tenant=acme
    one under no tenant, whatever a proxy or gateway routing by the query took them for. A query
    agreeing with the path and body (or naming nothing they name) is served as before."""
    with served() as wire:
        for target, body_tenant in (("/a2a/acme/message:send?tenant=globex", None), ("/a2a/message:send?tenant=acme", None),
                                    ("/a2a/message:send?tenant=acme", "globex"), ("/a2a/acme/message:send?tenant=globex", "acme")):
            body = {"message": refund("q-1", order="ORD-Q"), **({"tenant": body_tenant} if body_tenant else {})}
            status, answer = wire.http("POST", target, body)
            assert status == 400 and answer["error"]["status"] == "INVALID_ARGUMENT", (target, body_tenant, answer)
        assert wire.peer.store.tasks == {}, "nothing is done"
        for target, body_tenant in (("/a2a/acme/message:send?tenant=acme", None), ("/a2a/message:send?tenant=globex", "globex"),
                                    ("/a2a/message:send?tenant=", None), ("/a2a/acme/message:send?other=1", None)):
            body = {"message": refund(f"q-{len(wire.peer.store.tasks)}", order="ORD-Q"),
                    **({"tenant": body_tenant} if body_tenant else {})}
            assert wire.http("POST", target, body)[0] == 200, (target, body_tenant)
        task = next(iter(wire.peer.store.tasks))
        status, answer = wire.http("POST", f"/a2a/tasks/{task}:cancel?id=another", {})
        assert status == 400 and answer["error"]["status"] == "INVALID_ARGUMENT", answer


def test_a_posts_query_naming_a_tenant_beside_a_body_tenant_of_the_wrong_type_is_a_bad_request_not_a_500():
    """The query's tenant was compared with the body's before the body was read: a number there
    raised a TypeError (slicing it for the message), answered 500 and logged as our bug."""
    with served() as wire:
        status, answer = wire.http("POST", "/a2a/message:send?tenant=acme", {"message": refund("q-1"), "tenant": 5})
        assert status == 400 and "tenant must be a string" in answer["error"]["message"], answer
        assert wire.peer.store.tasks == {}


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_our_agent_delegates_to_a_served_peers_tenant_interface(binding, stream):
    """The support agent reads the served card (its first tenant's interfaces), names that
    tenant in each request, and the refund is that tenant's: nobody else's, done there once.
    Streamed, the stream is cut after its first event, so the agent picks the task up again
    (a subscription or a GetTask) under the same tenant."""
    from peers.doubles import CutStreams
    peer = tenanted_billing(("acme", "globex"), **({"streams": CutStreams(1)} if stream else {}))
    app = PeerApp(peer, wire_v10, token=TOKEN, log=lambda line: None)
    lines = []
    printer = FramePrinter(InProcessTransport({billing.BASE_URL: app}), lambda text, frame: lines.append(text))
    vetted = BILLING._replace(endpoint=f"{BILLING.endpoint}/acme") if binding == "HTTP+JSON" else BILLING
    agent = story.SupportAgent(printer, [vetted], {vetted.endpoint: TOKEN},
                               lambda *args, **facts: lines.append(args[0] if args else ""),
                               **following_in({"stream": stream, **({"binding": binding} if binding != "JSONRPC"
                                                                    else {})}))
    outcome = agent.handle(BILLING_CARD, story.SKILL, story.PAYLOAD)
    assert outcome.result == "refund of $180.00 issued for ORD-3300 (ref BILL-ORD-3300)", lines
    if binding == "JSONRPC":
        sent = frames(lines, "-->")
        assert [frame["params"]["tenant"] for frame in sent] == ["acme"] * len(sent), sent
    else:
        sent = [line for line in lines if line.startswith(("--> POST /", "--> GET /"))]  # not the card's fetch
        assert all(line.split()[2].startswith("/a2a/acme/") for line in sent), sent
    assert len(sent) >= (2 if stream else 1), lines  # streamed: the cut stream, then a follow-up
    assert list(peer.ledger.effects) == ["tenant:acme:refund of ORD-3300"]
    for tenant, found in (("acme", outcome.task.id), ("globex", None)):
        frame = json.dumps({"jsonrpc": "2.0", "id": 9, "method": "GetTask",
                            "params": {"tenant": tenant, "id": outcome.task.id}}).encode()
        answer = json.loads(InProcessTransport({billing.BASE_URL: app}).post(f"{billing.BASE_URL}/a2a", frame,
                                                                             HEADERS).body)
        assert (answer.get("result") or {}).get("id") == found, answer


def test_a_store_file_keeps_each_tenants_tasks_and_effects_apart_across_a_restart(tmp_path):
    path = str(tmp_path / "billing.db")

    def on_file():
        store, ledger = open_store(path)
        peer = tenanted_billing(TENANTS, store=store, ledger=ledger)
        restarted(peer, path)
        app = InProcessTransport({billing.BASE_URL: PeerApp(peer, wire_v10, token=TOKEN, log=lambda line: None)})

        def call(method, tenant, **params):
            frame = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"tenant": tenant, **params}}
            return json.loads(app.post(f"{billing.BASE_URL}/a2a", json.dumps(frame).encode(), HEADERS).body)
        return peer, call
    peer, call = on_file()
    made = {tenant: call("SendMessage", tenant, message=refund("m-1"))["result"]["task"]["id"] for tenant in TENANTS}
    peer.store.file.close()
    peer, call = on_file()  # the same file, as a restarted process reads it
    for tenant in TENANTS:
        assert [task["id"] for task in call("ListTasks", tenant)["result"]["tasks"]] == [made[tenant]]
        assert call("SendMessage", tenant, message=refund("m-2"))["result"]["task"]["id"] == made[tenant]
    assert call("GetTask", "globex", id=made["acme"])["error"]["code"] == -32001
    assert len(peer.ledger.effects) == 3, "one refund in each tenant, none again after the restart"
    owners = sorted(owner.split(":")[:2] for owner in peer.store.owners.values())
    assert owners == [["bearer", owners[0][1]], ["tenant", "acme"], ["tenant", "globex"]], "kept, not scrubbed"


@pytest.mark.parametrize("point", ["before-effect", "after-commit"])
def test_a_tenants_refund_killed_midway_is_done_once_in_that_tenant_after_a_restart(tmp_path, point):
    """`serve --store --tenant`, killed (exit 137, no answer) at `point` of a refund under
    acme, started again on the same file: the retry gets acme's one refund; globex, asking
    for the same order, gets its own; neither sees the other's task."""
    path = str(tmp_path / "billing.db")
    flags = ("billing-agent", "--wire", "1.0", "--port", "0", "--store", path, "--token", TOKEN,
             "--tenant", "acme", "--tenant", "globex")

    def wire_of(banner):
        host, port = banner[0].split("listening on http://")[1].split()[0].split(":")
        return Wire((host, int(port)), None)
    process, banner = start_serve(*flags, "--crash-at", point)
    try:
        with pytest.raises((ConnectionError, http.client.HTTPException)):  # it died before answering
            wire_of(banner).ask("JSONRPC", "acme", "send", message=refund("m-1", order="ORD-1"))
    finally:
        process.kill()
        process.communicate(timeout=10)
    process, banner = start_serve(*flags)
    try:
        wire = wire_of(banner)
        made = {tenant: wire.ask("JSONRPC", tenant, "send", message=refund("m-1", order="ORD-1"))[1]["task"]
                for tenant in ("acme", "globex")}
        assert {task["status"]["state"] for task in made.values()} == {"TASK_STATE_COMPLETED"}, made
        assert wire.ask("JSONRPC", "globex", "get", id=made["acme"]["id"]) == ("error", "TASK_NOT_FOUND")
    finally:
        process.stop()
    effects = sorted(key for (key,) in sqlite3.connect(path).execute("SELECT key FROM effects"))
    assert effects == ["tenant:acme:refund of ORD-1", "tenant:globex:refund of ORD-1"], "each tenant's, once"


def test_a_callers_share_of_streams_is_counted_across_the_tenants_it_names():
    streams = Streams(most=4)  # a caller's share: two
    kept = [streams.open_slot(in_tenant("acme", "bearer:x")), streams.open_slot(in_tenant("globex", "bearer:x"))]
    with pytest.raises(TooManyStreams):
        streams.open_slot("bearer:x")
    kept.append(streams.open_slot(in_tenant("acme", "bearer:y")))  # another caller still gets in
    for give_back in kept:
        give_back(True)
    assert not streams.open


def test_serve_tenant_names_each_tenant_on_the_card_and_refuses_names_that_cannot_be_one():
    process, banner = start_serve("billing-agent", "--wire", "1.0", "--tenant", "acme", "--tenant", "globex",
                                  "--token", TOKEN)
    try:
        assert any("[serve] tenants: acme, globex (each a partition of its own" in line for line in banner), banner
        base = next(line for line in banner if "listening on" in line).split("listening on ")[1].split()[0]
        host, port = base.removeprefix("http://").split(":")
        wire = Wire((host, int(port)), None)
        card = wire.http("GET", "/.well-known/agent-card.json")[1]
        assert [interface.get("tenant") for interface in card["supportedInterfaces"]] == ["acme"] * 3 + ["globex"] * 3
        assert wire.ask("HTTP+JSON", "acme", "send", message=refund("m-1"))[0] == "ok"
        assert wire.ask("JSONRPC", "globex", "list")[1]["tasks"] == []
        assert wire.ask("JSONRPC", None, "list") == ("error", "INVALID_PARAMS")
    finally:
        process.stop()
    for flags, said in ((["--tenant", "a/b"], "'a/b' is not a tenant name"), (["--tenant", "tasks"], "and not"),
                        (["--tenant", ".."], "is not a tenant name"), (["--tenant", "x", "--tenant", "x"], "once"),
                        (["--wire", "0.3", "--tenant", "x"], "card names no tenants; serve with --wire 1.0")):
        done = cli("serve", "billing-agent", "--wire", "1.0", *flags, "--port", "0")
        assert done.returncode == 2 and said in done.stderr and done.stderr.count("\n") == 1, done.stderr


# Opt-in: both official SDKs' clients, which name the chosen interface's tenant on each binding.
SDK_PYTHON, JS_SDK, NODE = os.environ.get("A2A_SDK_PYTHON"), os.environ.get("A2A_JS_SDK"), shutil.which("node")
CLIENTS = [pytest.param([SDK_PYTHON, str(ROOT / "tests" / "interop" / "sdk_client.py")], binding, id=f"python-{binding}",
                        marks=pytest.mark.skipif(not SDK_PYTHON, reason="set A2A_SDK_PYTHON to a Python with a2a-sdk"))
           for binding in BINDINGS] + [
    pytest.param([NODE, str(ROOT / "tests" / "interop" / "js_client.mjs")], binding, id=f"javascript-{binding}",
                 marks=pytest.mark.skipif(not (JS_SDK and NODE), reason="set A2A_JS_SDK to a folder with @a2a-js/sdk"))
    for binding in BINDINGS]


@pytest.mark.parametrize("client, binding", CLIENTS)
def test_each_official_sdk_client_names_the_tenant_of_the_interface_it_chose(client, binding):
    process, banner = start_serve("billing-agent", "--wire", "1.0", "--tenant", "acme", "--tenant", "globex",
                                  "--token", "interop-token", stderr=subprocess.DEVNULL)
    try:
        base = next(line for line in banner if "listening on" in line).split("listening on ")[1].split()[0]
        javascript = client[0] == NODE
        flags = [binding] if javascript else ["--rest"] if binding == "HTTP+JSON" else []
        text = "Please refund $42 on order ORD-42"
        done = subprocess.run([*client, base, "interop-token", *flags[:1], text, *flags[1:]] if javascript else
                              [*client, base, "interop-token", text, *flags], capture_output=True, text=True,
                              timeout=60, cwd=JS_SDK if javascript else None)
        assert done.returncode == 0 and "refund of $42.00 issued for ORD-42" in done.stdout, done.stderr[-2000:]
        host, port = base.removeprefix("http://").split(":")
        wire = Wire((host, int(port)), None)
        headers = {**HEADERS, "Authorization": "Bearer interop-token"}
        listed = {tenant: wire.http("GET", f"/a2a/{tenant}/tasks", headers=headers)[1]["tasks"]
                  for tenant in ("acme", "globex")}
        # All of it in the one tenant the client named, none in the other: acme, the first
        # interface's (8.3.2), for Python; the JS SDK 1.3.0 keeps the last 1.0 interface of
        # each binding it reads (createFromNormalizedAgentCard), so globex, consistently.
        assert sorted(len(tasks) for tasks in listed.values()) == [0, 1], listed
        assert javascript or len(listed["acme"]) == 1, listed
    finally:
        process.stop()
