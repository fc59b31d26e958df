"""The live page's "Any agent": one operation a run on an agent the allowlist trusts (POST
/agent, peers/support/web/outside.py), against the demo's billing-agent served on 127.0.0.1
port 0 as `serve billing-agent --wire 1.0 --auth KIND` serves it (peers.serving's parts,
in this process), under each scheme the page can hold a credential for, and a hostile
agent whose every reply carries markup.

Over plain HTTP: the door on the new endpoint, hostile bodies each refused with one line,
the credential entered held for the agent's origin in the run's credential store and sent
as the card's scheme asks (an OAuth2 token fetched first), never shown; a credential of a
kind the card does not declare refused with nothing but the card's GET sent. In headless
Chromium (one browser for the module): a paused task continued by its taskId and
contextId, its tasks listed and one canceled, a send followed by stream, a Basic pair
entered in the page, and a hostile agent's payloads shown as text."""
import base64
import json
import random
import urllib.error
import urllib.request

import pytest

import a2a_delegation as story
from conftest import ROOT, OutsidePeer, outside_peer
from peers import billing
from peers.a2a import wire_v10
from peers.a2a.model import Artifact, Part, Task, TaskState
from peers.app import PeerApp
from peers.serving import scheme_for
from peers.signing import rs256
from peers.support.calling.held import Held
from peers.support.web import agent as page_agent, server as web
from test_live_page_server import ask, events_of
from transports.server import PeerServer

TOKEN, KEY = "outside-s3cret-token", "outside-k3y-secret"
# What the page enters for each kind of agent (its scheme, its secret), and the --auth it is served with.
ENTERED = {"bearer": ("bearer", TOKEN), "apikey": ("api-key", KEY), "basic": ("basic", "page-user:pa55-s3cret"),
           "oauth2": ("oauth2", "page-client:cl1ent-s3cret"), "oidc": ("oauth2", "page-client:oidc-s3cret")}
SIGNING_KEY = rs256.private_from_pem((ROOT / "peers/keys/billing-agent.DEMO-KEY.pem").read_text())
PAYLOAD = ("<img src=x onerror=\"document.body.dataset.pwned='img'\">"
           "<script>document.body.dataset.pwned='script'</script>")
REFUND = {"order_id": "ORD-4100", "amount": 6200}
APPROVAL = {"approval": {"order_id": "ORD-4100", "amount": 6200.0, "currency": "USD"}}


def billing_served(auth="bearer"):
    """billing-agent on 127.0.0.1:0, speaking 1.0, wanting ENTERED[auth]'s secret as `auth`
    says; and each credential header it was sent (an OAuth2 access token among them)."""
    server, seen = PeerServer(None, "127.0.0.1", 0, log=lambda line: None), []
    peer = billing.billing_agent(server.base_url, log=lambda line: None, allow_private_webhooks=True)
    secret = ENTERED[auth][1]
    scheme = None if auth == "bearer" else scheme_for(auth, secret, server.base_url, peer, SIGNING_KEY, print)[0]
    app = PeerApp(peer, wire_v10, token=TOKEN if auth == "bearer" else None, scheme=scheme, log=lambda line: None)

    carried_in = scheme.declared.key_name if auth == "apikey" else "authorization"

    def recording(request):  # the real app; what crossed is kept, to look for it in what the page shows
        seen.append(request.header(carried_in))
        return app(request)
    server.app = recording
    return server.start(), peer.card.url, seen


class Hostile(OutsidePeer):
    """An agent whose card, task, status message, artifact and error message are all markup."""

    def do_GET(self):
        base = f"http://127.0.0.1:{self.server.server_port}"
        card = billing.billing_agent(base).card._replace(description=PAYLOAD, auth_schemes=("none",))
        self.reply(wire_v10.card_to_wire(card))

    def do_POST(self):
        asked = self.asked()
        if asked["method"] != "SendMessage":
            self.reply({"jsonrpc": "2.0", "id": asked["id"], "error": {"code": -32001, "message": PAYLOAD}})
            return
        task = Task("task-" + PAYLOAD, (TaskState.COMPLETED,), (Artifact("a1", (Part(text=PAYLOAD),)),),
                    status_message=PAYLOAD, context_id="ctx-" + PAYLOAD)
        self.reply({"jsonrpc": "2.0", "id": asked["id"], "result": {"task": wire_v10.task_to_wire(task)}})


@pytest.fixture(scope="module")
def agents(tmp_path_factory):
    """billing under each scheme of ENTERED, the hostile agent, and the page trusting them all."""
    served = {auth: billing_served(auth) for auth in ENTERED}
    with outside_peer(Hostile) as hostile_base:
        trusting = {"trusted": [{"name": "billing-agent", "endpoint": endpoint} for endpoint
                                in [endpoint for _, endpoint, _ in served.values()] + [hostile_base + "/a2a"]]}
        path = tmp_path_factory.mktemp("page") / "allowlist.json"
        path.write_text(json.dumps(trusting))
        server, app, url = web.listening(0, str(path), story.main, request_timeout=1.0)
        base, token = url.split("/?token=")
        yield {"base": base, "token": token, "url": url, "path": path, "hostile": hostile_base, "server": server,
               **{auth: peer.base_url for auth, (peer, _, _) in served.items()},
               "seen": {auth: seen for auth, (_, _, seen) in served.items()}}
        web.close(server, app)
        for peer, _, _ in served.values():
            peer.stop()


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
              {"peer": peer, "operation": "send", "text": ""},
              {"peer": peer, "operation": "list", "text": ["x"]}, {"peer": peer, "operation": "list", "part": "image"},
              {"peer": peer, "operation": "get", "task": "t-1", "part": {"kind": "data"}}]
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
        assert headers[-1]["Authorization"].startswith("Bearer ****#"), "masked, with a fingerprint"


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


def shown(page, events, run_id=None):
    """Everything the page was told of a run: its events, and its trace as saved."""
    return json.dumps(events) + (ask(page, f"/runs/{run_id}/trace.jsonl")[2].decode() if run_id else "")


@pytest.mark.parametrize("auth", ["bearer", "apikey", "basic", "oauth2", "oidc"])
def test_each_scheme_the_page_holds_reaches_billing_and_no_secret_is_shown(agents, auth):
    scheme, secret = ENTERED[auth]
    status, _, body = ask(agents, "/agent", "POST", {"peer": agents[auth], "operation": "send", "part": "data",
                                                     "text": json.dumps({"order_id": "ORD-4500", "amount": 45}),
                                                     "scheme": scheme, "secret": secret, "verbose": True})
    assert status == 201, body
    run_id = json.loads(body)["id"]
    events = events_of(agents, run_id)
    assert "[support] trusted result (from billing-agent): refund of $45.00 issued for ORD-4500 " \
           "(ref BILL-ORD-4500)" in lines(events), lines(events)
    if auth != "bearer":  # --verbose says which scheme went, and why (credentials.py)
        assert any(line.startswith("[auth] 'billing-agent' requires ") for line in lines(events)), lines(events)
    sent = [value.split(" ")[-1] for value in agents["seen"][auth] if value]  # a token, a Basic pair, an access token
    assert sent, "the credential crossed"
    everything = shown(agents, events, run_id)
    # A user or client id is named (--verbose says whose); its password or client secret never is.
    for kept in [secret, secret.split(":")[-1], base64.b64encode(secret.encode()).decode(), *sent]:
        assert kept not in everything, kept
    if auth.startswith("o"):  # the token fetch is frames of its own, before the task's
        assert any(event["type"] == "frame" and event["url"].endswith("/oauth2/token") for event in events)


@pytest.mark.parametrize("auth, entered", [("apikey", "bearer"), ("bearer", "api-key"), ("basic", "oauth2"),
                                           ("oauth2", "basic")])
def test_a_credential_of_a_kind_the_card_does_not_declare_is_refused_and_only_the_card_is_fetched(
        agents, auth, entered):
    before = len(agents["seen"][auth])
    events = operation(agents, agents[auth], operation="list", scheme=entered, secret=ENTERED[auth][1])
    refused = [line for line in lines(events) if line.startswith("billing-agent: not sent: its card requires ")]
    assert len(refused) == 1 and "\n" not in refused[0], lines(events)
    assert [event["method"] for event in events if event["type"] == "frame" and event["direction"] == "-->"] == ["GET"]
    assert agents["seen"][auth][before:] == [None], "the card's GET, and nothing else, reached the agent"
    assert ENTERED[auth][1] not in json.dumps(events)


def test_without_a_credential_the_store_refuses_where_the_card_needs_one_it_must_act_for(agents):
    events = operation(agents, agents["oauth2"], operation="list")
    assert any(line.startswith("billing-agent: not sent: its card requires ") for line in lines(events)), lines(events)
    assert not any(event["type"] == "frame" and event["method"] == "POST" for event in events), "nothing sent"


def test_the_page_holds_what_was_entered_for_the_agents_origin_alone():
    peer = "http://127.0.0.1:8/agents/billing/.well-known/agent-card.json"
    assert page_agent.credentials(peer, "basic", "me:pa:ss") == {"http://127.0.0.1:8": Held(basic=("me", "pa:ss"))}
    assert page_agent.credentials(peer, "oauth2", "id:s") == {"http://127.0.0.1:8": Held(client=("id", "s"))}
    assert page_agent.credentials(peer, "api-key", "k") == {"http://127.0.0.1:8": Held(api_key="k")}
    assert page_agent.credentials(peer, "", "") == {}


@pytest.mark.parametrize("seed", [25])
def test_hostile_schemes_and_secrets_are_each_refused_with_one_line(agents, seed):
    peer, rng = agents["basic"], random.Random(seed)
    entered = [("mtls", "x"), ("Bearer", "x"), ("bearer", ""), ("", "x"), ("basic", "no-colon"), ("basic", ":pass"),
               ("basic", "user:"), ("oauth2", "id-only:"), ("bearer", "tab\there"), ("bearer", "é-not-ascii"),
               ("bearer", "x" * 5000), ("api-key", "nul\x00"), ("bearer", " padded"), (["bearer"], "x"), ("bearer", 7)]
    rng.shuffle(entered)
    before = set(agents["server"].app.runs.by_id)
    asked_of = {"/agent": {"peer": peer, "operation": "list"}, "/runs": {"run": "default", "peer": peer}}
    for scheme, secret in entered:
        for path, body in asked_of.items():
            status, _, answer = ask(agents, path, "POST", {**body, "scheme": scheme, "secret": secret})
            error = json.loads(answer)["error"]
            assert status == 400 and "\n" not in error and len(error) < 300, (path, scheme, secret, error)
            assert str(secret) not in error or len(str(secret)) < 2, "a secret is never said back"
    assert ask(agents, "/agent", "POST", {"peer": peer, "operation": "list", "verbose": "yes"})[0] == 400
    assert set(agents["server"].app.runs.by_id) == before


def test_a_credential_entered_with_no_agents_url_is_refused_beside_the_secret_not_dropped(agents):
    """The CLI warns that --token-env does nothing without --peer; the page says so where the
    secret was entered, and starts no run that would look as if it had been sent."""
    before = set(agents["server"].app.runs.by_id)
    for entered in ({"scheme": "bearer", "secret": "s3cret-unsent"}, {"token": "s3cret-unsent"},
                    {"scheme": "basic", "secret": "me:s3cret-unsent", "peer": ""}):
        status, _, answer = ask(agents, "/runs", "POST", {"run": "default", **entered})
        problem = json.loads(answer)
        assert status == 400 and problem["field"] == "secret", problem
        assert "URL field" in problem["error"] and "s3cret" not in problem["error"]
    assert set(agents["server"].app.runs.by_id) == before
    status, _, answer = ask(agents, "/runs", "POST", {"run": "default", "scheme": "", "secret": ""})
    assert status == 201, answer  # an empty credential is none: the run starts


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
def browser(agents, chromium):
    with chromium.tab(agents["url"]) as opened:
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
    browser.evaluate("document.getElementById('verbose').checked = true")
    frames = press(browser, "list", peer=agents["basic"], scheme="basic", token=ENTERED["basic"][1])
    browser.evaluate("document.getElementById('verbose').checked = false")
    assert any(line.startswith("[auth] 'billing-agent' requires ") for line in frames), frames
    assert any(line.startswith("[support] billing-agent lists ") for line in frames), frames
    html = browser.evaluate("document.documentElement.outerHTML")
    assert TOKEN not in html and ENTERED["basic"][1].split(":")[1] not in html


def test_in_the_page_a_hostile_agents_markup_is_text_and_never_runs(agents, browser):
    browser.evaluate("document.getElementById('part-text').checked = true")
    frames = press(browser, "say", peer=agents["hostile"], token="", message="hello")
    assert any(PAYLOAD in line for line in frames)
    press(browser, "get", task="task-1")
    assert any(PAYLOAD in line for line in browser.evaluate(FRAMES))
    assert browser.evaluate("document.body.dataset.pwned") is None
    assert browser.evaluate("document.querySelectorAll('main img, main script, aside img, aside script').length") == 0
    assert any(PAYLOAD in line for line in browser.evaluate(TASKS))
    script = PAYLOAD[PAYLOAD.index("<script>"):]  # the card's JSON escapes the other half's quotes
    assert script in browser.evaluate("document.getElementById('card-full').textContent"), "the card, as text"
    assert PAYLOAD in browser.evaluate("document.getElementById('turns').textContent"), "its task, as text"
    assert "<img src=x" in browser.evaluate("document.getElementById('live-diagram').textContent"), "its error, drawn"


def test_in_the_page_a_conversation_fetches_the_card_and_token_once_and_keeps_every_turn(agents, browser):
    """Two turns with an OAuth2 agent, the second sent by Enter in the message: the card and
    the token cross once; the card is one line with its verdict; both turns stay on screen."""
    seen = agents["seen"]["oauth2"]
    before = len(seen)
    browser.evaluate("document.getElementById('new-conversation').click();"
                     "document.getElementById('part-data').checked = true")
    frames = press(browser, "say", peer=agents["oauth2"], scheme="oauth2", token=ENTERED["oauth2"][1], follow="",
                   message=json.dumps({**REFUND, "order_id": "ORD-4700"}))
    assert any(line.startswith("--> GET ") and "agent-card.json" in line for line in frames)
    assert browser.evaluate("document.getElementById('card-line').textContent").startswith(
        "billing-agent · A2A 1.0 · ")
    assert browser.evaluate("document.getElementById('card-verdict').textContent") == "the card reads as A2A 1.0"
    assert "\"supportedInterfaces\"" in browser.evaluate("document.getElementById('card-full').textContent")
    browser.evaluate("document.getElementById('tab-side').click()")  # below 900 px the panel is a tab: shown
    browser.evaluate(f"""(() => {{ const box = document.getElementById('message');
        box.value = {json.dumps(json.dumps({"approval": {**APPROVAL["approval"], "order_id": "ORD-4700"}}))};
        box.focus(); document.body.dataset.state = 'again'; }})()""")
    for kind in ("rawKeyDown", "char", "keyUp"):  # a real Enter, in the message
        browser.call("Input.dispatchKeyEvent", type=kind, key="Enter", code="Enter", windowsVirtualKeyCode=13,
                     **({"text": "\r"} if kind == "char" else {}))
    browser.wait_for(ENDED)
    frames = browser.evaluate(FRAMES)
    assert not any(line.startswith("--> GET ") or "oauth2/token" in line for line in frames), "nothing fetched again"
    assert any(line.startswith("[support] the card is the one fetched on turn ") for line in frames)
    assert any(line.startswith("[support] the OAuth token fetched earlier in this conversation is used again")
               for line in frames)
    assert any("refund of $6,200.00 issued for ORD-4700" in line for line in frames)
    assert seen[before:].count(None) == 1, "the card's GET (no credential) crossed once in two turns"
    turns = browser.evaluate("[...document.querySelectorAll('#turns li')].map((turn) => turn.textContent)")
    assert len(turns) == 2 and "input-required" in turns[0] and "completed" in turns[1]
    task = browser.evaluate("document.querySelector('#turns li p.state-input-required').textContent")
    assert task.startswith("task ") and " · context " in task and task.split()[1] in turns[1]
    assert "ORD-4700" in turns[0] and "approval" in turns[1]
