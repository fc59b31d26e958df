"""Our served peer's pushes, as a webhook made of the official Python SDK's parts reads them.

Opt-in, as tests/test_interop.py: A2A_SDK_PYTHON names a Python with a2a-sdk; without it
these are skipped. `serve billing-agent --wire 1.0` is given a webhook with the message,
over JSON-RPC and over HTTP+JSON, and tests/interop/sdk_push_receiver.py parses each push
as the SDK's StreamResponse and folds it into the task with the SDK's TaskManager: by
default the task, then status and artifact updates, as application/a2a+json (A2A 1.0.1
section 4.3.3); with the serve settings, plain JSON, or the whole task each time. The SDK
refuses a body holding two kinds, as our own webhook does (tests/test_hostile_pushes.py).
The other way round, the SDK's agent pushing to our webhook, is tests/test_interop.py's
--push runs. Everything listens on 127.0.0.1 and is stopped when the test ends.
"""
import json

import pytest

from conftest import Child, base_url, start_serve
from test_interop import INTEROP, SDK_PYTHON
from transports.network import HttpTransport

pytestmark = pytest.mark.skipif(not SDK_PYTHON, reason="set A2A_SDK_PYTHON to a Python with a2a-sdk")
HEADERS = {"Content-Type": "application/json", "Authorization": "Bearer interop-token", "A2A-Version": "1.0"}


@pytest.fixture(scope="module")
def sdk_webhook():
    """tests/interop/sdk_push_receiver.py on a free port, for the whole module: (the process, its URL)."""
    receiver = Child([SDK_PYTHON, str(INTEROP / "sdk_push_receiver.py"), "push-token"])
    try:
        url = receiver.until("listening on")[-1].split()[-1]
        receiver.seen.clear()
        yield receiver, url
    finally:
        receiver.stop()


def send_with_webhook(http, base, binding, order, url):
    message = {"messageId": f"m-{order}", "role": "ROLE_USER", "parts": [{"data": {"order_id": order, "amount": 7}}]}
    params = {"message": message, "configuration": {"taskPushNotificationConfig": {"url": url, "token": "push-token"}}}
    if binding == "http_json":
        return json.loads(http.post(base + "/a2a/message:send", json.dumps(params).encode(), HEADERS).body)["task"]
    frame = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params}
    return json.loads(http.post(base + "/a2a", json.dumps(frame).encode(), HEADERS).body)["result"]["task"]


@pytest.mark.parametrize("settings, kinds, media_type", [
    ((), ["task", "status_update", "artifact_update", "status_update"], "application/a2a+json"),
    (("--push-media-type", "application/json"), ["task", "status_update", "artifact_update", "status_update"],
     "application/json"),
    (("--push-payload", "task"), ["task", "task", "task"], "application/a2a+json")], ids=["default", "json", "task"])
def test_the_sdk_reads_each_push_of_our_served_peer_into_the_finished_task_on_both_bindings(
        sdk_webhook, settings, kinds, media_type):
    receiver, url = sdk_webhook
    serve, banner = start_serve("billing-agent", "--wire", "1.0", "--token", "interop-token",
                                "--allow-private-webhooks", *settings)
    http = HttpTransport(timeout=10)
    try:
        for binding in ("jsonrpc", "http_json"):
            task_id = send_with_webhook(http, base_url(banner[0]), binding, f"ORD-{binding}", url)["id"]
            receiver.until(f"push {task_id} ")
            lines = [line.split(" ", 5) for line in receiver.until("TASK_STATE_COMPLETED")
                     if line.startswith(f"push {task_id} ")]
            assert [line[3] for line in lines] == kinds and {line[2] for line in lines} == {media_type}, lines
            assert json.loads(lines[-1][5]) == [f"refund of $7.00 issued for ORD-{binding} (ref BILL-ORD-{binding})"]
            assert not any(line.startswith("refused") for line in receiver.seen), receiver.seen
            receiver.seen.clear()
    finally:
        http.close()
        serve.stop()


def test_the_sdk_refuses_a_push_holding_two_kinds_as_our_webhook_does(sdk_webhook):
    receiver, url = sdk_webhook
    both = {"task": {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_WORKING"}},
            "statusUpdate": {"taskId": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_COMPLETED"}}}
    http = HttpTransport(timeout=10)
    try:
        answer = http.post(url, json.dumps(both).encode(), {"Content-Type": "application/a2a+json",
                                                             "X-A2A-Notification-Token": "push-token"})
    finally:
        http.close()
    assert answer.status == 400 and "multiple" in receiver.until("refused")[-1]
