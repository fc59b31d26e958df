"""What the live page keeps of a run whose agent pushes without end (peers/support/web/runs.py,
keeping.py): every push to the run's webhook is a frame of its trace, its body kept whole, and
the page keeps its last 20 runs; an agent that pushes 64 KiB bodies as fast as the webhook takes
them, for as long as the run follows its task, made each such run hold tens of MiB (our webhook
takes 1 MiB of pushes a delegation now; many small ones still make thousands of frames, and the
page drew its diagram again at each: a quarter of the pushes were drawn in the run's time). The run's
records are kept to a bound in number and in bytes, as a proxy session's are, and the page is
told how many went. Real servers on 127.0.0.1 port 0: the agent (http.server, not ours), the
page; a send followed by push, as the page's "Any agent" asks it."""
import http.client
import json
import threading
import time
import urllib.parse

import a2a_delegation as story
from conftest import OutsidePeer, outside_peer
from peers import billing
from peers.a2a import wire_v10
from peers.support.web import keeping
from peers.support.web import server as web
from test_live_page_server import ask, events_of

PUSHES, PADDING = 2_500, 10  # more frames than a run keeps, within the 1 MiB of pushes our webhook takes


class Pushing(OutsidePeer):
    """An agent that answers a send with a working task, then pushes PUSHES status updates of
    PADDING characters each to the webhook the message named (again whenever it answers 429),
    then the task completed."""

    def do_GET(self):
        base = f"http://127.0.0.1:{self.server.server_port}"
        self.reply(wire_v10.card_to_wire(billing.billing_agent(base).card._replace(auth_schemes=("none",))))

    def do_POST(self):
        asked = self.asked()
        webhook = (asked.get("params", {}).get("configuration") or {}).get("taskPushNotificationConfig")
        self.reply({"jsonrpc": "2.0", "id": asked["id"],
                    "result": {"task": {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_WORKING"}}}})
        if webhook:
            threading.Thread(target=pushes, args=(webhook,), daemon=True).start()


def pushes(webhook):
    where = urllib.parse.urlsplit(webhook["url"])
    headers = {"Content-Type": "application/a2a+json", "X-A2A-Notification-Token": webhook.get("token", "")}
    for number in range(PUSHES + 1):
        state = "TASK_STATE_COMPLETED" if number == PUSHES else "TASK_STATE_WORKING"
        body = json.dumps({"statusUpdate": {"taskId": "t1", "contextId": "c1", "status": {"state": state, "message": {
            "role": "ROLE_AGENT", "messageId": f"m{number}", "parts": [{"text": "x" * PADDING}]}}}}).encode()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # a full queue answers 429: pushed again a moment later
            connection = http.client.HTTPConnection(where.hostname, where.port, timeout=5)
            try:
                connection.request("POST", where.path, body, headers)
                if connection.getresponse().status != 429:
                    break
            except OSError:
                return  # the run stopped listening
            finally:
                connection.close()
            time.sleep(0.01)


def test_a_run_whose_agent_pushes_without_end_keeps_a_bounded_trace_and_the_page_says_what_went(tmp_path):
    with outside_peer(Pushing) as agent:
        path = tmp_path / "allowlist.json"
        path.write_text(json.dumps({"trusted": [{"name": "billing-agent", "endpoint": agent + "/a2a"}]}))
        server, app, url = web.listening(0, str(path), story.main, request_timeout=2.0)
        base, token = url.split("/?token=")
        page = {"base": base, "token": token}
        try:
            status, _, body = ask(page, "/agent", "POST", {"peer": agent, "operation": "send", "text": "hi",
                                                          "follow": "push"})
            assert status == 201, body
            run = json.loads(body)
            events = events_of(page, run["id"])
            records = [json.loads(line) for line in ask(page, f"/runs/{run['id']}/trace.jsonl")[2].splitlines()]
        finally:
            web.close(server, app)
    pushed = [record for record in records if record["kind"] == "frame" and "statusUpdate" in record.get("body", "")]
    kept = sum(len(record.get("body", "")) + len(record.get("text", "")) for record in records)
    assert len(pushed) > 10 and kept <= keeping.MOST_RUN_RECORD_BYTES, f"{kept:,} characters kept"
    dropped = [event["text"] for event in events if event["type"] == "dropped"]
    assert dropped and dropped[0].endswith("older frames and lines were dropped"), dropped
    assert events[-1] == {"type": "end", "status": 0}
