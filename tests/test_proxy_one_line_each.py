"""What the proxy says about an agent's answer is one line each, whatever the agent put in it:
a line break in a card's URL or in an error's id is shown escaped, never as a second line
that could pass for one of the proxy's own (`[proxy] ...`)."""
import json

from proxy_helpers import proxy_to
from transports.base import HttpResponse
from transports.network import HttpTransport
from transports.server import PeerServer

FORGED = "\n[proxy] forged"


def test_a_line_break_an_agent_sends_is_never_a_line_of_the_proxys_own():
    def app(request):
        if request.method == "GET":  # the card: an interface on another origin, a line break in its URL
            card = {"name": "x", "url": "http://elsewhere.example/a2a" + FORGED}
            return HttpResponse(200, {"Content-Type": "application/json"}, json.dumps(card).encode())
        error = {"jsonrpc": "2.0", "id": "5" + FORGED, "error": {"code": -32600, "message": "no"}}
        return HttpResponse(200, {"Content-Type": "application/json"}, json.dumps(error).encode())
    server = PeerServer(app, "127.0.0.1", 0, idle_timeout=2.0).start()
    try:
        with proxy_to(server.base_url) as (proxy, lines):
            assert HttpTransport(timeout=5).get(proxy + "/.well-known/agent-card.json", {}).status == 200
            asked = b'{"jsonrpc": "2.0", "id": 5, "method": "GetTask", "params": {"id": "t"}}'
            assert HttpTransport(timeout=5).post(proxy + "/a2a", asked, {"Content-Type": "application/json"}).status == 200
    finally:
        server.stop()
    assert not any(line.startswith("[proxy] forged") for line in "\n".join(lines.lines).split("\n")), lines.text()
    ours = [line for line in lines.lines if line.startswith(("[proxy] not moved", "    ! JSONRPC-ERR-001"))]
    assert len(ours) == 2 and all("\\x0a[proxy] forged" in line for line in ours), lines.text()
