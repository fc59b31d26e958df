"""An OAuth2 client's credentials and tokens, finished (issue 25, item 4): the client id and
secret are form-urlencoded before HTTP Basic and our token endpoint decodes them (RFC 6749
2.3.1), so ':' '%' '+' and non-ASCII letters arrive as sent; a kept access token the agent
answers with 401 (its signing key replaced when billing restarts, or the token no longer
taken) is dropped, one new token is fetched and the request is sent once more, only
because a 401 is answered before anything is done; a second 401 is one line. Real frames
to the real billing app on 127.0.0.1."""
import base64
import http.client
import json
from urllib.parse import parse_qs, quote_plus, urlencode

import pytest

import a2a_delegation as story
from conftest import ROOT, OutsidePeer, outside_peer
from peers import billing
from peers.a2a import wire_v10
from peers.app import PeerApp
from peers.serving import scheme_for
from peers.signing import rs256
from peers.support.calling.config import AllowEntry
from peers.a2a.model import AgentCard, SecurityScheme
from peers.support.calling.cards import unheld
from peers.support.calling.credentials import credential_for
from peers.support.calling.held import Held
from transports.base import HttpResponse
from transports.network import HttpTransport
from transports.printer import FramePrinter, mask
from transports.server import PeerServer

KEY = rs256.private_from_pem((ROOT / "peers/keys/billing-agent.DEMO-KEY.pem").read_text())
ROTATED = rs256.private_from_pem((ROOT / "tests/keys/other.pem").read_text())  # billing's key after a restart
ID, SECRET = "support-agent", "s3cret"


@pytest.fixture
def server():
    """A loopback server whose app a test sets, and sets again (billing restarted)."""
    served = PeerServer(None, "127.0.0.1", 0, idle_timeout=2.0)
    yield served
    served.stop()


def billing_under_oauth2(base, key, pair=f"{ID}:{SECRET}"):
    """billing at `base`, fresh (a restart: its store empty), its tokens signed with `key`."""
    peer = billing.billing_agent(base)
    scheme = scheme_for("oauth2", pair, base, peer, key, pytest.fail)[0]
    return PeerApp(peer, wire_v10, scheme=scheme, log=lambda line: None)


class Agent:
    """The support agent holding `held` for the peer at `base`, its frames and lines kept."""

    def __init__(self, base, held):
        self.base, self.lines = base, []
        self.printer = FramePrinter(HttpTransport(timeout=5))
        self.agent = story.SupportAgent(self.printer, [AllowEntry("billing-agent", base + "/a2a")],
                                        {base + "/a2a": held}, lambda text="", *a, **k: self.lines.append(text))
        self.card = self.agent.discover(base + "/.well-known/agent-card.json")

    def refund(self, order):
        """One refund, and the frames it took: (direction, path, status) each."""
        before = len(self.printer.frames)
        outcome = self.agent.gate_then_delegate(self.card, story.SKILL, {"order_id": order, "amount": 5.0})
        return outcome, [(frame.direction, frame.url.removeprefix(self.base), frame.status)
                         for frame in self.printer.frames[before:]]

    def close(self):
        self.printer.inner.close()


SENT = [("-->", "/a2a", None), ("<--", "/a2a", 200)]
FETCHED = [("-->", "/oauth2/token", None), ("<--", "/oauth2/token", 200)]
REFUSED = [("-->", "/a2a", None), ("<--", "/a2a", 401)]


# -- RFC 6749 2.3.1: form-urlencoded, then Basic ----------------------------------------------

@pytest.mark.parametrize("client_id, secret", [("caf\u00e9+100%", "p:a%2Bss+w\u00f6rd"),
                                               ("support-agent", "%41:+ :\u00e9\u00e9"),
                                               ("\u6551\u63f4", "a:b:c")])
def test_a_client_id_and_secret_with_colon_percent_plus_and_non_ascii_get_a_token_and_the_refund_is_made(
        server, client_id, secret):
    server.app = billing_under_oauth2(server.base_url, KEY, f"{client_id}:{secret}")
    server.start()
    agent = Agent(server.base_url, Held(client=(client_id, secret)))
    try:
        outcome, frames = agent.refund("ORD-1")
    finally:
        agent.close()
    assert outcome.result is not None and outcome.result.startswith("refund of $5.00 issued"), outcome.error
    assert frames == FETCHED + SENT


def test_the_basic_credential_the_client_sends_is_its_id_and_secret_each_form_urlencoded(server):
    """A token endpoint we do not own, recording what arrives: the id may hold a colon too."""
    arrived = []

    def token_endpoint(request):
        arrived.append(request.header("Authorization"))
        return HttpResponse(400, {"Content-Type": "application/json"}, b'{"error": "invalid_client"}')
    app = billing_under_oauth2(server.base_url, KEY)
    server.app = lambda request: token_endpoint(request) if request.url.endswith("/oauth2/token") else app(request)
    server.start()
    client_id, secret = "urn:client:caf\u00e9", "50%+a b:\u00fc"
    agent = Agent(server.base_url, Held(client=(client_id, secret)))
    try:
        outcome, _ = agent.refund("ORD-1")
    finally:
        agent.close()
    assert outcome.error.startswith("delegation failed: the token endpoint at")
    scheme, _, encoded = arrived[0].partition(" ")
    assert scheme == "Basic" and base64.b64decode(encoded).decode("ascii") == \
        "urn%3Aclient%3Acaf%C3%A9:50%25%2Ba+b%3A%C3%BC", "RFC 6749 Appendix B, then RFC 7617"


def _token_request(base, authorization):
    host, port = base.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=5)
    try:
        connection.request("POST", "/oauth2/token", urlencode({"grant_type": "client_credentials"}),
                           {"Content-Type": "application/x-www-form-urlencoded", "Authorization": authorization})
        answer = connection.getresponse()
        return answer.status, json.loads(answer.read())
    finally:
        connection.close()


def _basic(user, password):
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def test_our_token_endpoint_decodes_the_form_urlencoding_and_refuses_a_client_that_skipped_it(server):
    client_id, secret = "caf\u00e9+1", "a:%b+c"
    server.app = billing_under_oauth2(server.base_url, KEY, f"{client_id}:{secret}")
    server.start()
    status, answer = _token_request(server.base_url, _basic(quote_plus(client_id), quote_plus(secret)))
    assert status == 200 and answer["token_type"] == "Bearer"
    status, answer = _token_request(server.base_url, _basic(client_id, secret))  # '+' read as a space
    assert (status, answer["error"]) == (401, "invalid_client")
    for hostile in ("%", "%zz", "%ff%fe", "%00", "+" * 3000, "%C3%A9" * 500):  # each one 401, never a crash
        status, answer = _token_request(server.base_url, _basic(hostile, hostile))
        assert (status, answer["error"]) == (401, "invalid_client"), hostile


# -- a kept token refused: renewed once, sent once more -----------------------------------

def test_a_kept_token_refused_after_billing_restarts_with_a_new_key_is_renewed_once_and_the_request_sent_again(
        server):
    server.app = billing_under_oauth2(server.base_url, KEY)
    server.start()
    agent = Agent(server.base_url, Held(client=(ID, SECRET)))
    try:
        first, frames = agent.refund("ORD-1")
        assert first.result is not None and frames == FETCHED + SENT
        kept, frames = agent.refund("ORD-2")
        assert kept.result is not None and frames == SENT, "kept while valid: no token request"
        server.app = billing_under_oauth2(server.base_url, ROTATED)  # restarted: tokens signed by its new key
        renewed, frames = agent.refund("ORD-3")
    finally:
        agent.close()
    assert renewed.result is not None and renewed.result.startswith("refund of $5.00 issued for ORD-3"), renewed.error
    assert frames == REFUSED + FETCHED + SENT, "exactly one new token request, and one retry"
    sends = [json.loads(frame.body) for frame in agent.printer.frames[-6:] if frame.direction == "-->"
             and frame.url.endswith("/a2a")]
    assert sends[0]["params"]["message"] == sends[1]["params"]["message"], "the same message, sent once more"
    assert renewed.task.id == "task-1", "the refused request made no task at the restarted billing"
    assert agent.lines.count(f"[auth] {server.base_url}/a2a refused the access token we kept: fetching a new one, "
                             "and sending once more (a 401 is answered before anything is done)") == 1


def test_a_second_401_is_one_line_and_no_third_request_or_second_token_is_sent(server):
    server.app = billing_under_oauth2(server.base_url, KEY)
    server.start()
    agent = Agent(server.base_url, Held(client=(ID, SECRET)))
    issuing = billing_under_oauth2(server.base_url, KEY)  # still issues tokens with its old key ...
    checking = billing_under_oauth2(server.base_url, ROTATED)  # ... but takes only its new key's
    try:
        assert agent.refund("ORD-1")[0].result is not None
        server.app = lambda request: (issuing if request.url.endswith("/oauth2/token") else checking)(request)
        refused, frames = agent.refund("ORD-2")
        again, frames_again = agent.refund("ORD-3")
    finally:
        agent.close()
    assert frames == REFUSED + FETCHED + REFUSED, "one new token, one retry, then no more"
    assert refused.error == ("delegation failed: HTTP 401: the peer refused the credentials sent (it says "
                             '"Unauthenticated: a valid oauth2 credential is required"); the peer did nothing; retry '
                             "once the credentials are fixed")
    assert "\n" not in refused.error and frames_again == frames, "each delegation bounded the same way"


def test_a_401_to_a_token_fetched_for_that_very_request_is_not_fetched_again(server):
    issuing = billing_under_oauth2(server.base_url, KEY)
    checking = billing_under_oauth2(server.base_url, ROTATED)
    server.app = lambda request: (issuing if request.url.endswith("/oauth2/token") else checking)(request)
    server.start()
    agent = Agent(server.base_url, Held(client=(ID, SECRET)))
    try:
        outcome, frames = agent.refund("ORD-1")
    finally:
        agent.close()
    assert frames == FETCHED + REFUSED and outcome.error.startswith("delegation failed: HTTP 401: ")
    assert not [line for line in agent.lines if line.startswith("[auth]")]


def test_a_401_under_another_scheme_is_never_retried(server):
    peer = billing.billing_agent(server.base_url)
    scheme = scheme_for("basic", "support-agent:pa55", server.base_url, peer, None, pytest.fail)[0]
    server.app = PeerApp(peer, wire_v10, scheme=scheme, log=lambda line: None)
    server.start()
    agent = Agent(server.base_url, Held(basic=("support-agent", "wrong")))
    try:
        outcome, frames = agent.refund("ORD-1")
    finally:
        agent.close()
    assert frames == REFUSED and outcome.error.startswith("delegation failed: HTTP 401: ")


# -- one identity provider, several agents: a token stays with the agent and scopes it was for --

class Provider(OutsidePeer):
    """An identity provider we do not own: a token endpoint that names each token it issues
    after the scope it was asked for, and counts the requests."""
    issued = []

    def do_POST(self):
        Provider.issued.append(self.rfile.read(int(self.headers["Content-Length"])).decode())
        self.reply({"access_token": f"token-{len(Provider.issued)}", "token_type": "Bearer",
                    "expires_in": "3600"})  # a string: some providers send one


def test_a_token_from_a_shared_provider_goes_only_to_the_agent_and_scopes_it_was_fetched_for():
    Provider.issued.clear()
    with outside_peer(Provider) as provider:
        token_url = f"{provider}/token"
        agents = {"http://127.0.0.1:1/a2a": "refunds:write", "http://127.0.0.1:2/a2a": "read"}
        store = {url: Held(client=(ID, SECRET), token_url=token_url) for url in agents}
        cards = {url: AgentCard(f"agent-{scope}", "", url, "1", (), auth_schemes=("oauth",), security_schemes=(
            SecurityScheme("oauth", "oauth2", token_url=token_url, scopes=((scope, ""),)),),
            security_requirements=({"oauth": (scope,)},)) for url, scope in agents.items()}
        cache, transport = {}, HttpTransport(timeout=5)
        sent = {url: credential_for(card, store, transport, cache).headers["Authorization"] for url, card in cards.items()}
        again = credential_for(cards["http://127.0.0.1:1/a2a"], store, transport, cache).headers["Authorization"]
        transport.close()
    assert sent == {"http://127.0.0.1:1/a2a": "Bearer token-1", "http://127.0.0.1:2/a2a": "Bearer token-2"}
    assert [parse_qs(form)["scope"] for form in Provider.issued] == [["refunds:write"], ["read"]]
    assert again == "Bearer token-1", "kept for the agent it was fetched for: no third request"


def test_an_api_key_with_a_space_is_masked_whole_and_only_authorization_keeps_its_scheme():
    shown = mask({"X-API-Key": "sk live-ABCDEF123", "Authorization": "Bearer s3cret", "Cookie": "a=1 b=2"})
    from transports.printer import masked
    assert shown == {"X-API-Key": masked("sk live-ABCDEF123"), "Authorization": f"Bearer {masked('s3cret')}",
                     "Cookie": masked("a=1 b=2")}


def test_a_card_that_also_admits_callers_with_nothing_is_called_without_a_credential():
    optional = AgentCard("open-agent", "", "http://127.0.0.1:1/a2a", "1", (), auth_schemes=("bearer",),
                         security_schemes=(SecurityScheme("bearer", "http", "Bearer"),),
                         security_requirements=({"bearer": ()}, {}))
    assert unheld(optional, {}) is None
    assert unheld(optional._replace(security_requirements=({"bearer": ()},)), {}).startswith("its card requires")
