"""Our support agent against the official JavaScript SDK's agent behind a scheme other than
bearer: an API key in a header, or HTTP Basic (issue 32). tests/test_interop_js_bearer.py
does the same for bearer. Its card declares the scheme in the SDK's own oneof form, which
our agent reads as A2A 1.0's with one warning line. Our agent takes the credential from its
credentials file (`--credentials`, "credentials": {endpoint: {"apiKey"} or {"basic"}}) and
delegates over each binding; the credential never shows in what it prints, not even with
--verbose, which prints headers (masked). Without one it refuses before sending, in one
line saying what the card asks for; with a wrong one the agent's 401 is one error line.

Opt-in, as tests/test_interop_js.py: it needs node and a folder whose node_modules holds
@a2a-js/sdk and express, named by A2A_JS_SDK; without them it is skipped. The agent is
tests/interop/js_server.mjs, served with `--api-key KEY` or `--basic USER:PASSWORD`.
"""
import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from test_interop import served_agent
from test_interop_js_bearer import JS_SDK, NODE, RESULT

pytestmark = pytest.mark.skipif(not (JS_SDK and NODE), reason="set A2A_JS_SDK to a folder whose node_modules "
                                                              "has @a2a-js/sdk and express (and put node on PATH)")
SECRETS = {"apiKey": "js-k3y-for-refunds", "basic": "support-agent:js-pa55-w0rd"}
FLAGS = {"apiKey": "--api-key", "basic": "--basic"}
NEEDS = {"apiKey": "apiKey (an API key, in the X-API-Key header)", "basic": "basic (a Basic user and password)"}
DIALECT = "in the JavaScript SDK's oneof form"


@pytest.fixture(scope="module", params=["apiKey", "basic"])
def guarded_js_agent(request):
    """tests/interop/js_server.mjs serving both bindings, each behind an API key or HTTP Basic."""
    folder = Path(JS_SDK).resolve()
    for package in ("@a2a-js/sdk", "express"):  # asked for by name: a wrong folder says so, not skips
        assert (folder / "node_modules" / package / "package.json").is_file(), f"{folder} has no {package}"
    with served_agent([NODE, str(ROOT / "tests" / "interop" / "js_server.mjs"), "--bindings", "both",
                       FLAGS[request.param], SECRETS[request.param]], cwd=folder) as agent:
        yield request.param, agent


def pointed_at(agent, folder, held: dict, *flags):
    """Our support agent's run against `agent` alone, holding `held` for both its endpoints."""
    files = {"registry": {"peers": [{"cardUrl": agent.base + "/.well-known/agent-card.json"}]},
             "allowlist": {"trusted": [{"name": "slow-refunds-js", "endpoint": agent.base + path}
                                       for path in ("/a2a", "/rest")]},
             "credentials": {"credentials": {agent.base + path: held for path in ("/a2a", "/rest")} if held else {}}}
    for name, document in files.items():
        (folder / f"{name}.json").write_text(json.dumps(document))
    return subprocess.run([sys.executable, str(ROOT / "a2a_delegation.py"), "--transport", "http", "--timeout", "8",
                           *[arg for name in files for arg in (f"--{name}", str(folder / f"{name}.json"))], *flags],
                          capture_output=True, text=True, timeout=60)


def shown(done, agent) -> str:
    return f"exit {done.returncode}\n{done.stdout[-4000:]}\nstderr:\n{done.stderr[-2000:]}\n" + "\n".join(agent.log[-20:])


@pytest.mark.parametrize("binding", ["jsonrpc", "http+json"])
def test_our_support_agent_delegates_to_the_javascript_sdk_agent_with_the_credential_its_file_holds(
        guarded_js_agent, tmp_path, binding):
    kind, agent = guarded_js_agent
    done = pointed_at(agent, tmp_path, {kind: SECRETS[kind]}, "--binding", binding, "--verbose")
    assert done.returncode == 0 and RESULT in done.stdout.splitlines() and "Traceback" not in done.stderr, \
        shown(done, agent)
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and f"securitySchemes.{kind} {DIALECT}" in warnings[0], shown(done, agent)
    assert ('"jsonrpc"' in done.stdout) == (binding == "jsonrpc"), shown(done, agent)
    header = "X-API-Key: " if kind == "apiKey" else "Authorization: Basic "
    assert header in done.stdout, shown(done, agent)  # --verbose prints the header it sent, masked
    printed = done.stdout + done.stderr
    assert not [secret for secret in (SECRETS[kind], SECRETS[kind].partition(":")[2],
                                      base64.b64encode(SECRETS[kind].encode()).decode()) if secret and secret in printed]


def test_holding_no_credential_for_it_our_agent_refuses_in_one_line_and_sends_nothing(guarded_js_agent, tmp_path):
    kind, agent = guarded_js_agent
    done = pointed_at(agent, tmp_path, {})
    refused = [line for line in done.stdout.splitlines() if line.startswith("slow-refunds-js: not sent:")]
    assert refused == [f"slow-refunds-js: not sent: its card requires {NEEDS[kind]}, and the support agent holds "
                       f"none for {agent.base}/a2a in --credentials"], shown(done, agent)
    assert done.returncode != 0 and RESULT not in done.stdout and "Traceback" not in done.stderr, shown(done, agent)
    assert "-->" not in done.stdout.split("[trust] 'slow-refunds-js'")[1], shown(done, agent)  # only the card crossed


def test_a_wrong_credential_is_refused_by_the_javascript_sdk_agent_in_one_error_line(guarded_js_agent, tmp_path):
    kind, agent = guarded_js_agent
    done = pointed_at(agent, tmp_path, {kind: SECRETS[kind] + "-wrong"})
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert errors == ["error: slow-refunds-js: delegation failed: HTTP 401: the peer refused the credentials sent; "
                      "the peer did nothing; retry once the credentials are fixed"], shown(done, agent)
    assert done.returncode != 0 and RESULT not in done.stdout and "Traceback" not in done.stderr, shown(done, agent)
    assert f"<-- HTTP 401 {{\"error\":\"{kind} is required\"}}" in done.stdout, shown(done, agent)
