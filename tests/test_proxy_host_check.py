"""The proxy on 127.0.0.1 answers only requests addressed to it (hostile-tester finding, round 52).

`proxy --client-cert` ends mutual TLS at the proxy: every request it forwards is made as the
proxy's client certificate. A web page the person has open elsewhere can reach 127.0.0.1 by DNS
rebinding (its own name, answered with 127.0.0.1): the browser then sends the page's requests
to the proxy with the page's own name in Host and Origin, and reads the answers. The live page's
server refuses such a request (421: peers/support/web/server.py `door`); the proxy forwarded it,
so the rebound page issued a refund as the support agent's certificate. A careful proxy answers
only a Host naming itself (127.0.0.1 or localhost at its port), as the live page does.
All on 127.0.0.1 with the DEMO certificates; no mocks of the project's code.
"""
import json
import socket
import time

from conftest import ROOT
from peers import billing
from peers.a2a import wire_v10
from peers.app import PeerApp
from peers.schemes.mutual_tls import MutualTls
from proxy_helpers import proxy_to
from transports import tls
from transports.server import PeerServer

KEYS = ROOT / "peers/keys"
CA, CERT, KEY = (str(KEYS / name) for name in ("demo-ca.DEMO-CERT.pem", "billing-agent.DEMO-TLS-CERT.pem",
                                                "billing-agent.DEMO-TLS-KEY.pem"))
CLIENT_CERT, CLIENT_KEY = (str(KEYS / f"support-agent.DEMO-CLIENT-{part}.pem") for part in ("CERT", "KEY"))
REBOUND = "rebound.attacker.example"  # a name the attacker's DNS answers with 127.0.0.1


def exchange(port, data, timeout=5.0):
    """One request on a fresh connection (Connection: close): the whole answer, bounded in time."""
    deadline, answer = time.monotonic() + timeout, b""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        while time.monotonic() < deadline:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
    return answer


def sent_through_an_mtls_proxy(order, *lines, content_type="application/json"):
    """A refund of `order` POSTed to a proxy that presents the support agent's client certificate to billing
    (mutual TLS), with the head's `lines` ({port}: the proxy's): (what came back, the URLs billing was asked)."""
    done = []
    server = PeerServer(None, "127.0.0.1", 0, idle_timeout=2.0, tls=tls.server_context(CERT, KEY, CA))
    app = PeerApp(billing.billing_agent(server.base_url), wire_v10, scheme=MutualTls("billing-agent"),
                  log=lambda line: None)
    server.app = lambda request: done.append(request.url) or app(request)
    server.start()
    try:
        with proxy_to(server.base_url, ca=CA, client_cert=CLIENT_CERT, client_key=CLIENT_KEY) as (proxy, _):
            port = int(proxy.rsplit(":", 1)[1])
            body = json.dumps({"message": {"messageId": order.lower(), "role": "ROLE_USER",
                                           "parts": [{"data": {"order_id": order, "amount": 4999}}]}}).encode()
            head = "".join(line.format(port=port) + "\r\n" for line in lines)
            answer = exchange(port, (f"POST /a2a/message:send HTTP/1.1\r\n{head}Content-Type: {content_type}\r\n"
                                     f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode() + body)
    finally:
        server.stop()
    return answer, done


def test_a_request_naming_another_host_is_not_forwarded_with_the_proxys_client_certificate():
    # What a browser sends for a rebound page's fetch(): its own name in Host and Origin.
    answer, done = sent_through_an_mtls_proxy("ORD-REBOUND", f"Host: {REBOUND}:{{port}}", f"Origin: http://{REBOUND}:{{port}}",
                                              "A2A-Version: 1.0")
    status = int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else None
    assert b"ORD-REBOUND" not in answer and not any("message:send" in url for url in done), (
        "a request for another Host went to the agent as the proxy's client certificate: "
        f"{answer[:200]!r}")
    assert status in (400, 403, 421), answer[:200]


def test_a_read_naming_another_host_is_refused_unless_allow_host_names_it():
    """A rebound page's same-origin GET carries no Origin, and over plain http to a name no Sec-Fetch-*
    header either: only its Host tells it apart, so only the proxy's own address, and the names
    --allow-host gives (a program put behind the proxy by an /etc/hosts line, as the lessons' runs
    through proxies are: test_proxy_lessons.py), are answered."""
    from proxy_helpers import billing_served
    with billing_served() as agent, proxy_to(agent, allow_host=("billing.acme.example",)) as (proxy, lines):
        port = int(proxy.rsplit(":", 1)[1])

        def get(host):
            return exchange(port, (f"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: {host}\r\n"
                                   "Connection: close\r\n\r\n").encode())
        for host in (f"{REBOUND}:{port}", REBOUND, "[::1]:80", "billing.acme.example.evil", "127.0.0.1.evil.example"):
            assert get(host).startswith(b"HTTP/1.1 421 "), host
        for host in (f"127.0.0.1:{port}", f"LOCALHOST:{port}", "127.0.0.1", f"127.0.0.1:{port + 1}",  # (a forwarded port)
                     "billing.acme.example", f"Billing.Acme.Example.:{port}"):
            assert get(host).startswith(b"HTTP/1.1 200 "), host
    assert lines.text().count(f"refused a request naming Host {REBOUND}") == 2, lines.text()
