"""Interoperability with the official A2A JavaScript SDK (@a2a-js/sdk): our support agent
follows a task on an agent built with it, as tests/test_interop.py does for the Python SDK.

The project stays dependency-free, so these tests need node (20 or later) and a folder
whose node_modules holds the SDK and express, named by A2A_JS_SDK; without it they are
skipped. To run them:
    mkdir .js && (cd .js && npm init -y && npm install @a2a-js/sdk express)
    A2A_JS_SDK=.js python -m pytest tests/test_interop_js.py
The agent (tests/interop/js_server.mjs) runs with that folder as its working directory,
listens on 127.0.0.1 and is stopped when the module's tests end. The other way round,
the SDK's client (tests/interop/js_client.mjs) gets a refund from our served billing
over each binding its card lists, JSON-RPC and HTTP+JSON, plain and streaming.
"""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT
from test_interop import FOLLOWS, assert_followed, assert_recorded, follow, served_agent, served_billing  # noqa: F401

JS_SDK = os.environ.get("A2A_JS_SDK")
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(not (JS_SDK and NODE), reason="set A2A_JS_SDK to a folder whose node_modules "
                                                              "has @a2a-js/sdk and express (and put node on PATH)")


@pytest.fixture(scope="module")
def slow_js_agent():
    """tests/interop/js_server.mjs on a free port, for the whole module."""
    folder = Path(JS_SDK).resolve()
    for package in ("@a2a-js/sdk", "express"):  # asked for by name: a wrong folder says so, not skips
        assert (folder / "node_modules" / package / "package.json").is_file(), f"{folder} has no {package}"
    with served_agent([NODE, str(ROOT / "tests" / "interop" / "js_server.mjs")], cwd=folder) as agent:
        yield agent


@pytest.mark.parametrize("flags", FOLLOWS, ids=" ".join)
def test_our_support_agent_follows_a_slow_task_on_an_agent_built_with_the_official_javascript_sdk(
        slow_js_agent, tmp_path, flags):
    done = follow(slow_js_agent, flags, tmp_path)
    assert_followed(done, slow_js_agent, flags, "js refund of 180 for ORD-3300 (ref JS-ORD-3300)")
    assert_recorded(tmp_path, slow_js_agent, flags)


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
@pytest.mark.parametrize("flags, kinds", [((), None), (("--stream",), ["task", "statusUpdate", "artifactUpdate",
                                                                     "statusUpdate"])])
def test_the_official_javascript_sdk_client_gets_a_refund_from_our_served_peer_over_each_binding(
        served_billing, binding, flags, kinds):
    done = subprocess.run([NODE, str(ROOT / "tests" / "interop" / "js_client.mjs"), served_billing, "interop-token",
                           binding, "Please refund $42 on order ORD-42", *flags],
                          cwd=Path(JS_SDK).resolve(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "text refund of $42.00 issued for ORD-42 (ref BILL-ORD-42)" in done.stdout
    assert kinds is None or [line.split()[1] for line in done.stdout.splitlines()
                             if line.startswith("event ")] == kinds, done.stdout
