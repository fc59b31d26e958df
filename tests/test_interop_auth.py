"""The official A2A SDK's client against `serve billing-agent --auth oauth2|oidc|apikey`
(issue 25, checked by clients we did not write), opt-in as tests/test_interop.py is:
    A2A_SDK_PYTHON=.sdk/bin/python python -m pytest tests/test_interop_auth.py
The SDK's client (tests/interop/sdk_auth_client.py) reads the scheme from the card, is
refused without a credential, gets a token where the card says (oauth2: its tokenUrl;
oidc: the discovery document's token_endpoint), and its own AuthInterceptor puts the
credential in the header the card names. Our server is the standalone `serve`, a
subprocess on a free port of 127.0.0.1, stopped when the test ends. Basic and mutual TLS
are not here: the SDK's interceptor attaches neither."""
import subprocess
import sys

import pytest

from conftest import ROOT, Child, base_url
from test_interop import INTEROP, SDK_PYTHON

pytestmark = pytest.mark.skipif(not SDK_PYTHON, reason="set A2A_SDK_PYTHON to a Python with a2a-sdk")
SECRETS = {"oauth2": "support-agent:s3cret", "oidc": "support-agent:s3cret", "apikey": "k3y-42"}


@pytest.fixture
def serve():
    started = []

    def start(kind: str) -> tuple[str, list[str]]:
        process = Child([sys.executable, str(ROOT / "a2a_delegation.py"), "serve", "billing-agent",
                         "--wire", "1.0", "--port", "0", "--auth", kind, "--token", SECRETS[kind]],
                        stderr=subprocess.PIPE)
        started.append(process)
        return base_url(process.until("listening on")[-1])
    yield start
    for process in started:
        process.terminate()
        process.communicate(timeout=10)


@pytest.mark.parametrize("kind, declared, header", [("oauth2", "oauth2 oauth2_security_scheme", "authorization"),
                                                    ("oidc", "oidc open_id_connect_security_scheme", "authorization"),
                                                    ("apikey", "apiKey api_key_security_scheme", "x-api-key")])
def test_the_official_sdk_client_follows_the_card_to_its_credential_and_gets_the_refund(serve, kind, declared, header):
    base = serve(kind)
    done = subprocess.run([SDK_PYTHON, str(INTEROP / "sdk_auth_client.py"), base, SECRETS[kind],
                           "Please refund $42 on order ORD-42"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert lines[0] == f"scheme {declared}", done.stdout  # the scheme's name on the card, and its kind
    assert lines[1] == "header none" and lines[2].startswith("refused ") and "401" in lines[2], done.stdout
    fetched = [line for line in lines if line.startswith("token from ")]
    assert fetched == ([f"token from {base}/oauth2/token"] if kind != "apikey" else []), done.stdout
    assert f"header {header}" in lines and "state 3" in lines, done.stdout  # 3: TASK_STATE_COMPLETED
    assert "text refund of $42.00 issued for ORD-42 (ref BILL-ORD-42)" in lines, done.stdout
