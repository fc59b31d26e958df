"""The served token endpoint stops hearing a client id that guessed wrong secrets too often
(RFC 6749 2.3.1: protect a password-checking endpoint against brute force): 429 with
Retry-After (RFC 6585 4) before the secret is looked at, per client id and over all of
them, its memory bounded however many ids an attacker invents. It heard any number of
guesses before. Real requests to billing's token endpoint on 127.0.0.1."""
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


def test_an_attacker_inventing_a_client_id_for_each_guess_is_held_by_the_count_over_all_in_bounded_memory(endpoint):
    server, scheme = endpoint
    statuses = [_ask(server, f"invented-{n}-" + "x" * 3000, "guess", basic=False)[0] for n in range(120)]
    assert statuses == [401] * 50 + [429] * 70, statuses
    assert _ask(server, "support-agent", "s3cret")[0] == 429, "no guess is heard, the right one neither"
    assert len(scheme.guesses.failures) <= 100 and {len(key) for key in scheme.guesses.failures} == {32}


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


def test_a_client_id_no_basic_header_could_carry_is_counted_as_one_caller_and_held(endpoint):
    """A Basic credential that does not decode names no id: its guesses count all the same."""
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
    assert statuses == [401] * 5 + [429]


def test_ids_invented_for_an_hour_never_keep_more_than_twice_the_overall_count_in_memory():
    """Each id's window opens at its first failure, so ids from the window before are still
    held when the count over all begins again: the table is bounded all the same."""
    from peers.schemes.guesses import OVERALL, Guesses
    now = [0.0]
    guesses, largest, heard = Guesses(clock=lambda: now[0]), 0, 0
    for n in range(36_000):  # one invented id every tenth of a second, as the endpoint asks
        now[0] = n / 10
        client_id = f"invented-{n}".encode()
        if not guesses.wait(client_id):
            guesses.failed(client_id)
            heard += 1
        largest = max(largest, len(guesses.failures))
    assert largest <= 2 * OVERALL and heard <= OVERALL * 61, (largest, heard)
