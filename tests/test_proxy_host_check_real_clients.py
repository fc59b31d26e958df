"""The proxy's Host rule (peers/support/proxy/forward.py `from_a_page`) as real clients meet it.

1. curl, Python's http.client, Node's fetch and every HTTP library leave the port out of
   Host when it is the scheme's default (RFC 9110 7.2): a proxy serving on `--port 80`
   (or `--tls --port 443`) is asked for "127.0.0.1" or "localhost", its own address, and
   refused every request with 421, its line saying "refused a request for Host 127.0.0.1:
   this proxy answers at 127.0.0.1".
2. The rule stops a rebound name; a web page needs none to act through the proxy: its
   cross-site POST to http://127.0.0.1:PORT names the proxy's own Host, and is forwarded
   with the proxy's --client-cert (the agent sees it; only an agent checking Content-Type
   refuses it, as billing does, and the proxy stands in front of any agent). The browser
   says so in Origin and Sec-Fetch-Site, which no page can take off.

Review findings: real servers on 127.0.0.1 (the proxy on port 80 only where it may bind it);
the DEMO certificates; no mocks of the project's code."""
import socket

import pytest

from peers.support.proxy.forward import from_a_page
from proxy_helpers import billing_served, proxy_to
from test_proxy_host_check import exchange, sent_through_an_mtls_proxy


@pytest.mark.parametrize("host, base", [("127.0.0.1", "http://127.0.0.1:80"), ("localhost", "http://127.0.0.1:80"),
                                        ("127.0.0.1", "https://127.0.0.1:443"), ("LOCALHOST", "https://127.0.0.1:443")])
def test_the_proxys_own_address_at_the_schemes_default_port_is_its_own(host, base):
    from transports.base import request
    asked = request("GET", base + "/", {"Host": host})
    assert from_a_page(asked, ()) is None, f"Host {host} (port left out, as every client does) refused at {base}"


def test_a_proxy_on_port_80_answers_a_client_naming_it_as_clients_do():
    probe = socket.socket()
    try:
        probe.bind(("127.0.0.1", 80))
    except OSError as exc:
        pytest.skip(f"port 80 cannot be bound here ({exc.strerror})")
    finally:
        probe.close()
    import http.client
    with billing_served() as agent, proxy_to(agent, port=80) as (proxy, lines):
        assert proxy == "http://127.0.0.1:80", proxy
        asking = http.client.HTTPConnection("127.0.0.1", 80, timeout=5)  # sends "Host: 127.0.0.1"
        try:
            asking.request("GET", "/.well-known/agent-card.json")
            answer = asking.getresponse()
            status = answer.status
            answer.read()
        finally:
            asking.close()
    assert status == 200, (status, lines.text())


def test_a_cross_site_page_posting_to_the_proxys_own_address_is_not_forwarded_as_its_client_certificate():
    # What a browser sends for a page's fetch(url, {method: "POST", mode: "no-cors", body}) from elsewhere
    _, done = sent_through_an_mtls_proxy("ORD-CSRF", "Host: 127.0.0.1:{port}", "Origin: https://pages.attacker.example",
                                         "Sec-Fetch-Site: cross-site", "Sec-Fetch-Mode: no-cors",
                                         content_type="text/plain;charset=UTF-8")
    assert not any("message:send" in url for url in done), "a cross-site page's POST reached the agent through the proxy"


@pytest.mark.parametrize("origin, refused", [("https://pages.attacker.example", True), ("null", True),
                                             ("http://127.0.0.1.attacker.example", True),
                                             ("http://localhost:3000", False), ("http://127.0.0.1:8080", False),
                                             ("https://billing.acme.example", False)])
def test_an_origin_at_none_of_the_proxys_names_is_a_pages_and_refused(origin, refused):
    """A web UI of the person's own on this machine (localhost:3000) may call the proxy; a page elsewhere, or a
    sandboxed one (Origin null), may not; an --allow-host name is the proxy's too."""
    from transports.base import request
    asked = request("POST", "http://127.0.0.1:5000/a2a", {"Host": "127.0.0.1:5000", "Origin": origin})
    assert (from_a_page(asked, ("billing.acme.example",)) is not None) is refused, origin
    with billing_served() as agent, proxy_to(agent) as (proxy, lines):
        port = int(proxy.rsplit(":", 1)[1])
        answer = exchange(port, (f"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                                 f"Origin: {origin}\r\nConnection: close\r\n\r\n").encode())
    assert answer.startswith(b"HTTP/1.1 403 " if refused or "billing" in origin else b"HTTP/1.1 200 "), answer[:80]
