"""The official A2A SDK's client against `serve billing-agent --auth oauth2|oidc|apikey|basic|mtls`
(issue 25, checked by clients we did not write), opt-in as tests/test_interop.py is:
    A2A_SDK_PYTHON=.sdk/bin/python python -m pytest tests/test_interop_auth.py
The SDK's client (tests/interop/sdk_auth_client.py) reads the scheme from the card, is
refused without a credential, gets a token where the card says (oauth2: its tokenUrl;
oidc: the discovery document's token_endpoint), and its own AuthInterceptor puts the
credential in the header the card names. That interceptor attaches no HTTP Basic
credential, so for Basic the client adds one through the SDK's interceptor hook; for
mutual TLS the SDK's httpx client presents the DEMO client certificate in the handshake.
A wrong credential (a wrong password, a certificate another CA issued) is refused too.
Our server is the standalone `serve`, a subprocess on a free port of 127.0.0.1, stopped
when the test ends.

The other way round, our support agent delegates to the SDK's agent (tests/interop/
sdk_push_server.py) behind an API key or HTTP Basic, which its card declares in A2A 1.0's
form and a middleware enforces, with the credential its file (`--credentials`) holds;
holding none it refuses in one line and sends nothing, and a wrong one is the agent's 401."""
import base64
import json
import subprocess
import sys

import pytest

from conftest import ROOT, Child, base_url
from test_interop import INTEROP, SDK_PYTHON, assert_followed, follow, served_agent

pytestmark = pytest.mark.skipif(not SDK_PYTHON, reason="set A2A_SDK_PYTHON to a Python with a2a-sdk")
SECRETS = {"oauth2": "support-agent:s3cret", "oidc": "support-agent:s3cret", "apikey": "k3y-42",
           "basic": "support-agent:pa55-w0rd"}
KEYS = ROOT / "peers" / "keys"
CA = str(KEYS / "demo-ca.DEMO-CERT.pem")
CERTIFICATES = {"ours": [str(KEYS / "support-agent.DEMO-CLIENT-CERT.pem"), str(KEYS / "support-agent.DEMO-CLIENT-KEY.pem")],
                "another CA's": [str(ROOT / "tests" / "keys" / "stranger.DEMO-CLIENT-CERT.pem"),
                                 str(ROOT / "tests" / "keys" / "stranger.DEMO-CLIENT-KEY.pem")]}
REFUND = "text refund of $42.00 issued for ORD-42 (ref BILL-ORD-42)"


@pytest.fixture
def serve():
    started = []

    def start(kind: str) -> tuple[str, list[str]]:
        process = Child([sys.executable, str(ROOT / "a2a_delegation.py"), "serve", "billing-agent",
                         "--wire", "1.0", "--port", "0", "--auth", kind,
                         *(["--token", SECRETS[kind]] if kind in SECRETS else [])],
                        stderr=subprocess.PIPE)
        started.append(process)
        return base_url(process.until("listening on")[-1])
    yield start
    for process in started:
        process.terminate()
        process.communicate(timeout=10)


@pytest.mark.parametrize("kind, declared, header", [("oauth2", "oauth2 oauth2_security_scheme", "authorization"),
                                                    ("oidc", "oidc open_id_connect_security_scheme", "authorization"),
                                                    ("apikey", "apiKey api_key_security_scheme", "x-api-key"),
                                                    ("basic", "basic http_auth_security_scheme", "authorization")])
def test_the_official_sdk_client_follows_the_card_to_its_credential_and_gets_the_refund(serve, kind, declared, header):
    base = serve(kind)
    lines = sdk_auth_client(base, SECRETS[kind])
    assert lines[0] == f"scheme {declared}", lines  # the scheme's name on the card, and its kind
    assert lines[1] == "header none" and lines[2].startswith("refused ") and "401" in lines[2], lines
    fetched = [line for line in lines if line.startswith("token from ")]
    assert fetched == ([f"token from {base}/oauth2/token"] if kind in ("oauth2", "oidc") else []), lines
    assert f"header {header}" in lines and "state 3" in lines, lines  # 3: TASK_STATE_COMPLETED
    assert REFUND in lines, lines


def sdk_auth_client(base: str, secret: str, *flags: str) -> list[str]:
    """The lines tests/interop/sdk_auth_client.py printed: it must itself have ended well."""
    done = subprocess.run([SDK_PYTHON, str(INTEROP / "sdk_auth_client.py"), base, secret,
                           "Please refund $42 on order ORD-42", *flags], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.splitlines()


def test_the_official_sdk_client_presenting_our_client_certificate_gets_the_refund_over_mutual_tls(serve):
    base = serve("mtls")
    assert base.startswith("https://127.0.0.1:")
    lines = sdk_auth_client(base, "-", "--ca", CA, "--client-cert", *CERTIFICATES["ours"])
    assert lines[0] == "scheme mtls mtls_security_scheme", lines
    # Without a certificate the handshake succeeds (the card is public) and the request is a 401.
    assert lines[1] == "header none" and lines[2].startswith("refused ") and "401" in lines[2], lines
    assert lines[3:] == ["header none", "state 3", REFUND], lines  # no header: the handshake was the proof


@pytest.mark.parametrize("kind, wrong", [("basic", "support-agent:guess"), ("apikey", "k3y-41"),
                                         ("mtls", "another CA's")])
def test_the_official_sdk_client_with_a_wrong_credential_is_refused_by_our_served_peer(serve, kind, wrong):
    base = serve(kind)
    lines = sdk_auth_client(base, *(["-", "--ca", CA, "--client-cert", *CERTIFICATES[wrong]] if kind == "mtls"
                                   else [wrong]))
    refused = [line for line in lines if line.startswith("refused ")]
    assert len(refused) == 2 and REFUND not in "\n".join(lines) and "state 3" not in lines, lines
    # a wrong password or key: 401 again; a certificate from another CA: no TLS session at all
    if kind == "mtls":  # the server's alert, read by the SDK as it arrives: in the handshake, or on the first read
        assert "HTTP Error" not in refused[1] and ("Network communication error" in refused[1]
                                                   or "TLSV1_ALERT_UNKNOWN_CA" in refused[1]), lines
    else:
        assert "401" in refused[1], lines


# -- our support agent -> the SDK's agent behind an API key or HTTP Basic ----------------

AGENT_SECRETS = {"apiKey": "sdk-k3y-for-refunds", "basic": "support-agent:sdk-pa55-w0rd"}
SDK_RESULT = "sdk refund of 180.0 for ORD-3300 (ref SDK-ORD-3300)"


@pytest.fixture(scope="module", params=["apiKey", "basic"])
def guarded_sdk_agent(request):
    """tests/interop/sdk_push_server.py behind `--api-key KEY` or `--basic USER:PASSWORD`."""
    flag = "--api-key" if request.param == "apiKey" else "--basic"
    with served_agent([SDK_PYTHON, str(INTEROP / "sdk_push_server.py"), flag, AGENT_SECRETS[request.param]]) as agent:
        yield request.param, agent


def holding(agent, folder, held: dict, *flags) -> subprocess.CompletedProcess:
    """Our support agent's run against `agent`, its credentials file holding `held` for its endpoint."""
    (folder / "credentials.json").write_text(json.dumps({"credentials": {agent.trusted["endpoint"]: held}
                                                         if held else {}}))
    return follow(agent, ["--credentials", str(folder / "credentials.json"), *flags], folder)


@pytest.mark.parametrize("flags", [["--verbose"], ["--stream"], ["--push"]], ids=" ".join)
def test_our_support_agent_delegates_to_the_sdk_agent_with_the_credential_its_file_holds(
        guarded_sdk_agent, tmp_path, flags):
    kind, agent = guarded_sdk_agent
    done = holding(agent, tmp_path, {kind: AGENT_SECRETS[kind]}, *flags)
    assert_followed(done, agent, flags, SDK_RESULT)
    assert "warning:" not in done.stderr, done.stderr  # the SDK's card is in A2A 1.0's own form
    if "--verbose" in flags:  # the header it sent, masked
        assert ("X-API-Key: " if kind == "apiKey" else "Authorization: Basic ") in done.stdout, done.stdout[-3000:]
    secret = AGENT_SECRETS[kind]
    assert not [said for said in (secret, secret.partition(":")[2], base64.b64encode(secret.encode()).decode())
                if said and said in done.stdout + done.stderr]


def test_holding_no_credential_for_the_sdk_agent_our_agent_refuses_in_one_line_and_sends_nothing(
        guarded_sdk_agent, tmp_path):
    kind, agent = guarded_sdk_agent
    done = holding(agent, tmp_path, {})
    needs = "apiKey (an API key, in the X-API-Key header)" if kind == "apiKey" else "basic (a Basic user and password)"
    refused = [line for line in done.stdout.splitlines() if line.startswith("slow-refunds: not sent:")]
    assert refused == [f"slow-refunds: not sent: its card requires {needs}, and the support agent holds none for "
                       f"{agent.trusted['endpoint']} in --credentials"], done.stdout[-3000:]
    assert done.returncode != 0 and "Traceback" not in done.stderr and SDK_RESULT not in done.stdout
    assert "-->" not in done.stdout.split("[trust] 'slow-refunds'")[1], done.stdout[-3000:]  # only the card crossed


def test_a_wrong_credential_is_refused_by_the_sdk_agent_in_one_error_line(guarded_sdk_agent, tmp_path):
    kind, agent = guarded_sdk_agent
    done = holding(agent, tmp_path, {kind: AGENT_SECRETS[kind] + "-wrong"})
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert errors == ["error: slow-refunds: delegation failed: HTTP 401: the peer refused the credentials sent; "
                      "the peer did nothing; retry once the credentials are fixed"], done.stderr
    assert f'<-- HTTP 401 {{"error":"{kind} is required"}}' in done.stdout and SDK_RESULT not in done.stdout
