"""The HTTP client against hostile servers: every rule in transports/network.py's docstring.

Each hostile server is a raw TCP server on 127.0.0.1 port 0 (`hostile`), one handler thread
per connection, every socket with a timeout, every loop bounded, and all of it stopped when
the test ends. Handlers wait with `stop.wait()`, never sleep(), so teardown is immediate.
"""
import json
import re
import shutil
import socket
import subprocess
import sys
import threading
import time

import pytest

from conftest import FRAME, JSON_AUTH, ROOT, refund_frame, serving
from peers import billing
from peers.a2a import wire_essay
from peers.app import PeerApp
from transports.errors import TransportError
from transports.network import HttpTransport

OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"


def read_request(conn):
    """One request's head (bytes) after reading its body too; None if the client hung up."""
    data = b""
    while b"\r\n\r\n" not in data and len(data) < 65536:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    length = re.search(rb"(?i)\r\ncontent-length: *([0-9]+)", head)
    while length and len(rest) < int(length[1]):
        chunk = conn.recv(65536)
        if not chunk:
            return None
        rest += chunk
    return head + b"\r\n\r\n" + rest


class Hostile:
    """A TCP server running `handler(conn, server)` for each connection it accepts."""

    def __init__(self, handler):
        self.handler, self.stop_event = handler, threading.Event()
        self.accepted, self.requests, self.threads, self.conns = 0, [], [], []
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.05)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.threads.append(threading.Thread(target=self._accept, daemon=True))
        self.threads[0].start()

    def _accept(self):
        while not self.stop_event.is_set():
            try:
                conn, _ = self.listener.accept()
            except (TimeoutError, OSError):
                continue
            if self.stop_event.is_set():  # the wake-up call from stop()
                conn.close()
                break
            conn.settimeout(5)
            self.accepted += 1
            self.conns.append(conn)
            thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            self.threads.append(thread)
            thread.start()

    def _serve(self, conn):
        try:
            self.handler(conn, self)
        except OSError:  # the client gave up on us: that is what most tests expect
            pass
        finally:
            conn.close()

    def request(self, conn):
        """Read one request and remember it; None if the client hung up."""
        request = read_request(conn)
        if request is not None:
            self.requests.append(request)
        return request

    def wait(self, seconds):
        """Sleep, unless the test is over; True means stop now."""
        return self.stop_event.wait(seconds)

    def stop(self):
        self.stop_event.set()
        try:  # wake accept() now rather than at its next 0.05 s poll
            socket.create_connection(self.listener.getsockname(), timeout=1).close()
        except OSError:
            pass
        for conn in self.conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for thread in self.threads:
            thread.join(2)
        self.listener.close()


@pytest.fixture
def hostile():
    servers = []

    def start(handler):
        servers.append(Hostile(handler))
        return servers[-1]

    yield start
    for server in servers:
        server.stop()


def replies(*answers, keep_serving=True):
    """A handler answering each request on a connection with the next of `answers`."""
    def handler(conn, server):
        for answer in answers:
            if server.request(conn) is None:
                return
            conn.sendall(answer)
        while keep_serving and server.request(conn) is not None:  # bounded: the client stops
            conn.sendall(OK)
    return handler


def fails(transport, url, match, *, sent=True, within=3.0):
    started = time.monotonic()
    with pytest.raises(TransportError, match=match) as caught:
        transport.get(url, {})
    elapsed = time.monotonic() - started
    assert caught.value.sent is sent and elapsed < within, (caught.value.reason, elapsed)
    assert "\n" not in caught.value.reason
    return elapsed


# -- the real peer ------------------------------------------------------------------------

def test_get_and_post_against_the_served_peer(billing_server):
    transport = HttpTransport(timeout=3)
    card = transport.get(f"{billing_server.base_url}/.well-known/agent-card.json", {})
    assert card.status == 200 and json.loads(card.body)["name"] == "billing-agent"
    refused = transport.post(f"{billing_server.base_url}/a2a", FRAME, {"Content-Type": "application/json"})
    assert refused.status == 401 and refused.header("www-authenticate") == 'Bearer realm="billing-agent"'
    done = transport.post(f"{billing_server.base_url}/a2a", FRAME, JSON_AUTH)
    assert done.status == 200 and json.loads(done.body)["result"]["id"]
    assert len(billing_server.app.peer.store.tasks) == 1
    transport.close()


def test_a_connection_the_real_peer_closed_while_idle_is_replaced():
    app = PeerApp(billing.billing_agent(), wire_essay, token="t0k")
    with serving(app, idle_timeout=0.2) as server:
        transport = HttpTransport(timeout=3)
        assert transport.post(f"{server.base_url}/a2a", refund_frame("ORD-1"), JSON_AUTH).status == 200
        time.sleep(0.5)
        assert transport.post(f"{server.base_url}/a2a", refund_frame("ORD-2"), JSON_AUTH).status == 200
        assert len(app.peer.store.tasks) == 2


# -- keep-alive ---------------------------------------------------------------------------

def test_keep_alive_uses_one_connection_for_many_requests(hostile):
    server = hostile(replies())
    transport = HttpTransport(timeout=2)
    for _ in range(3):
        assert transport.get(f"{server.url}/x", {}).body == b"ok"
    assert transport.post(f"{server.url}/y", b"abc", {}).body == b"ok"
    assert server.accepted == 1 and len(server.requests) == 4


@pytest.mark.parametrize("first", [
    b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok",
    b"HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 2\r\n\r\nok",
    b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok",
    b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA",  # bytes nobody asked for
])
def test_a_connection_is_not_reused_when_the_reply_says_so_or_is_suspect(hostile, first):
    server = hostile(replies(first))
    transport = HttpTransport(timeout=2)
    assert transport.get(server.url, {}).body == b"ok"
    assert transport.get(server.url, {}).body == b"ok"
    assert server.accepted == 2


def test_a_connection_the_server_closed_while_idle_is_replaced_not_reused(hostile):
    hung_up = threading.Event()

    def handler(conn, server):
        server.request(conn)
        conn.sendall(OK)
        server.wait(0.1)  # then hang up, idle, like an idle timeout
        conn.close()
        hung_up.set()
    server = hostile(handler)
    transport = HttpTransport(timeout=2)
    assert transport.post(server.url, b"one", {}).body == b"ok"
    assert hung_up.wait(5), "the server hung up"  # waited for, not slept on: a loaded machine is late to
    time.sleep(0.05)  # its FIN crosses loopback
    assert transport.post(server.url, b"two", {}).body == b"ok"
    assert server.accepted == 2 and len(server.requests) == 2, "each POST arrived exactly once"


def test_a_connection_is_not_reused_after_a_head_whose_peer_may_send_a_body_late(hostile):
    """A HEAD has no body, but a wrong peer may send one, and late (50 ms): no readability
    check before reuse can see it yet, so it would be taken as the next request's reply."""
    def handler(conn, server):
        while (request := server.request(conn)) is not None:
            if not request.startswith(b"HEAD "):
                conn.sendall(OK)
                continue
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n")
            if not server.wait(0.05):
                conn.sendall(b'{"a": 1}\n')  # the body RFC 9110 9.3.2 forbids after a HEAD's head
    server = hostile(handler)
    transport = HttpTransport(timeout=2)
    assert transport.head(server.url, {}).status == 200
    assert transport.post(server.url, b"one", {}).body == b"ok"
    assert server.accepted == 2 and len(server.requests) == 2, "the POST went on a new connection"


@pytest.mark.parametrize("status", [b"204 No Content", b"304 Not Modified"])
def test_a_connection_is_not_reused_after_a_204_or_304_whose_peer_sends_a_body_late(hostile, status):
    """As after a HEAD: a 204 or 304 has no body by rule (RFC 9110 15.3.5, 15.4.5), and one a wrong
    peer sends 50 ms later was read as the next request's reply (check blamed a later rule for it)."""
    def handler(conn, server):
        while (request := server.request(conn)) is not None:
            if not request.startswith(b"GET "):
                conn.sendall(OK)
                continue
            conn.sendall(b"HTTP/1.1 " + status + b"\r\n\r\n")
            if not server.wait(0.05):
                conn.sendall(b'{"name": "x"}')
    server = hostile(handler)
    transport = HttpTransport(timeout=2)
    assert transport.get(server.url, {}).status == int(status[:3])
    assert transport.post(server.url, b"one", {}).body == b"ok"
    assert server.accepted == 2 and len(server.requests) == 2, "the POST went on a new connection"


def test_a_post_is_never_resent_after_the_connection_breaks(hostile):
    def handler(conn, server):
        server.request(conn)
        conn.sendall(OK)
        server.request(conn)  # the second POST arrives ... and the server hangs up
    server = hostile(handler)
    transport = HttpTransport(timeout=2)
    transport.post(server.url, b"one", {})
    with pytest.raises(TransportError, match="broke before a full reply") as caught:
        transport.post(server.url, b"two", {})
    assert caught.value.sent is True
    assert len(server.requests) == 2 and server.accepted == 1
    assert transport.post(server.url, b"three", {}).status == 200
    assert server.accepted == 2, "the broken connection was dropped: the next POST opened a new one"


# -- the deadline -------------------------------------------------------------------------

@pytest.mark.parametrize("interval", [0.3, 0.9])
def test_a_dripped_reply_fails_at_the_deadline(hostile, interval):
    def handler(conn, server):
        server.request(conn)
        for byte in OK:
            conn.sendall(bytes([byte]))
            if server.wait(interval):
                return
    server = hostile(handler)
    elapsed = fails(HttpTransport(timeout=1), server.url, r"did not finish within 1s", within=1.5)
    assert elapsed >= 0.95


def test_no_reply_at_all_is_a_read_timeout(hostile):
    server = hostile(lambda conn, server: server.request(conn) and server.wait(5))
    elapsed = fails(HttpTransport(timeout=0.5), server.url, r"no reply within 0.5s \(read timeout\)")
    assert 0.45 < elapsed < 2  # the deadline's, not the 5 s or more the server holds (slack for a busy machine)


def slow(head, piece, interval, count=1000):
    def handler(conn, server):
        server.request(conn)
        conn.sendall(head)
        for _ in range(count):
            conn.sendall(piece)
            if server.wait(interval):
                return
    return handler


@pytest.mark.parametrize("handler", [
    slow(b"HTTP/1.1 200 OK\r\n\r\n", b"x" * 10, 0.02),  # a body without end, slowly
    slow(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n", b"x" * 10, 0.02),
    slow(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", b"1\r\nx\r\n", 0.02),
    slow(b"HTTP/1.1 200 OK\r\n", b"X-More: yes\r\n", 0.05),  # headers without end
    slow(b"", b"HTTP/1.1 100 Continue\r\n\r\n", 0.15),  # interim replies, never a final one
], ids=["body-until-close", "body-with-length", "chunked", "headers", "100-continue"])
def test_an_endless_slow_reply_fails_at_the_deadline(hostile, handler):
    server = hostile(handler)
    elapsed = fails(HttpTransport(timeout=0.5), server.url, r"did not finish within 0.5s")
    assert 0.45 < elapsed < 2


@pytest.mark.parametrize("handler, match", [
    (slow(b"HTTP/1.1 200 OK\r\n\r\n", b"x" * 65536, 0), "over the 1048576-byte limit"),
    (slow(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", b"10000\r\n" + b"x" * 65536 + b"\r\n", 0),
     "over the 1048576-byte limit"),
    (slow(b"HTTP/1.1 200 OK\r\n", b"X-More: yes\r\n", 0), "more than 100 header lines"),
    (slow(b"HTTP/1.1 200 OK\r\nX-Big: ", b"y" * 1024, 0), "head is over 16384 bytes"),
    (slow(b"", b"HTTP/1.1 100 Continue\r\n\r\n", 0), r"more than 10 interim \(1xx\) replies"),
    (slow(b"", b"HTTP/1.1 200 " + b"z" * 1024, 0), "status line is over 16384 bytes"),
], ids=["body", "chunked", "headers", "header-line", "100-continue", "status-line"])
def test_an_endless_fast_reply_hits_a_size_or_count_bound(hostile, handler, match):
    server = hostile(handler)
    fails(HttpTransport(timeout=5), server.url, match, within=2)


def test_a_few_interim_replies_are_skipped(hostile):
    server = hostile(replies(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </s>\r\n\r\n" + OK))
    response = HttpTransport(timeout=2).get(server.url, {})
    assert response == (200, {"Content-Length": "2"}, b"ok")


def talking_stream(chunks, pause, then_silent=0.0, content_type=b"text/event-stream"):
    """A chunked 200 reply of `content_type`: `chunks` pieces `pause` s apart, then silence, then its end."""
    def handler(conn, server):
        server.request(conn)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: " + content_type + b"\r\nTransfer-Encoding: chunked\r\n\r\n")
        for _ in range(chunks):
            conn.sendall(b"e\r\n: still here\n\n\r\n")
            if server.wait(pause):
                return
        if not server.wait(then_silent):
            conn.sendall(b"0\r\n\r\n")
    return handler


def read_stream(transport, url):
    """(what a stream's body gave, the TransportError that ended it or None, seconds from the send)."""
    started, got = time.monotonic(), bytearray()
    try:
        response = transport.stream(url, b"{}", {})
        for chunk in [response.body] if isinstance(response.body, bytes) else response.body:
            got += chunk
    except TransportError as exc:
        return bytes(got), exc, time.monotonic() - started
    return bytes(got), None, time.monotonic() - started


def test_a_stream_ends_at_the_deadline_however_it_keeps_talking_unless_idle_streams(hostile):
    """Our agent's streams keep one deadline for their whole life (its follow is bounded so);
    a proxy's (idle_streams) bound each wait for the next bytes and live as long as they talk."""
    server = hostile(talking_stream(10, 0.08))  # 0.8 s of talk, twice the timeout, a comment every 0.08 s
    got, error, seconds = read_stream(HttpTransport(timeout=0.4), server.url)
    assert error is not None and "did not finish within 0.4s" in error.reason and error.timed_out
    assert 0.35 < seconds < 0.75 and got.count(b"still here") >= 3
    got, error, seconds = read_stream(HttpTransport(timeout=0.4, idle_streams=True), server.url)
    assert error is None and got.count(b"still here") == 10 and seconds > 0.7


def test_an_idle_stream_silent_past_its_timeout_ends_and_a_plain_reply_keeps_its_deadline(hostile):
    server = hostile(talking_stream(2, 0.05, then_silent=5.0))
    got, error, seconds = read_stream(HttpTransport(timeout=0.4, idle_streams=True), server.url)
    assert error.reason == "the stream sent nothing for 0.4s" and error.timed_out and error.sent
    assert got.count(b"still here") == 2 and 0.4 < seconds < 1.2
    plain = hostile(talking_stream(10, 0.08, content_type=b"application/json"))  # not a stream: one deadline
    got, error, seconds = read_stream(HttpTransport(timeout=0.4, idle_streams=True), plain.url)
    assert error is not None and "did not finish within 0.4s" in error.reason and seconds < 0.75


# -- strict parsing -----------------------------------------------------------------------

@pytest.mark.parametrize("value", ["²".encode(), "²".encode("latin-1"), "١٢".encode(), b"+12", b"-1",
                                   b"abc", b"0x10", b"1_0", b"12, 12", b"1 2", b""])
def test_a_content_length_that_is_not_ascii_digits_is_refused(hostile, value):
    server = hostile(replies(b"HTTP/1.1 200 OK\r\nContent-Length: " + value + b"\r\n\r\nok"))
    fails(HttpTransport(timeout=2), server.url, "the reply's Content-Length is not a number")


@pytest.mark.parametrize("value", [b"9" * 5000, b"1048577", b"10485760"])
def test_a_content_length_over_the_limit_is_refused_before_reading(hostile, value):
    server = hostile(replies(b"HTTP/1.1 200 OK\r\nContent-Length: " + value + b"\r\n\r\n"))  # no body
    fails(HttpTransport(timeout=2), server.url, "Content-Length is over the 1048576-byte limit", within=0.5)


def test_two_different_content_lengths_are_refused_and_equal_ones_accepted(hostile):
    server = hostile(replies(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nokk"))
    fails(HttpTransport(timeout=2), server.url, "two different Content-Length values")
    server = hostile(replies(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\ncontent-length: 2\r\n\r\nok"))
    assert HttpTransport(timeout=2).get(server.url, {}).body == b"ok"


@pytest.mark.parametrize("head, match", [
    (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n", "both Content-Length and Transfer-Encoding"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n", "both Content-Length and Transfer-Encoding"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", "Transfer-Encoding is not plain chunked"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", "not plain chunked"),
    (b"HTTP/2 200 OK\r\n\r\n", "does not start with an HTTP/1.x status line"),
    (b"HTTP/1.1 20 OK\r\n\r\n", "status line"),
    (b"HTTP/1.1 600 Odd\r\n\r\n", "status line"),
    (b"ICY 200 OK\r\n\r\n", "status line"),
    (b"\r\nHTTP/1.1 200 OK\r\n\r\n", "status line"),
    (b"HTTP/1.1 200 OK\n\n", "bare LF instead of CRLF"),
    (b"HTTP/1.1 200 OK\r\nX-A: 1\n\r\n", "bare LF instead of CRLF"),
    (b"HTTP/1.1 200 OK\r\nX-A: 1\r\n folded\r\n\r\n", "obs-fold"),
    (b"HTTP/1.1 200 OK\r\nContent-Length : 2\r\n\r\nok", "malformed header line"),
    (b"HTTP/1.1 200 OK\r\nX(A): 1\r\n\r\n", "malformed header line"),
    (b"HTTP/1.1 200 OK\r\nNo colon here\r\n\r\n", "malformed header line"),
    (b"HTTP/1.1 200 OK\r\nX-A: 1\x002\r\n\r\n", "malformed header line"),
    (b"HTTP/1.1 200 OK\r\nX-A: 1\r2\r\n\r\n", "malformed header line"),
    (b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n", "switched protocols"),
], ids=lambda v: v[:40].decode("latin-1") if isinstance(v, bytes) else None)
def test_a_malformed_head_is_refused_with_a_reason(hostile, head, match):
    server = hostile(replies(head + b"ok"))
    fails(HttpTransport(timeout=5), server.url, match, within=2)  # at once, not at the deadline, on a busy machine too


def test_a_chunked_body_with_extensions_and_trailers_is_read_and_the_connection_kept(hostile):
    chunked = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\n"
               b"5\r\nhello\r\n6;name=value\r\n world\r\nA\r\n, 10 bytes\r\n0\r\nX-Trailer: t\r\n\r\n")
    server = hostile(replies(chunked))
    transport = HttpTransport(timeout=2)
    assert transport.get(server.url, {}).body == b"hello world, 10 bytes"
    assert transport.get(server.url, {}).body == b"ok"
    assert server.accepted == 1


@pytest.mark.parametrize("body, match", [
    (b"0x5\r\nhello\r\n0\r\n\r\n", "chunk size is not 1 to 16 hex digits"),
    (b"+5\r\nhello\r\n0\r\n\r\n", "chunk size"),
    (b" 5\r\nhello\r\n0\r\n\r\n", "chunk size"),
    (b"5 \r\nhello\r\n0\r\n\r\n", "chunk size"),
    (b"g\r\n", "chunk size"),
    (b"\r\n", "chunk size"),
    (b"0" * 17 + b"5\r\nhello\r\n0\r\n\r\n", "chunk size"),
    (b"5;" + b"e" * 2000 + b"\r\n", "chunk-size line is over 1024 bytes"),
    (b"5\r\nhelloXX0\r\n\r\n", "does not end with CRLF"),
    (b"100001\r\n", "over the 1048576-byte limit"),
    (b"5\r\nhel", "broke before a full reply"),
    (b"5\r\nhello\r\n0\r\nBad Trailer\r\n\r\n", "malformed header line"),
])
def test_a_malformed_chunked_body_is_refused(hostile, body, match):
    server = hostile(replies(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + body, keep_serving=False))
    fails(HttpTransport(timeout=1), server.url, match, within=0.5)


def test_a_body_ended_by_close_is_read_up_to_the_limit(hostile):
    server = hostile(replies(b"HTTP/1.1 200 OK\r\n\r\n" + b"x" * 100, keep_serving=False))
    assert HttpTransport(timeout=2, max_body=100).get(server.url, {}).body == b"x" * 100
    server = hostile(replies(b"HTTP/1.1 200 OK\r\n\r\n" + b"x" * 101, keep_serving=False))
    fails(HttpTransport(timeout=2, max_body=100), server.url, "over the 100-byte limit")


def test_a_connection_closed_mid_body_is_a_broken_reply(hostile):
    server = hostile(replies(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + b"x" * 10, keep_serving=False))
    fails(HttpTransport(timeout=2), server.url, "broke before a full reply: the peer closed it mid-body")


@pytest.mark.parametrize("status", [b"204 No Content", b"304 Not Modified"])
def test_204_and_304_have_no_body_even_with_a_content_length(hostile, status):
    """No body, whatever Content-Length says; and the connection is not kept (a body a wrong peer
    sends anyway would be read as the next reply: see the test of one sent late, above)."""
    server = hostile(replies(b"HTTP/1.1 " + status + b"\r\nContent-Length: 1000\r\n\r\n"))
    transport = HttpTransport(timeout=1)
    assert transport.get(server.url, {}).body == b""
    assert transport.get(server.url, {}).body == b"" and server.accepted == 2, "the second on a new connection"


def test_a_redirect_is_returned_not_followed(hostile):
    server = hostile(replies(b"HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:1/steal\r\nContent-Length: 0\r\n\r\n"))
    response = HttpTransport(timeout=1).post(server.url, b"secret", {"Authorization": "Bearer t0k"})
    assert response.status == 302 and len(server.requests) == 1


def test_repeated_headers_are_joined(hostile):
    server = hostile(replies(b"HTTP/1.1 200 OK\r\nVary: a\r\nvary: b\r\nContent-Length: 2\r\n\r\nok"))
    assert HttpTransport(timeout=1).get(server.url, {}).headers == {"Vary": "a, b", "Content-Length": "2"}


# -- the request --------------------------------------------------------------------------

def test_the_request_is_host_then_the_callers_headers_then_content_length(hostile):
    server = hostile(replies())
    transport = HttpTransport(timeout=1)
    port = server.url.rsplit(":", 1)[1]
    transport.post(f"http://127.0.0.1:{port}/a2a?x=1#frag", b"abc", {"Content-Type": "text/plain"})
    assert server.requests == [f"POST /a2a?x=1 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                               f"Content-Type: text/plain\r\nContent-Length: 3\r\n\r\nabc".encode()]


@pytest.mark.parametrize("headers, match", [
    ({"X-A": "1\r\nX-Injected: 2"}, "CR, LF or NUL"),
    ({"X-A": "1\n"}, "CR, LF or NUL"),
    ({"X-A": "1\0"}, "CR, LF or NUL"),
    ({"X A": "1"}, "name 'X A' is not allowed"),
    ({"X-A:": "1"}, "is not allowed"),
    ({"Content-Length": "0"}, "is not allowed"),
    ({"host": "elsewhere"}, "is not allowed"),
    ({"X-A": "\u20ac"}, "not Latin-1"),
    ({"X-A": "a\x1bb"}, "X-A has a control character"),  # an escape: no server of ours would read it
    ({"X-B": "ok", "X-A": "\x7f"}, "X-A has a control character"),
    ({"X-A": "tab\tis fine", "X-C": "\x01"}, "X-C has a control character"),
])
def test_a_bad_request_header_is_refused_before_anything_is_sent(hostile, headers, match):
    server = hostile(replies())
    with pytest.raises(TransportError, match=match) as caught:
        HttpTransport(timeout=1).post(server.url, b"x", headers)
    assert caught.value.sent is False
    time.sleep(0.1)
    assert server.accepted == 0


@pytest.mark.parametrize("url", ["ftp://h/", "http:///a2a", "http://h:99999/", "http://h:abc/", "http://h:0/",
                                 "http://[::1/", "http://h/a b", "http://user:pw@h/", "http://h\u00e9/", "http://h/\x1b"])
def test_a_bad_url_is_refused_before_anything_is_sent(url):
    with pytest.raises(TransportError, match="not an http.s. URL") as caught:
        HttpTransport(timeout=1).get(url, {})
    assert caught.value.sent is False


def test_connection_refused_says_nothing_was_sent(closed_port):
    fails(HttpTransport(timeout=1), f"http://127.0.0.1:{closed_port}/", "could not connect to 127.0.0.1:.*connection refused",
          sent=False)


def test_resolve_speaks_plain_http_with_the_original_host_and_never_loads_ssl(hostile):
    server = hostile(replies())
    port = int(server.url.rsplit(":", 1)[1])
    code = ("import sys; from transports.network import HttpTransport\n"
            f"t = HttpTransport(resolve={{'Billing.Example': ('127.0.0.1', {port})}}, timeout=2)\n"
            "print(t.label); print(t.get('https://billing.example/x', {}).body.decode()); print('ssl' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=10)
    assert done.stdout.splitlines() == [
        "HTTP JSON-RPC over real sockets (the demo peers' hostnames mapped to 127.0.0.1, like curl --resolve;"
        " plain HTTP there, no TLS)", "ok", "False"], done.stderr
    assert server.requests == [b"GET /x HTTP/1.1\r\nHost: billing.example\r\n\r\n"]
    assert HttpTransport().label == "HTTP JSON-RPC over real sockets"


# -- TLS ----------------------------------------------------------------------------------

def test_a_tls_handshake_that_never_comes_fails_at_the_deadline_with_nothing_sent(hostile):
    server = hostile(lambda conn, server: server.wait(5))  # accepts TCP, never speaks TLS
    url = server.url.replace("http://127.0.0.1", "https://localhost")
    import ssl
    context = ssl.create_default_context()  # made before the clock starts: loading it is no part of the wait
    elapsed = fails(HttpTransport(timeout=0.5, tls=context), url, r"could not connect to localhost:\d+ within 0.5s",
                    sent=False)
    assert 0.45 < elapsed < 2


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command to make a certificate")
def test_tls_verifies_the_certificate_and_keeps_the_connection(tmp_path, hostile):
    import ssl
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-keyout", tmp_path / "key.pem", "-out", tmp_path / "cert.pem", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost"], check=True, capture_output=True, timeout=30)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")

    def handler(conn, server):
        with context.wrap_socket(conn, server_side=True) as tls:
            replies()(tls, server)
    server = hostile(handler)
    url = server.url.replace("http://127.0.0.1", "https://localhost")
    fails(HttpTransport(timeout=2), url, "could not connect to localhost.*certificate verify failed", sent=False)
    transport = HttpTransport(timeout=2, tls=ssl.create_default_context(cafile=tmp_path / "cert.pem"))
    assert transport.get(url, {}).body == b"ok" and transport.post(url, b"x", {}).body == b"ok"
    assert server.accepted == 2, "one refused handshake, then one connection for both requests"
    transport.close()  # the server's handler reads until the client hangs up: now, not at its 2 s stop


def test_a_pinned_host_goes_to_its_pinned_address_at_each_urls_own_port():
    """A name pinned (a webhook's, or check's judged interface) is never looked up again; a URL at
    that host on another port (a card's second interface) went to the pinned port instead."""
    from transports.base import HttpResponse
    from transports.network import HttpTransport
    with serving(lambda request: HttpResponse(200, {"Content-Type": "text/plain"}, b"here")) as server:
        port = server.server_address[1]
        client = HttpTransport(timeout=5, pinned={"agent.example": ("127.0.0.1", 1)})  # no name is looked up
        answer = client.get(f"http://agent.example:{port}/x", {})
        client.close()
    assert (answer.status, answer.body) == (200, b"here")


def test_a_head_asks_the_server_to_close_so_no_body_is_waited_for_where_none_comes():
    """A HEAD's connection is dropped after it (a body wrongly sent could be read as the next reply), and its
    reply is heard out for HEAD_LINGER after its head: saying `Connection: close` lets a server end it at once.
    A caller's own Connection header is sent as it is; other requests say nothing of it."""
    from transports.network import HttpTransport
    from conftest import OutsidePeer, outside_peer
    seen = []

    class Peer(OutsidePeer):
        def do_HEAD(self):
            seen.append(("HEAD", self.headers.get("Connection")))
            self.send(200, b"{}")

        def do_GET(self):
            seen.append(("GET", self.headers.get("Connection")))
            self.send(200, b"{}")
    with outside_peer(Peer) as base:
        client = HttpTransport(timeout=5)
        client.head(base + "/", {})
        client.head(base + "/", {"Connection": "keep-alive"})
        client.get(base + "/", {})
        client.close()
    assert seen == [("HEAD", "close"), ("HEAD", "keep-alive"), ("GET", None)]
