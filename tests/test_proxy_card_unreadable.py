"""A card the proxy cannot read (not UTF-8, a key twice, over the JSON limits) is served as the
agent sent it, and said once as a finding: its interfaces were not moved, so a client that
follows them leaves the proxy. Before, it was passed on without a word."""
import pytest

from proxy_helpers import proxy_to
from transports.base import HttpResponse
from transports.network import HttpTransport
from transports.server import PeerServer

CARD = "/.well-known/agent-card.json"
UNREADABLE = {
    "not UTF-8": (b'{"name": "\xff"}', "not UTF-8"),
    "a key twice": (b'{"name": "x", "url": "http://127.0.0.1:1/a2a", "url": "http://elsewhere.example/"}',
                    "duplicate key 'url'"),
    "10,000 interfaces": (b'{"name": "x", "supportedInterfaces": [' + b", ".join(
        b'{"url": "http://127.0.0.1:1/a2a"}' for _ in range(10_000)) + b"]}", "more than 10000 arrays and objects"),
    "nested deep": (b'{"name": "x", "a": ' + b"[" * 40 + b"]" * 40 + b"}", "nested deeper than 32 levels"),
    "not an object": (b'["http://127.0.0.1:1/a2a"]', "not a JSON object"),
}


@pytest.mark.parametrize("name", list(UNREADABLE))
def test_a_card_the_proxy_cannot_read_is_passed_on_unchanged_and_said_once(name):
    body, why = UNREADABLE[name]
    agent = PeerServer(lambda request: HttpResponse(200, {"Content-Type": "application/json"}, body),
                       "127.0.0.1", 0, idle_timeout=2.0).start()
    try:
        with proxy_to(agent.base_url) as (proxy, lines):
            answers = [HttpTransport(timeout=5, max_body=2 << 20).get(proxy + CARD, {}) for _ in range(2)]
    finally:
        agent.stop()
    assert [(answer.status, answer.body) for answer in answers] == [(200, body)] * 2
    said = [line for line in lines.lines if line.startswith("[proxy] finding: the card cannot be read")]
    assert len(said) == 1 and f"({why})" in said[0] and "bypasses the proxy" in said[0], lines.text()
