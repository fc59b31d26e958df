"""The official Python SDK's client and server talking through our proxy (issue 34's SDK-to-SDK
test; opt-in, as the other interop tests: A2A_SDK_PYTHON names a Python with a2a-sdk). Both
bindings, with and without streaming: the client hears what it hears without the proxy, and
the proxy prints each frame, the card's rewrite, and no broken rule."""
import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from proxy_helpers import proxy_to  # noqa: E402
from test_interop import INTEROP, served_agent  # noqa: E402

SDK_PYTHON = os.environ.get("A2A_SDK_PYTHON")
pytestmark = pytest.mark.skipif(not SDK_PYTHON, reason="set A2A_SDK_PYTHON to a Python with a2a-sdk")


@pytest.fixture(scope="module", params=["jsonrpc", "rest-only"])
def sdk_agent(request):
    """The SDK's agent: JSON-RPC, or (--rest-only) its HTTP+JSON routes alone."""
    flags = ["--rest-only"] if request.param == "rest-only" else []
    with served_agent([SDK_PYTHON, str(INTEROP / "sdk_push_server.py"), *flags]) as agent:
        yield agent, ["--rest"] if flags else []


def sdk_client(base, *flags):
    done = subprocess.run([SDK_PYTHON, str(INTEROP / "sdk_client.py"), base, "no-token-checked",
                           "refund 180.0 on ORD-3300", *flags], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    return [line for line in done.stdout.splitlines() if line.startswith(("event ", "text "))]


@pytest.mark.parametrize("streamed", [False, True], ids=["send", "stream"])
def test_the_sdk_client_hears_through_the_proxy_what_it_hears_direct(sdk_agent, streamed):
    agent, flags = sdk_agent[0], sdk_agent[1] + (["--stream"] if streamed else [])
    direct = sdk_client(agent.base, *flags)
    with proxy_to(agent.base, timeout=30) as (proxy, lines):
        proxied = sdk_client(proxy, *flags)
    assert proxied == direct and proxied, proxied
    said = lines.text()
    assert "the card, as served through the proxy" in said and " agent -> client] <-- " in said
    if "--stream" in flags:
        assert " agent -> client] <-- [1] " in said
    assert "\n    ! " not in said, said
