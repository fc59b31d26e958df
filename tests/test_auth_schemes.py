"""Served peers enforce the security scheme their card declares (issue 25, items 1 and 2):
API key, Basic, OAuth2 client credentials with the peer's own token endpoint, OpenID
Connect discovery. Each scheme is declared in the spec's spelling (1.0 and 0.3), refuses
anything else with 401 and its WWW-Authenticate before any task is made, and takes the
right credential. Hostile tokens and headers, as the issue lists them. Real requests to
the real billing app on 127.0.0.1; curl follows the card where it is installed."""
import base64
import hashlib
import hmac
import json
import shutil
import subprocess
import time

import pytest

from conftest import ROOT, cli, exchange
from peers import billing
from peers.a2a import wire_v03, wire_v10
from peers.app import PeerApp
from peers.schemes import tokens
from peers.serving import scheme_for
from peers.signing import rs256
from transports.server import PeerServer

KEY = rs256.private_from_pem((ROOT / "peers/keys/billing-agent.DEMO-KEY.pem").read_text())
ATTACKER = rs256.private_from_pem((ROOT / "tests/keys/other.pem").read_text())
SECRETS = {"apikey": "k3y-42", "basic": "support-agent:pa55", "oauth2": "support-agent:s3cret",
           "oidc": "support-agent:s3cret"}
REFUND = {"message": {"messageId": "m-1", "role": "ROLE_USER",
                      "parts": [{"data": {"order_id": "ORD-1", "amount": 5}}]}}


class Served:
    """billing-agent under `kind` on 127.0.0.1, and plain HTTP requests to it."""

    def __init__(self, kind, wire=wire_v10):
        self.server = PeerServer(None, "127.0.0.1", 0, idle_timeout=2.0)
        self.base = self.server.base_url
        self.peer = billing.billing_agent(self.base)
        self.scheme, _ = scheme_for(kind, SECRETS[kind], self.base, self.peer, None, pytest.fail)
        self.server.app = PeerApp(self.peer, wire, scheme=self.scheme, log=lambda line: None)
        self.server.start()

    def request(self, method, path, body=b"", headers=None):
        import http.client
        return exchange(http.client.HTTPConnection("127.0.0.1", self.server.server_address[1], timeout=5),
                        method, path, body, headers)

    def call(self, method, params, headers, path="/a2a"):
        frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
        return self.request("POST", path, frame, {"Content-Type": "application/json", "A2A-Version": "1.0",
                                                   **headers})

    def token(self, **form):
        status, _, body = self.request("POST", "/oauth2/token", _form(grant_type="client_credentials", **form),
                                       {"Content-Type": "application/x-www-form-urlencoded"})
        assert status == 200, body
        return json.loads(body)["access_token"]


@pytest.fixture
def served(request):
    peers = []

    def start(kind, wire=wire_v10):  # oauth2, oidc: their tokens signed by a key made for them
        peers.append(Served(kind, wire))
        return peers[-1]
    yield start
    for peer in peers:
        peer.server.stop()


def _form(**fields):
    from urllib.parse import urlencode
    return urlencode(fields).encode()


def _basic(pair: bytes) -> dict:
    return {"Authorization": "Basic " + base64.b64encode(pair).decode()}


def assert_refused(served_peer, status_headers_body, challenge):
    status, headers, body = status_headers_body
    assert status == 401 and headers["WWW-Authenticate"].startswith(challenge), (status, headers, body)
    assert json.loads(body)["error"]["data"][0]["reason"] == "UNAUTHENTICATED"


@pytest.mark.parametrize("kind, v10, v03", [
    ("apikey", {"apiKeySecurityScheme": {"location": "header", "name": "X-API-Key"}},
     {"type": "apiKey", "in": "header", "name": "X-API-Key"}),
    ("basic", {"httpAuthSecurityScheme": {"scheme": "Basic"}}, {"type": "http", "scheme": "basic"}),
    ("oidc", {"openIdConnectSecurityScheme": {"openIdConnectUrl": "{base}/.well-known/openid-configuration"}},
     {"type": "openIdConnect", "openIdConnectUrl": "{base}/.well-known/openid-configuration"}),
])
def test_the_card_declares_exactly_the_scheme_served_in_each_versions_spelling(served, kind, v10, v03):
    for wire, expected in ((wire_v10, v10), (wire_v03, v03)):
        peer = served(kind, wire)
        card = json.loads(peer.request("GET", "/.well-known/agent-card.json")[2])
        expected = json.loads(json.dumps(expected).replace("{base}", peer.base))
        name = peer.scheme.declared.name
        assert card["securitySchemes"] == {name: expected}
        required = card.get("securityRequirements", card.get("security"))
        assert required in ([{"schemes": {name: {"list": []}}}], [{name: []}])


def test_the_oauth2_card_names_the_token_url_and_the_scope_its_requirement_asks(served):
    card = json.loads(served("oauth2").request("GET", "/.well-known/agent-card.json")[2])
    flow = card["securitySchemes"]["oauth2"]["oauth2SecurityScheme"]["flows"]["clientCredentials"]
    assert flow["tokenUrl"].endswith("/oauth2/token") and list(flow["scopes"]) == ["a2a"]
    assert card["securityRequirements"] == [{"schemes": {"oauth2": {"list": ["a2a"]}}}]


def test_an_api_key_counts_only_in_its_header_never_the_query_or_another_header(served):
    peer = served("apikey")
    for headers, path in (({}, "/a2a"), ({}, "/a2a?api_key=k3y-42"), ({"Authorization": "Bearer k3y-42"}, "/a2a"),
                          ({"X-Api-Token": "k3y-42"}, "/a2a"), ({"X-API-Key": "k3y-43"}, "/a2a"),
                          ({"X-API-Key": "k" * 5000}, "/a2a")):
        assert_refused(peer, peer.call("SendMessage", REFUND, headers, path), "APIKey")
    status, _, body = peer.call("SendMessage", REFUND, {"X-API-Key": "k3y-42"})
    assert status == 200 and json.loads(body)["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    listed = json.loads(peer.call("ListTasks", {}, {"X-API-Key": "k3y-42"})[2])["result"]["tasks"]
    assert len(listed) == 1, "no refused request made a task"


@pytest.mark.parametrize("pair", [b"support-agentpa55", b"support-agent:pa56", b"\xff\xfe:pa55",
                                  b"support-agent:" + b"x" * 4000, b"nobody:pa55"])
def test_basic_refuses_a_missing_colon_non_utf8_oversize_or_wrong_pair_with_its_challenge(served, pair):
    peer = served("basic")
    assert_refused(peer, peer.call("SendMessage", REFUND, _basic(pair)), 'Basic realm="billing-agent"')


def test_basic_refuses_what_is_not_base64_and_takes_the_right_pair(served):
    peer = served("basic")
    assert_refused(peer, peer.call("SendMessage", REFUND, {"Authorization": "Basic ***not-base64***"}), "Basic")
    status, _, body = peer.call("SendMessage", REFUND, _basic(b"support-agent:pa55"))
    assert status == 200 and "task" in json.loads(body)["result"]


def test_the_token_endpoint_takes_basic_or_form_client_authentication_and_refuses_wrong_secrets(served):
    peer = served("oauth2")
    assert peer.token(client_id="support-agent", client_secret="s3cret").count(".") == 2
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    good, wrong = _basic(b"support-agent:s3cret"), _basic(b"support-agent:s3creT")
    cases = [(good, {"grant_type": "client_credentials"}, 200, None),
             (wrong, {"grant_type": "client_credentials"}, 401, "invalid_client"),
             ({}, {"grant_type": "client_credentials", "client_id": "support-agent", "client_secret": "x"},
              401, "invalid_client"),
             (good, {"grant_type": "password"}, 400, "unsupported_grant_type"),
             (good, {"grant_type": "client_credentials", "client_secret": "s3cret"}, 400, "invalid_request"),
             (good, {"grant_type": "client_credentials", "scope": "admin"}, 400, "invalid_scope")]
    for auth, fields, status, error in cases:
        answer = peer.request("POST", "/oauth2/token", _form(**fields), {**form, **auth})
        assert answer[0] == status and (error is None or json.loads(answer[2])["error"] == error), answer
        assert answer[1]["Cache-Control"] == "no-store"
    assert peer.request("POST", "/oauth2/token", b"grant_type=client_credentials&grant_type=client_credentials",
                        {**form, **good})[0] == 400



def test_a_token_request_naming_no_grant_type_is_an_invalid_request_not_an_unsupported_grant(served):
    """RFC 6749 5.2: a request missing a required parameter is `invalid_request`;
    `unsupported_grant_type` says the grant it names is not served, and this one names none."""
    peer = served("oauth2")
    form = {"Content-Type": "application/x-www-form-urlencoded", **_basic(b"support-agent:s3cret")}
    for body, error in ((b"", "invalid_request"), (b"scope=a2a", "invalid_request"),
                        (b"grant_type=", "invalid_request"), (b"grant_type=password", "unsupported_grant_type")):
        status, _, answer = peer.request("POST", "/oauth2/token", body, form)
        assert (status, json.loads(answer)["error"]) == (400, error), body

def _forged(header, claims, signer=None, secret=None):
    signing_input = ".".join(rs256.b64url(json.dumps(part).encode()) for part in (header, claims))
    signature = (rs256.sign(signer, signing_input.encode()) if signer else
                 hmac.new(secret, signing_input.encode(), hashlib.sha256).digest() if secret else b"")
    return signing_input + "." + rs256.b64url(signature)


def test_an_access_token_is_refused_unless_our_key_signed_it_for_us_now_with_the_scope(served):
    peer = served("oauth2")
    ours = peer.scheme.key  # the token key, made for this peer: no file holds it
    now, audience = int(time.time()), peer.peer.card.url
    claims = {"iss": peer.base, "sub": "support-agent", "aud": audience, "scope": "a2a",
              "iat": now, "nbf": now, "exp": now + 60}
    rs = {"alg": "RS256", "typ": "at+jwt"}
    attacker_jwk = ATTACKER.public.jwk()
    hostile = {
        "alg none": _forged({"alg": "none"}, claims),
        "HS256 keyed with our public key": _forged({"alg": "HS256"}, claims,
                                                   secret=json.dumps(ours.public.jwk()).encode()),
        "another audience": _forged(rs, {**claims, "aud": "https://elsewhere.example/a2a"}, ours),
        "expired": _forged(rs, {**claims, "exp": now - 60}, ours),
        "not yet valid": _forged(rs, {**claims, "nbf": now + 600}, ours),
        "a scope too small": _forged(rs, {**claims, "scope": "profile"}, ours),
        "billing's published DEMO key": _forged(rs, claims, KEY),
        "a kid naming the attacker's key": _forged({**rs, "kid": attacker_jwk["kid"]}, claims, ATTACKER),
        "a jku naming the attacker's keys": _forged({**rs, "jku": "https://attacker.example/jwks"}, claims, ATTACKER),
        "an embedded jwk": _forged({**rs, "jwk": attacker_jwk}, claims, ATTACKER),
        "not a JWT": "x" * 5000,
    }
    for why, token in hostile.items():
        status, headers, _ = peer.call("SendMessage", REFUND, {"Authorization": f"Bearer {token}"})
        assert status == 401 and headers["WWW-Authenticate"] == \
            'Bearer realm="billing-agent", scope="a2a", error="invalid_token"', why  # RFC 6750 3.1: one was presented
    fair = _forged(rs, claims, ours)  # the same claims, signed by the peer's own key: accepted
    assert peer.call("ListTasks", {}, {"Authorization": f"Bearer {fair}"})[0] == 200
    token = peer.token(client_id="support-agent", client_secret="s3cret")
    status, _, body = peer.call("SendMessage", REFUND, {"Authorization": f"Bearer {token}"})
    assert status == 200 and "task" in json.loads(body)["result"]
    listed = json.loads(peer.call("ListTasks", {}, {"Authorization": f"Bearer {token}"})[2])["result"]["tasks"]
    assert len(listed) == 1, "only the accepted request made a task"


def test_a_token_issued_now_expires_within_its_lifetime():
    now = time.time()
    token = tokens.issue(KEY, "https://billing", "https://billing/a2a", "client", "a2a", now)
    assert tokens.check(token, KEY.public, "https://billing/a2a", "a2a", lambda: now)["sub"] == "client"
    with pytest.raises(tokens.BadToken, match="expired"):
        tokens.check(token, KEY.public, "https://billing/a2a", "a2a", lambda: now + tokens.LIFETIME + 60)


def test_oidc_serves_discovery_and_a_jwks_whose_key_checks_the_tokens_it_issues(served):
    peer = served("oidc")
    card = json.loads(peer.request("GET", "/.well-known/agent-card.json")[2])
    discovery_url = card["securitySchemes"]["oidc"]["openIdConnectSecurityScheme"]["openIdConnectUrl"]
    configuration = json.loads(peer.request("GET", discovery_url[len(peer.base):])[2])
    assert configuration["issuer"] == peer.base and configuration["grant_types_supported"] == ["client_credentials"]
    jwks = json.loads(peer.request("GET", configuration["jwks_uri"][len(peer.base):])[2])
    token = peer.token(client_id="support-agent", client_secret="s3cret")
    published = rs256.public_from_jwk(jwks["keys"][0])
    assert tokens.check(token, published, peer.peer.card.url, "a2a")["iss"] == peer.base
    assert peer.call("ListTasks", {}, {"Authorization": f"Bearer {token}"})[0] == 200


def test_serve_refuses_a_secret_its_scheme_cannot_use_in_one_line():
    done = cli("serve", "billing-agent", "--auth", "basic", "--token", "no-colon", "--port", "0")
    assert done.returncode == 2 and "--auth basic: basic needs --token USER:PASSWORD" in done.stderr
    assert "Traceback" not in done.stderr


CURL = shutil.which("curl")


@pytest.mark.skipif(CURL is None, reason="curl is not installed")
@pytest.mark.parametrize("kind", ["oauth2", "oidc"])
def test_curl_follows_the_card_to_a_token_and_a_refund(served, kind):
    """As a stranger would: read the card, find the token endpoint (from tokenUrl, or the
    discovery document), get a token with client credentials, call with it."""
    peer = served(kind)

    def curl(*args):
        done = subprocess.run([CURL, "-s", "--max-time", "5", *args], capture_output=True, timeout=10)
        return json.loads(done.stdout)
    card = curl(peer.base + "/.well-known/agent-card.json")
    (name, scheme), = card["securitySchemes"].items()
    if "oauth2SecurityScheme" in scheme:
        token_url = scheme["oauth2SecurityScheme"]["flows"]["clientCredentials"]["tokenUrl"]
    else:
        token_url = curl(scheme["openIdConnectSecurityScheme"]["openIdConnectUrl"])["token_endpoint"]
    token = curl("-u", "support-agent:s3cret", "-d", "grant_type=client_credentials", token_url)["access_token"]
    endpoint = card["supportedInterfaces"][0]["url"]
    frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": REFUND})
    answer = curl("-H", f"Authorization: Bearer {token}", "-H", "Content-Type: application/json",
                  "-H", "A2A-Version: 1.0", "-d", frame, endpoint)
    assert answer["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    refused = curl("-H", "Content-Type: application/json", "-H", "A2A-Version: 1.0", "-d", frame, endpoint)
    assert refused["error"]["data"][0]["reason"] == "UNAUTHENTICATED"


@pytest.mark.parametrize("kind", ["oauth2", "oidc"])
def test_under_a_base_url_with_a_path_the_token_url_and_discovery_the_card_names_are_served_there(kind):
    """`serve --url BASE/billing`: the endpoint was served at /billing/a2a, but the token
    endpoint and OpenID discovery the card named under /billing answered 404 (served only
    at the root), so no client following the card could get a token."""
    from urllib.parse import urlsplit
    server = PeerServer(None, "127.0.0.1", 0, idle_timeout=2.0)
    base = server.base_url + "/billing"
    peer = billing.billing_agent(base)
    scheme, _ = scheme_for(kind, SECRETS[kind], base, peer, KEY, pytest.fail)
    server.app = PeerApp(peer, wire_v10, scheme=scheme, log=lambda line: None)
    server.start()
    try:
        served = Served.__new__(Served)
        served.server = server
        card = json.loads(served.request("GET", "/.well-known/agent-card.json")[2])
        declared = card["securitySchemes"][kind]
        if kind == "oidc":
            status, _, body = served.request("GET", urlsplit(declared["openIdConnectSecurityScheme"]["openIdConnectUrl"]).path)
            assert status == 200, body
            token_url = json.loads(body)["token_endpoint"]
            assert served.request("GET", urlsplit(json.loads(body)["jwks_uri"]).path)[0] == 200
        else:
            token_url = declared["oauth2SecurityScheme"]["flows"]["clientCredentials"]["tokenUrl"]
        status, _, body = served.request("POST", urlsplit(token_url).path, _form(grant_type="client_credentials"),
                                         {"Content-Type": "application/x-www-form-urlencoded",
                                          **_basic(SECRETS[kind].encode())})
        assert status == 200, body
        token = json.loads(body)["access_token"]
        status, _, body = served.call("SendMessage", REFUND, {"Authorization": "Bearer " + token},
                                      path=urlsplit(card["supportedInterfaces"][0]["url"]).path)
        assert status == 200 and "result" in json.loads(body), body
    finally:
        server.stop()
