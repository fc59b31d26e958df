"""The support agent calls a peer under each security scheme its card declares (issue 25,
items 3 and 4, the calling side): its credential store holds API keys, Basic pairs, OAuth2
client credentials (the token fetched from the card's tokenUrl or the OpenID discovery
document, kept, renewed once when it expires) and client certificates; the card's
scheme and what we hold decide what is sent; holding nothing is one line before any
frame. Real frames to the real billing app on 127.0.0.1; hostile token endpoints, seeded
and bounded; every credential masked in what is printed."""
import json
import re
import threading
import time
from base64 import b64encode
from urllib.parse import quote, quote_plus

import pytest

import a2a_delegation as story
from conftest import ROOT, cli
from peers import billing
from peers.a2a import wire_v03, wire_v10
from peers.a2a.model import SecurityScheme
from peers.app import PeerApp
from peers.serving import scheme_for
from peers.signing import rs256
from peers.support.calling.config import AllowEntry, ConfigError, load_credentials
from peers.support.calling.held import Held
from transports.base import HttpResponse
from transports.network import HttpTransport
from transports.printer import FramePrinter, mask, mask_body, masked
from transports.server import PeerServer

KEY = rs256.private_from_pem((ROOT / "peers/keys/billing-agent.DEMO-KEY.pem").read_text())
SECRETS = {"apikey": "k3y-42", "basic": "support-agent:pa55", "oauth2": "support-agent:s3cret",
           "oidc": "support-agent:s3cret"}
HELD = {"apikey": {"apiKey": "k3y-42"}, "basic": {"basic": "support-agent:pa55"},
        "oauth2": {"oauth2": "support-agent:s3cret"}, "oidc": {"oauth2": "support-agent:s3cret"}}
WRONG = {"apikey": {"apiKey": "k3y-43"}, "basic": {"basic": "support-agent:pa56"},
         "oauth2": {"oauth2": "support-agent:guess"}, "oidc": {"oauth2": "intruder:s3cret"}}


@pytest.fixture
def served():
    servers = []

    def start(kind=None, wire=wire_v10, app=None):
        server = PeerServer(None, "127.0.0.1", 0, idle_timeout=2.0)
        peer = billing.billing_agent(server.base_url)
        scheme = scheme_for(kind, SECRETS[kind], server.base_url, peer, KEY, pytest.fail)[0] if kind else None
        server.app = app(server.base_url, peer) if app else PeerApp(peer, wire, scheme=scheme, log=lambda line: None)
        servers.append(server.start())
        return server.base_url
    yield start
    for server in servers:
        server.stop()


def store_of(tmp_path, entries, name="credentials.json"):
    """Our credential store, as the file --credentials names, read by the real loader."""
    path = tmp_path / name
    path.write_text(json.dumps({"credentials": entries}))
    return load_credentials(type("Options", (), {"credentials": str(path), "token_env": None, "peer": []})())


def delegate(base, store, timeout=5.0, binding=None):
    """One refund to the peer at `base`, trusted there (over `binding`, if given): its outcome, the frames (as
    printed), our lines."""
    shown, lines = [], []
    printer = FramePrinter(HttpTransport(timeout=timeout), lambda text, frame: shown.append(text), verbose=True)
    agent = story.SupportAgent(printer, [AllowEntry("billing-agent", base + "/a2a")], store,
                               lambda text="", *args, **facts: lines.append(text), verbose=True, binding=binding)
    try:
        outcome = agent.handle(base + "/.well-known/agent-card.json", story.SKILL, story.PAYLOAD)
    finally:
        printer.inner.close()
    return outcome, printer.frames, "\n".join(shown + lines)


@pytest.mark.parametrize("wire", [wire_v10, wire_v03], ids=["1.0", "0.3"])
@pytest.mark.parametrize("kind", ["apikey", "basic", "oauth2", "oidc"])
def test_each_scheme_the_card_declares_gets_the_credential_we_hold_for_it_and_the_refund_is_made(
        served, tmp_path, kind, wire):
    base = served(kind, wire)
    outcome, frames, printed = delegate(base, store_of(tmp_path, {base + "/a2a": HELD[kind]}))
    assert outcome.result.startswith("refund of $180.00 issued for ORD-3300"), printed
    sent = [frame for frame in frames if frame.direction == "-->" and frame.url == base + "/a2a"]
    assert len(sent) == 1
    assert [line for line in printed.splitlines() if line.startswith("[auth]")] == [
        f"[auth] 'billing-agent' requires {dict(apikey='apiKey').get(kind, kind)} " + {
            "apikey": "(an API key, in the X-API-Key header): we send our API key, in the X-API-Key header",
            "basic": "(a Basic user and password): we send our user 'support-agent' and password, in "
                     "Authorization: Basic",
            "oauth2": f"(an OAuth2 client id and secret, for a token from {base}/oauth2/token): we "
                      f"send an access token for our client 'support-agent' (fetched from {base}/oauth2/token, "
                      "for 300 s), in Authorization: Bearer",
            "oidc": f"(an OAuth2 client id and secret, for a token from the endpoint {base}/.well-known/"
                    f"openid-configuration names): we send an access token for our client 'support-agent' (fetched from {base}/oauth2/token, "
                    "for 300 s), in Authorization: Bearer"}[kind]]
    for secret in ("k3y-42", "pa55", "s3cret", "c3VwcG9ydC1hZ2VudDpwYTU1", "c3VwcG9ydC1hZ2VudDpzM2NyZXQ="):
        assert secret not in printed, f"{secret} printed"
    assert any(marker in printed for marker in ("X-API-Key: ****#", "Authorization: Basic ****#",
                                                "Authorization: Bearer ****#"))


@pytest.mark.parametrize("kind", ["oauth2", "oidc"])
def test_the_token_fetch_is_its_own_frames_its_secrets_masked_and_the_secret_never_reaches_the_endpoint(
        served, tmp_path, kind):
    base = served(kind)
    outcome, frames, printed = delegate(base, store_of(tmp_path, {base + "/a2a": HELD[kind]}))
    assert outcome.result is not None
    order = [(frame.direction, frame.url.removeprefix(base)) for frame in frames]
    token_fetch = [("-->", "/oauth2/token"), ("<--", "/oauth2/token")]
    discovery = [("-->", "/.well-known/openid-configuration"), ("<--", "/.well-known/openid-configuration")]
    assert order[:2] == [("-->", "/.well-known/agent-card.json"), ("<--", "/.well-known/agent-card.json")]
    assert order[2:] == (discovery if kind == "oidc" else []) + token_fetch + [("-->", "/a2a"), ("<--", "/a2a")]
    # oauth2's card lists the scope its requirement asks for; the OpenID scheme names none
    assert "--> POST /oauth2/token grant_type=client_credentials" + ("&scope=a2a" * (kind == "oauth2")) in printed
    assert re.search(r'<-- 200 \{"access_token": "\*{4}#[0-9a-f]{4}", "token_type": "Bearer", "expires_in": 300', printed)
    to_endpoint = [frame for frame in frames if frame.url == base + "/a2a" and frame.direction == "-->"]
    assert re.fullmatch(r"Bearer \*{4}#[0-9a-f]{4}", to_endpoint[0].headers["Authorization"])
    assert b"s3cret" not in to_endpoint[0].body


@pytest.mark.parametrize("kind", ["apikey", "basic", "oauth2", "oidc"])
def test_a_wrong_credential_is_refused_by_the_peer_and_said_in_one_line(served, tmp_path, kind):
    base = served(kind)
    outcome, frames, printed = delegate(base, store_of(tmp_path, {base + "/a2a": WRONG[kind]}))
    assert outcome.result is None and outcome.error.startswith("delegation failed: ")
    assert ("HTTP 401: the peer refused the credentials sent" in outcome.error if kind in ("apikey", "basic") else
            f"the token endpoint at {base}/oauth2/token refused us: HTTP 401: invalid_client" in outcome.error)
    assert not [frame for frame in frames if frame.url == base + "/a2a" and kind in ("oauth2", "oidc")]


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_a_429_from_the_peers_guess_limit_says_our_credential_is_the_cause_in_the_peers_own_words(
        served, tmp_path, binding):
    """Past five wrong API keys, the peer answers 429 whatever we send, its error (-32041; HTTP+JSON's ErrorInfo
    UNAUTHENTICATED) saying why: too many wrong credentials from our address. We said "the peer has had too many
    requests" and to send it again later: its body was never read (over HTTP+JSON, its ErrorInfo named
    RESOURCE_EXHAUSTED, as a load would). The peer's message is said, and the advice is to fix the credential."""
    base = served("apikey")
    for _ in range(5):
        delegate(base, store_of(tmp_path, {base + "/a2a": WRONG["apikey"]}), binding=binding)
    outcome, _, _ = delegate(base, store_of(tmp_path, {base + "/a2a": WRONG["apikey"]}), binding=binding)
    assert "HTTP 429" in outcome.error and "too many wrong credentials from this address" in outcome.error, outcome.error
    assert "retry once the credentials are fixed" in outcome.error and "too busy" not in outcome.error, outcome.error
    assert "\n" not in outcome.error


@pytest.mark.parametrize("kind, needed", [
    ("apikey", "apiKey (an API key, in the X-API-Key header)"),
    ("basic", "basic (a Basic user and password)"),
    ("oauth2", "oauth2 (an OAuth2 client id and secret, for a token from {base}/oauth2/token)"),
    ("mtls", "mtls (a client certificate)")])
def test_holding_nothing_the_card_asks_for_is_one_line_saying_what_would_be_needed_and_no_frame(
        served, tmp_path, kind, needed):
    base = served(kind) if kind != "mtls" else served(app=_declaring(SecurityScheme("mtls", "mutualTLS")))
    held = {base + "/a2a": {"bearer": "t0k"}, "https://elsewhere.example/a2a": HELD.get(kind, {"apiKey": "x"})}
    outcome, frames, _ = delegate(base, store_of(tmp_path, held))
    assert outcome.error == (f"not sent: its card requires {needed.format(base=base)}, and the support agent "
                             f"holds none for {base}/a2a in --credentials")
    assert [frame.url for frame in frames if frame.direction == "-->"] == [base + "/.well-known/agent-card.json"]


def test_a_card_asking_for_an_api_key_in_the_query_is_refused_saying_why(served, tmp_path):
    base = served(app=_declaring(SecurityScheme("key", "apiKey", key_name="api_key", location="query")))
    outcome, _, _ = delegate(base, store_of(tmp_path, {base + "/a2a": {"apiKey": "k3y-42"}}))
    assert outcome.error.endswith("(we send an API key only in a header: a URL ends up in logs)")


def test_an_api_key_goes_only_in_a_header_whose_name_the_printer_masks(served, tmp_path):
    base = served(app=_declaring(SecurityScheme("key", "apiKey", key_name="X-Caller")))
    outcome, frames, _ = delegate(base, store_of(tmp_path, {base + "/a2a": {"apiKey": "k3y-42"}}))
    assert outcome.error.endswith("(we send an API key only in a header whose name says it is secret, so that "
                                  "printed frames mask it)")
    assert len(frames) == 2


def test_the_card_chooses_among_what_we_hold_in_the_order_of_its_requirements(served, tmp_path):
    base = served("basic")
    everything = {base + "/a2a": {"bearer": "t0k", "apiKey": "k3y", "basic": "support-agent:pa55",
                                  "oauth2": "support-agent:s3cret"}}
    outcome, frames, printed = delegate(base, store_of(tmp_path, everything))
    assert outcome.result is not None and "[auth] 'billing-agent' requires basic" in printed
    sent = [frame for frame in frames if frame.url == base + "/a2a" and frame.direction == "-->"][0]
    assert re.fullmatch(r"Basic \*{4}#[0-9a-f]{4}", sent.headers["Authorization"]) and "X-API-Key" not in sent.headers


# -- OAuth2 tokens: kept, renewed once, and a token endpoint that misbehaves -----------------

def _declaring(*schemes, token_answer=None, counted=None, token="t0k"):
    """An app for a card declaring `schemes`, at whose origin a token endpoint answers
    `token_answer(n)` (a test double of a foreign token endpoint, counting requests), and
    whose endpoint is the real billing app taking the bearer token `token`."""
    def make(base, peer):
        peer.card = peer.card._replace(auth_schemes=tuple(s.name for s in schemes), security_schemes=tuple(
            s._replace(token_url=base + "/oauth2/token") if s.type == "oauth2" else s for s in schemes))
        real = PeerApp(peer, wire_v10, token=token, log=lambda line: None)

        def app(request):
            if request.url.endswith("/oauth2/token") and token_answer is not None:
                if counted is not None:
                    counted.append(request.body)
                return token_answer(len(counted or ()))
            return real(request)
        return app
    return make


def _answer(document, status=200, raw=None):
    return HttpResponse(status, {"Content-Type": "application/json"}, raw if raw is not None else json.dumps(document).encode())


OAUTH2 = SecurityScheme("oauth2", "oauth2", scopes=(("a2a", "refunds"),))


def test_a_token_is_kept_until_it_expires_then_renewed_exactly_once(served, tmp_path):
    counted = []
    base = served(app=_declaring(OAUTH2, counted=counted, token_answer=lambda n: _answer(
        {"access_token": "t0k", "token_type": "Bearer", "expires_in": 1})))
    store = store_of(tmp_path, {base + "/a2a": {"oauth2": "support-agent:s3cret"}})
    printer = FramePrinter(HttpTransport(timeout=5))
    agent = story.SupportAgent(printer, [AllowEntry("billing-agent", base + "/a2a")], store, lambda *a, **k: None)
    card = agent.discover(base + "/.well-known/agent-card.json")
    for order in ("ORD-1", "ORD-2"):
        assert agent.gate_then_delegate(card, story.SKILL, {"order_id": order, "amount": 5.0}).result
    assert len(counted) == 1, "kept while it is valid"
    time.sleep(0.6)  # past the time it is renewed at: half of its one second
    for order in ("ORD-3", "ORD-4", "ORD-5"):
        assert agent.gate_then_delegate(card, story.SKILL, {"order_id": order, "amount": 5.0}).result
    assert len(counted) == 2, "renewed once, then kept again"
    printer.inner.close()


HOSTILE_TOKEN_ANSWERS = {
    "not JSON": (lambda n: _answer(None, raw=b"<html>login</html>"), "is not usable JSON"),
    "huge": (lambda n: _answer(None, raw=b'{"access_token": "' + b"a" * 100_000 + b'"}'),
             "answered 100020 bytes, over the 16384-byte limit"),
    "no token": (lambda n: _answer({"token_type": "Bearer"}), "answered no usable access_token"),
    "a token with spaces": (lambda n: _answer({"access_token": "a b", "token_type": "Bearer"}), "no usable"),
    "a MAC token": (lambda n: _answer({"access_token": "t0k", "token_type": "mac"}), "issued a 'mac' token"),
    "an expiry in words": (lambda n: _answer({"access_token": "t0k", "token_type": "Bearer", "expires_in": "soon"}),
                           "gave expires_in soon, not a positive number"),
    "a negative expiry": (lambda n: _answer({"access_token": "t0k", "token_type": "Bearer", "expires_in": -5}),
                          "gave expires_in -5"),
    "an array": (lambda n: _answer([1, 2]), "answered JSON that is not an object"),
    "a server error": (lambda n: _answer(None, 500, b"oops"), "refused us: HTTP 500"),
    "too many guesses": (lambda n: HttpResponse(429, {"Retry-After": "42"}, b'{"error": "temporarily_unavailable"}'),
                         "refused us: HTTP 429: temporarily_unavailable; it asks us to wait 42 s before asking again"),
    "a wait in long words": (lambda n: HttpResponse(503, {"Retry-After": "later" * 99}, b""),
                             "refused us: HTTP 503; it asks us to wait " + "later" * 8 + " before asking again"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_TOKEN_ANSWERS))
def test_a_token_endpoint_answering_garbage_is_one_line_and_nothing_reaches_the_agent(served, tmp_path, case):
    answer, said = HOSTILE_TOKEN_ANSWERS[case]
    base = served(app=_declaring(OAUTH2, token_answer=answer, counted=[]))
    outcome, frames, _ = delegate(base, store_of(tmp_path, {base + "/a2a": {"oauth2": "support-agent:s3cret"}}))
    assert outcome.error.startswith("delegation failed: ") and said in outcome.error, outcome.error
    assert "\n" not in outcome.error and len(outcome.error) < 400
    assert not [frame for frame in frames if frame.url == base + "/a2a"]


def test_a_slow_token_endpoint_ends_at_the_deadline(served, tmp_path):
    release = threading.Event()
    base = served(app=_declaring(OAUTH2, token_answer=lambda n: release.wait(10) and _answer({}), counted=[]))
    started = time.monotonic()
    try:
        outcome, _, _ = delegate(base, store_of(tmp_path, {base + "/a2a": {"oauth2": "support-agent:s3cret"}}),
                                 timeout=1.0)
    finally:
        release.set()
    assert time.monotonic() - started < 5 and "no reply within 1s (read timeout)" in outcome.error


@pytest.mark.parametrize("token_url, why", [
    ("https://attacker.example/oauth2/token", "not at the agent's origin {origin}: name that token endpoint as "
                                              "tokenUrl in --credentials to trust it"),
    ("{base}/a2a", "as the agent's own endpoint: the client secret never goes there")])
def test_the_client_secret_goes_only_to_a_token_endpoint_at_the_agents_origin(served, tmp_path, token_url, why):
    def make(base, peer):
        scheme = OAUTH2._replace(token_url=token_url.format(base=base))
        peer.card = peer.card._replace(auth_schemes=("oauth2",), security_schemes=(scheme,))
        return PeerApp(peer, wire_v10, token="t0k", log=lambda line: None)
    base = served(app=make)
    outcome, frames, _ = delegate(base, store_of(tmp_path, {base + "/a2a": {"oauth2": "support-agent:s3cret"}}))
    assert why.format(origin=base) in outcome.error and outcome.error.startswith("delegation failed: ")
    assert [frame.url for frame in frames if frame.direction == "-->"] == [base + "/.well-known/agent-card.json"]


def test_a_token_endpoint_the_store_names_is_the_only_one_the_client_secret_goes_to(served, tmp_path):
    """A hostile agent's card names a tokenUrl at its own origin, hoping for the secret our
    store holds for a shared provider: the secret goes to the provider the store names only."""
    harvested, issued = [], []
    provider = served(app=lambda base, peer: lambda request: issued.append(request.header("Authorization"))
                      or _answer({"access_token": "t0k", "token_type": "Bearer", "expires_in": 60}))
    base = served(app=_declaring(OAUTH2, counted=harvested, token_answer=lambda n: _answer(
        {"access_token": "t0k", "token_type": "Bearer"})))
    store = store_of(tmp_path, {base + "/a2a": {"oauth2": "support-agent:s3cret",
                                                 "tokenUrl": provider + "/oauth2/token"}})
    outcome, frames, printed = delegate(base, store)
    assert outcome.result is not None, outcome.error
    assert harvested == [], "nothing reached the token endpoint the card named"
    assert len(issued) == 1 and issued[0].startswith("Basic "), "the provider the store names was asked, once"
    assert f"fetched from {provider}/oauth2/token" in printed


def test_a_client_secret_a_token_endpoint_echoes_is_masked_wherever_it_stands(served, tmp_path):
    """A token endpoint that says our client secret back, in a field no rule names: masked
    in what --verbose prints and in the trace, as every secret our store holds is."""
    secret = "CLIENT-SECRET-4f9a0c"
    base = served(app=_declaring(OAUTH2, counted=[], token_answer=lambda n: _answer(
        {"error": "invalid_client", "error_description": f"bad secret {secret} for support-agent"}, 401)))
    (tmp_path / "credentials.json").write_text(json.dumps({"credentials": {base + "/a2a": {
        "oauth2": f"support-agent:{secret}"}}}))
    (tmp_path / "allow.json").write_text(json.dumps({"trusted": [{"name": "billing-agent", "endpoint": base + "/a2a"}]}))
    done = cli("--peer", base, "--credentials", str(tmp_path / "credentials.json"), "--allowlist", str(tmp_path / "allow.json"), "--verbose",
               "--trace", str(tmp_path / "run.jsonl"), env={"A2A_CREDENTIALS": ""})
    assert (tmp_path / "run.jsonl").exists(), done.stdout + done.stderr
    printed, traced = done.stdout + done.stderr, (tmp_path / "run.jsonl").read_text()
    assert "bad secret ****#" in printed and "invalid_client" in printed, printed[-2000:]
    assert secret not in printed and secret not in traced


def test_an_access_token_fetched_during_the_run_is_masked_wherever_it_is_said_back(served, tmp_path):
    """Held secrets are masked wherever they stand; an OAuth2 access token fetched during the run
    was masked only in its own field and the Authorization header: the token endpoint saying it
    again in another field, or the agent in its reply (here, as the order it refunds), showed it."""
    token = "AT-live-token-7f3a9c1e5b"
    base = served(app=_declaring(OAUTH2, token=token, token_answer=lambda n: _answer(
        {"access_token": token, "token_type": "Bearer", "expires_in": 60, "issued_for": token})))
    shown = []
    printer = FramePrinter(HttpTransport(timeout=5), lambda text, frame: shown.append(text), verbose=True)
    agent = story.SupportAgent(printer, [AllowEntry("billing-agent", base + "/a2a")],
                               store_of(tmp_path, {base + "/a2a": {"oauth2": "support-agent:s3cret"}}), lambda *a, **k: None)
    try:
        outcome = agent.handle(base + "/.well-known/agent-card.json", story.SKILL, {"order_id": token, "amount": 5})
    finally:
        printer.inner.close()
    assert outcome.task is not None and token in str(outcome.task), outcome.error
    said = "\n".join(shown)
    assert token not in said and said.count(masked(token)) >= 3, said[-1500:]


@pytest.mark.parametrize("spelled", [
    lambda secret: secret, lambda secret: json.dumps(secret)[1:-1].replace("/", "\\/"),
    lambda secret: re.sub("%[0-9A-F]{2}", lambda hexed: hexed.group().lower(), quote_plus(secret)),
    lambda secret: quote(secret),
    lambda secret: b64encode(f"support-agent:{quote_plus(secret)}".encode()).decode()],
    ids=["as is", "json with an escaped slash", "lowercase percent", "percent with slashes", "its Basic pair"])
def test_a_held_secret_said_back_in_a_header_an_error_word_or_a_body_is_masked_in_every_line(served, tmp_path, spelled):
    """A token endpoint saying our client secret back, however spelled, wherever it says it:
    its body, a WWW-Authenticate challenge, a header of its own, and the `error` word our
    one-line failure quotes; none of it reaches stdout, stderr or the trace."""
    secret = "CL1ENT/secret+Zq9"
    said = spelled(secret)
    base = served(app=_declaring(OAUTH2, counted=[], token_answer=lambda n: HttpResponse(
        401, {"Content-Type": "application/json", "WWW-Authenticate": f'Basic error_description="bad {said}"',
              "X-Debug": f"secret={said}"}, json.dumps({"error": f"bad {said}", "error_description": said}).encode())))
    (tmp_path / "credentials.json").write_text(json.dumps({"credentials": {base + "/a2a": {
        "oauth2": f"support-agent:{secret}"}}}))
    (tmp_path / "allow.json").write_text(json.dumps({"trusted": [{"name": "billing-agent", "endpoint": base + "/a2a"}]}))
    done = cli("--peer", base, "--credentials", str(tmp_path / "credentials.json"), "--allowlist",
               str(tmp_path / "allow.json"), "--verbose", "--trace", str(tmp_path / "run.jsonl"))
    shown = done.stdout + done.stderr + (tmp_path / "run.jsonl").read_text()
    assert "refused us: HTTP 401" in shown and "X-Debug: secret=****#" in shown, shown[-3000:]
    assert said not in shown and secret not in shown, [line for line in shown.splitlines() if secret in line or said in line]


def test_a_short_held_secret_is_not_hunted_for_in_ordinary_words():
    assert mask_body('{"result": "billing-agent completed"}', ("billing",)) == '{"result": "billing-agent completed"}'


# -- the store, as a file: each mistake one line --------------------------------------------

@pytest.mark.parametrize("entries, said", [
    ({"https://b.example/a2a": {"basic": "no-colon"}}, "credentials['https://b.example/a2a'].basic must be "
                                                       "USER:PASSWORD"),
    ({"https://b.example/a2a": {"oauth2": ":secret"}}, ".oauth2 must be CLIENT-ID:CLIENT-SECRET"),
    ({"https://b.example/a2a": {"apikey": "x"}}, "credentials['https://b.example/a2a'] has an unknown field 'apikey': "
                                                  "each is one of bearer, apiKey, basic"),
    ({"https://b.example/a2a": {}}, "must be an object of some of"),
    ({"https://b.example/a2a": {"apiKey": 42}}, ".apiKey must be a string (in quotes)"),
    ({"https://b.example/a2a": {"apiKey": "k\u00e9y"}}, ".apiKey must be printable ASCII"),
    ({"https://b.example/a2a": {"apiKey": "k" * 5000}}, "of 1 to 4096 characters"),
    ({"b.example": {"apiKey": "k"}}, "credentials['b.example'] must be keyed by an http(s) URL"),
    ({"https://b.example/a2a": {"clientCertificate": {"certificate": "nope.pem", "key": "nope.pem"}}},
     ".clientCertificate: cannot use nope.pem with nope.pem: no such file or directory"),
    ({"https://b.example/a2a": {"clientCertificate": {"certificate": "peers/keys/demo-ca.DEMO-CERT.pem",
                                                      "key": "peers/keys/billing-agent.DEMO-TLS-KEY.pem"}}},
     ".clientCertificate: cannot use peers/keys/demo-ca.DEMO-CERT.pem with"),
    ({"https://b.example/a2a": {"clientCertificate": "cert.pem"}}, 'must be {"certificate": FILE, "key": FILE}'),
    ({"https://b.example/a2a": {"tokenUrl": "https://b.example/a2a", "oauth2": "a:b"}},
     ".tokenUrl must be an http(s) URL other than the endpoint itself"),
])
def test_a_bad_credentials_file_is_one_line_naming_the_problem(tmp_path, entries, said):
    path = tmp_path / "credentials.json"
    path.write_text(json.dumps({"credentials": entries}))
    done = cli("--credentials", str(path))
    assert done.returncode == 2 and said in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


def test_bearer_tokens_and_other_credentials_for_one_endpoint_are_held_together(tmp_path):
    path = tmp_path / "credentials.json"
    path.write_text(json.dumps({"tokens": {"https://b.example/a2a": "t0k", "https://c.example/a2a": "c0k"},
                                "credentials": {"https://b.example/a2a": {"apiKey": "k3y"}, "_note": "skipped"}}))
    store = load_credentials(type("Options", (), {"credentials": str(path), "token_env": None, "peer": []})())
    assert store == {"https://b.example/a2a": Held(bearer="t0k", api_key="k3y"), "https://c.example/a2a": "c0k"}
    path.write_text("{}")
    with pytest.raises(ConfigError, match='holds neither "tokens" nor "credentials"'):
        load_credentials(type("Options", (), {"credentials": str(path), "token_env": None, "peer": []})())


# -- what is printed: every credential of every kind masked -------------------------------

def test_every_kind_of_credential_is_masked_in_headers_and_bodies():
    assert mask({"Authorization": "Basic c3VwcG9ydDpwYTU1", "X-API-Key": "k", "Api-Key": "k", "X-Auth-Token": "k",
                 "WWW-Authenticate": 'Basic realm="billing-agent"', "Content-Type": "application/json"}) == {
        "Authorization": f"Basic {masked('c3VwcG9ydDpwYTU1')}", "X-API-Key": masked("k"), "Api-Key": masked("k"),
        "X-Auth-Token": masked("k"), "WWW-Authenticate": 'Basic realm="billing-agent"', "Content-Type": "application/json"}
    assert mask_body("grant_type=client_credentials&client_id=me&client_secret=s3cret&scope=a2a") == \
        f"grant_type=client_credentials&client_id=me&client_secret={masked('s3cret')}&scope=a2a"
    assert mask_body('{"access_token": "eyJ.x.y", "refresh_token": "r", "token_type": "Bearer"}') == \
        f'{{"access_token": "{masked("eyJ.x.y")}", "refresh_token": "{masked("r")}", "token_type": "Bearer"}}'


# -- TLS: --ca, --transport https, mutual TLS, and no downgrade ---------------------------

KEYS = ROOT / "peers/keys"
CA = str(KEYS / "demo-ca.DEMO-CERT.pem")
OURS = {"certificate": str(KEYS / "support-agent.DEMO-CLIENT-CERT.pem"),
        "key": str(KEYS / "support-agent.DEMO-CLIENT-KEY.pem")}
STRANGERS = {"certificate": str(KEYS / "stranger.DEMO-CLIENT-CERT.pem"),
             "key": str(KEYS / "stranger.DEMO-CLIENT-KEY.pem")}


def test_over_https_the_default_run_prints_the_same_frames_as_over_http_but_the_transport_line():
    over_http, over_https = cli("--transport", "http"), cli("--transport", "https")
    assert over_http.returncode == over_https.returncode == 0, over_https.stderr
    first_http, *rest_http = over_http.stdout.splitlines()
    first_https, *rest_https = over_https.stdout.splitlines()
    assert rest_http == rest_https and "trusted result (from billing-agent)" in over_https.stdout
    assert first_https.startswith("[transport] HTTP JSON-RPC over real sockets (the demo peers' hostnames mapped to "
                                  "127.0.0.1, like curl --resolve; TLS there, each certificate checked for its name)")


def test_a_ca_that_did_not_issue_the_peers_certificates_is_one_line_per_peer_and_no_frame_beyond_the_handshake():
    done = cli("--transport", "https", "--ca", str(ROOT / "tests/keys/stranger.DEMO-CLIENT-CERT.pem"))
    errors = done.stderr.splitlines()
    assert done.returncode == 2 and len(errors) == 2 and "Traceback" not in done.stderr
    assert all("card fetch failed: could not connect to" in line and "TLS: certificate verify failed: unable to "
               "get local issuer certificate (--ca names the CA to trust)" in line for line in errors)
    assert "-->" in done.stdout and "<--" not in done.stdout
    unusable = cli("--transport", "https", "--ca", str(ROOT / "README.md"))
    assert unusable.returncode == 2 and unusable.stderr.startswith("error: --ca ") and unusable.stderr.count("\n") == 1


def test_a_certificate_for_another_name_is_refused_however_trusted_its_issuer():
    from peers.demo_auth import served_tls
    from peers.support.calling.credentials import trusting
    server = PeerServer(lambda request: HttpResponse(200, {}, b"{}"), "127.0.0.1", 0,
                        tls=served_tls("refunds-r-us.example", None)).start()  # the rogue's certificate, at billing's name
    try:
        transport = HttpTransport(resolve={"billing.acme.example": server.server_address[:2]}, resolved_tls=True,
                                  tls=trusting(CA), timeout=5)
        with pytest.raises(Exception, match="TLS: certificate verify failed: Hostname mismatch.*billing.acme.example"):
            transport.get("https://billing.acme.example/.well-known/agent-card.json", {})
    finally:
        server.stop()


def mtls_server() -> PeerServer:
    """billing served on 127.0.0.1 under mutual TLS, trusting client certificates the DEMO CA issued."""
    from peers.serving import DEMO_CA
    from transports import tls
    context = tls.server_context(str(KEYS / "billing-agent.DEMO-TLS-CERT.pem"),
                                 str(KEYS / "billing-agent.DEMO-TLS-KEY.pem"), str(ROOT / DEMO_CA))
    server = PeerServer(None, "127.0.0.1", 0, idle_timeout=2.0, tls=context)
    peer = billing.billing_agent(server.base_url)
    server.app = PeerApp(peer, wire_v10, scheme=scheme_for("mtls", None, server.base_url, peer, None, pytest.fail)[0],
                         log=lambda line: None)
    return server.start()


@pytest.fixture
def mtls_billing():
    server = mtls_server()
    yield server.base_url
    server.stop()


def delegate_over_tls(base, store):
    from peers.support.calling.credentials import client_tls, trusting
    printer = FramePrinter(HttpTransport(timeout=5, tls=trusting(CA), client_tls=client_tls(store, CA)))
    agent = story.SupportAgent(printer, [AllowEntry("billing-agent", base + "/a2a")], store, lambda *a, **k: None)
    try:
        return agent.handle(base + "/.well-known/agent-card.json", story.SKILL, story.PAYLOAD), printer.frames
    finally:
        printer.inner.close()


def test_mutual_tls_presents_our_client_certificate_and_a_strangers_fails_the_handshake_in_one_line(
        mtls_billing, tmp_path):
    base = mtls_billing
    outcome, frames = delegate_over_tls(base, store_of(tmp_path, {base + "/a2a": {"clientCertificate": OURS}}))
    assert outcome.result.startswith("refund of $180.00"), outcome.error
    assert not any("Authorization" in frame.headers for frame in frames if frame.direction == "-->")
    outcome, frames = delegate_over_tls(base, store_of(tmp_path, {base + "/a2a": {"clientCertificate": STRANGERS}}))
    # presented to that host for every request, the card's too: the first one ends the handshake
    assert outcome.error == (f"card fetch failed: could not connect to 127.0.0.1:{base.rsplit(':', 1)[1]}: TLS: the "
                             "peer refused our client certificate (tlsv1 alert unknown ca); fetching a card has "
                             "no effect, so a retry is safe")
    outcome, _ = delegate_over_tls(base, store_of(tmp_path, {base + "/a2a": {"apiKey": "k"}}))
    assert outcome.error == (f"not sent: its card requires mtls (a client certificate), and the support agent "
                             f"holds none for {base}/a2a in --credentials")


def test_our_client_certificate_goes_to_its_own_origin_only(tmp_path):
    from peers.support.calling.credentials import client_tls
    store = store_of(tmp_path, {"https://billing.acme.example/a2a": {"clientCertificate": OURS},
                                "https://billing.acme.example:8443/a2a": {"bearer": "t0k"}})
    assert list(client_tls(store, CA)) == ["https://billing.acme.example"]


@pytest.fixture
def another_mtls_billing(mtls_billing):
    """A second mutual-TLS service on the same host, another port: (ours, the other's) base URLs."""
    server = mtls_server()
    yield mtls_billing, server.base_url
    server.stop()


def test_a_service_on_the_same_host_that_asks_for_a_certificate_is_not_given_ours(another_mtls_billing, tmp_path):
    from peers.support.calling.credentials import client_tls, trusting
    ours, other = another_mtls_billing
    store = store_of(tmp_path, {ours + "/a2a": {"clientCertificate": OURS}})
    transport = HttpTransport(timeout=5, tls=trusting(CA), client_tls=client_tls(store, CA))
    frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
        "messageId": "m-1", "role": "ROLE_USER", "parts": [{"data": {"order_id": "ORD-1", "amount": 5}}]}}}).encode()
    headers = {"Content-Type": "application/json", "A2A-Version": "1.0"}
    try:
        assert transport.post(ours + "/a2a", frame, headers).status == 200, "presented where it is held for"
        assert transport.post(other + "/a2a", frame, headers).status == 401, "not presented to the other port"
    finally:
        transport.close()


def test_a_card_read_over_http_that_names_an_https_endpoint_is_a_downgrade_refused_before_any_frame(served, tmp_path):
    def make(base, peer):  # the card says https; the registry gave its URL as http
        peer.card = peer.card._replace(url=peer.card.url.replace("http://", "https://"))
        return PeerApp(peer, wire_v10, token="t0k", log=lambda line: None)
    base = served(app=make)
    outcome, frames, _ = delegate(base, {base.replace("http://", "https://") + "/a2a": "t0k"})
    assert outcome.error == (f"not sent: the card was fetched over http but sends frames over https "
                             f"({base.replace('http://', 'https://')}/a2a): a downgrade, refused")
    assert [frame.direction for frame in frames] == ["-->", "<--"]


# -- the lesson ------------------------------------------------------------------------------

def test_the_auth_schemes_lesson_refuses_without_and_with_a_wrong_credential_then_makes_each_refund():
    done = cli("--scenario", "auth-schemes", timeout=60)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    lines = done.stdout.splitlines()
    refusals = re.findall(r"billing answered HTTP 401, WWW-Authenticate: ([^;]*); no task was made", done.stdout)
    assert refusals == [
        'APIKey realm="billing-agent", header="X-API-Key"'] * 2 + [
        'Basic realm="billing-agent", charset="UTF-8"'] * 2 + [
        'Bearer realm="billing-agent", scope="a2a"',
        'Bearer realm="billing-agent", scope="a2a", error="invalid_token"'] * 2 + [
        'MutualTLS realm="billing-agent"'], "mutual TLS without a certificate: a 401 too"
    assert sum(line.startswith("[support] trusted result (from billing-agent): refund of $180.00") for line in lines) == 5
    assert lines.count("--> POST /oauth2/token grant_type=client_credentials&scope=a2a") == 1
    assert lines.count("--> POST /oauth2/token grant_type=client_credentials") == 1  # oidc's names no scope
    assert "--> GET https://oidc.billing.acme.example/.well-known/openid-configuration" in lines
    assert len(re.findall(r'<-- 200 \{"access_token": "\*{4}#[0-9a-f]{4}", "token_type": "Bearer"', done.stdout)) == 2
    assert lines[0].startswith("[support] this lesson runs with --transport https, whatever the command line says")
    assert lines[1].startswith("[transport] HTTP JSON-RPC over real sockets") and "TLS there" in lines[1]


def test_the_auth_schemes_lesson_shows_a_certificate_another_ca_issued_ending_the_handshake_in_one_line():
    done = cli("--scenario", "auth-schemes", "--frames", "full", timeout=60)  # every host's frames
    lines = done.stdout.splitlines()
    mtls = lines[lines.index("[support] billing at https://mtls.billing.acme.example declares mtls (mutualTLS); "
                             "our store holds a client certificate for it"):]
    said = [line for line in mtls if line.startswith("[")]
    assert said[:7] == [
        "[support] billing at https://mtls.billing.acme.example declares mtls (mutualTLS); our store holds a "
        "client certificate for it",
        "[trust] 'billing-agent' is allowlisted -> delegating",
        "[support] the refund with no credential, as a caller that ignores the card would send it:",
        '[support] billing answered HTTP 401, WWW-Authenticate: MutualTLS realm="billing-agent"; no task was made',
        "[support] the refund with a client certificate another CA issued:",
        "[support] could not connect to mtls.billing.acme.example:443: TLS: the peer refused our client "
        "certificate (tlsv1 alert unknown ca); nothing was sent, so a retry is safe",
        "[support] now as the card asks, with the credential from our own store:"]
    arrows = [line[:3] for line in mtls if line.startswith(("-->", "<--"))]
    assert arrows == ["-->", "<--", "-->", "-->", "<--"], "the stranger's request is shown; no answer came"
    assert "[support] trusted result (from billing-agent): refund of $180.00 issued for ORD-3300 (ref " \
           "BILL-ORD-3300)" in said[7:]


def test_the_auth_schemes_lesson_shows_its_pattern_once_in_a_screen_and_every_frame_when_asked(tmp_path):
    """Five hosts, each the same refund three ways, printed every frame: 106 lines, most of them the
    same frames again. By default the first host's frames are shown, and at the others a line says
    what differs; every frame is still recorded, and --frames full shows each."""
    runs = {how: cli("--scenario", "auth-schemes", *flags, "--trace", str(tmp_path / f"{how}.jsonl"), timeout=60)
            for how, flags in (("brief", ()), ("full", ("--frames", "full")))}
    lines = runs["brief"].stdout.splitlines()
    assert runs["brief"].returncode == 0 and len(lines) <= 56, len(lines)
    sent = [line for line in lines if line.startswith("--> ")]
    assert sent[:1] == ["--> GET https://apikey.billing.acme.example/.well-known/agent-card.json"]
    assert len([line for line in sent if line.startswith("--> {")]) == 3, "the refund three ways, at the first host"
    assert [line for line in sent if not line.startswith("--> {")][1:] == [
        "--> POST /oauth2/token grant_type=client_credentials&scope=a2a",
        "--> GET https://oidc.billing.acme.example/.well-known/openid-configuration",
        "--> POST /oauth2/token grant_type=client_credentials"], "what differs at a host is shown: its token fetch"
    said = [line for line in lines if line.startswith("[support] billing at https://mtls.")]
    assert said == ['[support] billing at https://mtls.billing.acme.example declares mtls (mutualTLS). The refund '
                    'with no credential: billing answered HTTP 401, WWW-Authenticate: MutualTLS realm="billing-agent"; '
                    'no task was made. With a client certificate another CA issued: could not connect to '
                    'mtls.billing.acme.example:443: TLS: the peer refused our client certificate (tlsv1 alert unknown '
                    'ca); nothing was sent, so a retry is safe. Now as the card asks, with a client certificate from '
                    'our own store:']
    assert len([line for line in runs["full"].stdout.splitlines() if line.startswith("--> {")]) == 15
    recorded = {how: [json.loads(line)["url"] for line in (tmp_path / f"{how}.jsonl").read_text().splitlines()
                      if json.loads(line)["kind"] == "frame"] for how in runs}
    assert len(recorded["brief"]) == 45 and recorded["brief"] == recorded["full"], "every frame kept, shown or not"


def test_the_auth_schemes_lesson_ends_with_what_a_declared_scheme_is_and_what_an_enforced_one_shows():
    lines = cli("--scenario", "auth-schemes", timeout=60).stdout.splitlines()
    tasks = [line for line in lines if line.startswith("[support] task ") and line.endswith("state: completed")]
    assert tasks == ["[support] task task-1 state: completed"] * 5, "each billing's only task: the one we made"
    assert lines[-1] == (
        "[support] A card that declares a scheme only says what its server wants: anyone can write that into a "
        "card, and a server that does not check it serves everyone (an extended card declared 'authenticated' "
        "but served to anyone, a2a-samples #340). A server that enforces it refuses the rest before any task: "
        "each billing's only task is task-1, the one our credential made.")


def test_the_auth_schemes_lesson_prints_the_same_frames_each_run():
    runs = [cli("--scenario", "auth-schemes", timeout=60).stdout for _ in range(2)]
    # Fresh secrets each run, every one masked: the same transcript but for the fingerprints of
    # the fresh tokens (a fingerprint tells credentials apart, so a new token has a new one).
    fingerprints = [re.findall(r"\*{4}#[0-9a-f]{4}", run) for run in runs]
    assert fingerprints[0] and len(fingerprints[0]) == len(fingerprints[1])
    assert re.sub(r"\*{4}#[0-9a-f]{4}", "****#", runs[0]) == re.sub(r"\*{4}#[0-9a-f]{4}", "****#", runs[1])


@pytest.mark.parametrize("spelled", ["HTTP://127.0.0.1:{port}/a2a", "http://127.0.0.1:{port}", "Http://127.0.0.1:{port}/"])
def test_a_credential_kept_under_another_spelling_of_the_endpoint_is_the_endpoints(served, tmp_path, spelled):
    """A URL's scheme and host are read without case, and a default port or a bare "/" says nothing more:
    an entry spelled so was never found ("holds no credential for it", the file holding it), so the
    person who wrote it was told the store lacked what it held."""
    base = served("apikey")
    key = spelled.format(port=base.rsplit(":", 1)[1])
    outcome, _, printed = delegate(base, store_of(tmp_path, {key: HELD["apikey"]}))
    assert outcome.result.startswith("refund of $180.00 issued for ORD-3300"), printed


def test_one_url_spelled_otherwise_is_one_key_and_two_spellings_of_it_in_one_file_are_refused(tmp_path):
    from transports.base import parse_url
    assert parse_url("HTTPS://Billing.Example:443/a2a").canonical == "https://billing.example/a2a"
    assert parse_url("http://billing.example:80/").canonical == parse_url("http://billing.example").canonical
    assert parse_url("http://billing.example/A2A").canonical != parse_url("http://billing.example/a2a").canonical
    with pytest.raises(ConfigError, match="given already, spelled otherwise"):
        store_of(tmp_path, {"https://billing.example/a2a": {"apiKey": "one-key"}, "HTTPS://billing.example:443/a2a": {
            "apiKey": "another-key"}})
    path = tmp_path / "tokens.json"
    path.write_text(json.dumps({"tokens": {"https://b.example/a2a": "t-one", "https://B.example/a2a": "t-two"}}))
    with pytest.raises(ConfigError, match="given already, spelled otherwise"):
        load_credentials(type("Options", (), {"credentials": str(path), "token_env": None, "peer": []})())


def test_a_credential_for_another_path_or_port_is_not_the_endpoints(served, tmp_path):
    """Spellings of one URL are one key; another path or another port is another audience: never sent there."""
    base = served("apikey")
    host, port = base.rsplit(":", 1)
    for key in (f"{host}:{int(port) + 1}/a2a", f"{base}/other", f"{base}/a2a/x", f"https://127.0.0.1:{port}/a2a"):
        outcome, frames, printed = delegate(base, store_of(tmp_path, {key: HELD["apikey"]}))
        assert outcome.result is None and "holds none for" in printed, (key, printed[-300:])
        assert not any(frame.direction == "-->" and frame.url == base + "/a2a" for frame in frames), key


def test_a_way_in_asking_for_two_credentials_in_one_header_is_not_chosen_and_no_token_is_fetched_for_it(
        served, tmp_path):
    """HTTP has one Authorization header: a way in naming two OAuth2 schemes (or bearer and Basic) cannot
    be met by one request, whatever we hold. It was chosen, a token fetched for each scheme (40 schemes:
    40 fetches, 40 deadlines) and only the last sent. The next way in that one request can carry is chosen;
    with none, one line says why, before any frame to a token endpoint."""
    counted = []

    def declaring(*ways):
        def make(base, peer):
            schemes = (OAUTH2._replace(token_url=base + "/oauth2/token"),
                       OAUTH2._replace(name="oauth2-again", token_url=base + "/oauth2/token"),
                       SecurityScheme("bearer", "http", scheme="Bearer"))
            peer.card = peer.card._replace(auth_schemes=tuple(s.name for s in schemes), security_schemes=schemes)
            real = PeerApp(peer, wire_v10, token="t0k", log=lambda line: None)

            def app(request):
                if request.url.endswith("/oauth2/token"):
                    counted.append(request.body)
                    return _answer({"access_token": f"at-{len(counted)}", "token_type": "Bearer"})
                if request.url.endswith("/agent-card.json"):  # our peers serve one way in; this card, `ways`
                    card = json.loads(real(request).body)
                    card["securityRequirements"] = [{"schemes": {name: {"list": []} for name in way}} for way in ways]
                    return _answer(card)
                return real(request)
            return app
        return make
    base = served(app=declaring(("oauth2", "oauth2-again"), ("bearer",)))
    held = store_of(tmp_path, {base + "/a2a": {"bearer": "t0k", "oauth2": "support-agent:s3cret"}})
    outcome, frames, printed = delegate(base, held)
    assert outcome.result is not None and "requires bearer" in printed and counted == [], printed
    base = served(app=declaring(("oauth2", "oauth2-again"),))
    outcome, frames, printed = delegate(base, store_of(tmp_path, {base + "/a2a": {"oauth2": "support-agent:s3cret"}}))
    assert outcome.result is None and "no one request can carry" in printed and counted == [], printed
