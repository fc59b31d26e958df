"""The official JavaScript SDK's client through the proxy (issue 34, tests): it gets a refund
from our served billing over each binding, plain and streaming, as it does direct
(tests/test_interop_js.py), while the proxy prints each frame, each event of a stream its own
line, and finds nothing to say against either side. Opt-in as the other JS interop tests are:
A2A_JS_SDK names a folder whose node_modules has @a2a-js/sdk, and node is on PATH."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT
from proxy_helpers import TOKEN, billing_served, proxy_to

JS_SDK = os.environ.get("A2A_JS_SDK")
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(not (JS_SDK and NODE), reason="set A2A_JS_SDK to a folder whose node_modules "
                                                              "has @a2a-js/sdk (and put node on PATH)")
KINDS = ["task", "statusUpdate", "artifactUpdate", "statusUpdate"]


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streaming"])
@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_the_javascript_sdk_client_gets_a_refund_through_the_proxy_every_frame_printed(binding, stream):
    with billing_served() as agent, proxy_to(agent) as (proxy, lines):
        done = subprocess.run([NODE, str(ROOT / "tests" / "interop" / "js_client.mjs"), proxy, TOKEN, binding,
                               "Please refund $42 on order ORD-42", *(["--stream"] if stream else [])],
                              cwd=Path(JS_SDK).resolve(), capture_output=True, text=True, timeout=60)
    said = lines.text()
    assert done.returncode == 0, done.stderr[-2000:]
    assert "text refund of $42.00 issued for ORD-42 (ref BILL-ORD-42)" in done.stdout
    assert "[proxy] the card, as served through the proxy" in said  # the client stayed on the proxy
    sent = [line for line in said.splitlines() if " client -> agent] --> " in line and "agent-card" not in line]
    assert len(sent) == 1 and ('"jsonrpc"' in sent[0]) == (binding == "JSONRPC"), said[-3000:]
    if stream:
        assert [line.split()[1] for line in done.stdout.splitlines() if line.startswith("event ")] == KINDS
        assert " agent -> client] <-- [4] " in said and " agent -> client] <-- [5] " not in said
    assert "[proxy] finding" not in said and "    ! " not in said, said[-3000:]
