"""`check --deep` against agents built with the official SDKs: the run completes with a
report (no traceback; exit status 0 or 1, whatever the SDK gets wrong), and what needs a
task is judged, not skipped for want of one.

Opt-in, as the interop tests are: A2A_SDK_PYTHON names a Python with a2a-sdk (the agent is
tests/interop/sdk_push_server.py, over JSON-RPC, and with --rest-only over HTTP+JSON),
A2A_JS_SDK a folder whose node_modules has @a2a-js/sdk and express (tests/interop/
js_server.mjs, both bindings); each is skipped without its own."""
import json
import os
import shutil
import sys

import pytest

from conftest import ROOT, cli
from test_interop import served_agent

SDK_PYTHON, JS_SDK, NODE = os.environ.get("A2A_SDK_PYTHON"), os.environ.get("A2A_JS_SDK"), shutil.which("node")
PYTHON_AGENT = [SDK_PYTHON or sys.executable, str(ROOT / "tests" / "interop" / "sdk_push_server.py"), "0"]
AGENTS = {
    "python jsonrpc": pytest.param(PYTHON_AGENT, None, marks=pytest.mark.skipif(
        not SDK_PYTHON, reason="set A2A_SDK_PYTHON to a Python with a2a-sdk")),
    "python http+json": pytest.param(PYTHON_AGENT + ["--rest-only"], None, marks=pytest.mark.skipif(
        not SDK_PYTHON, reason="set A2A_SDK_PYTHON to a Python with a2a-sdk")),
    "javascript both": pytest.param([NODE or "node", str(ROOT / "tests" / "interop" / "js_server.mjs"), "0",
                                     "--bindings", "both"], JS_SDK, marks=pytest.mark.skipif(
        not (JS_SDK and NODE), reason="set A2A_JS_SDK to a folder whose node_modules has @a2a-js/sdk and express")),
}


@pytest.mark.parametrize("command, cwd", list(AGENTS.values()), ids=list(AGENTS))
def test_check_deep_reports_on_an_official_sdk_agent(command, cwd):
    with served_agent(command, cwd=cwd) as agent:
        base = agent.base.rstrip("/")
        done = cli("check", base, "--deep", "--format", "json", "--timeout", "5")
    assert "Traceback" not in done.stdout + done.stderr and done.returncode in (0, 1), done.stderr
    report = json.loads(done.stdout)
    outcomes = {row["id"]: row["outcome"] for row in report["requirements"]}
    assert report["deep"] is True and outcomes["CORE-SEND-001"] == "pass"
    assert {outcomes[row] for row in ("CORE-GET-001", "CORE-CANCEL-002", "CORE-STREAM-003")} <= {"pass", "fail"}


JS_AGENT = [NODE or "node", str(ROOT / "tests" / "interop" / "js_server.mjs"), "0", "--bindings", "both"]
SPEC_GRADES = {  # what each SDK agent once got a false grade for, and the grade the spec gives it
    "python jsonrpc, an api key not given": pytest.param(PYTHON_AGENT + ["--api-key", "wb-check-key"], None, {
        "CORE-CAP-003": "skip"}, marks=pytest.mark.skipif(not SDK_PYTHON, reason="set A2A_SDK_PYTHON to a Python with a2a-sdk")),
    "python http+json": pytest.param(PYTHON_AGENT + ["--rest-only"], None, {
        "HTTP_JSON-SVC-001": "pass", "WB-HTTP_JSON-ERR-003": "pass", "WB-HTTP_JSON-ERR-004": "pass",
        "CARD-CACHE-003": "skip"}, marks=pytest.mark.skipif(not SDK_PYTHON, reason="set A2A_SDK_PYTHON to a Python with a2a-sdk")),
    "javascript both, a bearer token not given": pytest.param(JS_AGENT + ["--bearer", "wb-check-token"], JS_SDK, {
        "CORE-CAP-003": "skip"}, marks=pytest.mark.skipif(not (JS_SDK and NODE), reason="set A2A_JS_SDK (see above)")),
    "javascript both": pytest.param(JS_AGENT, JS_SDK, {"WB-BIND-CTYPE-001": "pass", "HTTP_JSON-SVC-001": "pass"},
                                    marks=pytest.mark.skipif(not (JS_SDK and NODE), reason="set A2A_JS_SDK (see above)")),
}


@pytest.mark.parametrize("command, cwd, expected", list(SPEC_GRADES.values()), ids=list(SPEC_GRADES))
def test_check_grades_an_official_sdk_agent_as_the_spec_does(command, cwd, expected):
    """A 401 without a credential is a skip, a 404 to a path no operation has is not judged, invalid
    params are judged by status, a malformed body to an unknown task may be TASK_NOT_FOUND, -32005
    under a null id refuses a body not read, and a MAY not done is no failure."""
    with served_agent(command, cwd=cwd) as agent:
        done = cli("check", agent.base.rstrip("/"), "--format", "json", "--timeout", "5")
    report = json.loads(done.stdout)
    outcomes = {row["id"]: row["outcome"] for row in report["requirements"]}
    assert {row: outcomes[row] for row in expected} == expected, json.dumps(report["requirements"][:6])
