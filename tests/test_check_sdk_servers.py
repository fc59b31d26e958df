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
