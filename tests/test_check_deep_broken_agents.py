"""`check --deep --other-caller` against a small agent written here, broken in one way at a
time in what needs a task: the flaw is reported under its requirement and nothing else fails.

The agent below keeps tasks for two callers (a bearer token each) and speaks A2A 1.0 over
JSON-RPC and HTTP+JSON from one table of operations; every task completes at once (with
"pauses", every new task waits in input-required for its next turn, flawlessly). `FLAW`
names the one thing a test breaks: another caller's tasks listed, a stream cut before its
final event, historyLength ignored, a terminal task canceled, a repeated messageId making
a second task (a second refund), the two bindings answering one GetTask differently, the
next turn of a paused task starting another; or it turns hostile: answers of the wrong
shape, a stream that never ends. It is http.server's, not ours: the checker meets code it
does not share."""
import json
import re
import threading
import time
from urllib.parse import parse_qsl, unquote, urlsplit

import pytest

from conftest import OutsidePeer, cli, outside_peer

TOKENS = {"Bearer token-of-a-0123456789": "a", "Bearer token-of-b-0123456789": "b"}
INFO = {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "domain": "a2a-protocol.org"}
REASONS = {-32001: ("TASK_NOT_FOUND", 404), -32002: ("TASK_NOT_CANCELABLE", 409), -32003: (
    "PUSH_NOTIFICATION_NOT_SUPPORTED", 400), -32004: ("UNSUPPORTED_OPERATION", 400), -32009: (
    "VERSION_NOT_SUPPORTED", 400), -32602: ("INVALID_PARAMS", 400), -32601: ("METHOD_NOT_FOUND", 404)}
ROUTES = [("POST", r"message:send", "SendMessage"), ("POST", r"message:stream", "SendStreamingMessage"),
          ("GET", r"tasks/(?P<id>[^/:]+)", "GetTask"), ("GET", r"tasks", "ListTasks"),
          ("POST", r"tasks/(?P<id>[^/:]+):cancel", "CancelTask"),
          ("POST", r"tasks/(?P<id>[^/:]+):subscribe", "SubscribeToTask"),
          ("POST", r"tasks/(?P<taskId>[^/]+)/pushNotificationConfigs", "CreateTaskPushNotificationConfig"),
          ("GET", r"tasks/(?P<taskId>[^/]+)/pushNotificationConfigs/(?P<id>[^/]+)", "GetTaskPushNotificationConfig"),
          ("GET", r"extendedAgentCard", "GetExtendedAgentCard")]
STREAMED = ("SendStreamingMessage", "SubscribeToTask")
PAUSING = ("pauses", "turn_forgets")  # every new task waits in input-required for its next turn


class Refused(Exception):
    def __init__(self, code):
        self.code = code


def card(base):
    return {"name": "deep", "description": "d", "version": "1",
            "supportedInterfaces": [{"url": base + "/a2a", "protocolBinding": binding, "protocolVersion": "1.0"}
                                    for binding in ("JSONRPC", "HTTP+JSON")],
            "capabilities": {"streaming": True, "pushNotifications": False}, "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"], "skills": [{"id": "s", "name": "s", "description": "d", "tags": []}],
            "securitySchemes": {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
            "securityRequirements": [{"schemes": {"bearer": {"list": []}}}]}


class Tasks:
    """Every caller's tasks, newest last; a task is (owner, the Task as 1.0 spells it)."""

    def __init__(self, flaw):
        self.flaw, self.kept, self.lock, self.seen = flaw, {}, threading.Lock(), {}

    def mine(self, owner, task_id):
        if not isinstance(task_id, str):
            raise Refused(-32602)
        if task_id not in self.kept or self.kept[task_id][0] != owner:
            raise Refused(-32001)
        return self.kept[task_id][1]

    def operation(self, method, params, owner, rest):
        if method in ("SendMessage", "SendStreamingMessage"):
            return self.send(params.get("message") or {}, owner)
        if method == "GetTask":
            task, length = self.mine(owner, params.get("id")), params.get("historyLength")
            if length is not None and type(length) is not int:
                raise Refused(-32602)
            shown = dict(task, artifacts=[]) if rest and self.flaw == "bindings_differ" else dict(task)
            if length is not None and self.flaw != "history_ignored":
                shown["history"] = task["history"][-length:] if length else []
            return shown
        if method == "ListTasks":
            return self.listed(params, owner)
        if method == "CancelTask":
            task = self.mine(owner, params.get("id"))
            if self.flaw != "cancel_terminal":
                raise Refused(-32002)
            task["status"] = {"state": "TASK_STATE_CANCELED"}
            return task
        if method == "SubscribeToTask":
            task = self.mine(owner, params.get("id"))
            if task["status"]["state"] != "TASK_STATE_INPUT_REQUIRED":
                raise Refused(-32004)  # it has ended: it has no more events
            return task
        if "PushNotificationConfig" in method:
            raise Refused(-32003)
        if method == "GetExtendedAgentCard":
            raise Refused(-32004)
        raise Refused(-32601)

    def send(self, message, owner):
        if not isinstance(message.get("messageId"), str):
            raise Refused(-32602)
        with self.lock:
            if message.get("taskId"):
                task = self.mine(owner, message["taskId"])
                if task["status"]["state"] != "TASK_STATE_INPUT_REQUIRED":
                    raise Refused(-32004)  # it has ended: it takes no more messages
                if self.flaw != "turn_forgets":  # the next turn ends the task it continues
                    task["status"] = {"state": "TASK_STATE_COMPLETED"}
                    return task
                message = dict(message, taskId=None, contextId=None)  # or, the flaw, starts another
            earlier = self.seen.get((owner, message["messageId"]))
            if earlier is not None and self.flaw != "duplicate":
                return self.kept[earlier][1]
            task_id = f"task-{len(self.kept) + 1}"
            self.seen[(owner, message["messageId"])] = task_id
            task = {"id": task_id, "contextId": message.get("contextId") or f"ctx-{task_id}",
                    "status": {"state": "TASK_STATE_INPUT_REQUIRED" if self.flaw in PAUSING else
                               "TASK_STATE_COMPLETED"}, "artifacts": [
                        {"artifactId": "a1", "parts": [{"text": "done"}]}],
                    "history": [message, {"messageId": f"r-{task_id}", "role": "ROLE_AGENT", "parts": [{"text": "ok"}]}]}
            self.kept[task_id] = (owner, task)
            return task

    def listed(self, params, owner):
        size, token = int(params.get("pageSize", 50)), params.get("pageToken") or ""
        tasks = [task for who, task in reversed(self.kept.values()) if who == owner or self.flaw == "leak"]
        tasks = [task for task in tasks if params.get("contextId") in (None, task["contextId"])
                 and params.get("status") in (None, task["status"]["state"])]
        ids = [task["id"] for task in tasks]
        start = ids.index(token) + 1 if token in ids else 0  # the cursor: the last id sent
        page = tasks[start:start + size]
        next_token = page[-1]["id"] if start + size < len(tasks) else ""
        if (self.flaw == "skips_pages" and token) or (self.flaw == "status_finds_none" and "status" in params):
            page = []  # a token promised more, and the next page holds none; or the filter finds nothing
        return {"tasks": page, "nextPageToken": next_token, "pageSize": size,
                "totalSize": len(tasks)}


class Agent(OutsidePeer):
    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        if self.path.startswith("/.well-known/agent-card.json"):
            cached = [("Cache-Control", "max-age=60"), ("ETag", '"v1"'), ("Last-Modified", "Tue, 01 Dec 2026 00:00:00 GMT")]
            if self.headers.get("If-None-Match") == '"v1"':
                return self.send(304, b"", headers=cached)
            return self.send(200, json.dumps(card(f"http://127.0.0.1:{self.server.server_port}")).encode(),
                             headers=cached)
        self.rest()

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if urlsplit(self.path).path != "/a2a":
            return self.rest(body)
        if self.headers.get("Content-Type", "").split(";")[0] != "application/json":
            return self.rpc_error(None, -32005, 415)
        try:
            frame = json.loads(body)
        except ValueError:
            return self.rpc_error(None, -32700)
        request_id, method, params = frame.get("id"), frame.get("method"), frame.get("params")
        if not isinstance(params, dict) and params is not None:
            return self.rpc_error(request_id, -32602)
        answered = request_id + 1000 if (self.server.tasks.flaw, method) in (("other_id", "GetTask"), (
            "stream_other_id", "SendStreamingMessage")) else request_id
        self.answer(method, params or {}, lambda result: {"jsonrpc": "2.0", "id": answered, "result": result},
                    lambda code: self.rpc_error(request_id + 1000 if self.server.tasks.flaw == "refusal_other_id" and
                                                method == "SubscribeToTask" else request_id, code), rest=False)

    def caller(self):
        owner = TOKENS.get(self.headers.get("Authorization", ""))
        if owner is None:
            self.send(401, b'{"error": {"code": 401, "status": "UNAUTHENTICATED", "message": "who are you?"}}',
                      headers=[("WWW-Authenticate", "Bearer")])
        return owner

    def version(self):
        asked = self.headers.get("A2A-Version") or dict(parse_qsl(urlsplit(self.path).query)).get("A2A-Version")
        return ".".join((asked or "0.3").split(".")[:2])

    def answer(self, method, params, wrapped, refuse, rest):
        owner = self.caller()
        if owner is None:
            return
        if self.version() != "1.0":
            return refuse(-32009)
        try:
            result = self.server.tasks.operation(method, params, owner, rest)
        except Refused as refused:
            return refuse(refused.code)
        if self.server.tasks.flaw == "garbage":
            return self.garbage(method, wrapped)
        if method not in STREAMED:
            return self.send(200, json.dumps(wrapped({"task": result} if method == "SendMessage" else result)).encode())
        if method == "SubscribeToTask":  # a paused task: itself, as it is, and the stream ends there
            return self.send(200, b"data: " + json.dumps(wrapped({"task": result})).encode() + b"\n\n",
                             "text/event-stream")
        events = [{"task": dict(result, status={"state": "TASK_STATE_SUBMITTED"})},
                  {"statusUpdate": {"taskId": result["id"], "contextId": result["contextId"],
                                    "status": {"state": "TASK_STATE_WORKING"}}},
                  {"statusUpdate": {"taskId": result["id"], "contextId": result["contextId"],
                                    "status": result["status"]}}]
        if self.server.tasks.flaw == "no_final":
            events = events[:2]
        if self.server.tasks.flaw == "working_after_end":  # completed, then working again
            events.append(dict(events[1]))
        if self.server.tasks.flaw == "other_tasks_end":  # the terminal update names another task
            events[2] = {"statusUpdate": dict(events[2]["statusUpdate"], taskId="task-of-someone-else")}
        if self.server.tasks.flaw in ("ended_snapshot", "snapshot_then_open", "working_snapshot"):  # 11.7: MAY
            events.append({"task": result if self.server.tasks.flaw != "working_snapshot" else events[0]["task"]})
        stream = b"".join(b"data: " + json.dumps(wrapped(event)).encode() + b"\n\n" for event in events)
        if self.server.tasks.flaw == "final_unended":  # its last event's line ends, the event does not
            stream = stream[:-1]
        if self.server.tasks.flaw == "endless_stream":
            return self.endless(stream.split(b"\n\n")[0] + b"\n\n")
        if self.server.tasks.flaw in ("open_after_end", "snapshot_then_open"):  # then a keep-alive comment for 5 s
            return self.endless(stream, b": keep-alive\n\n")
        if self.server.tasks.flaw == "endless_updates":  # working, working, ... as fast as it is read
            first, working = stream.split(b"\n\n")[:2]
            return self.endless(first + b"\n\n", working + b"\n\n", 1000, 0)
        self.send(200, stream, "text/event-stream")

    def garbage(self, method, wrapped):
        """Answers of the right status and the wrong shape: ids that are lists, a status that is a
        number, tasks that are not objects, a stream of what is not JSON."""
        if method in STREAMED:
            return self.send(200, b"data: {not json\n\ndata: [1, 2]\n\ndata: " + json.dumps(wrapped(
                {"task": {"id": 7, "status": "done"}})).encode() + b"\n\n", "text/event-stream")
        self.send(200, json.dumps(wrapped({"task": {"id": ["x"], "status": 7}, "tasks": [1, None, {"status": []}],
                                           "history": "all", "nextPageToken": {"deep": [[[]]]}})).encode())

    def endless(self, first, then=b": still here\n\n", times=50, pause=0.1):
        """The first event, then a comment every 0.1 s for 5 s (or `then`, `times` over, `pause` apart): a
        stream that never says it is over."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.close_connection = True
        try:
            for chunk in [first] + [then] * times:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
                time.sleep(pause)
        except OSError:  # the checker hung up at its deadline, as it should
            pass

    def rpc_error(self, request_id, code, status=200):
        reason = REASONS.get(code, ("INVALID_REQUEST", 400))[0]
        error = {"code": code, "message": reason.lower(), "data": [{**INFO, "reason": reason}]}
        self.send(status, json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode())

    def rest_error(self, code):
        reason, status = REASONS.get(code, ("INVALID_ARGUMENT", 400))
        said = "NOT_FOUND" if status == 404 else "INVALID_ARGUMENT"
        if code == -32602 and self.server.tasks.flaw in ("sdk_reason", "precondition"):  # the Python SDK's reason
            reason, said = "INVALID_REQUEST", "INVALID_ARGUMENT" if self.server.tasks.flaw == "sdk_reason" else \
                "FAILED_PRECONDITION"
        status = 200 if self.server.tasks.flaw == "rest_errors_in_200" else status  # a success, by its status
        self.send(status, json.dumps({"error": {"code": status, "status": said, "message": reason.lower(),
                                                "details": [{**INFO, "reason": reason}]}}).encode())

    def rest(self, body=b""):
        parts = urlsplit(self.path)
        path = unquote(parts.path).removeprefix("/a2a/")
        route = next(((method, match) for verb, pattern, method in ROUTES
                      if verb == self.command and (match := re.fullmatch(pattern, path))), None)
        if route is None and self.server.tasks.flaw == "plain_404":  # as the SDKs' web frameworks answer
            return self.send(404, b"Not Found", "text/plain")
        if route is None:
            return self.rest_error(-32601)
        if self.command == "POST" and self.headers.get("Content-Type", "").split(";")[0] not in (
                "application/json", "application/a2a+json"):
            return self.rest_error(-32005)
        try:
            params = json.loads(body) if body else {}
            params.update({key: int(value) if key in ("historyLength", "pageSize") else value
                           for key, value in parse_qsl(parts.query) if key != "A2A-Version"})
        except (ValueError, AttributeError):
            named = route[1].groupdict().get("id")  # the task its path names, looked up before the body is read
            if self.server.tasks.flaw == "path_first" and body and named not in self.server.tasks.kept:
                return self.rest_error(-32001)
            return self.rest_error(-32602)
        method, match = route
        self.answer(method, {**params, **match.groupdict()}, lambda result: result, self.rest_error, rest=True)


def failures(flaw, folder, timeout="2"):
    """The ids `check --deep --other-caller` reports failing against the agent with `flaw`, and the report."""
    with outside_peer(Agent, tasks=Tasks(flaw)) as base:
        stores = []
        for name, token in (("a", "token-of-a-0123456789"), ("b", "token-of-b-0123456789")):
            stores.append(folder / f"{name}.json")
            stores[-1].write_text(json.dumps({"tokens": {base: token}}))
        done = cli("check", base, "--deep", "--credentials", stores[0], "--other-caller", stores[1],
                   "--format", "json", "--timeout", timeout)
    assert "Traceback" not in done.stderr + done.stdout
    report = json.loads(done.stdout)
    return {row["id"] for row in report["requirements"] if row["outcome"] == "fail"}, done.returncode, report


def test_the_agent_written_here_passes_every_deep_requirement_it_is_asked(tmp_path):
    failed, status, report = failures(None, tmp_path)
    assert failed == set() and status == 0 and report["deep"] is True
    passed = {row["id"] for row in report["requirements"] if row["outcome"] == "pass"}
    assert {"CORE-SEND-001", "CORE-LIST-002", "CORE-CANCEL-002", "CORE-STREAM-003", "WB-SEND-DUP-001",
            "BIND-EQUIV-002", "CORE-LIST-001", "WB-CALLER-GET-001", "AUTH-SCOPE-003", "CORE-CAP-001"} <= passed


@pytest.mark.parametrize("flaw, expected, status", [
    ("leak", {"CORE-LIST-001"}, 1),
    ("no_final", {"CORE-STREAM-003"}, 1),
    ("history_ignored", {"CORE-HIST-001", "CORE-HIST-002"}, 1),
    ("cancel_terminal", {"CORE-CANCEL-002"}, 1),
    ("bindings_differ", {"BIND-EQUIV-002"}, 1),
    # GetTask's result under another request's id: no answer to ours, though the task is in it
    ("other_id", {"CORE-GET-001", "CORE-HIST-001", "CORE-HIST-002", "BIND-EQUIV-002"}, 1),
    ("turn_forgets", {"WB-MULTI-TURN-001"}, 1),  # the next turn of a paused task starts another
    ("skips_pages", {"CORE-LIST-002"}, 1),  # an empty second page, though the first gave a token
    ("status_finds_none", {"WB-LIST-FILTER-001"}, 1),  # no task in its own state: no filter passed vacuously
])
def test_one_deep_flaw_is_reported_under_its_requirement_and_nothing_else_fails(flaw, expected, status, tmp_path):
    failed, exit_status, report = failures(flaw, tmp_path)
    assert failed == expected and exit_status == status
    details = " ".join(verdict["detail"] for row in report["requirements"] if row["id"] in expected
                       for verdict in row["verdicts"])
    assert details  # each failure says what was seen


def test_a_final_event_that_no_blank_line_ends_is_no_event_and_the_finding_says_why(tmp_path):
    """The event-stream rules dispatch an event at the blank line after it: one cut off by the
    stream's end is discarded. check fails the stream, and says the bytes were there, unended."""
    failed, status, report = failures("final_unended", tmp_path)
    assert failed == {"CORE-STREAM-003"} and status == 1
    said = next(row for row in report["requirements"] if row["id"] == "CORE-STREAM-003")
    assert "bytes of data lines of an event no blank line ended (so no event)" in json.dumps(said), said


@pytest.mark.parametrize("flaw, said", [
    ("open_after_end", "the stream did not close within 1 s of its final event"),
    ("working_after_end", "the stream sent 1 more event(s) after its final one (statusUpdate working)"),
    ("other_tasks_end", "updates of another task than its own (task-of-someone-else), the stream closed before "
                        "any final event"),
    ("snapshot_then_open", "the stream did not close within 1 s of its final event"),
    ("working_snapshot", "the stream sent 1 more event(s) after its final one (task submitted)"),
])
def test_a_stream_that_goes_on_past_its_tasks_end_or_ends_another_task_fails(flaw, said, tmp_path):
    """3.1.2: the stream MUST close when the task reaches a terminal state. check stopped at the
    first event in a terminal state, so keep-alives after it, working again after completed, or
    a completed update of another task all passed."""
    started = time.monotonic()
    failed, status, report = failures(flaw, tmp_path)
    assert failed == {"CORE-STREAM-003"} and status == 1 and time.monotonic() - started < 15
    row = next(row for row in report["requirements"] if row["id"] == "CORE-STREAM-003")
    assert all(said in verdict["detail"] for verdict in row["verdicts"]), row["verdicts"]


def test_a_path_no_operation_has_may_be_answered_in_any_media_type(tmp_path):
    """Section 11.1: application/a2a+json SHOULD be used, for the binding's operations. check counted
    the text/plain 404 to its own probe of a path no route has against the agent, as a MUST."""
    failed, status, report = failures("plain_404", tmp_path)
    rows = {row["id"]: row for row in report["requirements"]}
    assert failed == set() and status == 0
    assert rows["HTTP_JSON-SVC-001"]["level"] == "SHOULD" and rows["HTTP_JSON-SVC-001"]["outcome"] == "pass"
    assert rows["WB-HTTP_JSON-URL-001"]["outcome"] == "pass"


@pytest.mark.parametrize("flaw, expected", [("sdk_reason", set()), ("precondition", {"WB-HTTP_JSON-ERR-004"})])
def test_invalid_params_are_judged_by_their_status_not_an_error_infos_reason(flaw, expected, tmp_path):
    """11.6 asks an ErrorInfo only of A2A-specific errors, and invalid params is none: the Python
    SDK's 400 INVALID_ARGUMENT with reason INVALID_REQUEST failed, as the reason is not -32602's."""
    failed, status, report = failures(flaw, tmp_path)
    assert failed == expected and status == (1 if expected else 0)


def test_a_malformed_body_to_an_unknown_task_may_be_answered_task_not_found(tmp_path):
    """The Python SDK looks the task up first: POST /tasks/<unknown>:cancel with a body that is not JSON
    is 404 TASK_NOT_FOUND. check failed it as a MUST that section 11.6 does not have."""
    failed, status, report = failures("path_first", tmp_path)
    row = next(row for row in report["requirements"] if row["id"] == "WB-HTTP_JSON-ERR-003")
    assert failed == set() and status == 0 and row["outcome"] == "pass" and row["level"] == "SHOULD"


def test_a_messageid_sent_twice_making_a_second_task_is_a_may_not_done_not_a_failure(tmp_path):
    """3.3.1: Send Message operations MAY be idempotent. check failed a second task as a SHOULD of
    4.1.4 (which says nothing of it), its fix "never a second task"."""
    failed, status, report = failures("duplicate", tmp_path)
    row = next(row for row in report["requirements"] if row["id"] == "WB-SEND-DUP-001")
    assert failed == set() and status == 0 and (row["level"], row["section"], row["outcome"]) == ("MAY", "3.3.1", "skip")
    assert all(verdict["detail"].startswith("not done, which a MAY leaves") for verdict in row["verdicts"]), row
    assert "never" not in row["fix"]


def test_a_base_url_with_a_path_has_its_card_looked_for_at_the_origins_root(tmp_path):
    """8.2 puts the well-known card at the origin's root: check given http://host/a2a, the agent's
    interface, asked /a2a/.well-known/agent-card.json and failed CARD-DISC-001 on a 404."""
    with outside_peer(Agent, tasks=Tasks(None)) as base:
        store = tmp_path / "a.json"
        store.write_text(json.dumps({"tokens": {base: "token-of-a-0123456789"}}))
        done = cli("check", base + "/a2a", "--credentials", store, "--format", "json", "--timeout", "2")
    report = json.loads(done.stdout)
    row = next(row for row in report["requirements"] if row["id"] == "CARD-DISC-001")
    assert report["target"] == base + "/.well-known/agent-card.json" and done.returncode == 0
    assert row["outcome"] == "pass" and row["verdicts"][0]["detail"].startswith(
        "asked at the origin's root, where 8.2 puts the well-known card, not under /a2a"), row


def test_an_agent_that_pauses_for_input_is_continued_and_subscribed_to_and_nothing_fails(tmp_path):
    failed, status, report = failures("pauses", tmp_path)
    outcomes = {row["id"]: row["outcome"] for row in report["requirements"]}
    assert failed == set() and status == 0
    assert outcomes["WB-MULTI-TURN-001"] == outcomes["STREAM-SUB-001"] == "pass"
    assert outcomes["CORE-CANCEL-002"] == "skip", "no task ended, so none was canceled"


@pytest.mark.parametrize("flaw, expected", [
    ("garbage", {"CORE-SEND-001", "CORE-STREAM-003"}),
    ("endless_stream", {"CORE-STREAM-003"}),
    ("endless_updates", {"CORE-STREAM-003"}),  # not "ended at its final event" once 200 are read
])
def test_a_hostile_agent_under_deep_yields_findings_never_a_hang_or_a_traceback(flaw, expected, tmp_path):
    started = time.monotonic()
    failed, status, report = failures(flaw, tmp_path, timeout="1")
    assert failed == expected and status == 1 and time.monotonic() - started < 10
    said = next(row for row in report["requirements"] if row["id"] == "CORE-STREAM-003")
    assert "ended at its final event" not in json.dumps(said), said


def test_a_stream_that_sends_its_ended_task_once_more_and_closes_passes(tmp_path):
    """11.7: a final Task snapshot MAY be resent before the stream closes; one in its terminal state
    passes, where a snapshot in another state, or a stream left open after it, fails (above)."""
    failed, status, _ = failures("ended_snapshot", tmp_path)
    assert failed == set() and status == 0


def test_an_http_json_error_answered_with_a_success_status_is_no_error_refusing_the_request(tmp_path):
    """11.6: an HTTP+JSON error is said by its HTTP status; a client reads a 200 as the operation's
    result. Every error this agent sent over HTTP+JSON came in a 200, and check read the code inside
    as the agent's refusal: GetTask and CancelTask on an unknown task passed as TaskNotFoundError."""
    failed, status, report = failures("rest_errors_in_200", tmp_path)
    assert status == 1 and {"CORE-GET-002", "CORE-CANCEL-003", "CORE-CANCEL-002", "HTTP_JSON-STATUS-001"} <= failed
    row = next(row for row in report["requirements"] if row["id"] == "CORE-GET-002")
    said = {verdict["binding"]: (verdict["outcome"], verdict["detail"]) for verdict in row["verdicts"]}
    assert said["JSONRPC"][0] == "pass" and said["HTTP+JSON"][0] == "fail", said
    assert said["HTTP+JSON"][1].startswith("HTTP 200, an error (-32001) in a success"), said


def test_a_stream_whose_events_answer_another_requests_id_is_no_stream_of_ours(tmp_path):
    """JSON-RPC 2.0 section 5: each event of a JSON-RPC stream is a response, its id the request's.
    Every event of this agent's stream named another request's id, and check passed the stream."""
    failed, status, report = failures("stream_other_id", tmp_path)
    assert failed == {"CORE-STREAM-003"} and status == 1
    row = next(row for row in report["requirements"] if row["id"] == "CORE-STREAM-003")
    said = {verdict["binding"]: (verdict["outcome"], verdict["detail"]) for verdict in row["verdicts"]}
    assert said["HTTP+JSON"][0] == "pass" and said["JSONRPC"][0] == "fail", said
    assert "the stream sent an event that answers request id 1" in said["JSONRPC"][1] and ", not ours (" in said["JSONRPC"][1], said


def test_a_refusal_of_a_streaming_request_under_another_requests_id_refuses_nothing_we_asked(tmp_path):
    """SubscribeToTask on a terminal task was refused under another request's id, and check read
    that refusal as the answer to its own, where every other request's answer is held to its id."""
    failed, status, report = failures("refusal_other_id", tmp_path)
    assert failed == {"STREAM-SUB-003", "AUTH-SCOPE-003"} and status == 1, "the other caller's refusal too"
    row = next(row for row in report["requirements"] if row["id"] == "STREAM-SUB-003")
    said = {verdict["binding"]: verdict["detail"] for verdict in row["verdicts"]}
    assert said["JSONRPC"].startswith("SubscribeToTask on a terminal task: HTTP 200, it answers request id 10"), said
