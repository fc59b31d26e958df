"""A conversation in the live page (peers/support/web/conversation.py) with billing-agent served
on 127.0.0.1 port 0, over the page's own HTTP API (POST /agent, as the page sends it): the card
is fetched once and again only on the turn after the agent answered an HTTP error (a JSON-RPC
error, which HTTP carried as 200, changes nothing); an OAuth2 token is reused while it lives,
fetched anew once it has expired, and on the turn after the agent refused it (401). What crossed is counted where it arrived, at the agent;
the agent here is the real billing app, and only its token endpoint's expires_in is made short
so that expiry comes within the test (a provider's own choice, as RFC 6749 5.1 allows)."""
import json
import threading
import time
from urllib.parse import urlsplit

import pytest

import a2a_delegation as story
from peers import billing
from peers.a2a import wire_v10
from peers.app import PeerApp
from peers.serving import scheme_for
from peers.support.web import conversation, server as web
from test_live_page_any_agent import ENTERED, SIGNING_KEY, TOKEN
from test_live_page_server import ask, events_of
from transports.base import HttpResponse
from transports.server import PeerServer

CARD = "/.well-known/agent-card.json"
LIFETIME = int(conversation.MARGIN) + 3  # seconds a token lives: reused for 3 s, then fetched anew


class Agent:
    """billing-agent under `auth`, every request's method and path kept; it answers the next
    message with `failing` (an HTTP status) when told, and gives tokens a LIFETIME."""

    def __init__(self, auth):
        self.server, self.seen, self.failing, self.tokens = PeerServer(None, "127.0.0.1", 0, log=print), [], None, []
        peer = billing.billing_agent(self.server.base_url, log=lambda line: None)
        scheme = None if auth == "bearer" else \
            scheme_for(auth, ENTERED[auth][1], self.server.base_url, peer, SIGNING_KEY, print)[0]
        self.app = PeerApp(peer, wire_v10, token=TOKEN if auth == "bearer" else None, scheme=scheme,
                           log=lambda line: None)
        self.lock = threading.Lock()
        self.server.app = self.answer
        self.url = self.server.start().base_url

    def answer(self, request):
        path = urlsplit(request.url).path
        with self.lock:
            self.seen.append((request.method, path))
            failing, self.failing = (self.failing, None) if request.method == "POST" and path == "/a2a" \
                else (None, self.failing)
        if failing:
            return HttpResponse(failing, {"Content-Type": "text/plain", "Retry-After": "1"}, b"busy, try again\n")
        answer = self.app(request)
        if path.endswith("/token") and answer.status == 200:
            self.tokens.append(time.monotonic())
            document = json.loads(answer.body)
            answer = answer._replace(body=json.dumps({**document, "expires_in": LIFETIME}).encode())
        return answer

    def count(self, method, ending):
        with self.lock:
            return sum(1 for seen in self.seen if seen[0] == method and seen[1].endswith(ending))


@pytest.fixture(scope="module")
def agents(tmp_path_factory):
    served = {auth: Agent(auth) for auth in ("bearer", "oauth2")}
    path = tmp_path_factory.mktemp("page") / "allowlist.json"
    path.write_text(json.dumps({"trusted": [{"name": "billing-agent", "endpoint": agent.url + "/a2a"}
                                            for agent in served.values()]}))
    server, app, url = web.listening(0, str(path), story.main, request_timeout=1.0)
    base, token = url.split("/?token=")
    yield {"base": base, "token": token, **served}
    web.close(server, app)
    for agent in served.values():
        agent.server.stop()


def turn(page, agent, auth, name, **asked):
    """One turn of conversation `name`: its events, and its lines."""
    scheme, secret = ENTERED[auth]
    status, _, body = ask(page, "/agent", "POST", {
        "peer": agent.url, "operation": "send", "part": "data", "scheme": scheme, "secret": secret,
        "conversation": name, "text": json.dumps({"order_id": "ORD-5100", "amount": 51}), **asked})
    assert status == 201, body
    events = events_of(page, json.loads(body)["id"])
    return events, [event["text"] for event in events if event["type"] == "line"]


def card_said(events):
    return [event["how"] for event in events if event["type"] == "card"]


def test_the_card_is_fetched_again_only_on_the_turn_after_an_http_error(agents):
    agent = agents["bearer"]
    events, _ = turn(agents, agent, "bearer", "after-an-error")
    assert agent.count("GET", CARD) == 1 and card_said(events) == ["fetched on turn 1"]
    events, lines = turn(agents, agent, "bearer", "after-an-error", operation="get", task="no-such-task")
    assert any(line.startswith("billing-agent: get failed: ") for line in lines), lines  # a JSON-RPC error, HTTP 200
    assert agent.count("GET", CARD) == 1 and card_said(events) == ["kept from turn 1"]
    agent.failing = 503
    events, lines = turn(agents, agent, "bearer", "after-an-error")
    assert any(line.startswith("billing-agent: send failed: ") and "503" in line for line in lines), lines
    assert agent.count("GET", CARD) == 1, "the failing turn read the card it had"
    events, lines = turn(agents, agent, "bearer", "after-an-error")
    assert agent.count("GET", CARD) == 2 and card_said(events) == ["fetched on turn 4"], "refetched after the 503"
    assert any("refund of $51.00 issued for ORD-5100" in line for line in lines)
    events, _ = turn(agents, agent, "bearer", "after-an-error")
    assert agent.count("GET", CARD) == 2 and card_said(events) == ["kept from turn 4"], "and not again after that"
    events, _ = turn(agents, agent, "bearer", "after-an-error", again=True)
    assert agent.count("GET", CARD) == 3 and card_said(events) == ["fetched on turn 6"], "or when asked"
    turn(agents, agent, "bearer", "another")
    assert agent.count("GET", CARD) == 4, "each conversation has its own card"


def test_the_oauth_token_is_reused_while_it_lives_and_fetched_anew_once_it_expired(agents):
    agent = agents["oauth2"]
    _, lines = turn(agents, agent, "oauth2", "tokens")
    assert len(agent.tokens) == 1 and any("refund of $51.00" in line for line in lines), "\n".join(lines)
    _, lines = turn(agents, agent, "oauth2", "tokens")
    reused = [line for line in lines if line.startswith("[support] the OAuth token fetched earlier in this "
                                                        "conversation is used again: it expires in ")]
    assert len(agent.tokens) == 1 and len(reused) == 1, lines
    assert 0 < LIFETIME - int(reused[0].split()[-2]) <= 3, "its lifetime counted down"
    assert any("refund of $51.00" in line for line in lines)
    time.sleep(max(0.0, agent.tokens[0] + LIFETIME - conversation.MARGIN + 0.2 - time.monotonic()))
    _, lines = turn(agents, agent, "oauth2", "tokens")
    assert len(agent.tokens) == 2, "expired (within its margin): a new one is fetched"
    assert not any("is used again" in line for line in lines) and any("refund of $51.00" in line for line in lines)
    _, lines = turn(agents, agent, "oauth2", "tokens")
    assert len(agent.tokens) == 2 and any("is used again" in line for line in lines), "the new one is reused"
    agent.failing = 401  # the agent refuses the token it issued: the one kept is dropped
    _, lines = turn(agents, agent, "oauth2", "tokens")
    assert any(line.startswith("billing-agent: send failed: HTTP 401") for line in lines), "\n".join(lines)
    _, lines = turn(agents, agent, "oauth2", "tokens")
    assert len(agent.tokens) == 3 and any("refund of $51.00" in line for line in lines), "the next turn has a new one"
    assert agent.count("GET", CARD) == 1, "and the card was fetched once in the six turns (a 401 is no change of card)"


def test_a_token_kept_for_a_conversation_lives_a_day_at_most_whatever_expires_in_says():
    """As the support agent's own keyring keeps one (oauth_tokens.LONGEST): a token endpoint
    saying expires_in 10**30 had the page answer with that token for good."""
    from peers.support.calling.oauth_tokens import LONGEST
    now, asked = [1000.0], []

    class Printer:  # the token endpoint, as the run's printer reaches it
        label = "printer"

        def post(self, url, body, headers, binding=None):
            asked.append(url)
            return HttpResponse(200, {"Content-Type": "application/json"}, json.dumps(
                {"access_token": f"tok-{len(asked)}", "token_type": "Bearer", "expires_in": 10 ** 30}).encode())
    talk = conversation.Conversation("http://agent.example/.well-known/agent-card.json")
    remembering = conversation.Remembering(Printer(), talk, lambda *a, **k: None, lambda event: None, clock=lambda: now[0])
    form, headers = b"grant_type=client_credentials", {"Content-Type": "application/x-www-form-urlencoded"}
    tokens = [json.loads(remembering.post("http://agent.example/token", form, headers).body)["access_token"]]
    now[0] += LONGEST - conversation.MARGIN - 60  # within the day: the one kept
    tokens.append(json.loads(remembering.post("http://agent.example/token", form, headers).body)["access_token"])
    now[0] += 120  # past it: asked for anew
    tokens.append(json.loads(remembering.post("http://agent.example/token", form, headers).body)["access_token"])
    assert tokens == ["tok-1", "tok-1", "tok-2"] and len(asked) == 2
