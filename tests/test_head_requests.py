"""HEAD (RFC 9110 9.3.2): answered wherever GET is, with GET's status and headers and no body.

Over raw frames on a real socket (127.0.0.1, port 0, every read under a deadline): a HEAD
and a GET are sent back to back on one connection, so a single body byte after the HEAD's
head would show up where the GET's status line must begin. The card is the case the issue
names; the same holds for every GET the peer answers (an HTTP+JSON route, a subscription,
which is opened and closed unread) and HEAD is refused where GET is (the JSON-RPC endpoint
takes POST alone: 405 there, on the one route JSON-RPC has).
"""
import json
import re
import socket
import time

import pytest

from conftest import serving
from peers import billing
from peers.a2a.wire_format import CARD_PATH, by_name
from peers.app import PeerApp
from peers.streaming import MAX_STREAMS

TOKEN = "t0k"
AUTH = {"A2A-Version": "1.0", "Authorization": f"Bearer {TOKEN}"}


def frame(verb, path, headers=None, body=b"", version="HTTP/1.1"):
    fields = {"Host": "127.0.0.1", **AUTH, **(headers or {})}
    if body or verb == "POST":
        fields.update({"Content-Length": str(len(body)), "Content-Type": "application/json"})
    return (f"{verb} {path} {version}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in fields.items())
            + "\r\n").encode() + body


class Wire:
    """One connection read by hand: `head()` takes one response head, `body(n)` n bytes after it."""

    def __init__(self, address, timeout=5.0):
        self.sock, self.buffer = socket.create_connection(address, timeout=timeout), b""
        self.deadline = time.monotonic() + timeout

    def fill(self, enough):
        while not enough():
            assert time.monotonic() < self.deadline, f"no answer in time: {self.buffer[:200]!r}"
            chunk = self.sock.recv(65536)
            assert chunk, f"closed by the server: {self.buffer[:200]!r}"
            self.buffer += chunk

    def head(self):
        self.fill(lambda: b"\r\n\r\n" in self.buffer)
        head, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        status_line, *lines = head.decode("latin-1").split("\r\n")
        return int(status_line.split(" ")[1]), {k.lower(): v.strip() for k, _, v in (x.partition(":") for x in lines)}

    def body(self, length):
        self.fill(lambda: len(self.buffer) >= length)
        body, self.buffer = self.buffer[:length], self.buffer[length:]
        return body

    def close(self):
        self.sock.close()


def head_then_get(address, path, headers=None):
    """HEAD and GET of `path` sent together on one connection: (HEAD's status and headers,
    GET's status, headers and body). The GET's status line must follow the HEAD's head at once."""
    wire = Wire(address)
    try:
        wire.sock.sendall(frame("HEAD", path, headers) + frame("GET", path, headers))
        head_status, head_headers = wire.head()
        wire.fill(lambda: len(wire.buffer) >= 9)
        assert wire.buffer.startswith(b"HTTP/1.1 "), f"bytes after HEAD's head: {wire.buffer[:80]!r}"
        get_status, get_headers = wire.head()
        body = wire.body(int(get_headers.get("content-length", 0)))
    finally:
        wire.close()
    return head_status, head_headers, get_status, get_headers, body


def live_task(wire):
    """A refund that takes the slow peer a second, answered at once (returnImmediately): its id."""
    sent = {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"data": {"order_id": "ORD-1", "amount": 5}}]},
            "configuration": {"returnImmediately": True}}
    wire.sock.sendall(frame("POST", "/a2a/message:send", body=json.dumps(sent).encode()))
    status, headers = wire.head()
    assert status == 200
    return json.loads(wire.body(int(headers["content-length"])))["task"]["id"]


def without_date(headers):
    return {name: value for name, value in headers.items() if name != "date"}


@pytest.fixture
def peer():
    app = PeerApp(billing.billing_agent(slow=1.0), by_name("1.0"), token=TOKEN)
    with serving(app, idle_timeout=5.0) as server:
        yield server.server_address[:2]


def test_head_on_the_card_is_gets_status_and_headers_without_the_body(peer):
    head_status, head_headers, get_status, get_headers, card = head_then_get(peer, CARD_PATH)
    assert head_status == get_status == 200 and json.loads(card)["name"] == "billing-agent"
    assert without_date(head_headers) == without_date(get_headers), "the same headers as GET's"
    assert head_headers["content-length"] == str(len(card)), "GET's length, though no body follows"
    etag = {"If-None-Match": get_headers["etag"]}
    assert head_then_get(peer, CARD_PATH, etag)[::2][:2] == (304, 304), "conditional HEAD as conditional GET"


def test_head_on_an_http_json_get_route_answers_as_its_get_and_is_refused_where_get_is(peer):
    wire = Wire(peer)
    try:
        task_id = live_task(wire)
        for path, status, allow in [(f"/a2a/tasks/{task_id}", 200, None), ("/a2a/tasks/no-such", 404, None),
                                    (f"/a2a/tasks/{task_id}:cancel", 405, "POST"), ("/a2a/message:send", 405, "POST"),
                                    ("/a2a", 405, "POST"),  # JSON-RPC's endpoint: POST alone, so no HEAD either
                                    ("/nothing/here", 404, None)]:
            wire.sock.sendall(frame("HEAD", path) + frame("GET", path))
            head_status, head_headers = wire.head()
            get_status, get_headers = wire.head()
            assert head_status == get_status == status and head_headers.get("allow") == allow, path
            assert head_headers["content-length"] == get_headers["content-length"] != "0"
            wire.body(int(get_headers["content-length"]))
        wire.sock.sendall(frame("PUT", f"/a2a/tasks/{task_id}", {"Content-Length": "0"}))
        assert wire.head()[1]["allow"] == "GET, HEAD", "where GET is answered, so is HEAD"
    finally:
        wire.close()


def test_head_on_a_subscription_opens_none_that_stays_open(peer):
    """More HEADs than a peer keeps streams open at once: each GET's stream is closed
    unread, so a real subscription still gets a slot afterwards."""
    wire = Wire(peer, timeout=15.0)
    try:
        task_id = live_task(wire)
        for _ in range(MAX_STREAMS + 4):
            wire.sock.sendall(frame("HEAD", f"/a2a/tasks/{task_id}:subscribe"))
            status, headers = wire.head()
            assert (status, headers["content-type"]) == (200, "text/event-stream")
        wire.sock.sendall(frame("GET", f"/a2a/tasks/{task_id}:subscribe"))
        status, _ = wire.head()
        wire.fill(lambda: b"data: " in wire.buffer)
        assert status == 200 and task_id.encode() in wire.buffer
    finally:
        wire.close()


@pytest.mark.parametrize("extra, status", [
    ({"Content-Length": "5"}, 400),  # a HEAD's body has no meaning: it could only hide a request
    ({"Transfer-Encoding": "chunked"}, 400),
    ({"Content-Length": "0"}, 200),
])
def test_a_head_with_a_body_is_refused_as_a_get_with_one_is(peer, extra, status):
    wire = Wire(peer)
    try:
        wire.sock.sendall(frame("HEAD", CARD_PATH, extra) + (b"GET /" if extra.get("Content-Length") == "5" else b""))
        assert wire.head()[0] == status
    finally:
        wire.close()


def test_an_http_1_0_head_on_a_stream_keeps_the_connection_it_asked_to_keep(peer):
    """HTTP/1.0 has no chunks, so a streamed GET ends by closing; its HEAD sends no body,
    so nothing needs to close."""
    wire = Wire(peer)
    try:
        task_id = live_task(wire)
        for _ in range(2):
            wire.sock.sendall(frame("HEAD", f"/a2a/tasks/{task_id}:subscribe", {"Connection": "keep-alive"},
                                    version="HTTP/1.0"))
            status, headers = wire.head()
            assert (status, headers["content-type"], headers["connection"]) == (200, "text/event-stream", "keep-alive")
            assert "content-length" not in headers and "transfer-encoding" not in headers
    finally:
        wire.close()


@pytest.mark.parametrize("path", [b"/a2a/tasks/t-1", b"/.well-known/agent-card.json"])
def test_a_head_the_server_refuses_itself_gets_the_head_alone(peer, path):
    """A HEAD refused before the app sees it (here, its head too large) is answered with the
    status and headers a GET would get, the body's length said and the body not sent (RFC 9110
    9.3.2), in both shapes: an HTTP+JSON route's and JSON-RPC's."""
    with socket.create_connection(peer, timeout=5) as sock:
        sock.sendall(b"HEAD %s HTTP/1.1\r\nHost: x\r\n%s\r\n" % (path, b"X-A: 1\r\n" * 120))
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, rest = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 431 ") and rest == b"", answer
    assert int(re.search(rb"\r\nContent-Length: (\d+)", head)[1]) > 0, head
