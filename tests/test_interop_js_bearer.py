"""The official JavaScript SDK's agent with a bearer scheme: its card says so in the SDK's own
oneof form, leaked into JSON (`{"scheme": {"$case": "httpAuthSecurityScheme", "value": ...}}`),
and our support agent reads it as A2A 1.0's, says so in one warning line, and delegates with
the token --credentials holds for each endpoint, over both bindings and every way of
following a task; with --strict-cards it refuses the card in one line instead.

Opt-in, as tests/test_interop_js.py (whose agent this is: tests/interop/js_server.mjs, with
`--bearer TOKEN`, answering 401 to any request without it): it needs node and a folder whose
node_modules holds @a2a-js/sdk and express, named by A2A_JS_SDK; without them it is skipped.
Our agent is pointed at it as a learner points it at any outside agent: a registry naming its
card, an allowlist vetting it (at each binding's endpoint), a credentials file with its token.
"""
import json
import os
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from conftest import ROOT
from test_interop import served_agent

JS_SDK = os.environ.get("A2A_JS_SDK")
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(not (JS_SDK and NODE), reason="set A2A_JS_SDK to a folder whose node_modules "
                                                              "has @a2a-js/sdk and express (and put node on PATH)")
TOKEN = "js-bearer-demo-token"
RESULT = "[support] trusted result (from slow-refunds-js): js refund of 180 for ORD-3300 (ref JS-ORD-3300)"
WARNED = ("warning: [support] the card of 'slow-refunds-js' is not in A2A 1.0's form: securitySchemes.bearer "
          "in the JavaScript SDK's oneof form")
CROSSED = {  # (binding, how it is followed) -> what must have crossed, as the printer shows it
    ("jsonrpc", "plain"): ['"method": "SendMessage"'],
    ("jsonrpc", "--stream"): ['"method": "SendStreamingMessage"', "a stream of events"],
    ("jsonrpc", "--push"): ['"taskPushNotificationConfig"', "(pushed to our webhook)"],
    ("jsonrpc", "--no-wait"): ['"returnImmediately": true', '"method": "GetTask"'],
    ("http+json", "plain"): ["--> POST /rest/message:send "],
    ("http+json", "--stream"): ["--> POST /rest/message:stream ", "a stream of events"],
    ("http+json", "--push"): ["--> POST /rest/message:send ", '"taskPushNotificationConfig"',
                              "(pushed to our webhook)"],
    ("http+json", "--no-wait"): ["--> POST /rest/message:send ", '"returnImmediately": true', "--> GET /rest/tasks/"],
}


@pytest.fixture(scope="module")
def bearer_js_agent():
    """tests/interop/js_server.mjs serving both bindings, each behind a bearer token."""
    folder = Path(JS_SDK).resolve()
    for package in ("@a2a-js/sdk", "express"):  # asked for by name: a wrong folder says so, not skips
        assert (folder / "node_modules" / package / "package.json").is_file(), f"{folder} has no {package}"
    with served_agent([NODE, str(ROOT / "tests" / "interop" / "js_server.mjs"), "--bindings", "both",
                       "--bearer", TOKEN], cwd=folder) as agent:
        yield agent


def pointed_at(agent, folder, *flags, token=TOKEN):
    """Our support agent's run against `agent` alone, holding `token` for both its endpoints."""
    files = {"registry": {"peers": [{"cardUrl": agent.base + "/.well-known/agent-card.json"}]},
             "allowlist": {"trusted": [{"name": "slow-refunds-js", "endpoint": agent.base + path}
                                       for path in ("/a2a", "/rest")]},
             "credentials": {"tokens": {agent.base + path: token for path in ("/a2a", "/rest")}}}
    for name, document in files.items():
        (folder / f"{name}.json").write_text(json.dumps(document))
    return subprocess.run([sys.executable, str(ROOT / "a2a_delegation.py"), "--transport", "http", "--timeout", "8",
                           *[arg for name in files for arg in (f"--{name}", str(folder / f"{name}.json"))], *flags],
                          capture_output=True, text=True, timeout=60)


def test_the_javascript_sdk_serves_its_bearer_scheme_in_its_own_oneof_form(bearer_js_agent):
    with urllib.request.urlopen(bearer_js_agent.base + "/.well-known/agent-card.json", timeout=10) as response:
        card = json.load(response)
    assert card["securitySchemes"] == {"bearer": {"scheme": {"$case": "httpAuthSecurityScheme", "value": {
        "description": "", "scheme": "Bearer", "bearerFormat": ""}}}}
    assert card["securityRequirements"] == [{"schemes": {"bearer": {"list": []}}}]  # this one as 1.0 spells it


@pytest.mark.parametrize("binding", ["jsonrpc", "http+json"])
@pytest.mark.parametrize("how", ["plain", "--stream", "--push", "--no-wait"])
def test_our_support_agent_delegates_to_the_javascript_sdk_agent_with_a_bearer_scheme(
        bearer_js_agent, tmp_path, binding, how):
    done = pointed_at(bearer_js_agent, tmp_path, "--binding", binding, *([] if how == "plain" else [how]))
    shown = f"exit {done.returncode}\n{done.stdout[-4000:]}\nstderr:\n{done.stderr[-2000:]}\n" + "\n".join(
        bearer_js_agent.log[-20:])
    assert done.returncode == 0 and RESULT in done.stdout.splitlines() and "Traceback" not in done.stderr, shown
    assert [line for line in done.stderr.splitlines() if line.startswith("warning:")] == [
        line for line in done.stderr.splitlines() if line.startswith(WARNED)] and WARNED in done.stderr, shown
    assert len([line for line in done.stderr.splitlines() if line.startswith("warning:")]) == 1, shown
    assert all(crossed in done.stdout for crossed in CROSSED[binding, how]), shown
    assert ('"jsonrpc"' in done.stdout) == (binding == "jsonrpc"), shown
    if how == "--push":  # the agent told our webhook of each change: never asked
        assert '"method": "GetTask"' not in done.stdout and "--> GET /rest/tasks/" not in done.stdout, shown


def test_a_wrong_token_is_refused_by_the_agent_so_the_token_we_hold_is_what_let_us_in(bearer_js_agent, tmp_path):
    done = pointed_at(bearer_js_agent, tmp_path, token="not-the-token")
    assert done.returncode != 0 and RESULT not in done.stdout, done.stdout[-3000:]
    assert "401" in done.stdout + done.stderr, done.stdout[-3000:] + done.stderr[-2000:]


def test_with_strict_cards_the_javascript_sdk_card_is_refused_in_one_line_and_nothing_is_sent(
        bearer_js_agent, tmp_path):
    done = pointed_at(bearer_js_agent, tmp_path, "--strict-cards")
    refused = [line for line in done.stdout.splitlines() if "not sent: its card is not in A2A 1.0's form" in line]
    assert len(refused) == 1 and "securitySchemes.bearer in the JavaScript SDK's oneof form" in refused[0], done.stdout
    assert "--strict-cards refuses such a card" in refused[0] and "warning:" not in done.stderr
    assert done.returncode == 2 and "--> POST" not in done.stdout and '"jsonrpc"' not in done.stdout
