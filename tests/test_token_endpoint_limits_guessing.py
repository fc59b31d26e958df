"""The served token endpoint stops hearing its client's id once wrong secrets for it came too often
(RFC 6749 2.3.1: protect a password-checking endpoint against brute force): 429 with Retry-After
(RFC 6585 4) before the secret is looked at. Guesses under ids it does not know test no secret:
they hold no one back, however many. It heard any number of guesses before. Counted per source
address: a guesser at one address no longer locks out the rightful client at another (as a count
per id did), while guesses from all addresses together are still bounded. Real requests to
billing's token endpoint on 127.0.0.1 (and 127.0.0.x, where the platform lets a client bind it)."""
import base64
import http.client
import json
from urllib.parse import urlencode

import pytest

from conftest import ROOT, loopback_source
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


def _ask(server, client_id, secret, basic=True, source=None):
    """One token request (from `source`, a bound address, if given): (status, headers, the JSON answer)."""
    fields = {"grant_type": "client_credentials"}
    headers = dict(FORM)
    if basic:
        headers["Authorization"] = "Basic " + base64.b64encode(f"{client_id}:{secret}".encode()).decode()
    else:
        fields.update(client_id=client_id, client_secret=secret)
    connection = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=5, source_address=source)
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
    assert not scheme.guesses.kept and scheme.guesses.in_all.wrong == 0, "nothing is kept of an id it does not know"


def test_a_held_client_is_heard_again_when_its_window_ends_and_the_right_secret_starts_its_count_again(endpoint):
    from peers.schemes.guesses import Guesses
    server, scheme = endpoint
    now = [1000.0]
    scheme.guesses = Guesses(clock=lambda: now[0], in_all=100)
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
    still = [scheme.guesses.heard("127.0.0.1", pytest.fail)[0] > 0 for _ in range(3)]
    assert still == [True] * 3, "held still: a held guess counts nothing, and is never compared"


def test_a_guesser_at_one_address_does_not_lock_out_the_rightful_client_at_another(endpoint):
    """An id is no secret (RFC 6749 2.2): counted per id alone, five wrong secrets from anywhere kept the
    rightful client out for a minute."""
    server, _ = endpoint
    guesser = loopback_source("127.0.0.2")
    assert [_ask(server, "support-agent", f"guess-{n}", source=guesser)[0] for n in range(6)] == [401] * 5 + [429]
    assert _ask(server, "support-agent", "s3cret", source=guesser)[0] == 429, "the guesser's address is held"
    assert _ask(server, "support-agent", "s3cret")[0] == 200, "the rightful client, at 127.0.0.1, is not"


def test_guesses_from_many_addresses_together_are_still_bounded(endpoint):
    """Ten addresses guessing five each reach the bound on all of them: then every address is held for the
    client, the rightful one too (the price guesses.py names), until the window ends."""
    from peers.schemes.guesses import MOST, MOST_IN_ALL
    server, _ = endpoint
    sources = [loopback_source(f"127.0.0.{n}") for n in range(2, 2 + MOST_IN_ALL // MOST)]
    statuses = [_ask(server, "support-agent", f"guess-{n}", source=source)[0]
                for source in sources for n in range(MOST)]
    assert statuses == [401] * MOST_IN_ALL, statuses
    status, headers, _ = _ask(server, "support-agent", "s3cret", source=loopback_source("127.0.0.99"))
    assert status == 429 and 0 < int(headers["Retry-After"]) <= 60, "a new address is held too"
    assert _ask(server, "support-agent", "s3cret")[0] == 429


def test_an_ipv6_host_is_counted_by_its_64_and_an_ipv4_address_written_in_ipv6_as_itself():
    """A host on IPv6 commonly holds a whole /64: counted per address, it had 2**64 fresh counts."""
    from peers.schemes.guesses import Guesses
    guesses = Guesses(in_all=None)
    wrong = lambda: False  # noqa: E731 - every guess here is wrong
    assert [guesses.heard(f"2001:db8:1:2::{n:x}", wrong)[0] > 0 for n in range(6)] == [False] * 5 + [True]
    assert guesses.heard("2001:db8:1:3::1", wrong) == (0, False), "another /64 is another address"
    assert [guesses.heard("::ffff:127.0.0.2", wrong)[0] for _ in range(5)] == [0] * 5
    assert guesses.heard("127.0.0.2", wrong)[0] > 0 and len(guesses.kept) == 3
