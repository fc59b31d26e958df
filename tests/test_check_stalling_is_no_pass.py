"""`check URL` against an agent that stalls: a report, never a traceback; and exit status 0
only when no MUST failed, which an agent must not earn by stalling.

After MAX_TIMEOUTS answers in a row past their deadline the agent is not asked again
(probe.py), and every check still to come is a skip saying so. The two requests before the
first MUST of the protocol are the card's conditional GET and its HEAD, both SHOULDs: an
agent that lets exactly those two run out its deadline has every MUST of the protocol and
of authentication skipped, not failed, so it exits 0 ("no MUST failed") however broken the
rest of it is. Here every POST is answered with bytes that are no JSON at all: each MUST it
would be asked fails. The first request not sent, JSON-RPC's GetTask, has no frames, and the
error-shape check read its first frame's body: an IndexError, out of the whole run."""
import json
import time

from conftest import OutsidePeer, cli, outside_peer

STALL = 1.0  # seconds: past --timeout 0.4


class Staller(OutsidePeer):
    def do_GET(self):
        if self.headers.get("If-None-Match") or self.command == "HEAD":
            time.sleep(STALL)  # the two SHOULDs' requests: run out their deadline
        base = f"http://127.0.0.1:{self.server.server_port}"
        card = {"name": "staller", "description": "d", "version": "1",
                "supportedInterfaces": [{"url": base + "/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
                "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
                "skills": [{"id": "s", "name": "s", "description": "d", "tags": []}]}
        try:
            self.send(200, json.dumps(card).encode(), headers=[("Cache-Control", "max-age=60"), ("ETag", '"v1"')])
        except OSError:  # the checker hung up at its deadline, as it should
            self.close_connection = True

    do_HEAD = do_GET

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send(200, b"\x00 no JSON, no JSON-RPC, nothing an A2A client can read", "application/json")


def stalled():
    with outside_peer(Staller, handle_error=lambda request, address: None) as base:
        return cli("check", base, "--format", "json", "--timeout", "0.4")


def test_a_json_rpc_gettask_left_unsent_by_an_agent_that_stalled_is_a_skip_in_a_report_not_a_traceback():
    done = stalled()  # raised IndexError (protocol_checks._error_shapes: frames[0] of a request never sent)
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    report = json.loads(done.stdout)
    outcome = {row["id"]: (row["outcome"], row["verdicts"][0]["detail"]) for row in report["requirements"]}
    assert outcome["JSONRPC-ERR-001"][0] == "skip" and "run past their deadline" in outcome["JSONRPC-ERR-001"][1]


def test_an_agent_that_stalls_two_should_requests_does_not_exit_0_with_every_must_unasked():
    done = stalled()
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    report = json.loads(done.stdout)
    unasked = [row["id"] for row in report["requirements"] if row["level"] == "MUST" and row["outcome"] == "skip"
               and "run past their deadline" in row["verdicts"][0]["detail"]]
    assert done.returncode != 0, f"exit status 0 with these MUSTs never asked: {unasked}"



def test_an_agent_slow_but_on_time_that_spends_the_budget_is_not_judged_on_what_went_unasked(tmp_path):
    """Exit status 1 is for an agent that stalls (its requests past their deadline). Our own billing peer,
    each answer 0.15 s late but within --timeout 0.4, spends the run's budget (8 of them: 3.2 s; its 34 requests
    would take 5 s; the 0.25 s left of each deadline covers a loaded machine): what it was
    not asked is not judged (exit 0, no MUST failed), and the request whose deadline was the budget's end,
    not --timeout, is a skip, not a failure ("no reply within")."""
    from peers import billing
    from peers.a2a import wire_v10
    from peers.app import PeerApp
    from transports.server import PeerServer
    server = PeerServer(None, "127.0.0.1", 0)
    peer = PeerApp(billing.billing_agent(server.base_url), wire_v10, token="t0k", log=lambda line: None)

    def slow(request):
        time.sleep(0.15)
        return peer(request)
    server.app = slow
    server.start()
    try:
        store = tmp_path / "credentials.json"
        store.write_text(json.dumps({"tokens": {server.base_url: "t0k"}}))
        done = cli("check", server.base_url, "--credentials", store, "--format", "json", "--timeout", "0.4")
    finally:
        server.stop()
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    report = json.loads(done.stdout)
    details = [(row["outcome"], verdict["detail"]) for row in report["requirements"] for verdict in row["verdicts"]]
    assert any("time budget" in detail for outcome, detail in details if outcome == "skip"), "the budget was spent"
    assert not [detail for outcome, detail in details if outcome == "fail" and "no reply within" in detail], details
    assert done.returncode == 0 and report["exit_status"] == 0, report["summary"]


def test_a_junit_report_says_the_musts_a_stalling_agent_left_unasked_as_errors_as_its_exit_status_does():
    """A CI dashboard reads the JUnit report, not the exit status: MUSTs left unasked because the agent stalled
    were skips there (failures="0") while `check` exited 1; each is an error now, counted in errors="N"."""
    import xml.etree.ElementTree as ElementTree
    with outside_peer(Staller, handle_error=lambda request, address: None) as base:
        done = cli("check", base, "--format", "junit", "--timeout", "0.4")
    suite = ElementTree.fromstring(done.stdout)
    errors = [case for case in suite.iter("testcase") if case.find("error") is not None]
    assert done.returncode == 1 and errors and int(suite.get("errors")) == len(errors)
    assert all(case.get("classname").startswith("MUST.") for case in errors)
    assert all("run past their deadline" in case.find("error").get("message") for case in errors)
