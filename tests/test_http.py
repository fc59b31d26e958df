"""The HTTP transport and server: the same frames as in-process, and a sturdy server."""
import json
import socket
import threading
import time

import pytest

import a2a_delegation as story
from conftest import BILLING, CARDS, FRAME, GOLDEN, JSON_AUTH, ROGUE, cli, raw_exchange, refund_frame, serving
from peers import billing, demo, rogue
from peers.a2a import wire_essay
from peers.app import PeerApp
from transports.inprocess import InProcessTransport
from transports.network import HttpTransport
from transports.printer import FramePrinter



def story_frames(transport_kind, allowlist):
    network = demo.network(wire_essay, log=lambda line: None)
    with demo.Served(network.apps) as served:
        inner = HttpTransport(resolve=served.resolve, timeout=5) if transport_kind == "http" \
            else InProcessTransport(network.apps)
        printer = FramePrinter(inner)
        agent = story.SupportAgent(printer, allowlist, network.credentials, lambda *a, **f: None)
        story.run(agent, CARDS)
    return printer


def test_the_http_run_sends_and_receives_the_same_frames_byte_for_byte():
    shim = story_frames("in-process", [BILLING, ROGUE])
    http = story_frames("http", [BILLING, ROGUE])
    as_seen = lambda p: [(f.direction, f.http_method, f.url, f.body) for f in p.frames]  # noqa: E731
    assert len(shim.frames) == 8  # two card fetches and two delegations, each way
    assert as_seen(http) == as_seen(shim)


def test_the_cli_over_http_prints_the_essays_run_and_exits_0():
    done = cli("--transport", "http")
    assert done.returncode == 0, done.stderr
    golden = (GOLDEN / "default_run.txt").read_text().splitlines()
    got = done.stdout.splitlines()
    assert got[0].startswith("[transport] HTTP JSON-RPC over real sockets")
    assert got[1:] == golden[1:]


def test_a_token_goes_only_to_the_endpoint_it_was_issued_for():
    printer = story_frames("http", [BILLING, ROGUE])
    for frame in printer.sent_to("https://billing.acme.example"):
        shown = frame.headers.get("Authorization")
        assert shown.startswith("Bearer ****#") if frame.http_method == "POST" else shown is None, \
            "card fetches carry no token"
        assert b"Bearer" not in frame.body and b"token" not in frame.body
    for frame in printer.sent_to(rogue.BASE_URL):
        assert "Authorization" not in frame.headers


def test_the_server_refuses_a_request_without_the_token_with_401_and_creates_no_task(billing_server):
    """RFC 6750 3.1: a bearer token presented and not valid is error="invalid_token"; a request with
    no bearer token at all (none, or another scheme's credential) is told no error code."""
    transport = HttpTransport(resolve={}, timeout=3)
    challenge, invalid = 'Bearer realm="billing-agent"', 'Bearer realm="billing-agent", error="invalid_token"'
    for authorization, expected in ((None, challenge), ("Bearer wrong", invalid), ("bearer  wrong ", invalid),
                                    ("Bearer", challenge), ("Basic dDBr", challenge)):
        headers = {"Content-Type": "application/json", **({"Authorization": authorization} if authorization else {})}
        response = transport.post(f"{billing_server.base_url}/a2a", FRAME, headers)
        assert response.status == 401
        assert response.header("WWW-Authenticate") == expected, authorization
    assert billing_server.app.peer.store.tasks == {}
    assert transport.post(f"{billing_server.base_url}/a2a", FRAME, JSON_AUTH).status == 200


def test_a_slow_client_does_not_block_others(billing_server):
    with socket.create_connection(billing_server.server_address, timeout=3) as slow:
        slow.sendall(b"POST /a2a HTTP/1.1\r\nHost: x\r\n")  # ...and never finishes
        started = time.monotonic()
        response = HttpTransport(timeout=3).post(f"{billing_server.base_url}/a2a", FRAME, JSON_AUTH)
        assert response.status == 200 and time.monotonic() - started < 1.5


def test_idle_connections_are_closed_after_the_idle_timeout():
    with serving(PeerApp(billing.billing_agent(), wire_essay), idle_timeout=0.3) as server:
        with socket.create_connection(server.server_address, timeout=3) as idle:
            started = time.monotonic()
            assert idle.recv(1) == b"", "the server closed the connection"
            assert time.monotonic() - started < 2


def test_an_oversize_body_gets_413_without_being_read(billing_server):
    head = (b"POST /a2a HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 10485760\r\n\r\n")  # 10 MiB announced, none of it sent
    started = time.monotonic()
    answer = raw_exchange(billing_server.server_address, head)
    assert answer.startswith(b"HTTP/1.1 413") and b"Connection: close" in answer
    assert time.monotonic() - started < 2


def test_a_post_without_content_length_gets_411(billing_server):
    answer = raw_exchange(billing_server.server_address,
                          b"POST /a2a HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 411") and b'"code": -32600' in answer


@pytest.mark.parametrize("method, path, headers, body, status, code", [
    ("POST", "/a2a", {"Content-Type": "text/plain", "Authorization": "Bearer t0k"}, FRAME, 415, -32005),
    ("POST", "/nope", JSON_AUTH, FRAME, 404, -32600),
    ("PUT", "/a2a", JSON_AUTH, FRAME, 405, -32600),
    ("DELETE", "/.well-known/agent-card.json", {}, b"", 405, -32600),
    ("POST", "/a2a", JSON_AUTH, b'{"jsonrpc": "2.0", "id": 1, "method": ', 200, -32700),
    ("POST", "/a2a", JSON_AUTH, b'{"jsonrpc": "2.0", "id": 1, "method": "nope"}', 200, -32601),
])
def test_each_wrong_request_gets_the_right_status_and_json_rpc_error(billing_server, method, path, headers,
                                                                     body, status, code):
    import http.client
    connection = http.client.HTTPConnection(*billing_server.server_address, timeout=3)
    connection.request(method, path, body=body, headers=headers)
    response = connection.getresponse()
    assert response.status == status
    assert json.loads(response.read())["error"]["code"] == code
    connection.close()


def test_the_server_binds_loopback_logs_through_one_function_and_shuts_down_cleanly():
    lines = []
    with serving(PeerApp(billing.billing_agent(), wire_essay), log=lines.append) as server:
        assert server.server_address[0] == "127.0.0.1"
        HttpTransport().get(f"{server.base_url}/.well-known/agent-card.json", {})
        address = server.server_address
    assert any('"GET /.well-known/agent-card.json HTTP/1.1" 200' in line for line in lines)
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(address, timeout=1)


def test_many_concurrent_clients_are_all_answered(billing_server):
    results, url = [], f"{billing_server.base_url}/a2a"

    def client(number):
        transport = HttpTransport(timeout=5)
        results.extend(transport.post(url, refund_frame(f"ORD-{number}-{n}"), JSON_AUTH).status for n in range(5))

    threads = [threading.Thread(target=client, args=(number,)) for number in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert results == [200] * 40 and len(billing_server.app.peer.store.tasks) == 40




def test_the_card_says_how_long_to_cache_it_and_answers_an_unchanged_etag_with_304(billing_server):
    transport, url = HttpTransport(timeout=5), billing_server.base_url + "/.well-known/agent-card.json"
    first = transport.get(url, {})
    assert first.status == 200 and first.header("Cache-Control") == "max-age=300"
    etag = first.header("ETag")
    assert etag.startswith('"') and etag.endswith('"') and len(etag) > 10
    for asked in (etag, f"W/{etag}", f'"other", {etag}', "*"):
        again = transport.get(url, {"If-None-Match": asked})
        assert (again.status, again.body, again.header("ETag")) == (304, b"", etag), asked
        assert again.header("Cache-Control") == "max-age=300"
    for asked in ('"other"', "", etag[:-2] + '"'):
        assert transport.get(url, {"If-None-Match": asked}).body == first.body, asked
    assert transport.get(url, {}).status == 200, "the connection is still good after 304s"


def test_a_busy_keep_alive_client_has_every_request_answered_in_order(billing_server):
    """A worker answers a client's next request itself while each follows at once (sparing
    two hand-offs between threads), a hundred in a row, then gives the connection back to
    the loop: across those hand-backs, 250 requests on one connection get 250 answers, in
    order, and none is lost or answered twice."""
    with socket.create_connection(billing_server.server_address[:2], timeout=5) as sock:
        answers = b""
        for number in range(250):
            body = refund_frame(f"ORD-KA-{number}", request_id=number)
            sock.sendall(b"POST /a2a HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         b"Authorization: Bearer t0k\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
            while answers.count(b"HTTP/1.1 ") <= number or not answers.rstrip().endswith(b"}}"):
                chunk = sock.recv(65536)
                assert chunk, f"the connection closed after {number} answers"
                answers += chunk
    ids = [json.loads(part.split(b"\r\n\r\n", 1)[1])["id"] for part in answers.split(b"HTTP/1.1 ")[1:]]
    assert ids == list(range(250))
