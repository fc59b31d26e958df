"""The server against hostile clients: framing, routing, bounds, deadlines, logs, streaming.

Each case from the security review is one test, sent as raw bytes on 127.0.0.1 to a server
on port 0 that is stopped when the test ends. Every test's log is checked on the way out:
one line per event, nothing a client sent left unescaped, never a traceback.
"""
import json
import random
import re
import socket
import threading
import time

import pytest

from attacks import held_open
from conftest import FRAME, JSON_AUTH, serving
from peers import billing
from peers.a2a import wire_essay, wire_v10
from peers.app import PeerApp
from transports.base import HttpResponse
from transports.network import HttpTransport

pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")

AUTH = list(JSON_AUTH.items())  # as (name, value) pairs, so a test can add a second copy
TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")


def request(method="POST", target="/a2a", *, version="HTTP/1.1", headers=None, body=FRAME,
            length=True) -> bytes:
    """A raw request; `headers` is a list of pairs, so a header can appear twice."""
    fields = [("Host", "127.0.0.1")] + (AUTH if headers is None else headers)
    if length:
        fields.append(("Content-Length", str(len(body))))
    head = f"{method} {target} {version}\r\n" + "".join(f"{n}: {v}\r\n" for n, v in fields)
    return head.encode("utf-8") + b"\r\n" + body


def talk(address, data: bytes, *, timeout=3.0, half_close=False) -> tuple[bytes, bool]:
    """Send raw bytes; return (all the server answered, whether the server closed)."""
    with socket.create_connection(address, timeout=timeout) as sock:
        try:
            sock.sendall(data)
            if half_close:
                sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # the server may refuse and close before reading everything
        chunks, deadline = [], time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                return b"".join(chunks), False
            except ConnectionResetError:
                return b"".join(chunks), True
            if not chunk:
                return b"".join(chunks), True
            chunks.append(chunk)
        return b"".join(chunks), False


def parse_responses(data: bytes) -> list[tuple[int, dict, bytes]]:
    """Split an answer into well-formed responses; fail on anything malformed or left over."""
    responses = []
    while data:
        head, sep, data = data.partition(b"\r\n\r\n")
        assert sep, f"an unfinished response head: {head[:100]!r}"
        status_line, *fields = head.split(b"\r\n")
        match = re.fullmatch(rb"HTTP/1\.1 ([1-5][0-9][0-9]) [\x20-\x7e]+", status_line)
        assert match, status_line
        headers = {}
        for field in fields:
            name, colon, value = field.partition(b":")
            assert colon and TOKEN.fullmatch(name), field
            headers[name.decode().lower()] = value.strip().decode("latin-1")
        status = int(match[1])
        if status == 100:
            continue
        if headers.get("transfer-encoding") == "chunked":
            body = b""
            while True:
                size, sep, data = data.partition(b"\r\n")
                assert sep and re.fullmatch(rb"[0-9a-f]+", size), size
                n = int(size, 16)
                assert data[n:n + 2] == b"\r\n"
                body, data = body + data[:n], data[n + 2:]
                if n == 0:
                    break
        elif status in (204, 304):
            body = b""
        else:
            n = int(headers["content-length"])
            assert len(data) >= n, "a body shorter than its Content-Length"
            body, data = data[:n], data[n:]
        responses.append((status, headers, body))
    return responses


def assert_refused(answer: bytes, closed: bool, status: int, code=-32600) -> dict:
    (response,) = parse_responses(answer)  # exactly one: nothing after it was parsed
    got, headers, body = response
    assert got == status, answer[:300]
    assert headers["content-type"] == "application/json" and headers["connection"] == "close"
    error = json.loads(body)
    assert error["jsonrpc"] == "2.0" and error["id"] is None and error["error"]["code"] == code
    assert closed, "the server closed the connection after refusing"
    return error


def check_log(lines):
    for line in lines:
        assert "\n" not in line and "Traceback" not in line, line
        assert not re.search(r"[\x00-\x1f\x7f]", line), f"unescaped control character: {line!r}"


@pytest.fixture
def peer():
    """The billing peer, with a short request deadline and its log kept in `peer.lines`."""
    lines = []
    app = PeerApp(billing.billing_agent(), wire_essay, token="t0k", log=lines.append)
    with serving(app, log=lines.append, request_timeout=1.0, idle_timeout=2.0) as server:
        server.lines = lines
        yield server
    check_log(lines)


def threads_since(before: set) -> list:
    """The server's threads (its loop, its workers) started since `before` was taken and
    still running; not another test's, which may start a thread of its own meanwhile (a
    push delivery from a test before this one)."""
    return [thread for thread in threading.enumerate() if thread not in before
            and ("peer-server-worker" in thread.name or "serve_forever" in thread.name)]


def wait_for(predicate, seconds=3.0):
    deadline = time.monotonic() + seconds
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.01)
    return predicate()


def delegation_succeeds(server) -> bool:
    transport = HttpTransport(timeout=3)
    try:
        return transport.post(f"{server.base_url}/a2a", FRAME, JSON_AUTH).status == 200
    finally:
        transport.close()


# 1. Framing: Content-Length and Transfer-Encoding

@pytest.mark.parametrize("value", ["²", "9" * 5000, "abc", "-1", "+12", "1_0", "0x10", "1 2",
                                   "12, 12", "", "１２"],
                         ids=["superscript-two", "5000-digits", "abc", "minus-one", "plus-twelve",
                              "underscore", "hex", "space", "list", "empty", "fullwidth"])
def test_a_content_length_that_is_not_plain_ascii_digits_is_400_and_closes(peer, value):
    answer, closed = talk(peer.server_address, request(headers=AUTH + [("Content-Length", value)],
                                                       length=False))
    assert_refused(answer, closed, 400)
    assert peer.app.peer.store.tasks == {}


def test_a_content_length_over_max_body_is_413_without_reading_the_body():
    with serving(PeerApp(billing.billing_agent(), wire_essay), max_body=1000) as server:
        started = time.monotonic()
        answer, closed = talk(server.server_address, request(body=b"x" * 1001)[:-1001])
        assert_refused(answer, closed, 413)
        assert time.monotonic() - started < 1.5, "answered at once, not after waiting for the body"


def test_two_content_length_headers_are_400_even_when_they_are_equal(peer):
    for second in (str(len(FRAME)), "0"):
        data = request(headers=AUTH + [("content-length", second)])
        assert_refused(*talk(peer.server_address, data), 400)
    assert peer.app.peer.store.tasks == {}


def test_a_transfer_encoding_that_cannot_frame_a_body_here_is_refused_so_a_post_smuggled_in_it_never_runs(peer):
    smuggled = request()  # a complete, authorised delegation...
    chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(smuggled), smuggled)  # ...as a chunked GET body
    for method, encoding, status in [("GET", "chunked", 400), ("POST", "gzip, chunked", 501), ("GET", "identity", 400),
                                     ("POST", "chunked, identity", 400)]:
        data = request(method, "/.well-known/agent-card.json",
                       headers=[("Transfer-Encoding", encoding)], body=chunked, length=False)
        assert_refused(*talk(peer.server_address, data), status)
    assert peer.app.peer.store.tasks == {}, "the smuggled POST was never parsed as a request"


def test_a_get_or_delete_with_a_body_is_400_and_the_body_is_never_parsed_as_a_request(peer):
    hidden = request()
    for method in ("GET", "DELETE"):
        data = request(method, "/.well-known/agent-card.json", headers=[], body=hidden)
        assert_refused(*talk(peer.server_address, data), 400)
    assert peer.app.peer.store.tasks == {}
    answer, _ = talk(peer.server_address, request("GET", "/.well-known/agent-card.json", headers=[],
                                                  body=b"", version="HTTP/1.0"))
    assert parse_responses(answer)[0][0] == 200, "Content-Length: 0 on a GET is fine"


def test_a_post_without_content_length_is_411_and_closes(peer):
    assert_refused(*talk(peer.server_address, request(length=False)), 411)


# 2. Routing by the request path only

def test_the_app_sees_its_path_under_the_servers_own_url_and_never_the_host_header():
    seen = []

    def app(req):
        seen.append(req)
        return HttpResponse(200, {"Content-Type": "text/plain"}, b"ok")

    with serving(app) as server:
        data = request(target="/nothing?x=1", headers=[("Content-Type", "application/json")])
        data = data.replace(b"Host: 127.0.0.1", b"Host: x/a2a#")
        answer, _ = talk(server.server_address, data.replace(b"HTTP/1.1", b"HTTP/1.0", 1))
        assert parse_responses(answer)[0][0] == 200
        assert seen[0].url == f"{server.base_url}/nothing?x=1"
        assert seen[0].headers["host"] == "x/a2a#", "the app may read Host; routing never does"
    billing_app = PeerApp(billing.billing_agent(), wire_essay, token="t0k")
    with serving(billing_app) as server:  # the request the review sent: it must not reach /a2a
        data = request(target="/nothing").replace(b"Host: 127.0.0.1", b"Host: x/a2a#")
        answer, _ = talk(server.server_address, data.replace(b"HTTP/1.1", b"HTTP/1.0", 1))
        assert parse_responses(answer)[0][0] == 404 and billing_app.peer.store.tasks == {}


def test_an_absolute_form_target_is_served_as_its_path_with_its_authority_as_host():
    """RFC 9112 3.2.2: a server MUST accept the absolute-form, and use its host, not Host's.
    It was refused with 400; userinfo in it (RFC 9110 4.2.4: an error) still is."""
    seen = []

    def app(req):
        seen.append(req)
        return HttpResponse(200, {"Content-Type": "text/plain"}, b"ok")

    with serving(app) as server:
        for target, path, host in [("http://example.test:81/a2a?x=1", "/a2a?x=1", "example.test:81"),
                                   ("HTTPS://[::1]:8443", "/", "[::1]:8443"), ("http://h?q", "/?q", "h")]:
            answer, _ = talk(server.server_address, request(target=target), half_close=True)
            assert parse_responses(answer)[0][0] == 200
            assert (seen[-1].url, seen[-1].headers["host"]) == (f"{server.base_url}{path}", host)
        for target in ("http://user@h/a2a", "http://h/a2a#x", "ftp://h/a2a", "http:///a2a", "http://h/caf\u00e9",
                       "http://h:1:2/a2a", "http://h:123456/a2a", "http://[h]/a2a"):
            assert_refused(*talk(server.server_address, request(target=target)), 400)
        assert_refused(*talk(server.server_address, request(target="http://h/").replace(b"Host: 127.0.0.1\r\n", b"")),
                       400)  # HTTP/1.1 needs Host all the same [3.2]


@pytest.mark.parametrize("target", ["//evil.example/a2a", "*", "a2a",
                                    "/a2a\x01", "/caf\u00e9", "/a2a\x7f", "", "/a2a#x"])
def test_a_target_that_is_not_an_origin_form_path_is_400(peer, target):
    data = request(target=target)
    if target == "//evil.example/a2a":  # a path, strictly; but routed as a path, never a host
        assert parse_responses(talk(peer.server_address, data, half_close=True)[0])[0][0] == 404
        return
    assert_refused(*talk(peer.server_address, data), 400)


def test_a_target_over_8_kib_is_414(peer):
    assert_refused(*talk(peer.server_address, request(target="/" + "a" * 9000)), 414)
    assert_refused(*talk(peer.server_address, request(target="/" + "a" * 20000)), 414)


def test_http_1_1_needs_exactly_one_host_header(peer):
    no_host = request().replace(b"Host: 127.0.0.1\r\n", b"")
    assert_refused(*talk(peer.server_address, no_host), 400)
    two_hosts = request(headers=AUTH + [("HOST", "127.0.0.1")])
    assert_refused(*talk(peer.server_address, two_hosts), 400)
    answer, _ = talk(peer.server_address, no_host.replace(b"HTTP/1.1", b"HTTP/1.0", 1))
    assert parse_responses(answer)[0][0] == 200, "HTTP/1.0 may leave Host out"


# 3. A bounded, strict head

def test_a_head_over_16_kib_or_over_100_headers_is_431(peer):
    big = request(headers=AUTH + [("X-Pad", "a" * 17000)])
    assert_refused(*talk(peer.server_address, big), 431)
    many = request(headers=AUTH + [(f"X-H{i}", "1") for i in range(101)])
    assert_refused(*talk(peer.server_address, many), 431)
    just_under = request(headers=AUTH + [(f"X-H{i}", "1") for i in range(96)])
    assert parse_responses(talk(peer.server_address, just_under, half_close=True)[0])[0][0] == 200


@pytest.mark.parametrize("field", [b"Bad Name: 1", b"Bad\x01: 1", b"X-A : 1", b"X-A: a\x00b",
                                   b"X-A: a\rb", b"X-A: a\x1bb", b"no colon", b": empty name",
                                   b"\xc3\xa9: 1"],
                         ids=["space-in-name", "control-in-name", "space-before-colon", "nul",
                              "lone-cr", "escape", "no-colon", "empty-name", "8-bit-name"])
def test_a_header_name_that_is_not_a_token_or_a_value_with_a_control_character_is_400(peer, field):
    data = request().replace(b"\r\n\r\n", b"\r\n" + field + b"\r\n\r\n", 1)
    assert_refused(*talk(peer.server_address, data), 400)


def test_a_folded_header_line_is_400(peer):
    data = request().replace(b"Authorization: Bearer t0k", b"Authorization: Bearer\r\n t0k")
    assert_refused(*talk(peer.server_address, data), 400)


def test_lines_ending_in_a_bare_line_feed_are_400_at_once_not_a_wait(peer):
    started = time.monotonic()
    assert_refused(*talk(peer.server_address, request().replace(b"\r\n", b"\n")), 400)
    assert time.monotonic() - started < 0.5


@pytest.mark.parametrize("version, status", [("HTTP/2.0", 505), ("HTTP/1.2", 505),
                                             ("HTTP/0.9", 505), ("HTTP/1", 400), ("http/1.1", 400),
                                             ("HTTP/1.1 extra", 400)])
def test_only_http_1_0_and_1_1_are_served(peer, version, status):
    assert_refused(*talk(peer.server_address, request(version=version)), status)


# 4. Deadlines

def test_a_client_dripping_one_byte_at_a_time_gets_408_at_the_request_deadline(peer):
    data = request()
    with socket.create_connection(peer.server_address, timeout=3) as sock:
        started, answer = time.monotonic(), b""
        for byte in data:  # 1 byte per 20 ms: each read is quick, the whole is not
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                break
            sock.settimeout(0.02)
            try:
                answer = sock.recv(65536)
            except TimeoutError:
                continue
            break
        sock.settimeout(3)
        while chunk := sock.recv(65536):
            answer += chunk
        elapsed = time.monotonic() - started
    assert_refused(answer, True, 408)
    assert 0.9 < elapsed < 2.0, elapsed
    assert any('"POST /a2a HTTP/1.1" 408' in line for line in peer.lines)


def test_between_requests_the_idle_timeout_applies_not_the_request_timeout():
    app = PeerApp(billing.billing_agent(), wire_essay, token="t0k")
    with serving(app, request_timeout=0.3, idle_timeout=1.0) as server:
        with socket.create_connection(server.server_address, timeout=3) as sock:
            sock.sendall(request())
            assert sock.recv(65536).startswith(b"HTTP/1.1 200")
            time.sleep(0.6)  # longer than the request deadline, shorter than the idle one
            sock.sendall(request())
            assert sock.recv(65536).startswith(b"HTTP/1.1 200")
            started = time.monotonic()
            assert sock.recv(1) == b"", "closed once idle for idle_timeout"
            assert 0.8 < time.monotonic() - started < 2


# 5. A cap on connections

def test_connections_over_max_connections_all_being_answered_get_503_with_retry_after_at_once():
    lines, release = [], threading.Event()
    app = held_open(PeerApp(billing.billing_agent(), wire_essay), release)  # an answer under way is never cut
    with serving(app, log=lines.append, max_connections=2, request_timeout=2.0) as server:
        held = [socket.create_connection(server.server_address, timeout=3) for _ in range(2)]
        for sock in held:
            sock.sendall(b"GET /held HTTP/1.1\r\nHost: x\r\n\r\n")
        assert wait_for(lambda: server.connections == 2 and all(conn.state == "busy" for conn in server._open.values()))
        started = time.monotonic()
        answer, closed = talk(server.server_address, request())
        error = assert_refused(answer, closed, 503)
        assert parse_responses(answer)[0][1]["retry-after"] == "1"
        assert "too many connections" in error["error"]["message"]
        assert time.monotonic() - started < 0.5
        release.set()
        for sock in held:
            sock.close()
        assert wait_for(lambda: server.connections == 0), "closing a connection frees its slot"
        assert delegation_succeeds(server)
    check_log(lines)
    assert sum("503 turned away" in line for line in lines) == 1


def heard(server, sock) -> bool:
    """Whether the server holds the connection `sock` is the client end of, and has read from it."""
    for conn in list(server._open.values()):
        try:
            if conn.sock.getpeername() == sock.getsockname():
                return conn.heard
        except OSError:  # closed meanwhile
            pass
    return False


def test_300_slow_connections_with_max_connections_8_keep_the_8_newest_and_threads_stay_bounded():
    """Full, a newcomer closes the connection that made the least progress (transports/room.py):
    here the request begun longest ago, so the 8 newest are left, each answered 408 at its deadline."""
    lines, deadline = [], 3.0
    threads_before = threading.active_count()
    app = PeerApp(billing.billing_agent(), wire_essay, token="t0k")
    with serving(app, log=lines.append, max_connections=8, request_timeout=deadline) as server:
        started, socks, most_threads = time.monotonic(), [], 0
        for _ in range(300):
            sock = socket.create_connection(server.server_address, timeout=5)
            sock.sendall(b"P")  # the first byte of a request that never comes
            socks.append(sock)
            assert wait_for(lambda: heard(server, sock)), "taken in, and its byte read, before the next comes"
            most_threads = max(most_threads, threading.active_count())
        assert time.monotonic() - started < 30
        closed = []
        for i, sock in enumerate(socks[:-8]):  # closed to make room: no answer, the end (or a reset)
            sock.settimeout(2)
            try:
                closed.append(sock.recv(65536) == b"")
            except ConnectionResetError:
                closed.append(True)
        assert all(closed) and len(closed) == 292
        for sock in socks[-8:]:
            sock.settimeout(deadline + 2)
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
            assert parse_responses(answer)[0][0] == 408
            most_threads = max(most_threads, threading.active_count())
        for sock in socks:
            sock.close()
        # + 2: an earlier test's daemon worker (a webhook delivery, a background task) may
        # still be winding down; what matters is 300 connections never make 300 threads.
        assert most_threads <= threads_before + 1 + 8 + 2, "one accept thread and 8 connections"
        assert wait_for(lambda: threading.active_count() <= threads_before + 1)
        assert delegation_succeeds(server)
    check_log(lines)
    assert sum("closed to make room" in line for line in lines) == 292


# 6. Logs

def test_what_a_client_sent_is_escaped_in_the_log(peer):
    talk(peer.server_address, b"GET /\x1b[31mred\x1b[0m HTTP/1.1\r\nHost: x\r\n\r\n")
    talk(peer.server_address, b'P\x1bST /a2a" 200 HTTP/1.1\r\nHost: x\r\n\r\n')
    talk(peer.server_address, b"\x1b]0;owned\x07" * 100, half_close=True)  # no line end
    assert wait_for(lambda: len(peer.lines) == 3)
    assert '"GET /\\x1b[31mred\\x1b[0m HTTP/1.1" 400' in peer.lines[0]
    assert '"P\\x1bST /a2a\\x22 200 HTTP/1.1" 400' in peer.lines[1], "a quote cannot end the field"
    assert peer.lines[2].count("\\x1b") <= 100 and len(peer.lines[2]) < 2000


def test_a_client_that_disconnects_mid_request_is_one_log_line(peer):
    talk(peer.server_address, request()[:-10], half_close=True)
    talk(peer.server_address, request()[:30], half_close=True)
    assert wait_for(lambda: len(peer.lines) == 2)
    assert all("client disconnected mid-request" in line for line in peer.lines)


def test_a_stream_still_open_when_the_server_stops_is_one_log_line_said_as_it_stops():
    from transports.server import PeerServer

    def endless(request):  # an event stream that never ends on its own, as a subscription's may not
        def events():
            for _ in range(600):
                yield b"data: {}\n\n"
                time.sleep(0.05)
        return HttpResponse(200, {"Content-Type": "text/event-stream"}, events())
    lines = []
    server = PeerServer(endless, "127.0.0.1", 0, log=lines.append).start()
    with socket.create_connection(server.server_address, timeout=5) as sock:
        sock.sendall(b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
        assert sock.recv(1000).startswith(b"HTTP/1.1 200 OK")
        server.stop()  # the worker is still at it: its line is said now, once
        time.sleep(0.5)  # a worker noticing the close afterwards says nothing more
    check_log(lines)
    assert lines == ['127.0.0.1 "GET /events HTTP/1.1" cut short: the server stopped']


def test_a_client_that_disconnects_mid_response_is_one_log_line():
    lines = []
    with serving(lambda req: HttpResponse(200, {}, b"x" * (32 << 20)), log=lines.append) as server:
        with socket.create_connection(server.server_address, timeout=3) as sock:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            sock.recv(1000)
        assert wait_for(lambda: lines)
    check_log(lines)
    (line,) = lines
    assert '"GET / HTTP/1.1" 200 client disconnected mid-response' in line


def test_an_exception_in_the_app_is_one_log_line_and_a_500_with_no_detail():
    lines = []

    def app(req):
        raise ValueError("secret \x1b detail")

    with serving(app, log=lines.append) as server:
        answer, closed = talk(server.server_address, b"GET /x HTTP/1.1\r\nHost: x\r\n\r\n")
        error = assert_refused(answer, closed, 500, code=-32603)
        assert error["error"]["message"] == "Internal error" and b"secret" not in answer
    check_log(lines)
    (line,) = lines
    assert "500" in line and "ValueError('secret \\x1b detail')" in line


def test_a_response_header_with_a_line_break_is_a_500_not_an_injected_header():
    lines = []
    app = lambda req: HttpResponse(200, {"X-Name": "a\r\nSet-Cookie: owned=1"}, b"")  # noqa: E731
    with serving(app, log=lines.append) as server:
        answer, closed = talk(server.server_address, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert_refused(answer, closed, 500, code=-32603)
        assert b"owned" not in answer
    check_log(lines)


# 7. Responses

def test_each_response_is_one_write_on_a_no_delay_socket(peer, monkeypatch):
    writes = []

    def watched(real):
        def write(sock, data, *args):
            if sock.getsockname() == peer.server_address:  # the server's end of a connection
                writes.append((bytes(data), sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)))
            return real(sock, data, *args)
        return write

    monkeypatch.setattr(socket.socket, "sendall", watched(socket.socket.sendall))
    monkeypatch.setattr(socket.socket, "send", watched(socket.socket.send))
    pipelined = request() + request("GET", "/.well-known/agent-card.json", headers=[], body=b"")
    answer, _ = talk(peer.server_address, pipelined, half_close=True)
    assert [r[0] for r in parse_responses(answer)] == [200, 200]
    assert len(writes) == 2 and all(nodelay for _, nodelay in writes)
    assert writes[0][0].startswith(b"HTTP/1.1 200 OK\r\n") and writes[0][0].endswith(b"}")
    assert b"Content-Length: " in writes[0][0] and b"Date: " in writes[0][0]


def test_each_answer_is_dated_with_the_second_it_is_written_in(monkeypatch):
    from transports.http11_server import response_head
    moments = iter([1_700_000_000.75, 1_700_000_001.25])
    monkeypatch.setattr(time, "time", lambda: next(moments))
    first, second = (response_head(200, {}, 0, close=False) for _ in range(2))
    assert b"\r\nDate: Tue, 14 Nov 2023 22:13:20 GMT\r\n" in first
    assert b"\r\nDate: Tue, 14 Nov 2023 22:13:21 GMT\r\n" in second


def test_keep_alive_for_http_1_1_unless_close_and_for_http_1_0_only_when_asked(peer):
    cases = [("HTTP/1.1", [], True), ("HTTP/1.1", [("Connection", "close")], False),
             ("HTTP/1.0", [], False), ("HTTP/1.0", [("Connection", "Keep-Alive")], True)]
    for version, extra, kept in cases:
        with socket.create_connection(peer.server_address, timeout=3) as sock:
            sock.sendall(request(version=version, headers=AUTH + extra))
            answer = sock.recv(65536)
            (status, headers, _), = parse_responses(answer)
            assert status == 200
            if kept:
                assert headers.get("connection", "keep-alive").lower() == "keep-alive"
                sock.sendall(request(version=version, headers=AUTH + extra))
                assert sock.recv(65536).startswith(b"HTTP/1.1 200")
            else:
                assert headers["connection"] == "close" and sock.recv(10) == b""


def test_expect_100_continue_is_answered_before_the_body_is_sent(peer):
    with socket.create_connection(peer.server_address, timeout=3) as sock:
        sock.sendall(request(headers=AUTH + [("Expect", "100-continue")])[:-len(FRAME)])
        assert sock.recv(65536) == b"HTTP/1.1 100 Continue\r\n\r\n"
        sock.sendall(FRAME)
        assert sock.recv(65536).startswith(b"HTTP/1.1 200")


@pytest.mark.parametrize("seed", range(5))
def test_expect_100_continue_on_a_kept_connection_is_answered_once(peer, seed):
    """A keep-alive client's next request, its head there at once and its body waiting for the
    100 Continue: the worker that answered the one before reads that head early, and gives it back
    to the loop; the client hears 100 Continue once, not once from each."""
    rng = random.Random(seed)
    with socket.create_connection(peer.server_address, timeout=3) as sock:
        sock.sendall(request(headers=AUTH))
        first = b""
        while b"}" not in first:
            first += sock.recv(65536)
        time.sleep(rng.choice([0, 0.001, 0.005]))
        sock.sendall(request(headers=AUTH + [("Expect", "100-continue")])[:-len(FRAME)])
        said = b""
        while b"\r\n\r\n" not in said:
            said += sock.recv(65536)
        assert said == b"HTTP/1.1 100 Continue\r\n\r\n"
        sock.sendall(FRAME)
        answer = b""
        while b"}" not in answer:
            answer += sock.recv(65536)
        assert answer.startswith(b"HTTP/1.1 200"), answer[:200]


# 8. Streaming

def test_an_iterator_body_is_sent_chunked_and_each_chunk_is_flushed_as_it_comes():
    first_seen = threading.Event()

    def events():
        yield b"data: one\n\n"
        assert first_seen.wait(3), "the first chunk reached the client before the second was made"
        yield b""  # nothing to send: must not end the stream early
        yield b"data: two\n\n"

    app = lambda req: HttpResponse(200, {"Content-Type": "text/event-stream"}, events())  # noqa: E731
    with serving(app) as server:
        with socket.create_connection(server.server_address, timeout=3) as sock:
            sock.sendall(b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
            answer = b""
            while b"data: one" not in answer:
                answer += sock.recv(65536)
            first_seen.set()
            while not answer.endswith(b"0\r\n\r\n"):
                answer += sock.recv(65536)
        ((status, headers, body),) = parse_responses(answer)
        assert headers["transfer-encoding"] == "chunked" and "content-length" not in headers
        assert body == b"data: one\n\ndata: two\n\n"
        answer, closed = talk(server.server_address, b"GET /events HTTP/1.0\r\n\r\n")
        first_seen.set()
        assert answer.endswith(b"data: one\n\ndata: two\n\n") and closed, "HTTP/1.0: ends at close"


def test_a_client_leaving_mid_stream_closes_the_iterator_and_is_one_log_line():
    closed, lines = threading.Event(), []

    def events():
        try:
            while True:
                yield b"data: tick\n\n" + b" " * 65536
        finally:
            closed.set()

    app = lambda req: HttpResponse(200, {"Content-Type": "text/event-stream"}, events())  # noqa: E731
    with serving(app, log=lines.append) as server:
        with socket.create_connection(server.server_address, timeout=3) as sock:
            sock.sendall(b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
            answer = b""
            while b"data: tick" not in answer:  # the head leaves first, then each chunk
                answer += sock.recv(65536)
        assert closed.wait(3)
        assert wait_for(lambda: lines)
    check_log(lines)
    (line,) = lines
    assert "client disconnected mid-response" in line


# 9. Stopping

def test_stop_is_prompt_with_idle_half_sent_and_dripping_connections_open():
    server = serving(PeerApp(billing.billing_agent(), wire_essay), request_timeout=30,
                     idle_timeout=30)
    before = set(threading.enumerate())
    with server as running:
        idle = socket.create_connection(running.server_address, timeout=3)
        half = socket.create_connection(running.server_address, timeout=3)
        half.sendall(request()[:50])
        assert wait_for(lambda: running.connections == 2)
        workers = threads_since(before) + [running._thread]  # the loop, and no thread per connection
        started = time.monotonic()
    assert time.monotonic() - started < 1.0
    assert not any(worker.is_alive() for worker in workers)
    assert closed(idle) and closed(half)
    idle.close()
    half.close()


def closed(sock) -> bool:
    """Whether the server has closed `sock`: an end of file, or a reset (a close with bytes of the
    client's still unread in the kernel, as the half-sent request's may be if stop comes first)."""
    try:
        return sock.recv(10) == b""
    except ConnectionResetError:
        return True


# The fuzz test: ~2,000 mutated requests

HOSTILE = [b"\x00", b"\r", b"\n", b"\r\n", b" ", b"\t", b":", b"\xff", b"\x1b", b"0", b"-",
           b"\r\n\r\n", b"Transfer-Encoding: chunked\r\n", b"Content-Length: 5\r\n", b"\x85"]


def mutate(rng: random.Random, data: bytes) -> bytes:
    for _ in range(rng.randint(1, 3)):
        kind, at = rng.randrange(7), rng.randrange(len(data) + 1)
        if kind == 0:  # splice random bytes
            data = data[:at] + bytes(rng.randrange(256) for _ in range(rng.randint(1, 8))) + data[at:]
        elif kind == 1:  # splice a byte sequence that matters to HTTP
            data = data[:at] + rng.choice(HOSTILE) + data[at:]
        elif kind == 2:  # truncate
            data = data[:at]
        elif kind == 3:  # delete a span
            data = data[:at] + data[at + rng.randint(1, 20):]
        elif kind == 4:  # duplicate a header line
            lines = data.split(b"\r\n")
            i = rng.randrange(len(lines))
            data = b"\r\n".join(lines[:i + 1] + [lines[i]] + lines[i + 1:])
        elif kind == 5:  # replace one byte
            if data:
                at = min(at, len(data) - 1)
                data = data[:at] + bytes([rng.randrange(256)]) + data[at + 1:]
        else:  # a hostile header value
            value = rng.choice([b"\xc2\xb2", b"9" * 5000, b"-1", b"+12", b"chunked", b"x/a2a#",
                                b"a" * 17000, b"close", b"100-continue", b"\x00"])
            name = rng.choice([b"Content-Length", b"Host", b"Transfer-Encoding", b"Connection",
                               b"Expect", b"X-Any"])
            data = data.replace(b"\r\n", b"\r\n" + name + b": " + value + b"\r\n", 1)
    return data


def test_two_thousand_mutated_requests_each_get_a_well_formed_answer_or_a_clean_close(capsys):
    rng, lines = random.Random(20240611), []
    app = PeerApp(billing.billing_agent(), wire_essay, token="t0k", log=lines.append)
    valid = [request(), request("GET", "/.well-known/agent-card.json", headers=[], body=b""),
             request() + request()]
    statuses = {}
    before = set(threading.enumerate())
    with serving(app, log=lines.append, request_timeout=0.5, max_body=4096) as server:
        for i in range(2000):
            data = mutate(rng, rng.choice(valid))
            answer, closed = talk(server.server_address, data, half_close=True)
            assert closed, f"case {i}: the server kept a finished client waiting: {data[:200]!r}"
            try:
                responses = parse_responses(answer)
            except AssertionError as exc:
                raise AssertionError(f"case {i}: {data[:300]!r} -> {answer[:300]!r}") from exc
            for status, _, _ in responses:
                assert status != 500, f"case {i}: {data[:300]!r}"
                statuses[status] = statuses.get(status, 0) + 1
        assert delegation_succeeds(server), "a valid delegation still succeeds afterwards"
        assert wait_for(lambda: server.connections == 0), "every connection closed"
        # one client at a time needs a worker or two; a loaded machine, whose worker is late to
        # follow its connection (5 ms), one or two more: never one a request
        assert len(threads_since(before)) <= 1 + 4, "the loop, and the few workers the requests needed"
    check_log(lines)
    assert "Traceback" not in capsys.readouterr().err
    assert statuses.get(200, 0) > 100 and statuses.get(400, 0) > 100, statuses  # both kinds ran


def test_a_header_sent_twice_is_joined_with_a_comma_and_cookie_with_a_semicolon_as_its_pairs_are():
    """RFC 9110 5.3 joins a repeated field with ", "; a Cookie's pairs are parted by "; " (RFC 6265
    5.4; RFC 9113 8.2.3 joins HTTP/2's cookie crumbs so), or "a=1, b=2" reads as one cookie."""
    seen = []

    def app(request):
        seen.append(request.headers)
        return HttpResponse(204, {}, b"")
    with serving(app) as server:
        answer, _ = talk(server.server_address, request("GET", "/", headers=[
            ("Cookie", "a=1"), ("Cookie", "b=2"), ("X-Thing", "one"), ("X-Thing", "two"), ("Connection", "close")],
            body=b"", length=False))
    assert answer.startswith(b"HTTP/1.1 204")
    assert seen[0]["cookie"] == "a=1; b=2" and seen[0]["x-thing"] == "one, two"


def test_a_refusal_of_an_absolute_form_request_to_an_http_json_route_is_worded_as_that_route_words_it():
    """The server's own refusal (a body too large, here) is worded by the binding at the request's
    path: for an absolute-form target it fell back to JSON-RPC's words on an HTTP+JSON route."""
    app = PeerApp(billing.billing_agent(), wire_v10, token="t0k")
    with serving(app) as server:
        for target in ("/a2a/message:send", "http://127.0.0.1/a2a/message:send"):
            data = request(target=target, length=False).replace(b"\r\n\r\n", b"\r\nContent-Length: 99999999\r\n\r\n", 1)
            (response,) = parse_responses(talk(server.server_address, data)[0])
            assert response[0] == 413 and json.loads(response[2])["error"]["status"] == "INVALID_ARGUMENT", target


def logged_after(peer, targets):
    """The server's log once each of `targets` was asked for with a GET, each on a connection of its own."""
    import http.client
    for target in targets:
        connection = http.client.HTTPConnection(*peer.server_address[:2], timeout=5)
        try:
            connection.request("GET", target)
            connection.getresponse().read()
        finally:
            connection.close()
    assert wait_for(lambda: sum("GET /a2a" in line for line in peer.lines) >= len(targets)), peer.lines
    return "\n".join(peer.lines)


def test_a_key_a_client_puts_in_the_query_is_masked_in_the_servers_log(peer):
    """A client that sends its API key or token in the query (`?api_key=...`, wrongly: the card
    says a header) had it written whole to the server's log, in the request line."""
    secret = "k3y-0123456789abcdef"
    logged = logged_after(peer, (f"/a2a/tasks?api_key={secret}", f"/a2a?historyLength=1&access_token={secret}"))
    assert secret not in logged and "api_key=****" in logged and "access_token=****" in logged, logged


def test_a_key_in_the_query_under_the_header_name_a_card_names_is_masked_in_the_servers_log(peer):
    """`serve --auth apikey` names the header X-API-Key; a client putting the key in the query
    under that name (or `Authorization`, or any case or percent-encoding of a secret's name)
    had it written whole to the server's log: only a few lowercase names were masked."""
    secret = "k3y-0123456789abcdef"
    targets = (f"/a2a?X-API-Key={secret}", f"/a2a?historyLength=1&API_KEY={secret}",
               f"/a2a?Authorization=Bearer%20{secret}", f"/a2a?x%2Dapi%2Dkey={secret}")
    logged = logged_after(peer, targets)
    assert secret not in logged and logged.count("=****#") == len(targets), logged
    assert "historyLength=1&" in logged, "a field that is no secret is logged as it was sent"


def test_a_password_a_client_puts_in_an_absolute_form_targets_userinfo_is_masked_in_the_servers_log(peer):
    """`GET http://user:password@host/ HTTP/1.1` is refused (RFC 9110 4.2.4: userinfo in a
    request is an error), and its request line logged: with the password whole, before."""
    secret = "hunter2-0123456789"
    for target in (f"http://alice:{secret}@127.0.0.1/a2a", f"https://alice:{secret}@h/a2a/tasks?historyLength=1"):
        answer, _ = talk(peer.server_address, f"GET {target} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        assert answer.startswith(b"HTTP/1.1 400 "), answer[:80]
    assert wait_for(lambda: sum("alice:" in line for line in peer.lines) >= 2), peer.lines
    logged = "\n".join(peer.lines)
    assert secret not in logged and logged.count("alice:****#") == 2, logged


@pytest.mark.parametrize("waiting, said", [(2, 2), (40, 6)])
def test_requests_still_waiting_for_a_worker_when_the_server_stops_are_said_one_line_each_then_counted(waiting, said):
    """A stopping server begins no request still waiting for a worker (workers.py): each was closed
    unanswered and unsaid. Now each is one line, the first few; past them one line counts the rest,
    so a thousand waiting is not a thousand lines."""
    from transports.server import PeerServer
    release = threading.Event()

    def slow(request):  # holds the one worker until the test lets it go
        release.wait(5)
        return HttpResponse(200, {"Content-Type": "text/plain"}, b"ok")
    lines, clients = [], []
    server = PeerServer(slow, "127.0.0.1", 0, log=lines.append, max_workers=1).start()
    stopping = threading.Thread(target=server.stop)
    try:
        for n in range(waiting + 1):  # the first is being answered; the rest wait for the one worker
            clients.append(socket.create_connection(server.server_address, timeout=5))
            clients[-1].sendall(f"GET /asked-{n} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        assert wait_for(lambda: len(server.workers.waiting) == waiting)
        stopping.start()
        assert wait_for(lambda: server.workers.closed)  # closed before the worker is free: it begins none of them
        release.set()
        stopping.join(10)
    finally:
        release.set()
        for client in clients:
            client.close()
    check_log(lines)
    dropped = [line for line in lines if "dropped" in line]
    assert len(dropped) == said and not stopping.is_alive(), lines
    assert dropped[0] == '127.0.0.1 "GET /asked-1 HTTP/1.1" dropped unanswered: the server stopped before a worker began it'
    if waiting > said:
        assert dropped[-1] == f"{waiting - 5} more requests dropped unanswered: the server stopped before a worker " \
                              "began them"
    assert lines[0] == '127.0.0.1 "GET /asked-0 HTTP/1.1" 200', "the one begun is answered and said as ever"
