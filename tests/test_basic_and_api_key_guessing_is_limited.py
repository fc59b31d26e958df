"""A served peer's A2A endpoint stops hearing wrong Basic passwords for its user, and wrong API keys,
from an address once they came too often (RFC 6749 2.3.1's brute-force protection, OWASP's for any
login): 429 with Retry-After (RFC 6585 4) in the binding's own error body, before the credential is
looked at, as the token endpoint does (test_token_endpoint_limits_guessing.py). It heard any number of
guesses before. Basic guesses under a user the peer does not know test no password, yet count at their
address (a 429 there must not say the name was right), never toward the user's count from all addresses.
Counted per source address, at most KEPT of them. Real requests to billing on 127.0.0.1
(and 127.0.0.x, where the platform lets a client bind it)."""
import base64
import http.client
import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import loopback_source
from peers import billing
from peers.a2a import wire_v10
from peers.app import PeerApp
from peers.schemes.guesses import MOST, Guesses
from peers.serving import scheme_for
from transports.server import PeerServer

SECRETS = {"apikey": "k3y-42", "basic": "support-agent:pa55"}
REFUND = {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"data": {"order_id": "ORD-1", "amount": 5}}]}}
FRAME = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": REFUND}).encode()


@pytest.fixture
def served():
    servers = []

    def start(kind):
        server = PeerServer(None, "127.0.0.1", 0, idle_timeout=2.0)
        peer = billing.billing_agent(server.base_url)
        scheme = scheme_for(kind, SECRETS[kind], server.base_url, peer, None, pytest.fail)[0]
        server.app = PeerApp(peer, wire_v10, scheme=scheme, log=lambda line: None)
        server.start()
        servers.append(server)
        return server, scheme
    yield start
    for server in servers:
        server.stop()


def _call(server, credential, rest=False, source=None):
    """SendMessage with `credential` (headers), over JSON-RPC or HTTP+JSON: (status, headers, the JSON answer)."""
    path, body = ("/a2a/message:send", json.dumps(REFUND).encode()) if rest else ("/a2a", FRAME)
    connection = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=10, source_address=source)
    try:
        connection.request("POST", path, body, {"Content-Type": "application/json", "A2A-Version": "1.0", **credential})
        answer = connection.getresponse()
        return answer.status, dict(answer.getheaders()), json.loads(answer.read())
    finally:
        connection.close()


def _basic(pair):
    return {"Authorization": "Basic " + base64.b64encode(pair.encode()).decode()}


def _key(key):
    return {"X-API-Key": key}


def test_five_wrong_basic_passwords_for_the_known_user_are_followed_by_429_with_retry_after_even_for_the_right_one(served):
    server, _ = served("basic")
    assert [_call(server, _basic(f"support-agent:guess-{n}"))[0] for n in range(MOST)] == [401] * MOST
    status, headers, answer = _call(server, _basic("support-agent:pa55"))
    assert status == 429 and 0 < int(headers["Retry-After"]) <= 60, (status, headers)
    assert answer["id"] is None and answer["error"]["code"] == -32041, "refused as a credential is, before the frame is read"
    assert "too many wrong credentials" in answer["error"]["message"] and "try again in" in answer["error"]["message"]
    assert "WWW-Authenticate" not in headers, "no credential is asked for now: none would be looked at"


def test_the_http_json_binding_answers_a_held_address_with_the_same_429_in_its_own_error_body(served):
    server, _ = served("basic")
    assert [_call(server, _basic(f"support-agent:guess-{n}"), rest=True)[0] for n in range(MOST)] == [401] * MOST
    status, headers, answer = _call(server, _basic("support-agent:pa55"), rest=True)
    assert status == 429 and 0 < int(headers["Retry-After"]) <= 60, (status, headers)
    assert (answer["error"]["code"], answer["error"]["status"]) == (429, "RESOURCE_EXHAUSTED"), answer
    assert _call(server, _basic("support-agent:pa55"))[0] == 429, "one count for both bindings"


def test_a_basic_guessers_statuses_do_not_say_whether_the_user_name_it_guessed_under_is_right(served):
    """Counted under the peer's user alone, five wrong passwords and then 429 told a guesser the name was right,
    and 401 without end that it was not: the statuses said which half of the credential was wrong, which the
    comparison of both halves, each always and in constant time, keeps from the time taken."""
    said = {}
    for user in ("support-agent", "someone-else"):
        server, _ = served("basic")
        said[user] = [_call(server, _basic(f"{user}:guess-{n}"))[0] for n in range(MOST + 1)]
    assert said["support-agent"] == said["someone-else"] == [401] * MOST + [429], said


def test_basic_guesses_under_user_names_the_peer_does_not_know_hold_back_their_own_address_alone(served):
    """Counted at the address they came from, as any wrong password is; never toward the user's count from all
    addresses, so no one locks the user out by inventing names; and of them only the address is kept."""
    server, scheme = served("basic")
    guesser = loopback_source("127.0.0.2")
    statuses = [_call(server, _basic(f"invented-{n}-{'x' * 500}:guess"), source=guesser)[0] for n in range(60)]
    assert statuses == [401] * MOST + [429] * (60 - MOST), statuses
    assert list(scheme.guesses.kept) == ["127.0.0.2"] and scheme.guesses.in_all.wrong == 0, "an address, no name"
    assert _call(server, _basic("support-agent:pa55"))[0] == 200


def test_the_right_basic_password_starts_its_addresses_count_again(served):
    server, _ = served("basic")
    assert [_call(server, _basic("support-agent:wrong"))[0] for _ in range(MOST - 1)] == [401] * (MOST - 1)
    assert _call(server, _basic("support-agent:pa55"))[0] == 200
    assert [_call(server, _basic("support-agent:wrong"))[0] for _ in range(MOST + 1)] == [401] * MOST + [429]


@pytest.mark.parametrize("kind, wrong", [("basic", lambda n: _basic(f"support-agent:guess-{n}")),
                                         ("apikey", lambda n: _key(f"guess-{n}"))])
def test_guesses_sent_at_once_are_held_after_exactly_five_were_compared(served, kind, wrong):
    """Asked 'is it held?' and told 'it was wrong' in two steps, guesses arriving together could each pass
    the first before any was counted: 40 at once, over as many connections."""
    server, scheme = served(kind)
    with ThreadPoolExecutor(40) as pool:
        statuses = list(pool.map(lambda n: _call(server, wrong(n))[0], range(40)))
    assert sorted(statuses) == [401] * MOST + [429] * (40 - MOST), statuses
    assert scheme.guesses.heard("127.0.0.1", pytest.fail)[0] > 0, "held still, and a held guess is never compared"


def test_right_api_keys_sent_at_once_never_hold_each_other_back(served):
    server, _ = served("apikey")
    with ThreadPoolExecutor(20) as pool:
        statuses = list(pool.map(lambda n: _call(server, _key("k3y-42"))[0], range(20)))
    assert statuses == [200] * 20, statuses


def test_an_api_key_guesser_at_one_address_does_not_hold_back_the_keys_holder_at_another(served):
    """A key names no one, so its guesses are counted by address alone: one guesser cannot lock out the holder."""
    server, _ = served("apikey")
    guesser = loopback_source("127.0.0.2")
    assert [_call(server, _key(f"guess-{n}"), source=guesser)[0] for n in range(MOST + 1)] == [401] * MOST + [429]
    assert _call(server, _key("k3y-42"), source=guesser)[0] == 429
    assert _call(server, _key("k3y-42"))[0] == 200


def test_the_addresses_kept_are_bounded_and_the_one_heard_from_longest_ago_is_forgotten_first(served):
    server, scheme = served("apikey")
    scheme.guesses = Guesses(in_all=None, kept=3)
    first, *others = [loopback_source(f"127.0.0.{n}") for n in range(2, 6)]
    assert [_call(server, _key("wrong"), source=first)[0] for _ in range(MOST + 1)] == [401] * MOST + [429]
    for source in others:
        assert _call(server, _key("wrong"), source=source)[0] == 401
    assert list(scheme.guesses.kept) == ["127.0.0.3", "127.0.0.4", "127.0.0.5"]
    assert _call(server, _key("k3y-42"), source=first)[0] == 200, "forgotten: its count began again"
