"""`check URL` against small agents written here, each broken in one way: the flaw is reported
under its requirement and nothing else fails; a hostile agent is findings, never a hang.

The agent below follows A2A 1.0 on JSON-RPC as far as `check` asks without --deep (its card,
versions, the error table, a bearer scheme, an extended card); `FLAW` names the one thing a
test breaks. It is http.server's, not ours, so the checker meets an implementation it does
not share code with."""
import json
import time

import pytest

from conftest import OutsidePeer, cli, outside_peer

TOKEN = "good-token-0123456789"
INFO = {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "domain": "a2a-protocol.org"}
V10 = {"GetTask": "get", "CancelTask": "cancel", "GetTaskPushNotificationConfig": "push-get",
       "GetExtendedAgentCard": "extended"}
V03 = {"tasks/get": "get", "tasks/cancel": "cancel", "tasks/pushNotificationConfig/get": "push-get"}


def card(base, flaw):
    if flaw == "v03_only":
        return {"protocolVersion": "0.3.0", "name": "broken", "description": "d", "url": base + "/a2a",
                "version": "1", "capabilities": {}, "defaultInputModes": ["text/plain"],
                "defaultOutputModes": ["text/plain"], "skills": [{"id": "s", "name": "s", "description": "d", "tags": []}],
                "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}, "security": [{"bearer": []}]}
    if flaw == "unreadable_card":  # a skill's id that is no string: the card cannot be read as an AgentCard
        made = card(base, None)
        made["skills"][0]["id"] = ["s"]
        return made
    if flaw == "no_extended":  # its card declares no extended card; every request needs the bearer token
        made = card(base, None)
        made["capabilities"] = {}
        return made
    at = {"inward_interface": "http://224.0.0.1:9",  # multicast: a connection to it fails here, sending nothing
          "localhost_interface": base.replace("127.0.0.1", "localhost")}
    return {"name": "broken", "description": "d", "version": "1",
            "supportedInterfaces": [{"url": at.get(flaw, base) + "/a2a", "protocolBinding": "JSONRPC",
                                     "protocolVersion": "1.0"}],
            "capabilities": {"extendedAgentCard": True}, "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"], "skills": [{"id": "s", "name": "s", "description": "d", "tags": []}],
            "securitySchemes": {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
            "securityRequirements": [{"schemes": {"bearer": {"list": []}}}]}


class Agent(OutsidePeer):
    def do_HEAD(self):
        if self.server.flaw == "head_body":  # the card's body after the head, in the same write: no luck in it
            body = json.dumps(card(f"http://127.0.0.1:{self.server.server_port}", None)).encode()
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                             % (len(body), body))
            return
        if self.server.flaw == "head_body_late":  # as http.server writes one: the head, then the body apart, a moment later
            body = json.dumps(card(f"http://127.0.0.1:{self.server.server_port}", None)).encode()
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body))
            self.wfile.flush()
            time.sleep(0.01)  # well within HEAD_LINGER (0.1 s), even on a loaded machine
            self.wfile.write(body)
            return
        self.do_GET()

    def do_GET(self):
        flaw = self.server.flaw
        if flaw == "redirect":
            return self.send(302, b"", headers=[("Location", "http://127.0.0.1:9/elsewhere")])
        if flaw == "drip":
            return self.drip()
        body = json.dumps(card(f"http://127.0.0.1:{self.server.server_port}", flaw)).encode()
        if flaw == "duplicate_key_card":  # a name said twice: which one is meant?
            body = b'{"name": "trusted-bank-agent", ' + body[1:]
        cached = [("Cache-Control", "max-age=60"), ("ETag", '"v1"'), ("Last-Modified", "Tue, 01 Dec 2026 00:00:00 GMT")]
        cached = cached[:2] if flaw == "no_last_modified" else cached  # a MAY of 8.6.1, not done
        if self.headers.get("If-None-Match") == '"v1"' or (flaw == "any_tag_304" and self.headers.get("If-None-Match")):
            return self.send(304, b"", headers=[("ETag", '"v2"')] if flaw == "other_tag_304" else cached)
        self.send(200, body, headers=cached)

    def drip(self):
        """A byte every 0.1 s of a body that would take 100 s: the checker's deadline ends it."""
        self.send_response(200)
        self.send_header("Content-Length", "1000")
        self.end_headers()
        try:
            for _ in range(30):
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(0.1)
        except OSError:  # the checker hung up, as it should
            self.close_connection = True

    def error(self, request_id, code, message, reason=None, status=200):
        error = {"code": code, "message": message, **({"data": [{**INFO, "reason": reason}]} if reason else {})}
        frame = {"id": request_id, "error": error} if self.server.flaw == "no_jsonrpc" else \
            {"jsonrpc": "2.0", "id": request_id, "error": error}
        if self.server.flaw == "result_and_error":
            frame["result"] = {"ok": True}
        self.send(status, json.dumps(frame).encode(),
                  "text/html" if self.server.flaw == "wrong_content_type" else "application/json",
                  [("WWW-Authenticate", "Bearer")] if status == 401 else [])

    def do_POST(self):
        flaw, body = self.server.flaw, self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if flaw == "drip_posts":
            return self.drip()
        if flaw == "slow":  # every answer late, yet inside the deadline: only the run's budget ends it
            time.sleep(0.15)
        if flaw == "garbage":
            return self.send(200, b"\x00\xffnot json at all{{{", "application/json")
        if flaw == "endless":
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chunk = b"[" * 65536
            try:
                for _ in range(40):  # past the checker's 1 MiB limit, when it hangs up
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            except OSError:  # it did
                self.close_connection = True
            return
        if self.headers.get("Content-Type", "").split(";")[0] != "application/json":  # the JavaScript SDK's: 200
            return self.error(None, -32005, "Content type not supported", "CONTENT_TYPE_NOT_SUPPORTED",
                              200 if flaw == "type_refused_in_200" else 415)
        try:
            frame = json.loads(body)
        except ValueError:
            return self.error(None, -32700, "Parse error")
        request_id, method, params = frame.get("id"), frame.get("method"), frame.get("params") or {}
        authorized = self.headers.get("Authorization") == f"Bearer {TOKEN}"
        extended = method == "GetExtendedAgentCard"
        if flaw == "invalid_to_all" and not extended:  # never reads a credential: the same error for everyone
            return self.error(request_id, -32602, "Invalid params", "INVALID_PARAMS")
        if not authorized and not (flaw == "open_scheme" and not extended) and not (flaw == "open_extended" and extended):
            return self.error(None, -32041, "Unauthenticated", "UNAUTHENTICATED", 401)
        asked = self.headers.get("A2A-Version") or dict(
            part.split("=", 1) for part in self.path.partition("?")[2].split("&") if "=" in part).get("A2A-Version") or "0.3"
        version = ".".join(asked.split(".")[:2])
        if flaw == "any_version" and self.headers.get("A2A-Version"):
            version = "1.0"
        if version not in ("1.0", "0.3"):
            return self.error(request_id, -32009, "Version not supported", "VERSION_NOT_SUPPORTED")
        methods = V10 if version == "1.0" else V03
        if method not in methods:
            if method in V10 or method in V03:
                return self.error(request_id, -32009, "Version not supported", "VERSION_NOT_SUPPORTED")
            return self.error(request_id, -32600 if flaw == "wrong_codes" else -32601, "Method not found")
        if extended:
            return self.send(200, json.dumps({"jsonrpc": "2.0", "id": request_id, "result": card("x", None)}).encode())
        if not isinstance(params.get("id" if methods[method] != "push-get" or version == "0.3" else "taskId"), str):
            return self.error(request_id, -32602, "Invalid params", "INVALID_PARAMS")
        answered = request_id + 1000 if flaw == "other_id" else None if flaw == "null_id" else request_id
        self.error(answered, -32001, "Task not found", "TASK_NOT_FOUND" if version == "1.0" else None)


def failures(flaw, folder):
    """The ids `check` reports failing against the agent with `flaw`, the exit status, the report."""
    with outside_peer(Agent, flaw=flaw, handle_error=lambda request, address: None) as base:  # a hang-up is no error
        store = folder / "credentials.json"
        store.write_text(json.dumps({"tokens": {base: TOKEN}}))
        done = cli("check", base, "--credentials", store, "--format", "json", "--timeout", "1")
    assert "Traceback" not in done.stderr + done.stdout
    report = json.loads(done.stdout)
    return {row["id"] for row in report["requirements"] if row["outcome"] == "fail"}, done.returncode, report


def test_the_agent_written_here_passes_every_requirement_it_is_asked(tmp_path):
    failed, status, report = failures(None, tmp_path)
    assert failed == set() and status == 0
    passed = {row["id"] for row in report["requirements"] if row["outcome"] == "pass"}
    assert {"VER-SERVER-002", "CORE-GET-002", "AUTH-SERVER-002", "WB-AUTH-RIGHT-001", "CARD-EXT-001"} <= passed


@pytest.mark.parametrize("flaw, expected", [
    ("v03_only", {"WB-CARD-VERSION-001"}),
    ("any_version", {"VER-SERVER-002"}),
    ("wrong_codes", {"WB-JSONRPC-ERR-001"}),
    ("open_scheme", {"AUTH-SERVER-002", "WB-AUTH-WRONG-001"}),
    ("wrong_content_type", {"JSONRPC-FMT-002"}),
    ("open_extended", {"CARD-EXT-001"}),
    ("head_body", {"WB-CARD-HEAD-001"}),
    ("head_body_late", {"WB-CARD-HEAD-001"}),
])
def test_one_flaw_is_reported_under_its_requirement_and_nothing_else_fails(flaw, expected, tmp_path):
    failed, status, _ = failures(flaw, tmp_path)
    assert failed == expected
    assert status == (0 if flaw in ("v03_only", "head_body", "head_body_late") else 1), "a SHOULD alone leaves the exit status 0"


def test_a_body_sent_after_the_head_of_an_answer_to_head_is_said_in_the_verdict(tmp_path):
    _, _, report = failures("head_body", tmp_path)
    detail = next(row["verdicts"][0]["detail"] for row in report["requirements"] if row["id"] == "WB-CARD-HEAD-001")
    assert detail.startswith("HEAD: HTTP 200, Content-Type application/json, ") and "bytes of body after its head" in detail


def test_an_agent_answering_the_same_error_with_any_credential_or_none_is_not_said_to_refuse_a_caller(tmp_path):
    """An error is a refusal only where the right credential gets another answer: an agent that
    never reads the credential, and answers -32602 whoever asks, passed both auth checks."""
    failed, status, report = failures("invalid_to_all", tmp_path)
    assert status == 1 and {"AUTH-SERVER-002", "WB-AUTH-WRONG-001", "WB-AUTH-RIGHT-001"} <= failed


def test_an_error_under_a_null_id_is_not_read_as_the_answer_to_our_request_which_was_read(tmp_path):
    """JSON-RPC 2.0 section 5: a null id is for a request that could not be read (-32700, -32600)."""
    failed, status, report = failures("null_id", tmp_path)
    assert status == 1 and {"CORE-GET-002", "CORE-CANCEL-003", "PUSH-GET-002"} <= failed
    details = {row["id"]: row["verdicts"][0]["detail"] for row in report["requirements"] if row["id"] in failed}
    assert details["CORE-GET-002"] == "HTTP 200, it answers a null id, as to a request it could not read, with error -32001"


def test_an_error_without_the_jsonrpc_member_is_no_json_rpc_answer_to_read_a_code_from(tmp_path):
    failed, status, report = failures("no_jsonrpc", tmp_path)
    assert status == 1 and {"CORE-GET-002", "CORE-CANCEL-003", "PUSH-GET-002"} <= failed


def test_an_error_answering_another_requests_id_is_not_read_as_the_answer_to_ours(tmp_path):
    """JSON-RPC 2.0 section 5: a response's id is its request's. TaskNotFound under another id
    answers nothing we asked, so the requirements judged on it fail, each saying why."""
    failed, status, report = failures("other_id", tmp_path)
    assert status == 1 and {"CORE-GET-002", "CORE-CANCEL-003", "PUSH-GET-002", "JSONRPC-ERR-001"} <= failed
    details = {row["id"]: row["verdicts"][0]["detail"] for row in report["requirements"] if row["id"] in failed}
    assert details["CORE-GET-002"] == "HTTP 200, it answers request id 1001, not ours (1)"


def test_an_answer_with_both_a_result_and_an_error_is_no_answer_to_read_an_error_code_from(tmp_path):
    """JSON-RPC 2.0 section 5: one or the other. Every error the agent sent also carried a
    result, and check passed every requirement judged on those errors."""
    failed, status, report = failures("result_and_error", tmp_path)
    assert status == 1 and {"JSONRPC-ERR-001", "CORE-GET-002", "CORE-CANCEL-003", "PUSH-GET-002"} <= failed
    details = {row["id"]: row["verdicts"][0]["detail"] for row in report["requirements"] if row["id"] in failed}
    assert "both a result and an error" in details["CORE-GET-002"]


def test_an_interface_at_another_host_on_a_private_address_is_not_asked_and_the_report_says_why(tmp_path):
    """A card may name any URL, and check runs where its user does: a card at 127.0.0.1 named an
    interface at a link-local address (a cloud's metadata service) and check asked it a dozen times."""
    failed, status, report = failures("inward_interface", tmp_path)
    measured = next(row for row in report["requirements"] if row["id"] == "WB-BIND-MEASURED-001")
    assert "not asked: the card, at 127.0.0.1, names another host, 224.0.0.1" in measured["verdicts"][0]["detail"]
    assert not [row for row in report["requirements"] for verdict in row["verdicts"]
                if "224.0.0.1" in verdict["detail"] and row["id"] != "WB-BIND-MEASURED-001"], "nothing was asked of it"


@pytest.mark.parametrize("interface, asked", [
    ("http://[::a9fe:a9fe]/a2a", False), ("http://[64:ff9b::a9fe:a9fe]/a2a", False),  # 169.254.169.254, wrapped
    ("http://192.0.0.192/a2a", False), ("http://[::ffff:10.0.0.1]/a2a", False), ("http://224.0.0.1:9/a2a", False),
    ("http://127.0.0.1:9/a2a", True), ("http://localhost:9/a2a", True), ("http://[::1]:9/a2a", True),
    ("http://0.0.0.0:9/a2a", True),  # where a server on this machine listens, as its card may say
])
def test_an_interfaces_address_is_judged_by_the_workbenchs_own_table_and_this_machines_names_left_unpinned(
        interface, asked):
    """Python's is_global passed an IPv4-compatible, a NAT64 and an IETF-assignment form of a
    private address; the table a served peer judges webhooks by (transports/addresses.py) does
    not. A card on this machine may name it by any of its names, 0.0.0.0 too; such a name is not
    pinned (pinned to ::1, localhost refused a server on 127.0.0.1 alone). Numeric addresses only
    (and localhost): nothing here leaves the machine."""
    from peers.support.check.reach import inward
    pinned = {}
    said = inward("http://127.0.0.1:8/.well-known/agent-card.json", interface, pinned, {})
    assert (said == "") is asked, said
    assert pinned == {}


def test_interfaces_at_another_origin_than_the_card_are_named_in_the_heading(tmp_path):
    """The verdicts are measured at the interfaces: the heading said only the card's URL."""
    failed, status, report = failures("localhost_interface", tmp_path)
    port = report["target"].split(":")[2].split("/")[0]
    assert report["card"]["bindings"] == [f"JSONRPC (at http://localhost:{port}, not the card's origin)"]
    assert failed == set() and status == 0, "asked there, as the card says: it is this machine"


def test_a_401_to_get_extended_agent_card_without_a_credential_is_a_skip_as_every_other_401_is(tmp_path):
    """Without --credentials, an agent that authenticates every request answers 401 before it reads
    the method: the official SDKs with a credential scheme do. CORE-CAP-003 failed that 401 as a MUST,
    where every other check skips it ("refused without a credential")."""
    with outside_peer(Agent, flaw="no_extended") as base:
        done = cli("check", base, "--format", "json", "--timeout", "1")
    report = json.loads(done.stdout)
    rows = {row["id"]: row for row in report["requirements"]}
    assert rows["CORE-CAP-003"]["outcome"] == "skip", rows["CORE-CAP-003"]
    assert rows["CORE-CAP-003"]["verdicts"][0]["detail"].startswith("refused without a credential (HTTP 401)")
    assert rows["CORE-GET-002"]["outcome"] == "skip" and done.returncode == 0


def test_a_may_the_agent_does_not_do_is_said_as_not_done_never_as_a_failure(tmp_path):
    """8.6.1: a card MAY be served with Last-Modified. Without it, check said FAIL MAY CARD-CACHE-003,
    and its summary "MAY: 1 fail"."""
    failed, status, report = failures("no_last_modified", tmp_path)
    row = next(row for row in report["requirements"] if row["id"] == "CARD-CACHE-003")
    assert failed == set() and status == 0 and report["summary"]["MAY"]["fail"] == 0
    assert row["outcome"] == "skip" and row["verdicts"][0]["detail"].startswith("not done, which a MAY leaves")
    with outside_peer(Agent, flaw="no_last_modified") as base:
        shown = cli("check", base, "--timeout", "1").stdout
    assert "NOT DONE     MAY    CARD-CACHE-003" in shown and "MAY: 1 pass, 1 not done, " in shown, shown
    assert "\nFAIL " not in shown and " fail" not in shown.splitlines()[-1].split("MAY:")[1].split(". Exit")[0]


def test_a_body_refused_for_its_media_type_may_answer_a_null_id_as_it_was_not_read(tmp_path):
    """The JavaScript SDK answers a text/plain POST with 200, -32005 and "id": null: it never read
    the body, so it could not detect the id (JSON-RPC 2.0 section 5). WB-BIND-CTYPE-001 failed it as
    an answer to another request, though its fix line says -32005."""
    failed, status, report = failures("type_refused_in_200", tmp_path)
    row = next(row for row in report["requirements"] if row["id"] == "WB-BIND-CTYPE-001")
    assert failed == set() and status == 0 and row["outcome"] == "pass", row["verdicts"]
    assert row["verdicts"][0]["detail"] == "Content-Type: text/plain: HTTP 200, code -32005"


def test_a_card_that_cannot_be_read_leaves_the_extended_card_unjudged_not_failed(tmp_path):
    """Its schemes unknown, a refusal without a credential was failed as "the card declares no scheme"."""
    failed, status, report = failures("unreadable_card", tmp_path)
    rows = {row["id"]: row for row in report["requirements"]}
    assert rows["CARD-EXT-001"]["outcome"] == "skip" and "cannot be read" in rows["CARD-EXT-001"]["verdicts"][0]["detail"]
    assert "CARD-EXT-001" not in failed


def test_a_card_refused_as_json_says_what_the_strict_reading_found(tmp_path):
    """It said "not JSON" of JSON that names a key twice."""
    failed, status, report = failures("duplicate_key_card", tmp_path)
    detail = next(row["verdicts"][0]["detail"] for row in report["requirements"] if row["id"] == "CARD-DISC-001")
    assert "CARD-DISC-001" in failed and "not JSON (duplicate key 'name')" in detail, detail


@pytest.mark.parametrize("flaw", ["garbage", "endless", "drip", "drip_posts", "redirect"])
def test_a_hostile_agent_yields_findings_never_a_hang_or_a_traceback(flaw, tmp_path):
    started = time.monotonic()
    failed, status, report = failures(flaw, tmp_path)
    assert status == 1 and time.monotonic() - started < 10
    assert ("CORE-GET-002" if flaw in ("garbage", "endless", "drip_posts") else "CARD-DISC-001") in failed


def test_an_agent_slow_at_every_answer_costs_the_runs_budget_not_a_deadline_per_check(tmp_path):
    """--timeout 0.25: each answer (0.15 s) is in time, and the run's budget, 8 timeouts, ends it."""
    started = time.monotonic()
    with outside_peer(Agent, flaw="slow", handle_error=lambda request, address: None) as base:
        done = cli("check", base, "--format", "json", "--timeout", "0.25")
    assert "Traceback" not in done.stderr + done.stdout and done.returncode in (0, 1)
    assert time.monotonic() - started < 8
    report = json.loads(done.stdout)
    details = json.dumps([row["verdicts"] for row in report["requirements"]])
    assert "the run's time budget was spent" in details


@pytest.mark.parametrize("flaw, said", [
    ("any_tag_304", "; If-None-Match \"wb-check-no-such-tag\": HTTP 304, not the card"),
    ("other_tag_304", ": HTTP 304 with ETag \"v2\", not the card's \"v1\""),
])
def test_a_304_to_a_tag_the_card_does_not_have_or_naming_another_is_no_working_revalidation(flaw, said, tmp_path):
    """RFC 9110 13.1.2: If-None-Match is false, so 304, only where a tag it lists matches the card's;
    15.4.5: a 304 carries the ETag a 200 would. An agent answering 304 to any tag (a client's stale
    card kept for good) or naming another tag in it passed WB-CARD-CACHE-004."""
    failed, status, report = failures(flaw, tmp_path)
    assert failed == {"WB-CARD-CACHE-004"} and status == 0, "a SHOULD"
    detail = next(row["verdicts"][0]["detail"] for row in report["requirements"] if row["id"] == "WB-CARD-CACHE-004")
    assert said in detail, detail


def test_a_redirect_is_said_with_where_it_points_and_that_it_was_not_followed(tmp_path):
    """A 302 for the card was said "HTTP 302" alone: a developer could not tell where it pointed,
    nor that check does not follow one (a redirect may point anywhere, a private address too)."""
    failed, status, report = failures("redirect", tmp_path)
    detail = next(row["verdicts"][0]["detail"] for row in report["requirements"] if row["id"] == "CARD-DISC-001")
    assert "CARD-DISC-001" in failed and status == 1
    assert detail.startswith("HTTP 302, a redirect to http://127.0.0.1:9/elsewhere, not followed"), detail
