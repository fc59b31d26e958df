"""The card as the proxy serves it, whatever the agent put in it: thousands of interfaces are
moved in one pass and said in a few lines; a URL elsewhere in the card that happens to equal
an interface's (a documentationUrl) is left as the agent wrote it, as the diff says; a card
that grows past the size limit once moved is still served, moved, never a 500."""
import json

from proxy_helpers import proxy_to
from transports.base import HttpResponse
from transports.network import HttpTransport
from transports.server import PeerServer

CARD = "/.well-known/agent-card.json"
MANY = 9990  # interfaces: within the JSON limit of 10,000 arrays and objects


def served_through_proxy(make_card, to=None):
    """(the card as the client gets it through the proxy, the proxy's lines, the agent's base URL)."""
    server = PeerServer(None, "127.0.0.1", 0, idle_timeout=2.0)
    server.app = lambda request: HttpResponse(200, {"Content-Type": "application/json"}, make_card(to or server.base_url))
    server.start()
    try:
        with proxy_to(to or server.base_url, timeout=10.0) as (proxy, lines):
            answer = HttpTransport(timeout=10, max_body=4 << 20).get(proxy + CARD, {})
    finally:
        server.stop()
    assert answer.status == 200, answer.body[:200]
    return json.loads(answer.body), lines, proxy


def test_thousands_of_interfaces_are_all_moved_and_said_in_a_few_lines():
    def card(base):
        return json.dumps({"name": "many", "supportedInterfaces": [{"url": f"{base}/a2a/{n}"} for n in range(MANY)]
                           + [{"url": f"http://elsewhere{n}.example/a2a"} for n in range(3)]}).encode()
    got, lines, proxy = served_through_proxy(card)
    urls = [entry["url"] for entry in got["supportedInterfaces"]]
    assert urls[:MANY] == [f"{proxy}/a2a/{n}" for n in range(MANY)]
    assert len(lines.lines) < 30 and max(map(len, lines.lines)) < 1000, len(lines.lines)
    assert f"... and {MANY - 10} more interface URL(s) moved" in lines.text()


def test_a_card_with_thousands_of_interfaces_elsewhere_is_one_short_line():
    def card(base):
        return json.dumps({"name": "far", "supportedInterfaces": [
            {"url": f"http://elsewhere{n}.example/a2a"} for n in range(MANY)]}).encode()
    _, lines, _ = served_through_proxy(card)
    said = [line for line in lines.lines if line.startswith("[proxy] not moved")]
    assert len(said) == 1 and len(said[0]) < 2000 and f"... and {MANY - 10} more" in said[0]


def test_only_the_interface_urls_change_not_an_equal_string_elsewhere():
    def card(base):
        return json.dumps({"name": "x", "url": base + "/a2a", "documentationUrl": base + "/a2a",
                           "provider": {"organization": "o", "url": base + "/a2a"}}).encode()
    got, lines, proxy = served_through_proxy(card)
    agent = lines.lines[0].split(" GET ")[1].split(CARD)[0]
    assert got["url"] == proxy + "/a2a"
    assert got["documentationUrl"] == got["provider"]["url"] == agent + "/a2a"  # as the diff says: only url moved
    assert [line[4:].split(":")[0] for line in lines.lines if line.startswith("  + ")] == ["url"]


def test_a_card_grown_past_the_size_limit_by_its_move_is_still_served_moved():
    def card(base):  # an agent reached by a short name (127.1), the proxy by a longer one: each URL grows
        document = {"name": "big", "pad": "", "supportedInterfaces": [{"url": f"{base}/{n}"} for n in range(5000)]}
        document["pad"] = "p" * ((1 << 20) - 200 - len(json.dumps(document)))
        return json.dumps(document).encode()
    agent = PeerServer(None, "127.0.0.1", 0, idle_timeout=2.0)
    agent.app = lambda request: HttpResponse(200, {"Content-Type": "application/json"},
                                             card(agent.base_url.replace("127.0.0.1", "127.1")))
    agent.start()
    try:
        with proxy_to(agent.base_url.replace("127.0.0.1", "127.1"), timeout=10.0) as (proxy, lines):
            answer = HttpTransport(timeout=10, max_body=4 << 20).get(proxy + CARD, {})
    finally:
        agent.stop()
    assert answer.status == 200, lines.text()  # was a 500: the moved card was over the limit we read it back with
    assert json.loads(answer.body)["supportedInterfaces"][4999]["url"] == proxy + "/4999"


def test_an_interface_on_the_agents_port_by_the_other_loopback_name_is_moved_too():
    """A peer told `localhost` lists localhost:PORT; --to says 127.0.0.1:PORT (or back): the same
    agent, so a client reading the card through the proxy stays on it. [::1] is another address."""
    def card(base):
        port = base.rsplit(":", 1)[1]
        return json.dumps({"name": "x", "supportedInterfaces": [
            {"url": f"http://localhost:{port}/a2a"}, {"url": f"http://LocalHost:{port}/rest"},
            {"url": f"http://[::1]:{port}/a2a"}, {"url": "http://localhost:1/a2a"}]}).encode()
    got, lines, proxy = served_through_proxy(card)
    urls = [entry["url"] for entry in got["supportedInterfaces"]]
    assert urls[:2] == [proxy + "/a2a", proxy + "/rest"], lines.text()
    assert urls[2].startswith("http://[::1]:") and urls[3] == "http://localhost:1/a2a"
    said = [line for line in lines.lines if line.startswith("[proxy] not moved")]
    assert len(said) == 1 and "[::1]" in said[0] and "localhost:1/" in said[0], lines.text()
