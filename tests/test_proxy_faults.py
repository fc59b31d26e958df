"""proxy --fault (issue 34, item 5): each fault acts on the frame it names, says so in one line,
and the same --seed names the same frame every time. Real frames through the proxy to the
real billing app on 127.0.0.1."""
import json
import socket
import time

import pytest

from peers.support.proxy.faults import Faults, parse
from proxy_helpers import TOKEN, billing_served, proxy_to
from transports.base import ClientRequest
from transports.errors import TransportError
from transports.network import HttpTransport

HEADERS = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json", "A2A-Version": "1.0"}


def refund(order, method="SendMessage"):
    return json.dumps({"jsonrpc": "2.0", "id": order, "method": method, "params": {"message": {
        "messageId": f"m-{order}", "role": "ROLE_USER", "parts": [{"data": {"order_id": f"ORD-{order}", "amount": 5.0},
                                                                   "mediaType": "application/json"}],
        "metadata": {"skillId": "process_refund"}}}}).encode()


def refunds_made(seen):
    return [json.loads(r.body)["params"]["message"]["messageId"] for r in seen if r.body]


def test_drop_response_lets_the_agent_act_and_the_client_hear_nothing():
    seen = []
    with billing_served(seen=seen) as agent, proxy_to(agent, "drop-response:2") as (proxy, lines):
        client = HttpTransport(timeout=5)
        assert client.post(proxy + "/a2a", refund(1), HEADERS).status == 200
        with pytest.raises(TransportError, match="connection broke|peer closed") as lost:
            client.post(proxy + "/a2a", refund(2), HEADERS)
        assert lost.value.sent  # the request arrived: a retry could refund twice
        assert client.post(proxy + "/a2a", refund(3), HEADERS).status == 200
    assert refunds_made(seen) == ["m-1", "m-2", "m-3"]  # the agent made the second refund all the same
    assert "[fault] drop-response:2: the agent answered request 2 (200); the client's connection was closed" \
        in lines.text()


def test_twice_delivers_one_request_two_times_upstream():
    seen = []
    with billing_served(seen=seen) as agent, proxy_to(agent, "twice:1") as (proxy, lines):
        answer = HttpTransport(timeout=5).post(proxy + "/a2a", refund(1), HEADERS)
    assert answer.status == 200 and refunds_made(seen) == ["m-1", "m-1"]
    assert lines.text().count("[fault] twice:1: delivered request 1 to the agent a second time") == 1
    assert lines.text().count("[#1 client -> agent] --> ") == 2  # both deliveries printed, each of request 1


def test_status_answers_retry_after_and_the_agent_never_sees_it():
    seen = []
    with billing_served(seen=seen) as agent, proxy_to(agent, "status:1:503", "status:2:429") as (proxy, lines):
        client = HttpTransport(timeout=5)
        first, second = (client.post(proxy + "/a2a", refund(n), HEADERS) for n in (1, 2))
        third = client.post(proxy + "/a2a", refund(3), HEADERS)
    assert (first.status, second.status, third.status) == (503, 429, 200)
    assert first.header("Retry-After") == "1" == second.header("Retry-After")
    assert refunds_made(seen) == ["m-3"]
    assert "[fault] status:1:503: answered request 1 (POST /a2a) with 503 and Retry-After: 1" in lines.text()


def test_delay_holds_the_named_request_alone():
    with billing_served() as agent, proxy_to(agent, "delay:2:0.3") as (proxy, lines):
        client, took = HttpTransport(timeout=5), []
        for order in (1, 2, 3):
            started = time.monotonic()
            client.post(proxy + "/a2a", refund(order), HEADERS)
            took.append(time.monotonic() - started)
    assert took[1] >= 0.3 and took[0] < 0.3 and took[2] < 0.3
    assert "[fault] delay:2:0.3: held request 2 (POST /a2a) 0.3 s before forwarding it" in lines.text()


def test_cut_stream_ends_the_stream_after_the_named_event_with_no_end_of_body():
    with billing_served() as agent, proxy_to(agent, "cut-stream:2") as (proxy, lines):
        with socket.create_connection(("127.0.0.1", int(proxy.rsplit(":", 1)[1])), timeout=5) as raw:
            body = refund(1, "SendStreamingMessage")
            raw.sendall(b"POST /a2a HTTP/1.1\r\nHost: " + proxy.split("//")[1].encode() + b"\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\n"
                        b"Authorization: Bearer " + TOKEN.encode() + b"\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
            received = b""
            while chunk := raw.recv(65536):
                received += chunk
    assert received.count(b"data: ") == 2 and not received.endswith(b"0\r\n\r\n")
    assert "[fault] cut-stream:2: cut the stream of request 1 after its event 2" in lines.text()
    assert "WB-STREAM-FINAL-001" not in lines.text()  # our own cut is not the agent's fault


@pytest.mark.parametrize("seed", [0, 1, 7, 12345])
def test_one_seed_names_one_frame_every_time(seed):
    drawn = {parse("drop-response:?", seed).number for _ in range(3)}
    assert len(drawn) == 1 and 1 <= drawn.pop() <= 4
    faulted = []
    for _ in range(2):  # the same seed, a second session: the same request dropped
        with billing_served() as agent, proxy_to(agent, "drop-response:?", seed=seed) as (proxy, lines):
            client = HttpTransport(timeout=5)
            outcomes = []
            for order in range(1, 6):
                try:
                    outcomes.append(client.post(proxy + "/a2a", refund(order), HEADERS).status)
                except TransportError:
                    outcomes.append(None)
            faulted.append((outcomes, [line for line in lines.lines if line.startswith("[fault]")]))
    assert faulted[0] == faulted[1] and faulted[0][0].count(None) == 1
    assert faulted[0][0].index(None) + 1 == parse("drop-response:?", seed).number


@pytest.mark.parametrize("spec", ["explode:1", "delay", "delay:0", "delay:1:x", "delay:1:nan", "status:1",
                                  "status:1:200", "twice:-1", "cut-stream:1:2", "drop-response:²",
                                  "delay:1:1_0", "delay:1: 5", "delay:1:\u0661\u0660", "delay:1:-0"])  # float() took these
def test_a_fault_written_wrong_is_one_line(spec):
    with pytest.raises(ValueError) as bad:
        parse(spec, 0)
    assert "\n" not in str(bad.value) and spec[:10] in str(bad.value)


def test_a_long_value_quoted_in_a_refusal_says_it_was_cut():
    """A value cut to fit a line is marked as cut: never a shorter number the person did not type."""
    typed = "9" * 23
    with pytest.raises(ValueError) as bad:
        parse(f"delay:{typed}", 0)
    assert f"'{typed[:20]}...' is not a count" in str(bad.value) and f"'{typed[:20]}' " not in str(bad.value)


@pytest.mark.parametrize("spec, said", [("reorder:1:?:2", "'?' is not a count from 1"),
                                        ("status:1:?", "'?' is not a count from 1"),
                                        ("delay:x", "'x' is not a count from 1 (or '?')")])
def test_a_refusal_offers_a_drawn_count_only_where_one_may_stand(spec, said):
    """'?' (a count drawn by --seed) may stand for the request, or cut-stream's event, alone:
    "'?' is not a count from 1 (or '?')" offered what it refused."""
    with pytest.raises(ValueError) as bad:
        parse(spec, 0)
    assert str(bad.value).endswith(said), str(bad.value)


def test_the_command_refuses_a_bad_fault_before_listening():
    from conftest import cli
    done = cli("proxy", "--to", "http://127.0.0.1:9", "--fault", "explode:1")
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "no such fault" in done.stderr


def test_a_fault_on_every_verb_a_delete_included():
    with billing_served() as agent, proxy_to(agent, "status:1:503") as (proxy, _):
        answer = HttpTransport(timeout=5).exchange(ClientRequest("DELETE", proxy + "/a2a/tasks/x/pushNotificationConfigs/y",
                                                                 {"Authorization": f"Bearer {TOKEN}"}))
    assert answer.status == 503


def test_a_drawn_cut_stream_is_said_as_the_event_it_cuts_after_not_a_request():
    """`cut-stream:?` draws the event to cut after; the banner said "(request 4, ...)"."""
    from types import SimpleNamespace
    from peers.support.proxy.run import said_at_start
    unset = dict.fromkeys(("tls", "tls_cert", "tls_key", "ca", "client_cert", "client_key"))
    settings = SimpleNamespace(seed=0, to="http://127.0.0.1:9", **unset)
    faults = Faults([parse("cut-stream:?", 0), parse("delay:?", 0)])
    armed = said_at_start(settings, SimpleNamespace(base_url="http://127.0.0.1:1"),
                          SimpleNamespace(agent="http://127.0.0.1:9"), faults)[-2:]
    assert armed == [f"[proxy] fault armed: cut-stream:? (after event {faults.faults[0].number}, from --seed 0)",
                     f"[proxy] fault armed: delay:? (request {faults.faults[1].number}, from --seed 0)"], armed


def test_a_fault_whose_frame_never_came_says_so_when_the_proxy_stops():
    """Said to be armed, and then silent: it read as a fault that did nothing."""
    faults = Faults([parse("status:3:503", 0), parse("cut-stream:2", 0), parse("delay:1", 0)])
    faults.next_request()
    faults.next_request()
    assert faults.never_met() == ["[fault] status:3:503: never acted: request 3 never came (2 did)",
                                  "[fault] cut-stream:2: never acted: no stream came through the proxy"]
    faults.next_request(), faults.cut_after()
    assert faults.never_met() == []
