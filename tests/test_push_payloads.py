"""What a served peer POSTs to a webhook (A2A 1.0.1 section 4.3.3): each change as the
StreamResponse it is, as application/a2a+json, the same events a stream of the same send
carries; the whole task each time with `serve --push-payload task`; application/json with
`--push-media-type application/json`; and, to a webhook registered over 0.3, the whole task
as 0.3 defines it. Real frames through the real billing app, on both 1.0 bindings, and one
real `serve` process; the webhook is a receiver of the test's own on 127.0.0.1."""
import json
import subprocess

import pytest

from conftest import base_url, start_serve
from peers import billing
from peers.a2a import wire_v03, wire_v10
from peers.app import PeerApp
from peers.push_payload import PushSettings
from test_push import EVERY_CHANGE, Receiver, said
from transports import sse
from transports.inprocess import InProcessTransport
from transports.network import HttpTransport

V1 = {"Content-Type": "application/json", "Authorization": "Bearer t0k", "A2A-Version": "1.0"}
REFUND = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"data": {"order_id": "ORD-2", "amount": 5}}]}


def sent(transport, binding, message, hook_url, base=billing.BASE_URL, **configuration):
    """SendMessage with a webhook for its task, over `binding` ("jsonrpc" or "http_json"): the answer's JSON."""
    params = {"message": message, "configuration": {"taskPushNotificationConfig": {"url": hook_url, "token": "tok"},
                                                    **configuration}}
    if binding == "http_json":
        return json.loads(transport.post(base + "/a2a/message:send", json.dumps(params).encode(), V1).body)
    frame = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params}
    return json.loads(transport.post(base + "/a2a", json.dumps(frame).encode(), V1).body)["result"]


def in_process(settings=PushSettings(), wire=wire_v10):
    return InProcessTransport({billing.BASE_URL: PeerApp(billing.billing_agent(allow_private_webhooks=True,
                                                                                push=settings), wire, token="t0k")})


@pytest.mark.parametrize("binding", ["jsonrpc", "http_json"])
def test_a_1_0_webhook_is_told_each_change_as_a_stream_of_the_same_send_tells_it(binding):
    streamed = in_process().post(billing.BASE_URL + "/a2a", json.dumps({
        "jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {"message": REFUND}}).encode(), V1)
    events = [json.loads(event)["result"] for event in sse.decode(streamed.body)]
    with Receiver() as hook:
        sent(in_process(), binding, REFUND, hook.url)
        got = hook.wait_for(4)
    assert [said(body) for _, body in got] == ["task TASK_STATE_SUBMITTED", *EVERY_CHANGE]
    assert [body for _, body in got] == events, "a push carries what a stream carries (section 4.3.3)"
    assert {headers["Content-Type"] for headers, _ in got} == {"application/a2a+json"}, "as section 4.3.3 shows"


def test_a_follow_up_turn_that_changes_no_state_tells_nothing_and_each_state_after_it_is_told():
    transport = in_process()
    paused = {**REFUND, "parts": [{"data": {"order_id": "ORD-1", "amount": 6000}}]}
    with Receiver() as hook:
        task = sent(transport, "jsonrpc", paused, hook.url)["task"]
        hook.wait_for(3)
        approval = {"order_id": "ORD-1", "amount": 6000.0, "currency": "USD"}
        frame = {"jsonrpc": "2.0", "id": 2, "method": "SendMessage", "params": {"message": {
            "messageId": "m-2", "role": "ROLE_USER", "taskId": task["id"], "parts": [{"data": {"approval": approval}}]}}}
        transport.post(billing.BASE_URL + "/a2a", json.dumps(frame).encode(), V1)
        got = hook.wait_for(6)
    assert [said(body) for _, body in got] == [
        "task TASK_STATE_SUBMITTED", "statusUpdate TASK_STATE_WORKING", "statusUpdate TASK_STATE_INPUT_REQUIRED",
        *EVERY_CHANGE], "the follow-up joined the history and changed no state: nothing to tell for it"
    assert got[2][1]["statusUpdate"]["status"]["message"]["parts"], "a pause says what it waits for"


def test_a_refused_follow_up_registers_no_webhook_and_tells_it_nothing_and_a_taken_one_does():
    """A turn billing refuses has no effect, its webhook included: nothing registered, nothing
    pushed. The same webhook with the turn that is taken is registered and told."""
    transport = in_process()
    paused = {**REFUND, "parts": [{"data": {"order_id": "ORD-1", "amount": 6000}}]}
    with Receiver() as first, Receiver() as refused, Receiver() as taken:
        task = sent(transport, "jsonrpc", paused, first.url)["task"]
        first.wait_for(3)
        turn = {"messageId": "m-2", "role": "ROLE_USER", "taskId": task["id"],
                "parts": [{"data": {"approval": {"order_id": "ORD-1", "amount": 1.0, "currency": "USD"}}}]}
        frame = {"jsonrpc": "2.0", "id": 2, "method": "SendMessage", "params": {"message": turn, "configuration": {
            "taskPushNotificationConfig": {"id": "second", "url": refused.url, "token": "tok"}}}}
        answer = json.loads(transport.post(billing.BASE_URL + "/a2a", json.dumps(frame).encode(), V1).body)
        assert answer["error"]["code"] == -32602, answer
        listed = {"jsonrpc": "2.0", "id": 3, "method": "ListTaskPushNotificationConfigs", "params": {"taskId": task["id"]}}
        configs = json.loads(transport.post(billing.BASE_URL + "/a2a", json.dumps(listed).encode(), V1).body)["result"]
        assert [config["url"] for config in configs["configs"]] == [first.url], "the refused turn's webhook is not kept"
        turn = {**turn, "messageId": "m-3", "parts": [{"data": {"approval": {
            "order_id": "ORD-1", "amount": 6000.0, "currency": "USD"}}}]}
        frame["params"] = {"message": turn, "configuration": {"taskPushNotificationConfig": {
            "id": "second", "url": taken.url, "token": "tok"}}}
        transport.post(billing.BASE_URL + "/a2a", json.dumps(frame).encode(), V1)
        told = [said(body) for _, body in taken.wait_for(4)]
        assert told[0] == "task TASK_STATE_INPUT_REQUIRED" and told[-1] == "statusUpdate TASK_STATE_COMPLETED", told
        assert refused.wait_for(1, seconds=0.5) == [], "nothing was pushed for the refused turn"


@pytest.mark.parametrize("binding", ["jsonrpc", "http_json"])
def test_with_push_payload_task_a_1_0_webhook_is_told_the_whole_task_each_time(binding):
    with Receiver() as hook:
        sent(in_process(PushSettings("task", "application/json")), binding, REFUND, hook.url)
        got = hook.wait_for(3)
    assert [said(body) for _, body in got] == [f"task TASK_STATE_{state}" for state in ("SUBMITTED", "WORKING",
                                                                                        "COMPLETED")]
    assert got[-1][1]["task"]["artifacts"][0]["parts"][0]["text"].startswith("refund of $5.00 issued for ORD-2")
    assert {headers["Content-Type"] for headers, _ in got} == {"application/json"}


def test_with_push_media_type_application_json_the_events_are_labelled_as_plain_json():
    with Receiver() as hook:
        sent(in_process(PushSettings("events", "application/json")), "jsonrpc", REFUND, hook.url)
        got = hook.wait_for(4)
    assert [said(body) for _, body in got] == ["task TASK_STATE_SUBMITTED", *EVERY_CHANGE]
    assert {headers["Content-Type"] for headers, _ in got} == {"application/json"}, "as the Python SDK labels them"


@pytest.mark.parametrize("settings", [PushSettings(), PushSettings("task", "application/json")])
def test_a_0_3_webhook_is_told_the_whole_task_each_time_as_json_whatever_the_settings(settings):
    frame = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {
        "message": {"kind": "message", "messageId": "m-1", "role": "user",
                    "parts": [{"kind": "data", "data": {"order_id": "ORD-2", "amount": 5}}]}}}
    with Receiver() as hook:
        frame["params"]["configuration"] = {"pushNotificationConfig": {"url": hook.url, "token": "tok"}}
        in_process(settings, wire_v03).post(billing.BASE_URL + "/a2a", json.dumps(frame).encode(), {
            "Content-Type": "application/json", "Authorization": "Bearer t0k"})
        got = hook.wait_for(3)
    assert [(body["kind"], body["status"]["state"]) for _, body in got] == [
        ("task", "submitted"), ("task", "working"), ("task", "completed")], "0.3's push is the task (its 9.5)"
    assert {headers["Content-Type"] for headers, _ in got} == {"application/json"}, "0.3 knows no a2a+json"


def test_serve_takes_the_push_settings_once_and_refuses_one_it_does_not_know_in_one_line(capsys):
    from peers import demo
    from peers.support.cli import command_line
    served = command_line.parse(["serve", "billing-agent", "--push-payload", "task"], serve_flags=demo.SERVE_FLAGS)
    assert (served.push_payload, served.push_media_type) == ("task", "application/a2a+json")
    with pytest.raises(AttributeError):
        served.push_payload = "events"  # parsed once: a frozen record
    with pytest.raises(SystemExit) as refused:
        command_line.parse(["serve", "billing-agent", "--push-media-type", "text/json"], serve_flags=demo.SERVE_FLAGS)
    said = capsys.readouterr().err
    assert refused.value.code == 2 and "invalid choice: 'text/json'" in said and "Traceback" not in said


def test_served_by_serve_the_settings_reach_a_webhook_on_both_bindings():
    process, banner = start_serve("billing-agent", "--wire", "1.0", "--token", "t0k", "--allow-private-webhooks",
                                  "--push-payload", "task", "--push-media-type", "application/json")
    base, http = base_url(banner[0]), HttpTransport(timeout=5)
    try:
        for number, binding in enumerate(["jsonrpc", "http_json"]):
            with Receiver() as hook:
                refund = {**REFUND, "messageId": f"m-{number}", "parts": [{"data": {"order_id": f"ORD-{number}",
                                                                                     "amount": 5}}]}
                sent(http, binding, refund, hook.url, base)  # another order: one refunded once is not done again
                got = hook.wait_for(3)
            assert [said(body) for _, body in got][-1] == "task TASK_STATE_COMPLETED", got
            assert len(got) == 3 and {headers["Content-Type"] for headers, _ in got} == {"application/json"}
    finally:
        http.close()
        process.terminate()
        process.communicate(timeout=10)
    assert process.returncode in (0, -15), subprocess.list2cmdline(process.args)
