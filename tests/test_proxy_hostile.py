"""The proxy under hostile input (issue 34, items 2, 4 and 6): an agent that answers garbage, an
endless body, a drip or a redirect, and a client that sends garbage, each a one-line finding
and a clean answer to the other side, the proxy serving on; a stream passed on event by event
as it arrives; each answer judged by check's single-frame rules without changing a byte.
The agents here are test doubles played on 127.0.0.1 (raw sockets, or apps on our server)."""
import json
import re
import socket
import threading
import time
from contextlib import contextmanager

import pytest

from proxy_helpers import billing_served, proxy_to
from transports.base import ClientRequest, HttpResponse
from transports.network import HttpTransport
from transports.server import PeerServer

RPC = {"Content-Type": "application/json"}
RPC_10 = {**RPC, "A2A-Version": "1.0"}  # 1.0's errors carry an ErrorInfo; 0.3's (no version asked) need not
ASK = b'{"jsonrpc": "2.0", "id": 5, "method": "GetTask", "params": {"id": "t"}}'


@contextmanager
def raw_agent(script):
    """An agent that reads a request head, then does `script(sock)`: whatever bytes it likes."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                sock, _ = listener.accept()
            except OSError:
                continue
            with sock:
                sock.settimeout(5)
                with __import__("contextlib").suppress(OSError):
                    got = b""
                    while b"\r\n\r\n" not in got:
                        got += sock.recv(4096) or b"\r\n\r\n"
                    head, _, body = got.partition(b"\r\n\r\n")
                    length = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head)
                    while length and len(body) < int(length[1]):  # the body read too: a close with it
                        body += sock.recv(4096) or b" " * int(length[1])  # unread would be a reset, not an answer
                    script(sock, stop)
    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(5)
        listener.close()


def endless(sock, stop):
    sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
    while not stop.is_set():
        sock.sendall(b"10000\r\n" + b" " * 0x10000 + b"\r\n")


def drip(sock, stop):
    for byte in b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}":
        if stop.wait(0.3):
            return
        sock.sendall(bytes([byte]))


AGENTS = {
    "garbage": (lambda sock, stop: sock.sendall(b"\x00\xffNOT HTTP AT ALL\r\n\r\n"), 502, "does not start with an HTTP"),
    "endless body": (endless, 502, "limit"),
    "slow drip": (drip, 504, "within 0.5s"),
    "closed at once": (lambda sock, stop: None, 502, "connection broke"),
    # It closes after answering, and says so: without Connection: close, the proxy could take the
    # connection for a kept one just before the close arrived, and the next request meet it (a 502).
    "redirect": (lambda sock, stop: sock.sendall(b"HTTP/1.1 307 Temporary Redirect\r\nLocation: http://evil.example/a2a"
                                                 b"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"), 307,
                 "307 to http://evil.example/a2a; passed on, not followed"),
    "redirect nowhere": (lambda sock, stop: sock.sendall(b"HTTP/1.1 302 Found\r\nContent-Length: 0\r\n"
                                                         b"Connection: close\r\n\r\n"), 302,
                         "302 with no Location; passed on"),  # it said "to None"
}


@pytest.mark.parametrize("path, body, row", [
    ("/a2a", ASK, "JSONRPC-FMT-002"), ("/a2a/tasks/t", b"", "HTTP_JSON-SVC-001")], ids=["JSON-RPC", "HTTP+JSON"])
def test_a_body_that_is_not_json_under_a_json_media_type_is_passed_on_with_a_finding(path, body, row):
    """A 200 application/json answer of bytes that are no JSON was passed on with no line: judging
    the header alone, the rule let it by. It is passed on as sent (the proxy changes no answer),
    and said under its rule."""
    junk = bytes(range(256))[::7] * 3
    script = lambda sock, stop: sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"  # noqa: E731
                                             b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(junk), junk))
    with raw_agent(script) as agent, proxy_to(agent, timeout=0.5) as (proxy, lines):
        answer = HttpTransport(timeout=5).exchange(ClientRequest("POST" if body else "GET", proxy + path, RPC_10, body))
        assert (answer.status, answer.body) == (200, junk)
    said = [line for line in lines.lines if f"! {row} " in line]
    assert len(said) == 1 and "not JSON" in said[0], lines.text()


def test_a_304_is_no_redirect_and_no_finding():
    script = lambda sock, stop: sock.sendall(b"HTTP/1.1 304 Not Modified\r\nConnection: close\r\n\r\n")  # noqa: E731
    with raw_agent(script) as agent, proxy_to(agent, timeout=0.5) as (proxy, lines):
        assert HttpTransport(timeout=5).get(proxy + "/x", {}).status == 304
    assert "finding" not in lines.text() and "None" not in lines.text(), lines.text()


@pytest.mark.parametrize("name", list(AGENTS))
def test_a_hostile_agent_is_one_finding_and_a_clean_answer_and_the_proxy_serves_on(name):
    script, status, finding = AGENTS[name]
    with raw_agent(script) as agent, proxy_to(agent, timeout=0.5) as (proxy, lines):
        started = time.monotonic()
        answer = HttpTransport(timeout=5).post(proxy + "/a2a", ASK, RPC)
        assert time.monotonic() - started < 3  # bounded by the proxy's deadline, not the agent's whims
        assert answer.status == status
        again = HttpTransport(timeout=5).post(proxy + "/a2a", ASK, RPC)  # and the proxy still answers
        assert again.status == status
    findings = [line for line in lines.lines if finding in line]
    assert len(findings) == 2 and all("\n" not in line for line in findings), lines.text()
    assert "Traceback" not in lines.text()


@pytest.mark.parametrize("sent, status", [
    (b"GARBAGE\r\n\r\n", 400), (b"POST /a2a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501),
    (b"POST /a2a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFF\r\n", 413),
    (b"POST /a2a HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999\r\n\r\n", 413),
    (b"POST /a2a HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400)])
def test_a_hostile_client_is_refused_by_the_server_the_agent_never_asked(sent, status):
    seen = []
    with billing_served(seen=seen) as agent, proxy_to(agent) as (proxy, lines):
        with socket.create_connection(("127.0.0.1", int(proxy.rsplit(":", 1)[1])), timeout=5) as raw:
            raw.sendall(sent)
            answer = raw.recv(65536)
        assert answer.startswith(b"HTTP/1.1 %d" % status)
        assert HttpTransport(timeout=5).get(proxy + "/.well-known/agent-card.json", {}).status == 200
    assert [r.method for r in seen] == ["GET"]  # only the card, asked after
    assert sum(line.startswith("[proxy] client ") for line in lines.lines) == 1


def test_a_client_that_stops_reading_a_stream_closes_the_agents_stream():
    gate, closed = threading.Event(), threading.Event()

    def app(request):
        def events():
            try:
                for n in range(100):
                    yield b'data: {"jsonrpc": "2.0", "id": 1, "result": {"n": %d}}\n\n' % n
                    gate.wait(0.05)
            finally:
                closed.set()
        return HttpResponse(200, {"Content-Type": "text/event-stream"}, events())
    with served(app) as agent, proxy_to(agent) as (proxy, lines):
        stream = HttpTransport(timeout=5).stream(proxy + "/a2a", ASK, RPC)
        next(iter(stream.body))
        stream.body.close()
        assert closed.wait(5)
    assert "the client's stream ended early" in lines.text() or "client disconnected" in lines.text()


@contextmanager
def served(app):
    server = PeerServer(app, "127.0.0.1", 0, idle_timeout=2.0).start()
    try:
        yield server.base_url
    finally:
        server.stop()


def test_a_stream_is_passed_on_event_by_event_as_it_arrives():
    """The agent sends its second event only once the client has read the first through the
    proxy: a proxy that gathered the stream first would never deliver either."""
    first_read = threading.Event()

    def app(request):
        def events():
            yield b'data: {"jsonrpc": "2.0", "id": 5, "result": {"statusUpdate": {"status": {"state": "TASK_STATE_WORKING"}}}}\n\n'
            assert first_read.wait(5)
            yield b'data: {"jsonrpc": "2.0", "id": 5, "result": {"statusUpdate": {"status": {"state": "TASK_STATE_COMPLETED"}}}}\n\n'
        return HttpResponse(200, {"Content-Type": "text/event-stream"}, events())
    with served(app) as agent, proxy_to(agent) as (proxy, lines):
        stream = HttpTransport(timeout=5).stream(proxy + "/a2a", ASK, RPC)
        chunks = iter(stream.body)
        assert b"TASK_STATE_WORKING" in next(chunks)
        first_read.set()
        assert b"TASK_STATE_COMPLETED" in b"".join(chunks)
    assert "! " not in lines.text()  # a stream that ends on a final event breaks no rule


def answering(status, content_type, body, stream=False):
    payload = json.dumps(body).encode()
    return lambda request: HttpResponse(status, {"Content-Type": content_type},
                                        iter([b"data: " + payload + b"\n\n"]) if stream else payload)


JUDGED = [
    ("JSONRPC-FMT-002", RPC, answering(200, "text/plain", {"jsonrpc": "2.0", "id": 5, "result": {}})),
    ("JSONRPC-ERR-001", RPC, answering(200, "application/json",
                                       {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "no"}})),
    ("JSONRPC-ERR-001", RPC, answering(200, "application/json", {"jsonrpc": "2.0", "id": 5, "result": {"ok": True},
                                                                  "error": {"code": -32601, "message": "no"}})),
    ("JSONRPC-ERR-003", RPC_10, answering(200, "application/json",
                                       {"jsonrpc": "2.0", "id": 5, "error": {"code": -32001, "message": "none"}})),
    ("HTTP_JSON-STATUS-001", {"Content-Type": "application/a2a+json"}, answering(
        400, "application/a2a+json", {"error": {"code": 404, "status": "NOT_FOUND", "message": "no task"}})),
    ("HTTP_JSON-ERR-001", {"Content-Type": "application/a2a+json"}, answering(500, "application/json", {"oops": 1})),
    ("WB-STREAM-FINAL-001", RPC, answering(200, "text/event-stream", {"jsonrpc": "2.0", "id": 5, "result": {
        "statusUpdate": {"status": {"state": "TASK_STATE_WORKING"}}}}, stream=True)),
]


@pytest.mark.parametrize("rule, headers, app", JUDGED, ids=[rule for rule, _, _ in JUDGED])
def test_an_answer_breaking_a_single_frame_rule_is_annotated_and_forwarded_unchanged(rule, headers, app):
    body = ASK if headers in (RPC, RPC_10) else b'{"message": {}}'
    path = "/a2a" if headers in (RPC, RPC_10) else "/a2a/message:send"  # an HTTP+JSON operation's route
    with served(app) as agent:
        direct = HttpTransport(timeout=5).stream(agent + path, body, headers)
        direct_body = direct.body if isinstance(direct.body, bytes) else b"".join(direct.body)
        with proxy_to(agent) as (proxy, lines):
            through = HttpTransport(timeout=5).stream(proxy + path, body, headers)
            through_body = through.body if isinstance(through.body, bytes) else b"".join(through.body)
    assert (through.status, through_body) == (direct.status, direct_body)
    notes = [line for line in lines.lines if line.startswith("    ! ")]
    assert [note.split()[1] for note in notes] == [rule], lines.text()


def test_our_peers_refusals_before_reading_a_frame_break_no_rule_and_1_0s_carry_an_error_info():
    """Refused at the HTTP level (no credential, not JSON), our peer answers id null (it did not
    read the frame, so it knows no id), its error with 1.0's ErrorInfo when 1.0 was asked for
    (0.3's error data, no version asked, is free-form): the proxy judges each lawful."""
    frame = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "GetTask", "params": {"id": "x"}}).encode()
    with billing_served() as agent, proxy_to(agent) as (proxy, lines):
        for version in ({"A2A-Version": "1.0"}, {}):
            for headers, status in (({"Content-Type": "text/plain", "Authorization": "Bearer proxy-test-token"}, 415),
                                    ({"Content-Type": "application/json"}, 401)):
                answer = HttpTransport(timeout=5).post(proxy + "/a2a", frame, {**headers, **version})
                error = json.loads(answer.body)["error"]
                assert answer.status == status and json.loads(answer.body)["id"] is None, answer.body
                info = [item for item in error.get("data") or [] if isinstance(item, dict) and "reason" in item]
                assert info or not version, (version, error)
    assert "! " not in lines.text(), lines.text()


def test_a_body_refused_for_its_media_type_with_200_and_a_null_id_breaks_no_rule():
    """The JavaScript SDK answers a text/plain POST with 200, -32005 and "id": null, not having read
    the body (JSON-RPC 2.0 section 5: null when the id could not be detected): the proxy flagged
    JSONRPC-ERR-001, as it let a null id pass only with a 401, 413 or 415."""
    refused = {"jsonrpc": "2.0", "id": None, "error": {"code": -32005, "message": "Unsupported Content-Type", "data": [
        {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "CONTENT_TYPE_NOT_SUPPORTED",
         "domain": "a2a-protocol.org"}]}}
    with served(answering(200, "application/json", refused)) as agent, proxy_to(agent) as (proxy, lines):
        answer = HttpTransport(timeout=5).post(proxy + "/a2a", ASK, {"Content-Type": "text/plain", "A2A-Version": "1.0"})
        assert answer.status == 200 and json.loads(answer.body) == refused
    assert "! " not in lines.text(), lines.text()


def test_our_peers_json_rpc_answer_to_a_stray_get_is_not_judged_by_http_json_rules():
    """A GET of a path no binding has (`/../../etc/passwd`) is answered with a JSON-RPC error: it was
    judged as an HTTP+JSON error whose code disagreed with its status."""
    with billing_served() as agent, proxy_to(agent) as (proxy, lines):
        answer = HttpTransport(timeout=5).get(proxy + "/../../etc/passwd", {})
        assert answer.status == 404 and b'"jsonrpc"' in answer.body, answer.body
    assert "! " not in lines.text(), lines.text()


def test_a_path_no_http_json_operation_has_is_not_judged_by_the_bindings_rules():
    """Section 11's rules are for operations' answers: the official SDKs answer a path no route has
    (GET /rest/wb-check-no-such-route, check's own probe) with a text/plain or HTML 404, and the
    proxy flagged it HTTP_JSON-SVC-001 and HTTP_JSON-ERR-001. An operation's such answer still is."""
    app = answering(404, "text/plain", "Not Found")
    with served(app) as agent, proxy_to(agent) as (proxy, lines):
        assert HttpTransport(timeout=5).get(proxy + "/rest/wb-check-no-such-route", {}).status == 404
        assert "! " not in lines.text(), lines.text()
        assert HttpTransport(timeout=5).get(proxy + "/rest/tasks/t-1", {}).status == 404
    notes = [line.split()[1:3] for line in lines.lines if line.startswith("    ! ")]
    assert notes == [["HTTP_JSON-SVC-001", "SHOULD"], ["HTTP_JSON-ERR-001", "MUST"]], lines.text()


def test_a_stream_held_open_does_not_hold_up_another_clients_request():
    """Each worker speaks to the agent on a connection of its own: a long stream and a quick
    request at the same time both get through."""
    release = threading.Event()

    def app(request):
        if b"GetTask" in request.body:
            return HttpResponse(200, RPC, b'{"jsonrpc": "2.0", "id": 5, "result": {"id": "t"}}')

        def events():
            yield b'data: {"jsonrpc": "2.0", "id": 5, "result": {"statusUpdate": {"status": {"state": "TASK_STATE_WORKING"}}}}\n\n'
            release.wait(5)
            yield b'data: {"jsonrpc": "2.0", "id": 5, "result": {"statusUpdate": {"status": {"state": "TASK_STATE_COMPLETED"}}}}\n\n'
        return HttpResponse(200, {"Content-Type": "text/event-stream"}, events())
    with served(app) as agent, proxy_to(agent) as (proxy, lines):
        stream = HttpTransport(timeout=5).stream(proxy + "/a2a", ASK.replace(b"GetTask", b"SendStreamingMessage"), RPC)
        chunks = iter(stream.body)
        next(chunks)
        quick = HttpTransport(timeout=5).post(proxy + "/a2a", ASK, RPC)  # while the stream waits
        assert quick.status == 200 and b'"result"' in quick.body
        release.set()
        assert b"TASK_STATE_COMPLETED" in b"".join(chunks)


@pytest.mark.parametrize("body, printed", [
    (b"[" * 100_000, "--> POST /a2a [[["),  # deeper than any JSON reader recurses: not JSON-RPC, not a crash
    (b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": NaN}}', '--> {"jsonrpc"'),
    (b'{"\\u006asonrpc": "2.0", "id": 1, "method": "GetTask"}', '--> {"\\u006asonrpc"'),  # a key spelled escaped
    ('[{"jsonrpc": "2.0"}]'.encode("utf-16"), "--> POST /a2a \\xff\\xfe["),  # JSON, but not UTF-8: not read
])
def test_a_client_body_is_told_json_rpc_or_not_by_what_it_is_and_forwarded_unchanged(body, printed):
    seen = []
    with billing_served(seen=seen) as agent, proxy_to(agent) as (proxy, lines):
        answer = HttpTransport(timeout=5).post(proxy + "/a2a", body, {"Content-Type": "application/a2a+json"})
        assert answer.status < 500  # the agent refuses it, as it likes: the proxy passed it on
    assert [request.body for request in seen] == [body]
    assert any(line.startswith(f"[#1 client -> agent] {printed}") for line in lines.lines), lines.text()
    assert "Traceback" not in lines.text()


@pytest.mark.parametrize("body", [b'{"jsonrpc": "2.0", "id": 1, "result": ' + b"[" * 40 + b"]" * 40 + b"}",
                                  b'{"jsonrpc": "2.0", "id": 1, "result": ' + b"1" * 50 + b"}",
                                  b'{"jsonrpc": "2.0", "id": 1, "id": 1, "result": {}}'],
                         ids=["nested 40 deep", "a 50-digit number", "a name twice"])
def test_json_past_the_proxys_reading_limits_is_not_said_to_be_not_json(body):
    """The strict codec's limits (depth 32, numbers of 40 characters, a name once) say what we read,
    not what JSON is: such a body was flagged `JSONRPC-FMT-002 MUST ... is not JSON`."""
    script = lambda sock, stop: sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"  # noqa: E731
                                             b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body))
    with raw_agent(script) as agent, proxy_to(agent, timeout=0.5) as (proxy, lines):
        answer = HttpTransport(timeout=5).exchange(ClientRequest("POST", proxy + "/a2a", RPC_10, ASK))
        assert (answer.status, answer.body) == (200, body)
    assert not [line for line in lines.lines if "is not JSON" in line], lines.text()


@pytest.mark.parametrize("body", [b'{"jsonrpc": "2.0", "id": 1, "result": NaN}',
                                  '{"jsonrpc": "2.0", "id": 1, "result": {}}'.encode("utf-16"),
                                  b'{"jsonrpc": "2.0", "id": 1, "result": {}} and more'],
                         ids=["NaN", "UTF-16", "text after it"])
def test_what_a_quick_read_takes_but_json_is_not_is_still_said_to_be_not_json(body):
    """A success's body is read for its syntax by the C scanner (quick), then, if that fails, strictly: what
    Python's json takes (NaN, a UTF-16 body it detects) and JSON does not (RFC 8259 6, 8.1) is still said."""
    script = lambda sock, stop: sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"  # noqa: E731
                                             b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body))
    with raw_agent(script) as agent, proxy_to(agent, timeout=0.5) as (proxy, lines):
        HttpTransport(timeout=5).exchange(ClientRequest("POST", proxy + "/a2a", RPC_10, ASK))
    assert len([line for line in lines.lines if "! JSONRPC-FMT-002 " in line and "not JSON" in line]) == 1, lines.text()


def test_a_request_never_forwarded_is_said_to_have_reached_nothing_and_one_forwarded_may_have_been_acted_on():
    """A --> line printed for a request the agent never got (nothing listens) and for one it got and
    never answered were followed by the same kind of finding, and the client by the same 502 or 504:
    neither said which, though whether the agent may have acted is what a person watching needs."""
    closed = socket.socket()  # bound, not listening: a connection to it is refused, and no one else takes the port
    closed.bind(("127.0.0.1", 0))
    silent = lambda sock, stop: stop.wait(3)  # noqa: E731 (reads the request, answers nothing)
    try:
        with proxy_to(f"http://127.0.0.1:{closed.getsockname()[1]}", timeout=0.5) as (proxy, lines):
            refused = HttpTransport(timeout=5).post(proxy + "/a2a", ASK, RPC)
        with raw_agent(silent) as agent, proxy_to(agent, timeout=0.5) as (proxy, taken):
            unanswered = HttpTransport(timeout=5).post(proxy + "/a2a", ASK, RPC)
    finally:
        closed.close()
    assert refused.status == 502 and b"nothing was sent" in refused.body, refused.body
    assert [line for line in lines.lines if "finding" in line and "nothing was sent" in line], lines.text()
    assert unanswered.status == 504 and b"may have been acted on" in unanswered.body, unanswered.body
    assert [line for line in taken.lines if "finding" in line and "may have been acted on" in line], taken.text()


def test_twice_whose_second_copy_finds_nothing_listening_says_the_first_may_have_been_acted_on():
    """--fault twice: the first copy reached the agent (and was answered); the second, to an agent
    gone since, was refused. 'nothing was sent, so a retry is safe' was said of a request the agent took."""
    listener = socket.create_server(("127.0.0.1", 0))

    def answer_once():  # one request answered, then nothing listens: the second copy's connect is refused
        sock, _ = listener.accept()
        with sock:
            sock.settimeout(5)
            got = b""
            while b"\r\n\r\n" not in got or len(got.partition(b"\r\n\r\n")[2]) < len(ASK):
                got += sock.recv(4096) or b"\r\n\r\n" + ASK
            listener.close()
            body = b'{"jsonrpc": "2.0", "id": 5, "result": {}}'
            sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
                         b"Connection: close\r\n\r\n%s" % (len(body), body))
    threading.Thread(target=answer_once, daemon=True).start()
    with proxy_to(f"http://127.0.0.1:{listener.getsockname()[1]}", "twice:1", timeout=2) as (proxy, lines):
        got = HttpTransport(timeout=5).post(proxy + "/a2a", ASK, RPC)
    assert got.status == 502 and b"may have been acted on" in got.body, got.body
    assert [line for line in lines.lines if "finding" in line and "may have been acted on" in line], lines.text()
