"""The served token endpoint stops hearing its client's id once wrong secrets for it came too often
(RFC 6749 2.3.1: protect a password-checking endpoint against brute force): 429 with Retry-After
(RFC 6585 4) before the secret is looked at. Guesses under ids it does not know test no secret:
they hold no one back, however many. It heard any number of guesses before. Real requests to
billing's token endpoint on 127.0.0.1."""
import base64
import http.client
import json
from urllib.parse import urlencode

import pytest

from conftest import ROOT
from peers import billing
from peers.a2a import wire_v10
from peers.app import PeerApp
from peers.serving import scheme_for
from peers.signing import rs256
from transports.server import PeerServer

TOKEN_KEY = rs256.private_from_pem((ROOT / "tests/keys/other.pem").read_text())  # any key: none is checked here
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


@pytest.fixture
def endpoint():
    server = PeerServer(None, "127.0.0.1", 0, idle_timeout=2.0)
    peer = billing.billing_agent(server.base_url)
    scheme = scheme_for("oauth2", "support-agent:s3cret", server.base_url, peer, TOKEN_KEY, pytest.fail)[0]
    server.app = PeerApp(peer, wire_v10, scheme=scheme, log=lambda line: None)
    server.start()
    yield server, scheme
    server.stop()


def _ask(server, client_id, secret, basic=True):
    """One token request: (status, headers, the JSON answer)."""
    fields = {"grant_type": "client_credentials"}
    headers = dict(FORM)
    if basic:
        headers["Authorization"] = "Basic " + base64.b64encode(f"{client_id}:{secret}".encode()).decode()
    else:
        fields.update(client_id=client_id, client_secret=secret)
    connection = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=5)
    try:
        connection.request("POST", "/oauth2/token", urlencode(fields), headers)
        answer = connection.getresponse()
        return answer.status, dict(answer.getheaders()), json.loads(answer.read())
    finally:
        connection.close()


def test_a_client_id_that_guessed_wrong_five_times_is_answered_429_with_retry_after_even_with_the_right_secret(endpoint):
    server, _ = endpoint
    assert [_ask(server, "support-agent", f"guess-{n}")[0] for n in range(5)] == [401] * 5
    status, headers, answer = _ask(server, "support-agent", "s3cret")
    assert status == 429 and 0 < int(headers["Retry-After"]) <= 60, (status, headers)
    assert answer["error"] == "temporarily_unavailable" and "try again in" in answer["error_description"]
    assert headers["Cache-Control"] == "no-store"
    status, _, answer = _ask(server, "someone-else", "s3cret", basic=False)
    assert (status, answer["error"]) == (401, "invalid_client"), "another client id is not held for this one's guesses"


def test_ids_invented_for_each_guess_test_no_secret_and_never_hold_back_the_client(endpoint):
    """An overall count would have let anyone lock the endpoint with fifty requests a minute."""
    server, scheme = endpoint
    statuses = [_ask(server, f"invented-{n}-" + "x" * 3000, "guess", basic=False)[0] for n in range(120)]
    assert statuses == [401] * 120, statuses
    assert _ask(server, "support-agent", "s3cret")[0] == 200
    assert scheme.guesses.wrong == 0


def test_a_held_client_is_heard_again_when_its_window_ends_and_the_right_secret_starts_its_count_again(endpoint):
    from peers.schemes.guesses import Guesses
    server, scheme = endpoint
    now = [1000.0]
    scheme.guesses = Guesses(clock=lambda: now[0])
    assert [_ask(server, "support-agent", "wrong")[0] for _ in range(6)] == [401] * 5 + [429]
    now[0] += 59.5
    assert _ask(server, "support-agent", "s3cret")[0] == 429
    now[0] += 1
    assert _ask(server, "support-agent", "s3cret")[0] == 200
    assert [_ask(server, "support-agent", "wrong")[0] for _ in range(4)] == [401] * 4
    assert _ask(server, "support-agent", "s3cret")[0] == 200
    assert [_ask(server, "support-agent", "wrong")[0] for _ in range(5)] == [401] * 5, "the count began again"
    assert _ask(server, "support-agent", "wrong")[0] == 429


def test_a_basic_header_that_does_not_decode_is_refused_and_holds_no_one_back(endpoint):
    """It names no id, so it guesses no secret."""
    server, _ = endpoint
    headers = {**FORM, "Authorization": "Basic ***not-base64***"}
    statuses = []
    for _ in range(6):
        connection = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=5)
        try:
            connection.request("POST", "/oauth2/token", "grant_type=client_credentials", headers)
            statuses.append(connection.getresponse().status)
        finally:
            connection.close()
    assert statuses == [401] * 6
    assert _ask(server, "support-agent", "s3cret")[0] == 200


def test_guesses_sent_at_once_are_each_counted_before_any_secret_is_compared(endpoint):
    """Asked 'is it held?' and then told 'it was wrong' in two steps, guesses arriving together could each
    pass the first before any was counted: 40 at once, over as many connections."""
    from concurrent.futures import ThreadPoolExecutor
    server, scheme = endpoint
    with ThreadPoolExecutor(40) as pool:
        statuses = list(pool.map(lambda n: _ask(server, "support-agent", f"guess-{n}")[0], range(40)))
    assert sorted(statuses) == [401] * 5 + [429] * 35, statuses
    assert [scheme.guesses.attempt() > 0 for _ in range(3)] == [True] * 3, "held still: a held guess counts nothing"
