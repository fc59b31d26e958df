"""The live page's "Any agent": one operation a run on an agent the allowlist trusts (POST
/agent, peers/support/outside.py), against the demo's billing-agent served on 127.0.0.1
port 0 as `serve billing-agent --wire 1.0` serves it (peers.serving's parts, in this
process), and a hostile agent whose every reply carries markup.

Over plain HTTP: the door on the new endpoint, hostile bodies each refused with one line,
the credential sent as the card's scheme and never shown. In headless Chromium (one
browser for the module): a paused task continued by its taskId and contextId, its tasks
listed and one canceled, a send followed by stream, and a hostile agent's payloads shown
as text."""
import json
import random
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import a2a_delegation as story
from chromium import CHROMIUM, Browser
from peers import billing
from peers.a2a import wire_v10
from peers.a2a.model import AgentCard, Artifact, Part, SecurityScheme, Task, TaskState
from peers.app import PeerApp
from peers.serving import scheme_for
from peers.support.outside import credential
from peers.support.web import server as web
from test_web import ask, events_of
from transports.printer import mask
from transports.server import PeerServer

TOKEN, KEY = "outside-s3cret-token", "outside-k3y-secret"
PAYLOAD = ("<img src=x onerror=\"document.body.dataset.pwned='img'\">"
           "<script>document.body.dataset.pwned='script'</script>")
REFUND = {"order_id": "ORD-4100", "amount": 6200}
APPROVAL = {"approval": {"order_id": "ORD-4100", "amount": 6200.0, "currency": "USD"}}


def billing_served(auth=None):
    """billing-agent on 127.0.0.1:0, speaking 1.0, wanting TOKEN (or, auth="apikey", KEY in its header)."""
    server = PeerServer(None, "127.0.0.1", 0, log=lambda line: None)
    peer = billing.billing_agent(server.base_url, log=lambda line: None, allow_private_webhooks=True)
    scheme = scheme_for(auth, KEY, server.base_url, peer, None, print)[0] if auth else None
    server.app = PeerApp(peer, wire_v10, token=None if auth else TOKEN, scheme=scheme, log=lambda line: None)
    return server.start(), peer.card.url


class Hostile(BaseHTTPRequestHandler):
    """An agent whose card, task, status message, artifact and error message are all markup."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, document):
        body = json.dumps(document).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        base = f"http://127.0.0.1:{self.server.server_port}"
        card = billing.billing_agent(base).card._replace(description=PAYLOAD, auth_schemes=("none",))
        self.reply(wire_v10.card_to_wire(card))

    def do_POST(self):
        asked = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if asked["method"] != "SendMessage":
            self.reply({"jsonrpc": "2.0", "id": asked["id"], "error": {"code": -32001, "message": PAYLOAD}})
            return
        task = Task("task-" + PAYLOAD, (TaskState.COMPLETED,), (Artifact("a1", (Part(text=PAYLOAD),)),),
                    status_message=PAYLOAD, context_id="ctx-" + PAYLOAD)
        self.reply({"jsonrpc": "2.0", "id": asked["id"], "result": {"task": wire_v10.task_to_wire(task)}})


@pytest.fixture(scope="module")
def agents(tmp_path_factory):
    """billing (bearer), billing (API key), the hostile agent, and the page trusting all three."""
    bearer, bearer_endpoint = billing_served()
    keyed, keyed_endpoint = billing_served("apikey")
    hostile = ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    hostile.daemon_threads = True
    threading.Thread(target=hostile.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    hostile_base = f"http://127.0.0.1:{hostile.server_port}"
    trusting = {"trusted": [{"name": "billing-agent", "endpoint": endpoint}
                            for endpoint in (bearer_endpoint, keyed_endpoint, hostile_base + "/a2a")]}
    path = tmp_path_factory.mktemp("page") / "allowlist.json"
    path.write_text(json.dumps(trusting))
    server, app, url = web.listening(0, str(path), story.main, request_timeout=1.0)
    base, token = url.split("/?token=")
    yield {"base": base, "token": token, "url": url, "path": path, "bearer": bearer.base_url,
           "keyed": keyed.base_url, "hostile": hostile_base, "server": server}
    web.close(server, app)
    for peer in (bearer, keyed):
        peer.stop()
    hostile.shutdown()
    hostile.server_close()


def operation(page, peer, **asked):
    status, _, body = ask(page, "/agent", "POST", {"peer": peer, **asked})
    assert status == 201, body
    return events_of(page, json.loads(body)["id"])


def lines(events):
    return [event["text"] for event in events if event["type"] == "line"]


# -- over plain HTTP ---------------------------------------------------------------------------

def test_the_agent_endpoint_is_behind_the_same_door(agents):
    asked = {"peer": agents["bearer"], "operation": "list"}
    assert ask(agents, "/agent", "POST", asked, token=False)[0] == 401
    assert ask(agents, "/agent", "POST", asked, headers={"Host": "evil.example:80"})[0] == 421
    assert ask(agents, "/agent", "POST", asked, headers={"Origin": "http://evil.example"})[0] == 403


@pytest.mark.parametrize("seed", [24])
def test_hostile_bodies_are_each_refused_with_one_line_and_no_run_starts(agents, seed):
    peer, rng = agents["bearer"], random.Random(seed)
    deep = "[" * 5000 + "]" * 5000
    bodies = [[], {"peer": 1}, {"peer": peer, "operation": "send", "text": ["x"]},
              {"peer": "file:///etc/passwd", "operation": "list"}, {"peer": peer, "operation": "drop"},
              {"peer": peer, "operation": "send", "text": "x" * 70_000},
              {"peer": peer, "operation": "send", "part": "data", "text": deep},
              {"peer": peer, "operation": "send", "part": "data", "text": "[1, 2]"},
              {"peer": peer, "operation": "send", "part": "data", "text": '{"a": NaN}'},
              {"peer": peer, "operation": "get"}, {"peer": peer, "operation": "get", "task": "t\n1"},
              {"peer": peer, "operation": "list", "scheme": "bearer", "secret": "two words"},
              {"peer": peer, "operation": "list", "secret": "no-scheme"},
              {"peer": peer, "operation": "list", "follow": "carrier-pigeon"},
              {"peer": peer, "operation": "list", "step": "yes"},
              {"peer": peer, "operation": "send", "text": ""}]
    rng.shuffle(bodies)
    before = set(agents["server"].app.runs.by_id)
    for body in bodies:
        status, _, answer = ask(agents, "/agent", "POST", body)
        error = json.loads(answer)["error"]
        assert status == 400 and "\n" not in error and len(error) < 300 and "Traceback" not in error, body
    whole = urllib.request.Request(agents["base"] + "/agent", method="POST", data=deep.encode(), headers={
        "X-Workbench-Token": agents["token"], "Origin": agents["base"]})  # deep as the whole body
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(whole, timeout=10)
    assert refused.value.code == 400 and b"Traceback" not in refused.value.read()
    assert set(agents["server"].app.runs.by_id) == before


def test_a_paused_task_is_continued_by_its_ids_and_the_token_goes_only_as_its_card_says(agents):
    peer = agents["bearer"]
    paused = operation(agents, peer, operation="send", part="data", text=json.dumps(REFUND),
                       scheme="bearer", secret=TOKEN)
    task = next(event for event in paused if event["type"] == "task")
    assert task["state"] == "input-required"
    done = operation(agents, peer, operation="send", part="data", text=json.dumps(APPROVAL),
                     task=task["task"], context=task["context"], scheme="bearer", secret=TOKEN)
    sent = next(line for line in lines(done) if line.startswith('--> {"jsonrpc": "2.0", "id": 1, "method": "SendMessage"'))
    assert f'"contextId": "{task["context"]}", "taskId": "{task["task"]}"' in sent
    assert "[support] trusted result (from billing-agent): refund of $6,200.00 issued for ORD-4100 " \
           "(ref BILL-ORD-4100)" in lines(done)
    unauthorised = operation(agents, peer, operation="list")
    assert any(event["type"] == "frame" and event["status"] == 401 for event in unauthorised)
    for events in (paused, done):
        assert TOKEN not in json.dumps(events)
        headers = [event["headers"] for event in events if event["type"] == "frame" and event["direction"] == "-->"]
        assert {"Authorization": "Bearer ****"}.items() <= headers[-1].items()


@pytest.mark.parametrize("follow", ["push", "poll"])
def test_a_send_is_followed_by_push_or_polling_as_asked(agents, follow):
    events = operation(agents, agents["bearer"], operation="send", text=json.dumps({"order_id": f"ORD-45{len(follow)}", "amount": 20}),
                       part="data", follow=follow, scheme="bearer", secret=TOKEN)
    sent = next(line for line in lines(events) if '"method": "SendMessage"' in line)
    assert '"returnImmediately": true' in sent, sent  # the task as it is at once, then followed
    if follow == "push":
        assert any(event["type"] == "frame" and event["pushed_by"] for event in events), lines(events)
    assert any(event["type"] == "task" and event["state"] == "completed" for event in events)
    assert TOKEN not in json.dumps(events)


def test_an_api_key_goes_in_the_header_its_card_names_and_is_masked(agents):
    events = operation(agents, agents["keyed"], operation="list", scheme="api-key", secret=KEY)
    assert any(line.startswith("[support] billing-agent lists ") for line in lines(events)), lines(events)
    assert KEY not in json.dumps(events) and "X-API-Key" in json.dumps(events)
    refused = operation(agents, agents["keyed"], operation="list", scheme="bearer", secret=KEY)
    assert any("the credential entered is HTTP Bearer, but its card declares" in line for line in lines(refused))
    assert not any(event["type"] == "frame" and event["method"] == "POST" for event in refused), "nothing sent"


def test_the_credential_is_built_in_one_place_from_the_cards_scheme():
    card = AgentCard("a", "b", "http://127.0.0.1:1/a2a", "1", (), auth_schemes=("key",),
                     security_schemes=(SecurityScheme("key", "apiKey", key_name="X-Billing-Key"),))
    assert credential(card, "api-key", "k") == ({"X-Billing-Key": "k"}, None)
    assert mask({"X-Billing-Key": "k", "Api-Token": "t", "X-Trace": "kept"}) == \
        {"X-Billing-Key": "****", "Api-Token": "****", "X-Trace": "kept"}
    hostile = card._replace(security_schemes=(SecurityScheme("key", "apiKey", key_name="Host"),))
    assert credential(hostile, "api-key", "k")[1] == "'Host' cannot carry an API key: it is not a header of its own"
    named = card._replace(security_schemes=())  # the card names its scheme; the header is as entered
    assert credential(named, "api-key", "k", "X-Billing-Key") == ({"X-Billing-Key": "k"}, None)
    assert "a frame would show it" in credential(named, "api-key", "k", "X-Shown")[1]


def test_a_hostile_agents_reply_and_error_are_lines_of_text(agents):
    events = operation(agents, agents["hostile"], operation="send", text="hello")
    assert any(PAYLOAD in line and "trusted result" in line for line in lines(events))
    assert any(event["type"] == "task" and event["task"] == "task-" + PAYLOAD for event in events)
    refused = operation(agents, agents["hostile"], operation="get", task="task-1")
    assert any(line.startswith("billing-agent: get failed: ") and PAYLOAD in line for line in lines(refused))


# -- in headless Chromium ------------------------------------------------------------------------

ENDED = "document.body.dataset.state === 'ended'"
FRAMES = "[...document.querySelectorAll('#frames pre')].map((line) => line.textContent)"
TASKS = "[...document.querySelectorAll('#tasks li')].map((line) => line.firstChild.textContent)"


@pytest.fixture(scope="module")
def browser(agents):
    if not CHROMIUM:
        pytest.skip("headless Chromium is not installed here (Debian's chromium package)")
    with Browser(agents["url"]) as opened:
        opened.wait_for("document.body.dataset.state === 'idle'")
        yield opened


def press(browser, button, **fields):
    """Fill the page's fields as a person would, press `button`, and wait for its run to end."""
    for name, value in fields.items():
        browser.evaluate(f"document.getElementById({json.dumps(name)}).value = {json.dumps(value)}")
    browser.evaluate(f"document.body.dataset.state = 'again'; document.getElementById('{button}').click()")
    browser.wait_for(ENDED)
    return browser.evaluate(FRAMES)


def test_in_the_page_a_paused_task_continues_is_listed_and_a_stream_shows_each_event(agents, browser):
    browser.evaluate("document.getElementById('part-data').checked = true")
    frames = press(browser, "say", peer=agents["bearer"], scheme="bearer", token=TOKEN, follow="",
                   message=json.dumps({**REFUND, "order_id": "ORD-4200"}))
    assert any("approval required" in line for line in frames)
    task, context = browser.evaluate("[document.getElementById('task').value, document.getElementById('context').value]")
    assert task and context, "the paused task is what the next message continues"
    frames = press(browser, "say", message=json.dumps({"approval": {**APPROVAL["approval"], "order_id": "ORD-4200"}}))
    assert any(line.startswith("--> ") and f'"taskId": "{task}"' in line for line in frames)
    assert browser.evaluate("document.getElementById('task').value") == "", "a finished task takes no more"
    frames = press(browser, "say", follow="stream", message=json.dumps({**REFUND, "order_id": "ORD-4300"}))
    assert any(line.startswith("<-- [2] ") for line in frames)
    press(browser, "cancel", follow="")
    press(browser, "list")
    listed = browser.evaluate(TASKS)
    assert any(line.startswith(f"{task} ") and line.endswith(": completed") for line in listed)
    assert any(line.endswith(": canceled") for line in listed)
    assert TOKEN not in browser.evaluate("document.documentElement.outerHTML")


def test_in_the_page_a_hostile_agents_markup_is_text_and_never_runs(agents, browser):
    browser.evaluate("document.getElementById('part-text').checked = true")
    frames = press(browser, "say", peer=agents["hostile"], token="", message="hello")
    assert any(PAYLOAD in line for line in frames)
    press(browser, "get", task="task-1")
    assert any(PAYLOAD in line for line in browser.evaluate(FRAMES))
    assert browser.evaluate("document.body.dataset.pwned") is None
    assert browser.evaluate("document.querySelectorAll('main img, main script, aside img, aside script').length") == 0
    assert any(PAYLOAD in line for line in browser.evaluate(TASKS))
