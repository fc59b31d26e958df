"""A proxy session started from the live page with the `proxy` command's other flags, and kept
bounded (peers/support/web/proxying.py, keeping.py): --seed draws a '?' fault's request as the
command draws it; --step holds a request before it reaches the agent and the answer before it
reaches the client, each until Send; --webhook fronts the client's push receiver, each
delivery a frame of the session; and a session longer than its cap keeps its newest records
and events alone, saying on the page how many older ones it dropped. Real servers on
127.0.0.1 port 0: the agent, a client's push receiver, the page; every wait bounded."""
import json
import threading
import urllib.request

import pytest

from chromium import CHROMIUM
from conftest import NO_CHROMIUM
from peers.support.proxy.faults import parse
from peers.support.web import keeping
from transports.base import HttpResponse
from transports.server import PeerServer
import test_live_page_server as server_tests
from test_live_page_proxy import started_proxy, through
from test_live_page_server import ask, events_of

page = server_tests.page  # the page's server, as a fixture
ASKED = b'{"jsonrpc": "2.0", "id": 5, "method": "GetTask", "params": {"id": "t"}}'
BIG = 600_000  # bytes of a body: a frame the proxy forwards whole (under the 1 MiB frame limit)


class Served:
    """A small server on 127.0.0.1:0 answering each request with `answer(request)`; what came, kept."""

    def __init__(self, answer):
        self.seen, self.answer = [], answer
        self.server = PeerServer(self.app, "127.0.0.1", 0, idle_timeout=2.0).start()
        self.url = self.server.base_url

    def app(self, request):
        self.seen.append(request)
        return self.answer(request)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.server.stop()


def json_answer(document, status=200):
    return HttpResponse(status, {"Content-Type": "application/json"}, json.dumps(document).encode())


def agent_answer(request):
    """A card for a GET; for a POST, a JSON-RPC result the size of what was asked (its `size`)."""
    if request.method == "GET":
        return json_answer({"name": "small-agent"})
    asked = json.loads(request.body)
    return json_answer({"jsonrpc": "2.0", "id": asked["id"], "result": {"pad": "x" * asked.get("size", 10)}})


def stop(page, session):
    assert ask(page, f"/runs/{session['id']}/stop", "POST")[0] == 200
    assert events_of(page, session["id"])[-1]["type"] == "end"


def test_a_seed_draws_the_faulted_request_as_the_command_does(page):
    with Served(agent_answer) as agent:
        status, _, body = ask(page, "/proxy", "POST", {"to": agent.url, "faults": "status:?:503", "seed": 7})
        assert status == 201, body
        session = json.loads(body)
        drawn = parse("status:?:503", 7).number  # what `proxy --fault 'status:?:503' --seed 7` draws
        assert session["command"].endswith("--fault 'status:?:503' --seed 7")
        said = events_of(page, session["id"], until=lambda event: "fault armed" in event.get("text", ""))
        assert said[-1]["text"] == f"[proxy] fault armed: status:?:503 (request {drawn}, from --seed 7)"
        answers = [through(session["proxy"] + "/a2a", ASKED) for _ in range(4)]
        assert answers == [503 if number == drawn else 200 for number in range(1, 5)]
        stop(page, session)


def test_step_holds_the_request_and_then_the_answer_until_send(page):
    with Served(agent_answer) as agent:
        session = json.loads(ask(page, "/proxy", "POST", {"to": agent.url, "step": True})[2])
        assert session["command"].endswith(" --step")
        answered = []
        client = threading.Thread(target=lambda: answered.append(through(session["proxy"] + "/a2a", ASKED)),
                                  daemon=True)
        client.start()
        events = events_of(page, session["id"], until=lambda event: event["type"] == "held")
        assert events[-1]["type"] == "held" and agent.seen == [], "the request waits: the agent has seen nothing"
        assert ask(page, f"/runs/{session['id']}/send", "POST")[0] == 200
        events = events_of(page, session["id"], until=lambda event: event["type"] == "held" and
                           event["seq"] != events[-1]["seq"])
        answer = next(event for event in events if event["type"] == "frame" and event["direction"] == "<--")
        assert answer["seq"] == events[-1]["seq"] and len(agent.seen) == 1, "the agent answered; the answer waits"
        client.join(0.3)
        assert client.is_alive() and answered == [], "the client has no answer yet"
        assert ask(page, f"/runs/{session['id']}/send", "POST")[0] == 200
        client.join(10)
        assert answered == [200]
        stop(page, session)


@pytest.mark.skipif(not CHROMIUM, reason=NO_CHROMIUM)
def test_step_ticked_in_the_proxy_panel_holds_the_request_until_send_is_pressed(page, chromium):
    with Served(agent_answer) as agent, chromium.tab(page["url"]) as browser:
        browser.wait_for("document.body.dataset.state === 'idle'")
        browser.evaluate(f"""(() => {{ document.getElementById('proxy-to').value = {json.dumps(agent.url)};
            document.getElementById('proxy-step').checked = true;
            document.getElementById('proxy-start').click(); }})()""")
        proxy = browser.wait_for("document.getElementById('proxy-url').textContent")
        assert browser.evaluate("document.getElementById('command').textContent").endswith(" --step")
        answered = []
        client = threading.Thread(target=lambda: answered.append(through(proxy + "/a2a", ASKED)), daemon=True)
        client.start()
        for held in (1, 2):  # the request, then the answer: each waits for Send
            browser.wait_for(f"document.querySelectorAll('#frames li.held').length === {held} && "
                             "document.body.dataset.state === 'held'")
            assert len(agent.seen) == held - 1, "what is held has not gone on"
            browser.evaluate("document.getElementById('send').click()")
        client.join(10)
        assert answered == [200] and len(agent.seen) == 1
        browser.evaluate("document.getElementById('proxy-stop').click()")
        browser.wait_for("document.body.dataset.state === 'ended'")


def test_webhook_fronts_the_clients_receiver_and_each_delivery_is_a_frame_of_the_session(page):
    with Served(agent_answer) as agent, Served(lambda request: json_answer({})) as receiver:
        session = started_proxy_with(page, {"to": agent.url, "webhook": True})
        assert session["command"].endswith(" --webhook")
        config = {"url": receiver.url + "/receiver", "token": "t-1"}
        send = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
            "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]},
            "configuration": {"taskPushNotificationConfig": config}}}
        assert through(session["proxy"] + "/a2a", json.dumps(send).encode()) == 200
        moved = json.loads(agent.seen[-1].body)["params"]["configuration"]["taskPushNotificationConfig"]["url"]
        assert moved == session["proxy"] + "/webhook/1", "the agent is given the proxy's URL"
        delivery = json.dumps({"statusUpdate": {"taskId": "t-1", "status": {"state": "TASK_STATE_WORKING"}}}).encode()
        assert through(moved, delivery) == 200  # the agent's delivery, played here
        assert [request.body for request in receiver.seen] == [delivery], "forwarded to the client's receiver"
        events = events_of(page, session["id"], until=lambda event: event.get("text", "").startswith(
            "[#2 client -> agent] (push answered)"))
        lines = [event["text"] for event in events if event["type"] == "line"]
        assert any(line.startswith("[proxy] webhook moved to the proxy: " + receiver.url) for line in lines)
        assert f"[#2 agent -> client] (push) --> {delivery.decode()}" in lines, lines
        pushed = [event for event in events if event["type"] == "frame" and event["url"] == receiver.url + "/receiver"]
        assert [event["direction"] for event in pushed] == ["-->", "<--"], "the delivery's frames, as the page sees them"
        stop(page, session)


def started_proxy_with(page, asked):
    status, _, body = ask(page, "/proxy", "POST", asked)
    assert status == 201, body
    return json.loads(body)


def test_the_flags_are_refused_in_one_line_naming_their_field(page):
    for asked, field in (({"to": "http://127.0.0.1:9", "seed": -1}, "seed"), ({"to": "http://127.0.0.1:9", "seed": 1.5},
                         "seed"), ({"to": "ftp://x"}, "to"), ({"to": "http://127.0.0.1:9/agents/billing"}, "to"),
                         ({"to": "http://127.0.0.1:9/?tenant=a"}, "to"), ({"to": "http://127.0.0.1:9", "faults": 7}, "faults"),
                         ({"to": "http://127.0.0.1:9", "step": "yes"}, ""), ({"to": "http://127.0.0.1:9", "webhook": 1}, "")):
        status, _, body = ask(page, "/proxy", "POST", asked)
        answer = json.loads(body)
        assert status == 400 and answer["field"] == field and "\n" not in answer["error"], (asked, answer)


def test_events_roll_keeping_the_newest_and_saying_how_many_went():
    rolling = keeping.Events(rolling=True, most=50, most_bytes=1 << 20)
    for number in range(300):
        rolling.add({"type": "line", "kind": "story", "text": f"line {number}"})
        rolling.add({"type": "diagram", "svg": f"<svg>{number}</svg>", "frames": []})
    start, events = rolling.after(0, 0)  # a page opened late: told first what it missed
    assert len(events) == 51 and start == len(rolling) - 51 and rolling.dropped == 600 - 50
    assert events[0] == {"type": "dropped", "what": "events", "text": "the page keeps this session's newest 50 "
                         "events (1 MiB): 550 older ones were dropped before this page read them"}
    assert [event for event in events if event["type"] == "diagram"] == [events[-1]], "the newest diagram alone"
    assert events[-2] == {"type": "line", "kind": "story", "text": "line 299"}
    assert rolling.after(start + 1, 0) == (start + 1, events[1:]), "a page that kept up is told nothing more"
    by_bytes = keeping.Events(rolling=True, most=10_000, most_bytes=4_000)
    for number in range(100):
        by_bytes.add({"type": "line", "kind": "frame", "text": "x" * 500})
    assert by_bytes.size <= 4_000 + 700 and by_bytes.dropped > 80
    first = keeping.Events(most=20)  # a run of the story keeps its start, then says it stopped listening
    for number in range(40):
        first.add({"type": "line", "kind": "story", "text": f"line {number}"})
    first.add({"type": "end", "status": 0})
    _, kept = first.after(0, 0)
    assert [event.get("text") for event in kept[:2]] == ["line 0", "line 1"] and kept[-1]["type"] == "end"
    assert kept[-2]["text"] == "the page shows the first 20 events of this run" and len(kept) == 22


@pytest.mark.skipif(not CHROMIUM, reason=NO_CHROMIUM)
def test_a_long_session_keeps_its_newest_records_and_the_page_says_older_ones_were_dropped(page, chromium):
    with Served(agent_answer) as agent, chromium.tab(page["url"]) as browser:
        browser.wait_for("document.body.dataset.state === 'idle'")
        browser.evaluate(f"""(() => {{ document.getElementById('proxy-to').value = {json.dumps(agent.url)};
            document.getElementById('proxy-start').click(); }})()""")
        proxy = browser.wait_for("document.getElementById('proxy-url').textContent")
        sent = 0
        while sent < 12 and not browser.evaluate("document.getElementById('dropped-records').textContent"):
            body = json.dumps({"jsonrpc": "2.0", "id": sent, "method": "GetTask", "params": {"pad": "y" * BIG},
                               "size": BIG}).encode()
            assert through(proxy + "/a2a", body) == 200
            sent += 1
        said = browser.wait_for("!document.getElementById('dropped').hidden && "
                                "document.getElementById('dropped-records').textContent")
        assert said.startswith(f"its trace and diagram keep the newest {keeping.MOST_RECORDS:,} records (4 MiB of "
                               "bodies, lines, URLs and headers): ") and said.endswith("older frames and lines were dropped"), said
        assert 2 * BIG * sent > keeping.MOST_RECORD_BYTES and sent < 12
        run_id = browser.evaluate("document.body.dataset.run")
        records = [json.loads(line) for line in ask(page, f"/runs/{run_id}/trace.jsonl")[2].splitlines()]
        frames = [record for record in records if record["kind"] == "frame"]
        assert "registry" not in {record["kind"] for record in records}, "a proxy session reads no registry"
        assert 0 < len(frames) < 2 * sent, "the newest frames alone"
        assert sum(len(record.get("body", "")) + len(record.get("text", "")) for record in records) \
            <= keeping.MOST_RECORD_BYTES, "the trace kept is within its cap"
        assert [record["seq"] for record in records] == sorted({record["seq"] for record in records}), "numbered once"
        assert frames[-1]["direction"] == "<--" and json.loads(frames[-1]["body"])["id"] == sent - 1
        browser.evaluate("document.getElementById('proxy-stop').click()")
        browser.wait_for("document.body.dataset.state === 'ended'")
        shown = browser.evaluate("document.getElementById('frames').childElementCount")
        browser.evaluate(f"for (let n = 0; n < {3100 - shown}; n++) show({{type: 'line', kind: 'story', text: `line ${{n}}`}})")
        assert browser.evaluate("document.getElementById('frames').childElementCount") == 3000, "the page's list, bounded"
        assert browser.evaluate("document.getElementById('dropped-page').textContent") == \
            "This list shows the newest 3000 lines: 100 older ones were taken off it."


def test_a_long_sessions_diagram_names_the_frames_it_draws_not_the_sessions_first(page):
    """Each arrow of the diagram names its frame, for the page to show when it is clicked. Drawn from the newest records
    the session keeps, its arrows were named by the session's first frames: the nth arrow kept was given the nth frame
    of the session, so an arrow clicked showed a frame long gone (six frames kept of twenty: named 1 to 6)."""
    with Served(agent_answer) as agent:
        session = started_proxy(page, agent.url)
        for sent in range(10):  # 20 frames of 600 KB: the 4 MiB kept holds the newest few
            body = json.dumps({"jsonrpc": "2.0", "id": sent, "method": "GetTask", "params": {"pad": "y" * BIG},
                               "size": BIG}).encode()
            assert through(session["proxy"] + "/a2a", body) == 200
        stop(page, session)
        events = events_of(page, session["id"])
    crossed = [event["seq"] for event in events if event["type"] == "frame" and not event["stream"]]
    kept = [json.loads(line) for line in ask(page, f"/runs/{session['id']}/trace.jsonl")[2].splitlines()]
    drawn = [event["frames"] for event in events if event["type"] == "diagram"][-1]
    newest = crossed[-sum(1 for record in kept if record["kind"] == "frame"):]
    assert len(crossed) == 20 and len(newest) < 20 and [seq for seq in drawn if seq is not None] == newest, drawn
