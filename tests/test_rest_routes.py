"""HTTP+JSON routing by the whole path (A2A 1.0 section 11.3), over raw frames on a real socket.

A task id fills one path segment, and a path may end in a custom verb (`tasks/{id}:cancel`);
the id must not swallow the verb, or `GET tasks/t-1:cancel` is taken for GetTask of a task
"t-1:cancel" and answers 404 where the route is known and the verb wrong (405). Each test
uses a live task (billing, made slow, answering with returnImmediately) so a wrong route
shows as a wrong answer about a real task, not as the 404 an unknown id gives either way.
JSON-RPC has no such routes: every operation is POSTed to the endpoint itself, so its only
case here is the endpoint asked with another verb.
"""
import json
import re
import socket
import time

import pytest

from conftest import serving
from peers import billing, rest
from peers.a2a import routes
from peers.a2a.wire_format import by_name
from peers.app import PeerApp
from peers.support.calling import http_json

TOKEN = "t0k"
AUTH = f"A2A-Version: 1.0\r\nAuthorization: Bearer {TOKEN}\r\n"
SLOW = 1.0  # seconds the refund takes: the task stays live (WORKING) through each test


def request(verb, path, body=b"", extra=""):
    length = (f"Content-Length: {len(body)}\r\n" if body or verb == "POST" else "") + (
        "Content-Type: application/json\r\n" if body else "")
    return f"{verb} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{AUTH}{length}{extra}\r\n".encode() + body


class Connection:
    """One kept-alive connection; `ask` sends a request and reads one response by its framing:
    its Content-Length, or for an event stream up to its first event. Every read has a deadline."""

    def __init__(self, address, timeout=5.0):
        self.sock, self.buffer = socket.create_connection(address, timeout=timeout), b""
        self.deadline = time.monotonic() + timeout

    def read_until(self, done):
        while not done(self.buffer):
            assert time.monotonic() < self.deadline, f"no full answer in time: {self.buffer[:200]!r}"
            chunk = self.sock.recv(65536)
            assert chunk, f"the server closed mid-answer: {self.buffer[:200]!r}"
            self.buffer += chunk

    def ask(self, verb, path, body=b""):
        self.sock.sendall(request(verb, path, body))
        self.read_until(lambda data: b"\r\n\r\n" in data)
        head, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        status = int(head.split(b" ")[1])
        headers = {name.strip().lower(): value.strip() for name, _, value in
                   (line.decode("latin-1").partition(":") for line in head.split(b"\r\n")[1:])}
        if headers.get("content-type") == "text/event-stream":
            self.read_until(lambda data: re.search(rb"data: [^\n]*\n", data))
            return status, headers, json.loads(re.search(rb"data: ([^\n]*)\n", self.buffer)[1])
        length = int(headers["content-length"])
        self.read_until(lambda data: len(data) >= length)
        body, self.buffer = self.buffer[:length], self.buffer[length:]
        return status, headers, json.loads(body) if body else None

    def close(self):
        self.sock.close()


@pytest.fixture
def live():
    """A served billing peer and a task of it still being worked on: (address, task id)."""
    app = PeerApp(billing.billing_agent(slow=SLOW), by_name("1.0"), token=TOKEN)
    sent = {"message": {"messageId": "m-1", "role": "ROLE_USER",
                        "parts": [{"data": {"order_id": "ORD-1", "amount": 5}}]},
            "configuration": {"returnImmediately": True}}
    with serving(app, idle_timeout=5.0) as server:
        address = server.server_address[:2]
        connection = Connection(address)
        try:
            status, _, answer = connection.ask("POST", "/a2a/message:send", json.dumps(sent).encode())
        finally:
            connection.close()
        assert status == 200 and answer["task"]["status"]["state"] == "TASK_STATE_SUBMITTED"
        yield address, answer["task"]["id"]


def still_live(address, task_id):
    connection = Connection(address)
    try:
        status, _, task = connection.ask("GET", f"/a2a/tasks/{task_id}")
    finally:
        connection.close()
    assert status == 200 and task["status"]["state"] in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")


def reason(body):
    return next(detail["reason"] for detail in body["error"]["details"]
                if detail["@type"] == "type.googleapis.com/google.rpc.ErrorInfo")


def test_get_tasks_id_cancel_on_a_live_task_is_405_allow_post_and_cancels_nothing(live):
    address, task_id = live
    connection = Connection(address)
    try:
        status, headers, body = connection.ask("GET", f"/a2a/tasks/{task_id}:cancel")
        assert (status, headers["allow"]) == (405, "POST"), "cancel is POST: a known route, the wrong verb"
        assert body["error"]["code"] == 405 and body["error"]["status"] == "UNIMPLEMENTED"
        status, headers, body = connection.ask("GET", f"/a2a/acme/tasks/{task_id}:cancel")  # under a tenant
        assert (status, headers["allow"]) == (405, "POST")
        status, headers, _ = connection.ask("DELETE", f"/a2a/tasks/{task_id}:subscribe")
        assert (status, headers["allow"]) == (405, "POST, GET, HEAD"), "HEAD wherever GET is (RFC 9110 9.3.2)"
    finally:
        connection.close()
    still_live(address, task_id)


@pytest.mark.parametrize("verb", ["GET", "POST"])  # GET is a2a.proto's http rule, POST section 11.3's
def test_tasks_id_subscribe_on_a_live_task_streams_it_by_either_verb(live, verb):
    address, task_id = live
    connection = Connection(address)
    try:
        status, headers, first = connection.ask(verb, f"/a2a/tasks/{task_id}:subscribe")
    finally:
        connection.close()
    assert (status, headers["content-type"]) == (200, "text/event-stream")
    assert first["task"]["id"] == task_id and "jsonrpc" not in first, "SubscribeToTask's bare StreamResponse"


@pytest.mark.parametrize("verb, suffix, expected", [
    ("GET", ":subscribe:cancel", 404),  # an id never ends in a verb: no route, not CancelTask of "…:subscribe"
    ("POST", ":subscribe:cancel", 404),
    ("POST", ":cancel:cancel", 404),
    ("GET", "%3Acancel", 404),  # an encoded ':' is data (RFC 3986 2.2): GetTask of "<id>:cancel", unknown
    ("POST", "%3Acancel", 405),  # ... so its path is GetTask's, asked with POST
    ("POST", "%3asubscribe", 405),
    ("POST", "%3Acancel:cancel", 404),  # CancelTask of "<id>:cancel", unknown: the live task is not cancelled
    ("GET", "%3Acancel:cancel", 405),
    ("GET", ":Cancel", 404),  # verbs are case-sensitive: GetTask of "<id>:Cancel", unknown
    ("GET", ":" + "x" * 6000, 404),
    ("GET", "x" * 6000 + ":cancel", 405),
])
def test_hostile_paths_around_a_live_task_reach_no_operation_on_it(live, verb, suffix, expected):
    address, task_id = live
    connection = Connection(address)
    try:
        status, headers, body = connection.ask(verb, f"/a2a/tasks/{task_id}{suffix}")
        assert status == expected and body["error"]["code"] == status and len(body["error"]["message"]) < 500
        assert ("allow" in headers) == (status == 405)
        for path in ["/a2a/tasks/:subscribe", "/a2a/tasks/:cancel", "/a2a/:cancel"]:
            assert connection.ask(verb, path)[0] == 404, path
    finally:
        connection.close()
    still_live(address, task_id)


def test_the_json_rpc_endpoint_has_no_verb_routes_and_takes_post_alone(live):
    """JSON-RPC names the operation in the frame, so it has no `:cancel` route to route;
    its endpoint asked with GET is 405 with Allow: POST and a JSON-RPC error body, and a
    SubscribeToTask frame POSTed there streams the same live task."""
    address, task_id = live
    connection = Connection(address)
    try:
        status, headers, body = connection.ask("GET", "/a2a")
        assert (status, headers["allow"], body["error"]["code"]) == (405, "POST", -32600)
        frame = {"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": task_id}}
        status, _, first = connection.ask("POST", "/a2a", json.dumps(frame).encode())
        assert status == 200 and first["result"]["task"]["id"] == task_id
    finally:
        connection.close()


def test_each_path_of_the_table_names_one_pattern_and_ids_with_a_colon_round_trip():
    """The table itself: a filled-in path of each row matches its own pattern alone (rows
    sharing a path, push-get and push-delete, differ by verb); and an id holding ':' that
    our client spells (as %3A) reaches the served side as that id, on GetTask's route."""
    for route in routes.ROUTES:
        filled = routes.PLACEHOLDER.sub("t-1:x", route.path)
        assert {found.path for found, _ in rest.routes_for(filled)} == {route.path}, filled
    for method, verb in [("GetTask", "GET"), ("CancelTask", "POST"), ("SubscribeToTask", "POST")]:
        sent_verb, path, _ = http_json.request_for(method, {"id": "t-1:cancel"})
        found = [(route.method, fields) for route, fields in rest.routes_for(path.lstrip("/").split("?")[0])]
        assert sent_verb == verb and found == [(method, {"id": "t-1:cancel"})], path
    assert http_json.method_of("GET", "/a2a/tasks/t-1:subscribe") is None, "GET :subscribe is no GetTask"


def test_the_fixed_text_check_before_each_regex_finds_exactly_what_the_regexes_alone_find():
    """rest.could_be only spares a regex a path it cannot match: over 20,000 seeded paths
    built from the routes' own pieces, the routes found are those every regex alone finds."""
    import random
    rng = random.Random(36)
    pieces = ["tasks", "/", "tasks/", ":cancel", ":subscribe", ":send", ":stream", "message", "pushNotificationConfigs",
              "extendedAgentCard", "t-1", "acme", "%3A", "%2F", "x" * 40, ""]
    for _ in range(20_000):
        path = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 6)))
        for candidate in (path, path.partition("/")[2]):
            alone = [route for route, matcher in rest.PATTERNS if matcher.fullmatch(candidate)]
            checked = [route for (route, matcher), fixed in zip(rest.PATTERNS, rest.FIXED)
                       if rest.could_be(candidate, fixed) and matcher.fullmatch(candidate)]
            assert checked == alone, candidate
