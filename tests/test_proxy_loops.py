"""A loop through proxies (RFC 9110 7.6.3, Via): proxy A forwarding to B, B forwarding back to A, passed one
request round until a worker, a socket or --timeout ran out. Each proxy adds itself to a request's Via and
refuses, with 508 Loop Detected in one line, one whose Via names it already. Real proxies on 127.0.0.1, each
with a deadline; the second is started at the port the first was told to forward to."""
import time

from conftest import free_port
from proxy_helpers import TOKEN, billing_served, proxy_to
from transports.network import HttpTransport

CARD = "/.well-known/agent-card.json"
HEADERS = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json", "A2A-Version": "1.0"}


def forwarded(lines):
    return [line for line in lines.lines if "client -> agent] -->" in line]


def test_two_proxies_forwarding_to_each_other_answer_508_at_once_each_forwarding_the_request_once():
    port = free_port()
    with proxy_to(f"http://127.0.0.1:{port}", timeout=5) as (a, a_lines), \
            proxy_to(a, port=port, timeout=5) as (_, b_lines):
        started = time.monotonic()
        answer = HttpTransport(timeout=8).get(a + CARD, {})
        took = time.monotonic() - started
    refused = [line for line in a_lines.lines + b_lines.lines if "Loop Detected" in line]
    assert answer.status == 508 and took < 2, (answer.status, f"{took:.1f} s", answer.body[:200])
    assert len(forwarded(a_lines)) == 1 and len(forwarded(b_lines)) == 1, a_lines.text()[-2000:]
    assert len(refused) == 1 and refused[0] in a_lines.lines and "its Via names this proxy" in refused[0], refused
    assert b"loop" in answer.body.lower() and answer.header("Via") is not None


def test_a_request_whose_via_names_this_proxy_already_is_answered_508_and_never_forwarded():
    """However it came round (through proxies of others, or by a name for itself the proxy could not tell apart
    at start: upstream.leads_back only warns of one no resolver answered for in time)."""
    with proxy_to(f"http://127.0.0.1:{free_port()}", timeout=5) as (a, a_lines):
        mine = a_lines.app.pseudonym
        answer = HttpTransport(timeout=8).get(a + CARD, {"Via": f"1.0 elsewhere, 1.1 {mine} (seen before)"})
        other = HttpTransport(timeout=8).get(a + CARD, {"Via": f"1.1 {mine}-not, 1.1 x{mine}"})
    assert answer.status == 508 and len(forwarded(a_lines)) == 1, a_lines.text()  # the one forwarded: `other`
    assert other.status == 502, other.status  # forwarded to a port nothing listens on: a name like it is another


def test_a_chain_of_two_proxies_to_the_agent_is_no_loop_and_the_agent_sees_both_in_its_via():
    """Two proxies in one process are two: each names itself apart, so a chain is never taken for a loop."""
    seen = []
    with billing_served(seen=seen) as agent, proxy_to(agent, timeout=5) as (b, b_lines), \
            proxy_to(b, timeout=5) as (a, a_lines):
        answer = HttpTransport(timeout=8).get(a + CARD, {"Via": "1.1 client-side-gateway"})
    via = seen[0].header("Via")
    assert answer.status == 200 and "Loop Detected" not in a_lines.text() + b_lines.text()
    assert via == f"1.1 client-side-gateway, 1.1 {a_lines.app.pseudonym}, 1.1 {b_lines.app.pseudonym}", via
    assert answer.header("Via").endswith(f"1.1 {a_lines.app.pseudonym}"), answer.headers


def test_a_clients_long_via_is_bounded_by_the_head_the_server_reads_and_answered_not_hung():
    """A Via of thousands of entries is looked through once; one past the server's head limit is 431, as any header."""
    from transports.http11 import MAX_HEAD
    seen = []
    entries = ", ".join(f"1.1 gateway-{n}" for n in range(800))  # about 13 KiB, under MAX_HEAD
    with billing_served(seen=seen) as agent, proxy_to(agent, timeout=5) as (a, a_lines):
        started = time.monotonic()
        many = HttpTransport(timeout=8).post(a + "/a2a", b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", '
                                             b'"params": {"id": "t"}}', {**HEADERS, "Via": entries})
        too_long = HttpTransport(timeout=8).get(a + CARD, {"Via": "1.1 x, " * (MAX_HEAD // 7)})
        took = time.monotonic() - started
    assert many.status == 200 and seen[0].header("Via") == f"{entries}, 1.1 {a_lines.app.pseudonym}"
    assert too_long.status == 431 and took < 3 and len(seen) == 1, (too_long.status, f"{took:.1f} s")
