"""Push notifications: the push-config methods on a caller's own tasks, delivery to a real
webhook on 127.0.0.1 with the config's token and authentication, bounded retries, and
the guard against server-side request forgery. Real frames through the real billing app."""
import http.server
import json
import threading
import time

import pytest

from peers import billing
from peers.a2a import wire_v03, wire_v10
from peers.a2a.model import Artifact, Message, Part, Task, TaskState
from peers.a2a.stream import ArtifactUpdate, StatusUpdate
from peers.app import PeerApp
from transports.inprocess import InProcessTransport

HEADERS = {"Content-Type": "application/json", "Authorization": "Bearer t0k", "A2A-Version": "1.0"}


def peer_app(wire=wire_v10, allow_private=True, token="t0k"):
    app = PeerApp(billing.billing_agent(allow_private_webhooks=allow_private), wire, token=token)
    transport = InProcessTransport({billing.BASE_URL: app})

    def call(method, params, headers=HEADERS):
        frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
        return json.loads(transport.post(billing.BASE_URL + "/a2a", frame, headers).body)
    return app, call


def paused_task(call, message_id="m-1"):
    return call("SendMessage", {"message": {"messageId": message_id, "role": "ROLE_USER", "parts": [
        {"data": {"order_id": "ORD-1", "amount": 6000}}]}})["result"]["task"]


class Receiver:
    """A webhook on 127.0.0.1 (port 0) that records what it is sent; `statuses` says what it answers."""

    def __init__(self, statuses=()):
        self.requests, self.statuses = [], list(statuses)
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                outer.requests.append((dict(self.headers), json.loads(body)))
                self.send_response(outer.statuses.pop(0) if outer.statuses else 200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()  # stops at once
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def wait_for(self, count, seconds=5):
        deadline = time.monotonic() + seconds
        while len(self.requests) < count and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.requests

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def at_once(count, send):
    """send(n) for each n below `count`, on threads let go together (each waits at most 5 s), all joined."""
    go = threading.Event()

    def when_let_go(n):
        go.wait(5)
        send(n)
    threads = [threading.Thread(target=when_let_go, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    go.set()
    for thread in threads:
        thread.join(10)


def said(push):
    """A 1.0 push as what it tells: its kind, and the state it names (none for an artifact)."""
    (kind, body), = push.items()
    state = (body.get("status") or {}).get("state")
    return f"{kind} {state}" if state else kind


EVERY_CHANGE = ["statusUpdate TASK_STATE_WORKING", "artifactUpdate", "statusUpdate TASK_STATE_COMPLETED"]


def test_the_card_declares_push_and_a_caller_sets_gets_lists_and_deletes_configs_of_its_own_task():
    app, call = peer_app()
    assert app.peer.card.push_notifications
    task = paused_task(call)
    config = {"taskId": task["id"], "id": "cfg-1", "url": "https://hooks.example/a2a", "token": "tok",
              "authentication": {"scheme": "Bearer", "credentials": "creds"}}
    assert call("CreateTaskPushNotificationConfig", config)["result"] == config
    assert call("GetTaskPushNotificationConfig", {"taskId": task["id"], "id": "cfg-1"})["result"] == config
    assert call("ListTaskPushNotificationConfigs", {"taskId": task["id"]})["result"] == {
        "configs": [config], "nextPageToken": ""}
    assert call("DeleteTaskPushNotificationConfig", {"taskId": task["id"], "id": "cfg-1"})["result"] is None
    assert call("DeleteTaskPushNotificationConfig", {"taskId": task["id"], "id": "cfg-1"})["result"] is None
    assert call("GetTaskPushNotificationConfig", {"taskId": task["id"], "id": "cfg-1"})["error"]["code"] == -32001


def test_configs_are_for_ones_own_existing_tasks_and_bounded():
    app, call = peer_app()
    assert call("CreateTaskPushNotificationConfig", {"taskId": "nope", "url": "https://h.example/"})["error"]["code"] == -32001
    task = paused_task(call)
    stranger = InProcessTransport({billing.BASE_URL: PeerApp(app.peer, wire_v10, token="other")})
    frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "CreateTaskPushNotificationConfig",
                        "params": {"taskId": task["id"], "url": "https://h.example/"}}).encode()
    theirs = json.loads(stranger.post(billing.BASE_URL + "/a2a", frame, {**HEADERS, "Authorization": "Bearer other"}).body)
    assert theirs["error"]["code"] == -32001, "another caller's task is not found, for configs too"
    for n in range(10):
        assert "result" in call("CreateTaskPushNotificationConfig", {"taskId": task["id"], "id": f"c{n}",
                                                                     "url": "https://h.example/"})
    eleventh = call("CreateTaskPushNotificationConfig", {"taskId": task["id"], "id": "c10", "url": "https://h.example/"})
    assert eleventh["error"]["code"] == -32602 and "at most 10" in eleventh["error"]["message"]


@pytest.mark.parametrize("url", ["http://127.0.0.1:1/x", "http://localhost/x", "http://[::1]/x", "http://10.0.0.7/x",
                                 "http://169.254.169.254/latest/meta-data", "http://0.0.0.0/", "ftp://h.example/x",
                                 "not a url"])
def test_a_webhook_at_a_private_address_or_not_http_is_refused_unless_the_server_allows_private(url):
    _, call = peer_app(allow_private=False)
    task = paused_task(call)
    refused = call("CreateTaskPushNotificationConfig", {"taskId": task["id"], "url": url})
    assert refused["error"]["code"] == -32602
    assert call("ListTaskPushNotificationConfigs", {"taskId": task["id"]})["result"]["configs"] == []


@pytest.mark.parametrize("config, field", [({"url": 5}, "url"), ({"url": "https://h.example/", "token": ["x"]}, "token"),
                                           ({"url": "https://h.example/", "authentication": {"scheme": "a b", "credentials": "c"}},
                                            "authentication"),
                                           ({"url": "https://h.example/", "authentication": {"scheme": "Bearér"}},
                                            "authentication"),
                                           ({"url": "https://h.example/", "authentication": {
                                               "scheme": "Bearer", "credentials": "  abc  "}}, "credentials"), ({"url": "https://h.example/" + "x" * 3000}, "url")])
def test_a_malformed_config_is_invalid_params_naming_the_field(config, field):
    _, call = peer_app()
    task = paused_task(call)
    refused = call("CreateTaskPushNotificationConfig", {"taskId": task["id"], **config})
    assert refused["error"]["code"] == -32602 and field in refused["error"]["message"]


def test_each_change_is_delivered_with_the_configs_token_and_authentication():
    with Receiver() as hook:
        _, call = peer_app()
        task = paused_task(call)
        call("CreateTaskPushNotificationConfig", {"taskId": task["id"], "url": hook.url, "token": "tok",
                                                  "authentication": {"scheme": "Bearer", "credentials": "creds"}})
        proposal = {"order_id": "ORD-1", "amount": 6000.0, "currency": "USD"}
        call("SendMessage", {"message": {"messageId": "m-2", "role": "ROLE_USER", "taskId": task["id"],
                                         "parts": [{"data": {"approval": proposal}}]}})
        got = hook.wait_for(4)
        assert [said(body) for _, body in got] == ["task TASK_STATE_INPUT_REQUIRED", *EVERY_CHANGE], \
            "the task as it was when first told (the follow-up joined its history), then what changed"
        assert all(headers["X-A2A-Notification-Token"] == "tok" and headers["Authorization"] == "Bearer creds"
                   and headers["Content-Type"] == "application/a2a+json" for headers, _ in got)


@pytest.mark.parametrize("at_once", [False, True])
def test_a_config_sent_with_the_message_is_told_of_every_state_in_order(at_once):
    with Receiver() as hook:
        _, call = peer_app()
        call("SendMessage", {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [
            {"data": {"order_id": "ORD-2", "amount": 5}}]}, "configuration": {"returnImmediately": at_once,
                                                                               "taskPushNotificationConfig": {
                "url": hook.url, "token": "t"}}})
        got = hook.wait_for(4)
        assert [said(body) for _, body in got] == ["task TASK_STATE_SUBMITTED", *EVERY_CHANGE], \
            "registered before the work"


@pytest.mark.parametrize("config, why", [({"url": "http://127.0.0.1:9/h"}, "private"), ({"url": "ftp://x/y"}, "http(s)"),
                                         ({"url": "http://2130706433/h"}, "private"), ({"url": "http://0x7f.1/h"}, "private"),
                                         ({"url": "https://h.example/", "token": "a\r\nX-Evil: 1"}, "visible ASCII"),
                                         ({"url": "https://h.example/", "token": "\u20acuro"}, "visible ASCII")])
@pytest.mark.parametrize("method", ["SendMessage", "SendStreamingMessage"])
def test_a_webhook_that_could_never_be_told_refuses_the_message_before_anything_is_done(config, why, method):
    app, call = peer_app(allow_private=False)
    answer = call(method, {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [
        {"data": {"order_id": "ORD-2", "amount": 5}}]}, "configuration": {"taskPushNotificationConfig": config}})
    assert answer["error"]["code"] == -32602 and why in answer["error"]["message"]
    assert app.peer.ledger.effects == {} and app.peer.store.tasks == {}, "nothing was done"


def test_a_config_sent_with_a_streamed_message_is_registered_and_told_as_with_send():
    """SendStreamingMessage carries the same configuration: its webhook was read, then dropped."""
    with Receiver() as hook:
        app, call = peer_app()
        frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {"message": {
            "messageId": "m-1", "role": "ROLE_USER", "parts": [{"data": {"order_id": "ORD-2", "amount": 5}}]},
            "configuration": {"taskPushNotificationConfig": {"url": hook.url, "token": "t"}}}}).encode()
        answer = InProcessTransport({billing.BASE_URL: app}).post(billing.BASE_URL + "/a2a", frame, HEADERS)
        streamed = answer.body if isinstance(answer.body, bytes) else b"".join(answer.body)
        assert b"TASK_STATE_COMPLETED" in streamed
        got = hook.wait_for(4)
        assert [said(body) for _, body in got] == ["task TASK_STATE_SUBMITTED", *EVERY_CHANGE]
        task = json.loads(streamed.split(b"data: ")[1])["result"]["task"]["id"]
        listed = call("ListTaskPushNotificationConfigs", {"taskId": task})["result"]["configs"]
        assert [config["url"] for config in listed] == [hook.url]


@pytest.mark.parametrize("wire, configuration, named", [
    (wire_v10, {"taskPushNotificationConfig": "x"}, "params.configuration.taskPushNotificationConfig must be an object"),
    (wire_v10, {"taskPushNotificationConfig": {}}, "params.configuration.taskPushNotificationConfig.url must be"),
    (wire_v10, {"historyLength": -1}, "params.configuration.historyLength must be"),
    (wire_v10, {"acceptedOutputModes": "text/plain"}, "params.configuration.acceptedOutputModes must be"),
    (wire_v10, {"returnImmediately": "yes"}, "params.configuration.returnImmediately must be"),
    (wire_v03, {"pushNotificationConfig": {}}, "params.configuration.pushNotificationConfig.url must be"),
    (wire_v03, {"blocking": 0}, "params.configuration.blocking must be"),
])
@pytest.mark.parametrize("streamed", [False, True])
def test_a_send_whose_configuration_is_malformed_is_refused_naming_the_field_where_it_is(wire, configuration, named,
                                                                                          streamed):
    """A streamed send carries the same configuration, and is judged by the same reading."""
    app, call = peer_app(wire)
    method = {(wire_v10, False): "SendMessage", (wire_v10, True): "SendStreamingMessage",
              (wire_v03, False): "message/send", (wire_v03, True): "message/stream"}[wire, streamed]
    headers = HEADERS if wire is wire_v10 else {**HEADERS, "A2A-Version": "0.3"}
    role = "ROLE_USER" if wire is wire_v10 else "user"
    answer = call(method, {"message": {"messageId": "m-1", "role": role, "parts": [
        {"data": {"order_id": "ORD-2", "amount": 5}, **({} if wire is wire_v10 else {"kind": "data"})}]},
        "configuration": configuration}, headers)
    assert answer["error"]["code"] == -32602 and named in answer["error"]["message"], answer
    assert app.peer.store.tasks == {}


def test_a_null_0_3_push_config_on_1_0_is_no_push_asked_for():
    _, call = peer_app()
    answer = call("SendMessage", {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [
        {"data": {"order_id": "ORD-2", "amount": 5}}]}, "configuration": {"pushNotificationConfig": None}})
    assert answer["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED", answer


def test_webhooks_sent_together_at_the_callers_limit_leave_no_task_made_and_never_worked_on_and_pass_no_limit():
    """A send's webhook is judged before its task exists and kept after. Sends arriving together
    near the caller's limit of 100 all passed the first judgement: once, the late ones were refused
    by a second, after their task was made (left submitted, the refund never done); then each was
    kept, and the limit passed by as many as arrived at once. Each admitted one now holds its place:
    exactly the 5 that fit are taken, all done; the rest are refused before any task."""
    app, call = peer_app()
    for n in range(10):  # 95 configs of this caller's, on tasks of its own that wait for an approval
        paused = call("SendMessage", {"message": {"messageId": f"p-{n}", "role": "ROLE_USER", "parts": [
            {"data": {"order_id": f"ORD-P{n}", "amount": 6000}}]}})["result"]["task"]["id"]
        for j in range(10 if n < 9 else 5):
            call("CreateTaskPushNotificationConfig", {"taskId": paused, "id": f"c{j}", "url": f"http://127.0.0.1:9/{n}-{j}"})
    answers = []
    at_once(30, lambda n: answers.append(call("SendMessage", {"message": {
        "messageId": f"m-{n}", "role": "ROLE_USER", "parts": [{"data": {"order_id": f"ORD-S{n}", "amount": 5}}]},
        "configuration": {"returnImmediately": True,
                          "taskPushNotificationConfig": {"url": f"http://127.0.0.1:9/x{n}"}}})))
    made = lambda: [task for task in app.peer.store.tasks.values() if task.history[0].message_id.startswith("m-")]  # noqa: E731
    deadline = time.monotonic() + 5
    while any(task.state is not TaskState.COMPLETED for task in made()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(answers) == 30 and len(made()) == sum("result" in answer for answer in answers) == 5, \
        "exactly the sends that fit made a task, the others were refused before any"
    assert all(task.state is TaskState.COMPLETED for task in made()), [(t.id, t.state) for t in made()]
    assert sum(map(len, app.peer.webhooks.configs.values())) == 100 and not app.peer.webhooks.held


@pytest.mark.parametrize("method", ["SendMessage", "SendStreamingMessage"])
def test_a_webhook_whose_send_makes_no_task_gives_its_place_back(method):
    """A webhook sent with a message holds a place within its caller's limit of 100 from when it
    is judged; a send that ends with no task to keep it for (its input refused, or answered by the
    task an earlier send made) gives the place back, so 150 of them leave the caller room."""
    from transports import sse
    app, _ = peer_app()
    transport = InProcessTransport({billing.BASE_URL: app})

    def call(method, params):  # a stream's first event, or the error that came instead of one
        frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
        body = transport.post(billing.BASE_URL + "/a2a", frame, HEADERS).body
        return json.loads(sse.decode(body)[0] if body.startswith(b"data:") else body)
    hook = {"taskPushNotificationConfig": {"url": "http://127.0.0.1:9/hook"}}
    first = call(method, {"message": {"messageId": "m-once", "role": "ROLE_USER", "parts": [
        {"data": {"order_id": "ORD-1", "amount": 5}}]}})
    assert "error" not in first, first
    for n in range(150):
        refused = call(method, {"message": {"messageId": f"bad-{n}", "role": "ROLE_USER", "parts": [
            {"data": {"order_id": f"ORD-B{n}", "amount": "lots"}}]}, "configuration": hook})
        assert refused["error"]["code"] == -32602, refused
        again = call(method, {"message": {"messageId": "m-once", "role": "ROLE_USER", "parts": [
            {"data": {"order_id": "ORD-1", "amount": 5}}]}, "configuration": hook})
        assert "error" not in again, again
    assert not app.peer.webhooks.held
    answer = call("SendMessage", {"message": {"messageId": "m-new", "role": "ROLE_USER", "parts": [
        {"data": {"order_id": "ORD-2", "amount": 5}}]}, "configuration": hook})
    assert answer["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED", answer
    assert [config["url"] for config in call("ListTaskPushNotificationConfigs", {
        "taskId": answer["result"]["task"]["id"]})["result"]["configs"]] == ["http://127.0.0.1:9/hook"]


@pytest.mark.parametrize("method", ["SendMessage", "SendStreamingMessage"])
def test_a_webhook_sent_with_a_refund_already_made_is_told_of_the_task_answered(method):
    """The same order again, under a new messageId: the earlier task is the answer. The webhook
    that came with it was once accepted, then dropped; it is now kept, and told the task once."""
    with Receiver() as hook:
        app, call = peer_app()
        first = call("SendMessage", {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [
            {"data": {"order_id": "ORD-2", "amount": 5}}]}})["result"]["task"]
        frame = json.dumps({"jsonrpc": "2.0", "id": 2, "method": method, "params": {"message": {
            "messageId": "m-2", "role": "ROLE_USER", "parts": [{"data": {"order_id": "ORD-2", "amount": 5}}]},
            "configuration": {"taskPushNotificationConfig": {"url": hook.url, "token": "t"}}}}).encode()
        answer = InProcessTransport({billing.BASE_URL: app}).post(billing.BASE_URL + "/a2a", frame, HEADERS)
        assert first["id"].encode() in (answer.body if isinstance(answer.body, bytes) else b"".join(answer.body))
        got = hook.wait_for(1)
        assert [said(body) for _, body in got] == ["task TASK_STATE_COMPLETED"]
        listed = call("ListTaskPushNotificationConfigs", {"taskId": first["id"]})["result"]["configs"]
        assert [config["url"] for config in listed] == [hook.url]
        assert len(app.peer.ledger.effects) == 1, "refunded once"


def test_a_message_delivered_again_with_its_webhook_loses_none_of_the_first_deliverys_pushes():
    """A resend (the same messageId, the same webhook) keeps the config it set: replacing it with
    an equal one would make the pushes queued for the first one go undelivered."""
    with Receiver() as hook:
        _, call = peer_app()
        asked = {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [
            {"data": {"order_id": "ORD-2", "amount": 5}}]}, "configuration": {
            "taskPushNotificationConfig": {"url": hook.url, "token": "t"}}}
        first, again = call("SendMessage", asked)["result"]["task"], call("SendMessage", asked)["result"]["task"]
        assert first["id"] == again["id"]
        time.sleep(0.3)  # anything more it would be sent has arrived by now
        told = [said(body) for _, body in hook.wait_for(4)]
        assert told == ["task TASK_STATE_SUBMITTED", *EVERY_CHANGE], told


@pytest.mark.parametrize("payload", ["events", "task"])
def test_webhooks_sent_with_requests_one_task_answers_are_each_told_once_and_ten_at_most(payload):
    """Requests an earlier task answers (the same order under new messageIds) each register their
    webhook on it: each is told the task once, and no other webhook of it is told again (with the
    whole task pushed each time, every registration once re-sent it to all). The task keeps at
    most 10: the requests past them are refused (-32602), and the refund is done once."""
    from peers.push_payload import PushSettings
    app = PeerApp(billing.billing_agent(allow_private_webhooks=True, push=PushSettings(payload)), wire_v10, token="t0k")
    transport = InProcessTransport({billing.BASE_URL: app})
    with Receiver() as hook:
        answers = []
        for n in range(12):
            frame = json.dumps({"jsonrpc": "2.0", "id": n, "method": "SendMessage", "params": {"message": {
                "messageId": f"m-{n}", "role": "ROLE_USER", "parts": [{"data": {"order_id": "ORD-2", "amount": 5}}]},
                "configuration": {"taskPushNotificationConfig": {"url": hook.url, "id": f"c{n}", "token": f"t{n}"}}}}).encode()
            answers.append(json.loads(transport.post(billing.BASE_URL + "/a2a", frame, HEADERS).body))
        assert [answer.get("error", {}).get("code") for answer in answers] == [None] * 10 + [-32602] * 2, answers
        got = hook.wait_for(4 + 9 if payload == "events" else 3 + 9)
        time.sleep(0.3)  # anything more it would be sent has arrived by now
    by_hook = {n: [said(body) for headers, body in got if headers.get("X-A2A-Notification-Token") == f"t{n}"]
               for n in range(12)}
    after = EVERY_CHANGE if payload == "events" else ["task TASK_STATE_WORKING", "task TASK_STATE_COMPLETED"]
    assert by_hook[0] == ["task TASK_STATE_SUBMITTED", *after], by_hook[0]
    assert all(by_hook[n] == ["task TASK_STATE_COMPLETED"] for n in range(1, 10)), by_hook
    assert by_hook[10] == by_hook[11] == [] and len(got) == sum(map(len, by_hook.values()))
    assert len(app.peer.ledger.effects) == 1, "refunded once"


def test_a_webhook_with_no_id_sent_for_an_order_already_asked_for_replaces_none():
    """A webhook sent without an id takes its task's id. The same order asked for again, under a
    new messageId, with another webhook and no id, took that id too, and so replaced the first
    caller's webhook: it was never told the end. It now takes the next free id, and both are told."""
    with Receiver() as hook:
        _, call = peer_app()
        paused = {"role": "ROLE_USER", "parts": [{"data": {"order_id": "ORD-1", "amount": 6000}}]}
        first = call("SendMessage", {"message": {"messageId": "m-1", **paused}, "configuration": {
            "taskPushNotificationConfig": {"url": hook.url, "token": "first"}}})["result"]["task"]
        again = call("SendMessage", {"message": {"messageId": "m-2", **paused}, "configuration": {
            "taskPushNotificationConfig": {"url": hook.url, "token": "again"}}})["result"]["task"]
        assert again["id"] == first["id"] and again["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        listed = call("ListTaskPushNotificationConfigs", {"taskId": first["id"]})["result"]["configs"]
        assert [(config["id"], config["token"]) for config in listed] == [
            (first["id"], "first"), (first["id"] + "-2", "again")], listed
        assert call("CancelTask", {"id": first["id"]})["result"]["status"]["state"] == "TASK_STATE_CANCELED"
        got = hook.wait_for(6)
    told = {token: [said(body) for headers, body in got if headers.get("X-A2A-Notification-Token") == token]
            for token in ("first", "again")}
    assert told["first"][-1] == told["again"][-1] == "statusUpdate TASK_STATE_CANCELED", told
    assert told["again"][0] == "task TASK_STATE_INPUT_REQUIRED", "told the task as it was when it came"


def test_the_same_webhook_sent_again_with_its_scheme_in_another_case_is_the_one_kept():
    """RFC 9110 11.1: an authentication scheme is case-insensitive, so "Bearer" and "bearer"
    are one webhook, kept once, not a second config beside the first."""
    with Receiver() as hook:
        _, call = peer_app()
        paused = {"role": "ROLE_USER", "parts": [{"data": {"order_id": "ORD-1", "amount": 6000}}]}
        for n, scheme in enumerate(["Bearer", "bearer", "BEARER"]):
            task = call("SendMessage", {"message": {"messageId": f"m-{n}", **paused}, "configuration": {
                "taskPushNotificationConfig": {"url": hook.url, "token": "t", "authentication": {
                    "scheme": scheme, "credentials": "secret"}}}})["result"]["task"]
        listed = call("ListTaskPushNotificationConfigs", {"taskId": task["id"]})["result"]["configs"]
    assert [(config["id"], config["authentication"]["scheme"]) for config in listed] == [(task["id"], "Bearer")]


def test_a_webhook_replaced_while_its_task_is_told_leaves_the_one_kept_told_to_the_end():
    """Sends of one order arriving together, each with a webhook of the same id, replace one
    another. A change was once queued with the config being replaced and the way the new one is
    told: the push was dropped, and the new one counted as told, so the webhook kept was told
    nothing (about a quarter of the rounds). Each round now ends with the one kept told the end."""
    with Receiver() as hook:
        app, call = peer_app()
        for round_ in range(12):
            at_once(6, lambda n, round_=round_: call("SendMessage", {"message": {
                "messageId": f"m-{round_}-{n}", "role": "ROLE_USER", "parts": [
                    {"data": {"order_id": f"ORD-{round_}", "amount": 5}}]}, "configuration": {
                "returnImmediately": True, "taskPushNotificationConfig": {
                    "url": hook.url, "id": "c", "token": f"{round_}-{n}"}}}))
            task = next(task for task in app.peer.store.tasks.values() if task.history[0].message_id.startswith(
                f"m-{round_}-"))
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                kept, = call("ListTaskPushNotificationConfigs", {"taskId": task.id})["result"]["configs"]
                told = [said(body) for headers, body in list(hook.requests)
                        if headers.get("X-A2A-Notification-Token") == kept["token"]]
                if told and told[-1].endswith(" TASK_STATE_COMPLETED"):  # a status update, or the task
                    break
                time.sleep(0.02)
            assert told and told[-1].endswith(" TASK_STATE_COMPLETED"), (round_, kept["token"], told)


def test_a_config_that_came_to_replace_one_since_deleted_is_judged_by_the_limits_when_kept():
    """A config naming one a task has is admitted as its replacement, with no place of its own.
    If that one is deleted and another made before it is kept, it no longer replaces anything:
    it was kept anyway, an eleventh on the task. It is now judged by the limits as it is kept."""
    from peers.changes import Changes
    from peers.push import Webhooks
    from peers.a2a.model import PushConfig
    from transports.jsonrpc import InvalidParams
    webhooks = Webhooks(Changes(), allow_private=True)
    for n in range(10):
        webhooks.set("o", PushConfig("t-1", f"c{n}", f"http://127.0.0.1:9/{n}"), wire_v10)
    replacing = PushConfig("t-1", "c0", "http://127.0.0.1:9/again")
    place = webhooks.admit("o", replacing)  # c0 is kept: a replacement
    webhooks.delete("o", "t-1", "c0")
    webhooks.set("o", PushConfig("t-1", "c10", "http://127.0.0.1:9/10"), wire_v10)
    with pytest.raises(InvalidParams, match="at most 10 webhooks per task"):
        webhooks.set("o", replacing, wire_v10, place=place)
    assert len(webhooks.list("o", "t-1")) == 10 and not webhooks.held


def test_a_message_sent_again_with_its_webhook_at_the_callers_limit_gets_its_task():
    """A caller at its 100 webhooks sends a message again (a retry) with the webhook it sent the
    first time: a place was asked for before the task was known, and the retry was refused. The
    webhook is the one kept, so the retry gets its task, and nothing more is kept."""
    app, call = peer_app()
    for n in range(10):  # 99 configs on paused tasks of its own
        paused = call("SendMessage", {"message": {"messageId": f"p-{n}", "role": "ROLE_USER", "parts": [
            {"data": {"order_id": f"ORD-P{n}", "amount": 6000}}]}})["result"]["task"]["id"]
        for j in range(10 if n < 9 else 9):
            call("CreateTaskPushNotificationConfig", {"taskId": paused, "id": f"c{j}",
                                                      "url": f"http://127.0.0.1:9/{n}-{j}"})
    asked = {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [
        {"data": {"order_id": "ORD-2", "amount": 5}}]},
        "configuration": {"taskPushNotificationConfig": {"url": "http://127.0.0.1:9/hook"}}}
    first = call("SendMessage", asked)["result"]["task"]
    again = call("SendMessage", asked)
    assert again["result"]["task"]["id"] == first["id"], again
    assert sum(map(len, app.peer.webhooks.configs.values())) == 100 and not app.peer.webhooks.held
    other = {**asked, "configuration": {"taskPushNotificationConfig": {"url": "http://127.0.0.1:9/other"}}}
    assert call("SendMessage", other)["error"]["code"] == -32602, "another webhook is one more: refused"


def test_a_webhook_whose_send_took_a_turn_is_kept_even_past_the_tasks_limit():
    """A follow-up's webhook is kept once its turn is taken: refusing it then would answer an error
    for a turn taken, and leave the task neither waiting nor worked on. So where the config it came
    to replace went meanwhile and another filled the task, it is kept, one over."""
    from peers.changes import Changes
    from peers.push import Webhooks
    from peers.a2a.model import PushConfig
    webhooks = Webhooks(Changes(), allow_private=True)
    for n in range(10):
        webhooks.set("o", PushConfig("t-1", f"c{n}", f"http://127.0.0.1:9/{n}"), wire_v10)
    replacing = PushConfig("t-1", "c0", "http://127.0.0.1:9/again")
    place = webhooks.admit("o", replacing)
    webhooks.delete("o", "t-1", "c0")
    webhooks.set("o", PushConfig("t-1", "c10", "http://127.0.0.1:9/10"), wire_v10)
    assert webhooks.set("o", replacing, wire_v10, place=place, must_keep=True) == replacing
    assert len(webhooks.list("o", "t-1")) == 11 and not webhooks.held


def test_a_webhook_told_by_the_request_that_kept_it_is_that_one_not_one_that_replaced_it():
    """A request that kept a webhook tells it the task as the request read it. If a config made
    meanwhile took its id, that one was told the older state, as its only push; now the request
    tells only the very config it kept, while it is kept."""
    from peers.changes import Changes
    from peers.push import Webhooks
    from peers.a2a.model import PushConfig
    webhooks = Webhooks(Changes(), allow_private=True)
    kept = webhooks.set("o", PushConfig("t-1", "t-1-2", "http://127.0.0.1:9/resend"), wire_v10)
    webhooks.set("o", PushConfig("t-1", "t-1-2", "http://127.0.0.1:9/later"), wire_v10)  # Create, same id
    webhooks.tell(Task("t-1", (TaskState.SUBMITTED, TaskState.INPUT_REQUIRED)), "o", only=kept)
    with webhooks.lock:
        assert not webhooks.waiting and not webhooks.sending, "nothing queued for the one that replaced it"


def test_a_null_token_or_id_in_a_sends_webhook_is_none_given():
    """Proto3 JSON reads null as the field's default: a webhook's `token` or `id` sent as null is
    none given, as pageToken's and pageSize's are, not a -32602."""
    _, call = peer_app()
    answer = call("SendMessage", {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [
        {"data": {"order_id": "ORD-2", "amount": 5}}]}, "configuration": {"taskPushNotificationConfig": {
            "url": "http://127.0.0.1:9/hook", "token": None, "id": None, "authentication": None}}})
    task = answer["result"]["task"]
    listed = call("ListTaskPushNotificationConfigs", {"taskId": task["id"]})["result"]["configs"]
    assert [(config["id"], "token" in config) for config in listed] == [(task["id"], False)], listed


def test_a_task_read_before_a_change_already_told_is_not_told_after_it():
    """A webhook told a task's completion by the feed is not then told the working state a
    request read a moment before (what an earlier task answering a resend is told from), nor
    the same task twice."""
    from peers.push_payload import PushSettings, Telling
    working = Task("t-1", (TaskState.SUBMITTED, TaskState.WORKING))
    done = working.advance(TaskState.COMPLETED, artifacts=(Artifact("a", (Part(text="ok"),)),))
    for payload in ("events", "task"):
        telling = Telling(wire_v10, PushSettings(payload=payload))
        assert telling.told(done) == [done]
        assert telling.told(working) == [], "nothing told goes back in the lifecycle"
        assert telling.told(done) == [], "told already"
    turn = Message("m-2", "user", (Part(text="yes"),))
    paused = Task("t-1", (TaskState.SUBMITTED, TaskState.INPUT_REQUIRED))
    joined = paused._replace(history=(turn,))  # a follow-up joined its history: the same lifecycle
    telling = Telling(wire_v10, PushSettings(payload="task"))
    assert telling.told(joined) == [joined] and telling.told(paused) == [], "nor back in its history"


def test_a_failing_webhook_is_tried_three_times_then_left():
    with Receiver(statuses=[500, 503, 502, 500]) as hook:
        app, call = peer_app()
        task = paused_task(call)
        call("CreateTaskPushNotificationConfig", {"taskId": task["id"], "url": hook.url})
        call("CancelTask", {"id": task["id"]})  # one change, so one delivery
        hook.wait_for(3)
        time.sleep(1.0)  # the pauses after the third attempt: no fourth comes
        assert len(hook.requests) == 3 and [status for _, status in app.peer.webhooks.delivered] == [500, 503, 502]


@pytest.mark.parametrize("reply", [b"HTTP/1.1 200 OK\r\nContent-Length: 99999999\r\n\r\n",
                                   b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc",
                                   b"HTTP/1.1 200 OK\r\n", b"HTTP/1.1 200 OK\r\nBad Header\r\n\r\n",
                                   b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n"],
                         ids=["a length over the limit", "closed mid-body", "closed after its status line",
                              "a malformed header line", "closed after a 100 and its status line"])
def test_a_webhook_whose_2xx_reply_breaks_off_after_its_status_line_was_told_once(reply):
    """A 2xx status line says the push arrived: what follows it (a body over the limit, or cut
    short) changes nothing of that, and trying again told the webhook the same change three times."""
    class Broken(Receiver):
        def __init__(self):
            super().__init__()

            def do_POST(request):
                body = request.rfile.read(int(request.headers["Content-Length"]))
                self.requests.append((dict(request.headers), json.loads(body)))
                request.wfile.write(reply)
                request.close_connection = True
            self.server.RequestHandlerClass.do_POST = do_POST
    with Broken() as hook:
        app, call = peer_app()
        task = paused_task(call)
        call("CreateTaskPushNotificationConfig", {"taskId": task["id"], "url": hook.url})
        call("CancelTask", {"id": task["id"]})  # one change, so one delivery
        hook.wait_for(1)
        time.sleep(1.0)  # the pauses a second and third attempt would come after
        assert len(hook.requests) == 1 and [status for _, status in app.peer.webhooks.delivered] == [200]


def test_a_webhook_that_answers_in_3_seconds_is_told_once_not_three_times():
    """Spec 4.3.3 recommends a webhook timeout of 10 to 30 s. At 2 s a receiver that took 3 s to
    answer was told every change three times (each attempt given up before its answer came)."""
    class Slow(Receiver):
        def __init__(self):
            super().__init__()
            handler = self.server.RequestHandlerClass
            answer = handler.do_POST
            handler.do_POST = lambda request: (time.sleep(3), answer(request))
    with Slow() as hook:
        app, call = peer_app()
        task = paused_task(call)
        call("CreateTaskPushNotificationConfig", {"taskId": task["id"], "url": hook.url})
        call("CancelTask", {"id": task["id"]})  # one change, so one delivery
        deadline = time.monotonic() + 8
        while not app.peer.webhooks.delivered and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
        assert [status for _, status in app.peer.webhooks.delivered] == [200] and len(hook.requests) == 1


def test_0_3_spells_configs_nested_and_asks_for_them_by_task_id():
    _, call = peer_app(wire=wire_v03)
    headers = {"Content-Type": "application/json", "Authorization": "Bearer t0k"}
    task = call("message/send", {"message": {"kind": "message", "messageId": "m-1", "role": "user", "parts": [
        {"kind": "data", "data": {"order_id": "ORD-1", "amount": 6000}}]}}, headers)["result"]
    config = {"taskId": task["id"], "pushNotificationConfig": {"id": "c", "url": "https://h.example/",
                                                               "authentication": {"schemes": ["Bearer"], "credentials": "x"}}}
    assert call("tasks/pushNotificationConfig/set", config, headers)["result"] == config
    assert call("tasks/pushNotificationConfig/get", {"id": task["id"], "pushNotificationConfigId": "c"}, headers)["result"] == config
    assert call("tasks/pushNotificationConfig/list", {"id": task["id"]}, headers)["result"] == [config]
    assert call("tasks/pushNotificationConfig/delete", {"id": task["id"], "pushNotificationConfigId": "c"},
                headers)["result"] is None


@pytest.mark.parametrize("wire", [wire_v03, wire_v10])
def test_a_webhooks_authentication_is_kept_as_sent_credentials_optional_every_scheme_listed(wire):
    """0.3's schemes are a list and credentials optional in both (the spec's own push example sends
    `{"schemes": ["Bearer"]}` alone): it was refused for lacking credentials, and a list of two
    was kept as its first. Without credentials a push carries no Authorization (nothing to send)."""
    nested = wire is wire_v03
    headers = {"Content-Type": "application/json", "Authorization": "Bearer t0k"} if nested else HEADERS
    with Receiver() as hook:
        _, call = peer_app(wire=wire)
        if nested:
            task = call("message/send", {"message": {"kind": "message", "messageId": "m-1", "role": "user", "parts": [
                {"kind": "data", "data": {"order_id": "ORD-1", "amount": 6000}}]}}, headers)["result"]
        else:
            task = paused_task(call)
        kept = []
        for number, auth in enumerate([{"schemes": ["Bearer"]}, {"schemes": ["Basic", "X-Api-Key"], "credentials": "x"}]
                                      if nested else [{"scheme": "Bearer"}, {"scheme": "Basic", "credentials": "x"}]):
            body = {"id": f"c{number}", "url": hook.url if number == 0 else "https://h.example/", "authentication": auth}
            config = {"taskId": task["id"], "pushNotificationConfig": body} if nested else {"taskId": task["id"], **body}
            assert call("tasks/pushNotificationConfig/set" if nested else "CreateTaskPushNotificationConfig",
                        config, headers)["result"] == config
            kept.append(config)
        listed = call("tasks/pushNotificationConfig/list", {"id": task["id"]}, headers)["result"] if nested \
            else call("ListTaskPushNotificationConfigs", {"taskId": task["id"]}, headers)["result"]["configs"]
        assert listed == kept
        call("tasks/cancel" if nested else "CancelTask", {"id": task["id"]}, headers)
        pushed = hook.wait_for(1)
        assert pushed and "Authorization" not in pushed[0][0]
    refused = call("tasks/pushNotificationConfig/set" if nested else "CreateTaskPushNotificationConfig",
                   {"taskId": task["id"], "pushNotificationConfig": {"url": "https://h.example/", "authentication": {
                       "schemes": []}}} if nested else {"taskId": task["id"], "url": "https://h.example/",
                                                        "authentication": {"credentials": "x"}}, headers)
    assert refused["error"]["code"] == -32602 and "authentication" in refused["error"]["message"]


def test_a_push_names_the_webhooks_first_scheme_with_its_credentials():
    _, call = peer_app(wire=wire_v03)
    headers = {"Content-Type": "application/json", "Authorization": "Bearer t0k"}
    with Receiver() as hook:
        task = call("message/send", {"message": {"kind": "message", "messageId": "m-1", "role": "user", "parts": [
            {"kind": "data", "data": {"order_id": "ORD-1", "amount": 6000}}]}}, headers)["result"]
        call("tasks/pushNotificationConfig/set", {"taskId": task["id"], "pushNotificationConfig": {
            "url": hook.url, "authentication": {"schemes": ["Basic", "Bearer"], "credentials": "eDp5"}}}, headers)
        call("tasks/cancel", {"id": task["id"]}, headers)
        pushed = hook.wait_for(1)
        assert pushed and pushed[0][0]["Authorization"] == "Basic eDp5"


def test_with_push_the_support_agent_is_told_of_each_change_by_its_own_webhook_on_both_transports():
    import re
    from conftest import cli_once, cli_together
    wires = ("1.0", "1.0", "0.3", "0.3")
    runs = cli_together(*[("--wire", wire, "--push", *extra) for wire in ("1.0", "0.3")
                          for extra in ([], ["--transport", "http"])])
    for wire, done in zip(wires, runs):
        assert done.returncode == 0, done.stderr
        pushed = [line for line in done.stdout.splitlines() if line.startswith("<-- (pushed to our webhook)")]
        states = [found.group(1) for line in pushed if (found := re.search(r'"state": "([A-Za-z_-]+)"', line))]
        assert states[-1] in ("TASK_STATE_COMPLETED", "completed"), states
        bodies = [json.loads(line.split(") ", 1)[1]) for line in pushed]
        kinds = [body.get("kind") or next(iter(body)) for body in bodies]  # 0.3 tags its kind, 1.0 wraps
        assert kinds == (["task", "statusUpdate", "artifactUpdate", "statusUpdate"] if wire == "1.0"
                         else ["task"] * 3), "1.0: the task, then each change; 0.3: the whole task each time"
        assert "[support] trusted result (from billing-agent): refund of $180.00" in done.stdout
        sent = json.loads(next(line for line in done.stdout.splitlines() if '"configuration"' in line)[4:])
        hook = sent["params"]["configuration"].get("taskPushNotificationConfig") or \
            sent["params"]["configuration"]["pushNotificationConfig"]
        assert hook["url"].startswith("http://127.0.0.1:") and hook["token"].startswith("****#"), "shown masked"
    assert "pushed" not in cli_once("--push").stdout, "the essay's card offers no push: nothing waits"


def test_a_task_that_comes_back_ended_is_heard_out_so_no_push_of_it_finds_our_webhook_gone():
    """The approval lesson's continuation comes back completed though our webhook was in the
    message: billing still pushes the change (the task, working, the artifact, completed).
    Each is shown, after the answer, before the webhook closes: none fails."""
    from conftest import cli
    done = cli("--scenario", "approval", "--push")
    assert done.returncode == 0, done.stderr[-800:]
    lines = (done.stdout + done.stderr).splitlines()
    assert not [line for line in lines if "push to http" in line], "a push found our webhook closed"
    answered = next(n for n, line in enumerate(lines) if line.startswith("<-- ") and '"id": 4' in line
                    and "TASK_STATE_COMPLETED" in line)
    after = lines[answered + 1:answered + 5]
    assert all(line.startswith("<-- (pushed to our webhook)") for line in after), after
    assert '"TASK_STATE_COMPLETED"' in after[-1] and "[support] task task-1 state: completed" == lines[answered + 5]


def test_our_webhook_takes_only_pushes_with_its_token():
    from transports.network import HttpTransport
    from peers.support.calling.follow import listening
    with listening(True) as receiver:
        http = HttpTransport(timeout=2)
        assert http.post(receiver.url, b'{"task": {}}', {"Content-Type": "application/json"}).status == 403
        assert http.post(receiver.url, b'{"task": {}}', {"Content-Type": "application/json",
                                                        "X-A2A-Notification-Token": "guess"}).status == 403
        assert http.post(receiver.url, b"{}", {"Content-Type": "application/json",
                                               "X-A2A-Notification-Token": receiver.token}).status == 200
        http.close()
        push = receiver.next_push(1)
        assert receiver.forged == 2 and push.body == b"{}" and push.url == receiver.url
        assert push.headers["x-a2a-notification-token"] == receiver.token and receiver.next_push(0.1) is None


def test_our_webhook_is_closed_when_the_delegation_ends_however_it_ends_and_a_dripping_push_gives_up():
    import socket
    from transports.errors import TransportError
    from transports.network import HttpTransport
    from peers.support.calling.follow import listening
    with pytest.raises(RuntimeError, match="the delegation failed"):
        with listening(True) as receiver:
            port = int(receiver.url.split(":")[2].split("/")[0])
            drip = socket.create_connection(("127.0.0.1", port), timeout=5)
            drip.sendall(b"POST /a2a-push HTTP/1.1\r\nContent-Length: 10\r\n")  # and never the rest
            started = time.monotonic()
            answer = drip.recv(100)  # a 408 (the request did not arrive in time), then the end
            assert answer.startswith(b"HTTP/1.1 408 ") and time.monotonic() - started < 4, "the receiver gave up on it"
            while answer and time.monotonic() - started < 4:  # bounded: the socket's timeout, and this deadline
                answer = drip.recv(4096)
            assert answer == b"", "and closed the connection"
            drip.close()
            raise RuntimeError("the delegation failed")
    with pytest.raises(TransportError):  # the block ended: nothing listens any more
        HttpTransport(timeout=1).post(receiver.url, b"{}", {"Content-Type": "application/json"})
    receiver.close()  # closing again is harmless
    with listening(False) as none:
        assert none is None, "no --push, or a card without push notifications: no webhook"


# -- our side: every kind of push a peer may send, from a peer of the test's own ---------------

def pushing_peer(wire, updates, answer=None):
    """A peer app of the test's own, as the official SDK's server behaves: it answers the
    message with the task just submitted (or `answer`), then POSTs `updates(token)` (StreamResponses as
    `wire` spells them, each with the token to send it with) to the webhook the message
    registered, over real HTTP on 127.0.0.1. Returns (app, statuses our webhook answered, threads)."""
    from transports.base import HttpResponse
    from transports.network import HttpTransport
    card = json.dumps(wire.card_to_wire(billing.billing_agent().card)).encode()
    answered, threads = [], []

    def deliver(config):
        from transports.errors import TransportError
        http = HttpTransport(timeout=5)
        for update, token in updates(config.token):  # raw bytes are sent as they are
            headers = {"Content-Type": "application/json", "X-A2A-Notification-Token": token}
            body = update if isinstance(update, bytes) else json.dumps(update).encode()
            try:
                answered.append(http.post(config.url, body, headers).status)
            except TransportError:  # the delegation ended, and our webhook with it: the rest go nowhere
                answered.append("closed")
                break
        http.close()

    def app(request):
        if request.method == "GET":
            return HttpResponse(200, {"Content-Type": "application/json"}, card)
        frame = json.loads(request.body)
        config = wire.send_request(frame["params"]).push_config
        if config is not None:
            threads.append(threading.Thread(target=deliver, args=(config,), daemon=True))
            threads[-1].start()
        result = wire.send_result(answer or Task("t-1", context_id="c-1"))
        return HttpResponse(200, {"Content-Type": "application/json"},
                            json.dumps({"jsonrpc": "2.0", "id": frame["id"], "result": result}).encode())
    return app, answered, threads


def every_kind(wire):
    """What the spec lets a push carry (1.0 section 4.3: a StreamResponse), about our task
    and one about another, and one with the wrong token."""
    def status(state, task_id="t-1"):
        return wire.stream_result(StatusUpdate(task_id, "c-1", state, final=state is TaskState.COMPLETED))
    made = wire.stream_result(ArtifactUpdate("t-1", "c-1", Artifact("a-1", (Part(text="refund issued"),))))
    said = wire.stream_result(Message("m-9", "agent", (Part(text="on it"),), "c-1", "t-1"))
    return lambda token: [(status(TaskState.WORKING), token), (status(TaskState.FAILED, "t-other"), token),
                          (made, token), (said, token), (status(TaskState.FAILED), "a guess"),
                          (status(TaskState.COMPLETED), token)]


def pushed_to(wire, updates, patience=10.0, answer=None):
    """Our support agent delegating with --push to `pushing_peer`, its printer wired as main() wires it."""
    import a2a_delegation as story
    from conftest import BILLING, BILLING_CARD, following_in
    from transports.printer import FramePrinter
    app, answered, threads = pushing_peer(wire, updates, answer)
    printer = FramePrinter(InProcessTransport({billing.BASE_URL: app}))
    agent = story.SupportAgent(printer, [BILLING], {BILLING.endpoint: "t0k"}, lambda *args, **facts: None,
                               told=printer.received, **following_in({"no_wait": "push", "patience": patience}))
    started = time.monotonic()
    outcome = agent.handle(BILLING_CARD, "process_refund", {"order_id": "ORD-5", "amount": 5})
    for thread in threads:
        thread.join(5)
    return outcome, printer, answered, time.monotonic() - started


@pytest.mark.parametrize("wire", [wire_v10, wire_v03])
def test_with_push_status_and_artifact_updates_pushed_by_the_peer_complete_the_task(wire):
    outcome, printer, answered, _ = pushed_to(wire, every_kind(wire))
    assert outcome.error is None and outcome.task.lifecycle[-1] is TaskState.COMPLETED
    assert [state.value for state in outcome.task.lifecycle] == ["submitted", "working", "completed"], \
        "another task's failure and a forged one changed nothing"
    assert outcome.result == "refund issued"
    assert answered == [200, 200, 200, 200, 403, 200], "only the forged push was refused"
    pushes = [frame for frame in printer.frames if frame.sender is not None]
    assert len(pushes) == 5 and {frame.sender for frame in pushes} == {"https://billing.acme.example/a2a"}
    assert all(frame.url.startswith("http://127.0.0.1:") and frame.headers["x-a2a-notification-token"].startswith("****#")
               for frame in pushes), "each push is its own frame, where it arrived, its token masked"


@pytest.mark.parametrize("pushes, shown", [
    (lambda status: [status("t-other"), status("t-1")], 2),  # another task's last word is not this one's
    (lambda status: [b"not json"], 1),  # unfit to read: said, and the answer stands
    (lambda status: [], 0),  # nothing comes: heard out for a second at most
], ids=["another task's push first", "a malformed push", "no push"])
def test_an_answer_that_showed_the_task_ended_stands_whatever_is_pushed_after_it(pushes, shown):
    from peers.a2a.stream import StatusUpdate
    done = Task("t-1", (TaskState.SUBMITTED, TaskState.WORKING, TaskState.COMPLETED), context_id="c-1")
    def updates(token):
        return [(update if isinstance(update, bytes) else wire_v10.stream_result(update), token) for update in
                pushes(lambda task_id: StatusUpdate(task_id, "c-1", TaskState.COMPLETED, final=True))]
    outcome, printer, answered, took = pushed_to(wire_v10, updates, answer=done)
    assert outcome.error is None and outcome.task.lifecycle[-1] is TaskState.COMPLETED and took < 3
    assert answered == [200] * shown, "each push was taken, none found our webhook closed"
    assert len([frame for frame in printer.frames if frame.sender is not None]) == shown


@pytest.mark.parametrize("wire", [wire_v10, wire_v03])
def test_every_kind_a_push_may_carry_after_an_answer_that_showed_the_task_ended_is_shown_and_changes_nothing(wire):
    """A status, an artifact, a message, another task's failure, a forged push, then ours
    completed: each taken (the forged one refused), shown, and the answer stands as it was."""
    done = Task("t-1", (TaskState.SUBMITTED, TaskState.WORKING, TaskState.COMPLETED), context_id="c-1")
    outcome, printer, answered, took = pushed_to(wire, every_kind(wire), answer=done)
    assert outcome.error is None and outcome.task.lifecycle[-1] is TaskState.COMPLETED and took < 3
    assert outcome.task.artifacts == (), "what was pushed after the answer is shown, not folded into it"
    assert answered == [200, 200, 200, 200, 403, 200], "none found our webhook closed; the forged one was refused"
    assert len([frame for frame in printer.frames if frame.sender is not None]) == 5


def test_with_push_a_peer_that_never_tells_leaves_the_task_as_it_was_when_our_patience_ran_out():
    from transports.errors import TransportError
    from transports.network import HttpTransport
    outcome, printer, answered, took = pushed_to(wire_v10, lambda token: [], patience=0.5)
    assert outcome.error is None and outcome.task.lifecycle[-1] is TaskState.SUBMITTED and 0.5 <= took < 3
    sent = json.loads(printer.frames[2].body)["params"]["configuration"]["taskPushNotificationConfig"]
    with pytest.raises(TransportError):  # the delegation ended: so did our webhook
        HttpTransport(timeout=1).post(sent["url"], b"{}", {"Content-Type": "application/json"})


@pytest.mark.parametrize("body", [b"not json", b'{"task": 5}', b'{"nothing": {}}', b"[" * 5000, b'{"a": 1, "a": 2}'],
                         ids=["not JSON", "a task that is no object", "no kind of update", "deep", "a duplicate key"])
def test_a_push_that_is_no_stream_response_fails_the_delegation_in_one_line_and_at_once(body):
    outcome, _, answered, took = pushed_to(wire_v10, lambda token: [(body, token)], patience=5)
    assert answered == [200] and outcome.error.startswith("delegation failed: a push ") and "\n" not in outcome.error
    assert took < 3, "not waited out"


def test_a_config_whose_task_the_store_forgets_while_it_is_set_is_not_kept_and_the_set_says_the_task_is_gone(
        monkeypatch):
    """CreateTaskPushNotificationConfig found the task, then kept the config: a task forgotten between
    the two (the store full, its caller's newest refund pushing out its oldest) took its configs with it
    before this one was kept, so this one stayed for ever, never told, never deleted (delete first finds
    the task), and counted in its caller's 100 and the peer's 1,000. A name's lookup as the config is
    judged holds it at that point, so the store forgets the task there, every time."""
    import socket
    looking, answer = threading.Event(), threading.Event()
    resolve = socket.getaddrinfo

    def held_for_localhost(host, *args, **kwargs):
        if host == "localhost":
            looking.set()
            answer.wait(5)
        return resolve(host, *args, **kwargs)
    monkeypatch.setattr(socket, "getaddrinfo", held_for_localhost)
    app = PeerApp(billing.billing_agent(allow_private_webhooks=True, max_tasks=1), wire_v10, token="t0k")
    transport = InProcessTransport({billing.BASE_URL: app})

    def call(method, params):
        frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
        return json.loads(transport.post(billing.BASE_URL + "/a2a", frame, HEADERS).body)
    task = paused_task(call)["id"]
    answered = []
    setting = threading.Thread(target=lambda: answered.append(call("CreateTaskPushNotificationConfig", {
        "taskId": task, "url": "http://localhost:9/hook"})))
    setting.start()
    assert looking.wait(5), "the config is being judged: its task was found"
    call("SendMessage", {"message": {"messageId": "m-2", "role": "ROLE_USER", "parts": [
        {"data": {"order_id": "ORD-2", "amount": 5}}]}})  # a store of one task forgets the first
    answer.set()
    setting.join(10)
    assert answered[0].get("error", {}).get("code") == -32001, answered
    assert not any(configs for (_, task_id), configs in app.peer.webhooks.configs.items() if task_id == task)
