"""Interoperability with the official A2A JavaScript SDK (@a2a-js/sdk): our support agent
follows a task on an agent built with it, as tests/test_interop.py does for the Python SDK.

The project stays dependency-free, so these tests need node (20 or later) and a folder
whose node_modules holds the SDK and express, named by A2A_JS_SDK; without it they are
skipped. To run them:
    mkdir .js && (cd .js && npm init -y && npm install @a2a-js/sdk express)
    A2A_JS_SDK=.js python -m pytest tests/test_interop_js.py
The agent (tests/interop/js_server.mjs) runs with that folder as its working directory,
listens on 127.0.0.1 and is stopped when the module's tests end. The last tests serve it
with skills that list no modes (this SDK writes them as []), over each binding: its
jsonRpcHandler alone, its restHandler alone, and both (with --binding choosing). The
other way round, the SDK's client (tests/interop/js_client.mjs) gets a refund from our
served billing over each binding its card lists, JSON-RPC and HTTP+JSON, plain and streaming.
"""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT
from test_interop import FOLLOWS, REST_FOLLOWS, assert_followed, assert_recorded, follow, served_agent
from test_interop import served_billing  # noqa: F401  (a fixture)

JS_SDK = os.environ.get("A2A_JS_SDK")
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(not (JS_SDK and NODE), reason="set A2A_JS_SDK to a folder whose node_modules "
                                                              "has @a2a-js/sdk and express (and put node on PATH)")


def js_agent(*flags):
    """tests/interop/js_server.mjs on a free port, served as `flags` say."""
    folder = Path(JS_SDK).resolve()
    for package in ("@a2a-js/sdk", "express"):  # asked for by name: a wrong folder says so, not skips
        assert (folder / "node_modules" / package / "package.json").is_file(), f"{folder} has no {package}"
    return served_agent([NODE, str(ROOT / "tests" / "interop" / "js_server.mjs"), *flags], cwd=folder)


@pytest.fixture(scope="module")
def slow_js_agent():
    """tests/interop/js_server.mjs on a free port, for the whole module."""
    with js_agent() as agent:
        yield agent


@pytest.fixture(scope="module", params=["jsonrpc", "rest", "both"])
def modeless_js_agent(request):
    """The JavaScript SDK's agent whose skill lists no modes, serving one binding or both."""
    with js_agent("--bindings", request.param, "--no-modes") as agent:
        yield request.param, agent


@pytest.mark.parametrize("flags", FOLLOWS, ids=" ".join)
def test_our_support_agent_follows_a_slow_task_on_an_agent_built_with_the_official_javascript_sdk(
        slow_js_agent, tmp_path, flags):
    done = follow(slow_js_agent, flags, tmp_path)
    assert_followed(done, slow_js_agent, flags, "js refund of 180 for ORD-3300 (ref JS-ORD-3300)")
    assert_recorded(tmp_path, slow_js_agent, flags)


@pytest.mark.parametrize("how", list(REST_FOLLOWS))
def test_our_support_agent_delegates_to_a_javascript_sdk_agent_whose_skill_lists_no_modes_over_each_binding(
        modeless_js_agent, tmp_path, how):
    served, agent = modeless_js_agent
    flags, crossed = REST_FOLLOWS[how]
    done = follow(agent, flags, tmp_path)
    assert "takes [], not application/json" not in done.stdout + done.stderr  # the card's defaults apply
    assert_followed(done, agent, [] if served == "rest" else flags, "js refund of 180 for ORD-3300 (ref JS-ORD-3300)")
    if served == "rest":  # HTTP+JSON, the only binding offered: each request by its verb and path
        assert all(line in done.stdout for line in crossed), done.stdout[-3000:]
        assert '"jsonrpc"' not in done.stdout
    else:  # JSON-RPC, offered: chosen over HTTP+JSON
        assert '"jsonrpc": "2.0"' in done.stdout and "--> POST /rest/" not in done.stdout


def test_with_binding_http_json_our_support_agent_speaks_rest_to_a_javascript_sdk_agent_offering_both(
        modeless_js_agent, tmp_path):
    served, agent = modeless_js_agent
    if served != "both":
        pytest.skip("only an agent offering both bindings lets --binding choose")
    trusted = {**agent.trusted, "endpoint": agent.base + "/rest"}  # the interface frames will go to
    done = follow(agent._replace(trusted=trusted), ["--binding", "http+json", "--stream"], tmp_path)
    out = done.stdout
    assert "Traceback" not in done.stderr and "[support] trusted result (from slow-refunds-js): js refund of 180 " \
        "for ORD-3300 (ref JS-ORD-3300)" in out, out[-3000:] + done.stderr[-2000:]
    assert "--> POST /rest/message:stream " in out and '"jsonrpc"' not in out
    # The demo peers in the same run offer JSON-RPC only: each refused as unsupported, nothing sent to it.
    assert out.count("not sent: the card is not supported: it offers JSONRPC, not the HTTP+JSON asked for") == 2
    assert done.returncode == 2  # a registry peer could not be had: the exit status says so


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


@pytest.mark.parametrize("binding, read", [
    # -32600 read as RequestMalformedError; our own -32041 is a transport error that keeps
    # its code and its ErrorInfo. HTTP+JSON reads the 401 itself.
    ("JSONRPC", "JsonRpcTransportError -32041 UNAUTHENTICATED"),
    ("HTTP+JSON", "A2AError 401 -"),
])
@pytest.mark.parametrize("token", ["", "guess"])
def test_the_official_javascript_sdk_reads_a_refused_credential_as_unauthenticated_not_malformed(
        served_billing, binding, read, token):
    done = subprocess.run([NODE, str(ROOT / "tests" / "interop" / "js_client.mjs"), served_billing, token,
                           binding, "Please refund $42 on order ORD-42", "--refused"],
                          cwd=Path(JS_SDK).resolve(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == [f"refused send {read}", f"refused card {read}"], done.stdout
