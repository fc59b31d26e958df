"""A served peer's OAuth2 and OpenID access tokens are signed by a key made for that run,
never by the card's --signing-key: served with the repository's published DEMO key (RSA),
the token endpoint signed its tokens with it, so anyone holding the repository could forge
a token the peer took. `serve` run as a user runs it, real requests on 127.0.0.1."""
import http.client
import json
import time
from urllib.parse import urlencode, urlsplit

import pytest

from conftest import ROOT, base_url, exchange, start_serve
from peers.demo_auth import demo_key
from peers.schemes import tokens
from peers.signing import rs256

DEMO = rs256.private_from_pem((ROOT / "peers/keys/billing-agent.DEMO-KEY.pem").read_text())
PAIR = "support-agent:s3cret"
REFUND = {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"data": {"order_id": "ORD-1", "amount": 5}}]}}


def _request(base, method, path, body=b"", headers=None):
    address = urlsplit(base)
    return exchange(http.client.HTTPConnection(address.hostname, address.port, timeout=5), method, path, body, headers)


def _call(base, token):
    frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": REFUND}).encode()
    return _request(base, "POST", "/a2a", frame, {"Content-Type": "application/json", "A2A-Version": "1.0",
                                                  "Authorization": "Bearer " + token})


def _forged_with(key, base):
    now = int(time.time())
    return tokens.issue(key, base, base + "/a2a", "support-agent", "a2a", now)


@pytest.mark.parametrize("kind, key_file", [("oauth2", "billing-agent.DEMO-KEY.pem"),
                                            ("oidc", "billing-agent.DEMO-KEY.pem"),
                                            ("oauth2", "billing-agent.DEMO-KEY.ES256.json"),
                                            ("oidc", "billing-agent.DEMO-KEY.EdDSA.json")])
def test_a_token_forged_with_the_cards_demo_key_is_refused_and_one_the_endpoint_issued_is_taken(kind, key_file):
    process, banner = start_serve("billing-agent", "--wire", "1.0", "--port", "0", "--auth", kind,
                                  "--token", PAIR, "--signing-key", str(ROOT / "peers/keys" / key_file))
    try:
        base = base_url(banner[0])
        status, headers, _ = _call(base, _forged_with(DEMO, base))
        assert status == 401 and 'error="invalid_token"' in headers["WWW-Authenticate"], "the DEMO key signs no token"
        status, _, body = _request(base, "POST", "/oauth2/token", urlencode({"grant_type": "client_credentials"}).encode(),
                                   {"Content-Type": "application/x-www-form-urlencoded",
                                    "Authorization": "Basic c3VwcG9ydC1hZ2VudDpzM2NyZXQ="})  # support-agent:s3cret
        assert status == 200, body
        issued = json.loads(body)["access_token"]
        status, _, body = _call(base, issued)
        assert status == 200 and json.loads(body)["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED", body
        card = json.loads(_request(base, "GET", "/.well-known/agent-card.json")[2])
        assert card.get("signatures"), "the card is still signed with --signing-key"
        if kind == "oidc":  # the JWKS publishes the key that checks the tokens: not the card's
            (jwk,) = json.loads(_request(base, "GET", "/.well-known/jwks.json")[2])["keys"]
            published = rs256.public_from_jwk(jwk)
            assert published.n != DEMO.public.n and jwk["alg"] == "RS256"
            assert tokens.check(issued, published, base + "/a2a", "a2a")["sub"] == "support-agent"
    finally:
        process.stop()


def test_two_runs_sign_their_tokens_with_two_keys_none_of_them_a_demo_key():
    """Made afresh at each start: a token from before a restart is refused (401 invalid_token),
    and the support agent fetches a new one (test_auth_tokens.py shows it does)."""
    seen = []
    for _ in range(2):
        process, banner = start_serve("billing-agent", "--wire", "1.0", "--port", "0", "--auth", "oidc",
                                      "--token", PAIR, "--signing-key", str(ROOT / "peers/keys/billing-agent.DEMO-KEY.pem"))
        try:
            (jwk,) = json.loads(_request(base_url(banner[0]), "GET", "/.well-known/jwks.json")[2])["keys"]
            seen.append(rs256.public_from_jwk(jwk).n)
        finally:
            process.stop()
    demo_moduli = {DEMO.public.n, demo_key("approver").public.n}
    assert seen[0] != seen[1] and not demo_moduli & set(seen)


def test_the_jwks_is_served_for_no_cache_to_reuse_unasked_since_its_key_is_made_at_each_start():
    """Served with max-age=300, a cache (a gateway checking our tokens) kept the old key for up to five
    minutes after a restart and refused every token the new key signed. The discovery document names
    no key, only where to read it: it may be kept."""
    process, banner = start_serve("billing-agent", "--wire", "1.0", "--port", "0", "--auth", "oidc", "--token", PAIR)
    try:
        base = base_url(banner[0])
        status, headers, _ = _request(base, "GET", "/.well-known/jwks.json")
        directives = {part.strip().partition("=")[0]: part.strip().partition("=")[2]
                      for part in headers["Cache-Control"].split(",")}
        assert status == 200 and "no-cache" in directives and int(directives.get("max-age", 0)) == 0, headers
        status, headers, _ = _request(base, "GET", "/.well-known/openid-configuration")
        assert status == 200 and headers["Cache-Control"] == "max-age=300", headers
    finally:
        process.stop()
