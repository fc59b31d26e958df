"""proxy and TLS (issue 34, item 7): an https agent's certificate is checked (--ca); the proxy
serves https with the DEMO certificate; mutual TLS ends at the proxy, which presents its own
client certificate (--client-cert) and says so. All on 127.0.0.1 with the DEMO certificates."""
import json
import ssl

import pytest

from conftest import ROOT, cli
from proxy_helpers import billing_served, proxy_to
from test_proxy_faults import HEADERS, refund
from transports import tls
from transports.network import HttpTransport

KEYS = ROOT / "peers/keys"
CA, CERT, KEY = (str(KEYS / name) for name in ("demo-ca.DEMO-CERT.pem", "billing-agent.DEMO-TLS-CERT.pem",
                                                "billing-agent.DEMO-TLS-KEY.pem"))
CLIENT_CERT, CLIENT_KEY = (str(KEYS / f"support-agent.DEMO-CLIENT-{part}.pem") for part in ("CERT", "KEY"))


def trusting_the_demo_ca():
    return HttpTransport(timeout=5, tls=ssl.create_default_context(cafile=CA))


def test_https_on_both_sides_the_agent_checked_against_the_ca_and_the_card_moved_to_the_proxy():
    with billing_served(tls=tls.server_context(CERT, KEY)) as agent, \
            proxy_to(agent, ca=CA, tls=True) as (proxy, lines):
        client = trusting_the_demo_ca()
        card = json.loads(client.get(proxy + "/.well-known/agent-card.json", {}).body)
        answer = client.post(proxy + "/a2a", refund(1), HEADERS)
    assert proxy.startswith("https://127.0.0.1:") and agent.startswith("https://")
    assert all(interface["url"].startswith(proxy) for interface in card["supportedInterfaces"])
    assert answer.status == 200 and "TASK_STATE_COMPLETED" in lines.text()


def test_an_agent_whose_certificate_no_trusted_ca_issued_is_a_finding_and_a_502():
    with billing_served(tls=tls.server_context(CERT, KEY)) as agent, proxy_to(agent) as (proxy, lines):
        answer = HttpTransport(timeout=5).post(proxy + "/a2a", refund(1), HEADERS)
    assert answer.status == 502 and "certificate" in lines.text() and "[proxy] finding: request 1" in lines.text()


def test_mutual_tls_ends_at_the_proxy_which_presents_its_own_certificate():
    seen = []
    with billing_served(seen=seen, tls=tls.server_context(CERT, KEY, CA)) as agent, \
            proxy_to(agent, ca=CA, client_cert=CLIENT_CERT, client_key=CLIENT_KEY) as (proxy, _):
        assert HttpTransport(timeout=5).post(proxy + "/a2a", refund(1), HEADERS).status == 200
    assert "CN=support-agent" in seen[0].client_certificate  # the agent saw the proxy's certificate


@pytest.mark.parametrize("flags, why", [
    (["--to", "http://127.0.0.1:9", "--ca", CA], "are for an https agent"),
    (["--to", "https://127.0.0.1:9", "--client-cert", CLIENT_CERT], "go together"),
    (["--to", "https://127.0.0.1:9", "--ca", KEY], "--ca"),
    (["--to", "http://127.0.0.1:9", "--tls-cert", CA, "--tls-key", CA], "--tls: cannot use"),
])
def test_a_tls_flag_that_cannot_be_used_is_one_line_before_listening(flags, why):
    done = cli("proxy", *flags)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and why in done.stderr, done.stderr


def test_the_banner_says_mutual_tls_ends_at_the_proxy():
    from types import SimpleNamespace
    from peers.support.proxy.tls import banner
    settings = SimpleNamespace(to="https://127.0.0.1:9", ca=CA, tls=True, tls_cert=None, client_cert=CLIENT_CERT)
    said = banner(settings)
    assert said[-1] == ("[proxy] mutual TLS ends at the proxy: the agent is shown the proxy's client certificate "
                        "(support-agent.DEMO-CLIENT-CERT.pem), never the client's") and len(said) == 3
