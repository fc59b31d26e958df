"""The official JavaScript SDK's client against `serve billing-agent --auth apikey|basic|oauth2|oidc|mtls`
(issue 32, each scheme checked by a client we did not write), as tests/test_interop_auth.py
does with the Python SDK's. Opt-in as tests/test_interop_js.py is: it needs node and a folder
whose node_modules holds @a2a-js/sdk, named by A2A_JS_SDK:
    A2A_JS_SDK=.js python -m pytest tests/test_interop_js_auth.py
The client (tests/interop/js_auth_client.mjs) reads the scheme from the card, is refused
without a credential, then attaches the one the card asks for through the SDK's own
AuthenticationHandler (createAuthenticatingFetchWithRetry), getting an OAuth2 token from the
endpoint the card names; for mutual TLS it gives the SDK a fetch over node:https that
presents the DEMO client certificate. Over each binding, JSON-RPC and HTTP+JSON. A wrong
credential (key, password, client secret, another CA's certificate) is refused too.
"""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT
import test_interop_auth
from test_interop_auth import CA, CERTIFICATES, REFUND, SECRETS

JS_SDK = os.environ.get("A2A_JS_SDK")
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(not (JS_SDK and NODE), reason="set A2A_JS_SDK to a folder whose node_modules "
                                                              "has @a2a-js/sdk (and put node on PATH)")
DECLARED = {"apikey": "apiKey apiKeySecurityScheme", "basic": "basic httpAuthSecurityScheme",
            "oauth2": "oauth2 oauth2SecurityScheme", "oidc": "oidc openIdConnectSecurityScheme",
            "mtls": "mtls mtlsSecurityScheme"}
HEADER = {"apikey": "x-api-key", "mtls": "none"}  # the rest: authorization
serve = test_interop_auth.serve  # the fixture: `serve --auth KIND` on a free port, until the test ends
REFUSED = {"JSONRPC": "refused send JsonRpcTransportError -32041 UNAUTHENTICATED", "HTTP+JSON": "refused send A2AError 401 -"}


def js_auth_client(base: str, kind: str, binding: str, *flags: str, secret=None, certificate="ours") -> list[str]:
    """The lines tests/interop/js_auth_client.mjs printed: it must itself have ended well."""
    tls = ["--ca", CA, "--client-cert", *CERTIFICATES[certificate]] if kind == "mtls" else []
    done = subprocess.run([NODE, str(ROOT / "tests" / "interop" / "js_auth_client.mjs"), base,
                           secret or SECRETS.get(kind, "-"), binding, "Please refund $42 on order ORD-42", *flags, *tls],
                          cwd=Path(JS_SDK).resolve(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.splitlines()


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
@pytest.mark.parametrize("kind", ["apikey", "basic", "oauth2", "oidc", "mtls"])
def test_the_official_javascript_sdk_client_follows_the_card_to_its_credential_and_gets_the_refund(
        serve, kind, binding):
    base = serve(kind)
    lines = js_auth_client(base, kind, binding)
    fetched = [f"token from {base}/oauth2/token"] if kind in ("oauth2", "oidc") else []
    assert lines == [f"scheme {DECLARED[kind]}", "header none", REFUSED[binding], *fetched,
                     f"header {HEADER.get(kind, 'authorization')}", REFUND], lines


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_the_official_javascript_sdk_client_streams_the_refund_over_mutual_tls(serve, binding):
    base = serve("mtls")
    lines = js_auth_client(base, "mtls", binding, "--stream")
    events = ["event task", "event statusUpdate", "event artifactUpdate", "event statusUpdate"]
    assert lines == [f"scheme {DECLARED['mtls']}", "header none", REFUSED[binding], "header none", *events, REFUND], lines


@pytest.mark.parametrize("kind, wrong, read", [
    ("apikey", "k3y-41", REFUSED["JSONRPC"]), ("basic", "support-agent:guess", REFUSED["JSONRPC"]),
    # the token endpoint refuses the client secret: no token, so no request to the agent
    ("oauth2", "support-agent:guess", "refused send TokenRefused 401 -"),
    # another CA's certificate: the server's handshake alert, no TLS session, no HTTP at all (in
    # TLS 1.3 the client may have sent its request by the time the alert is read: a reset, then)
    ("mtls", None, ("refused send Error ERR_SSL_TLSV1_ALERT_UNKNOWN_CA -", "refused send Error ECONNRESET -"))])
def test_the_official_javascript_sdk_client_with_a_wrong_credential_is_refused_by_our_served_peer(
        serve, kind, wrong, read):
    lines = js_auth_client(serve(kind), kind, "JSONRPC", secret=wrong, certificate="another CA's")
    assert REFUND not in lines and lines[1:3] == ["header none", REFUSED["JSONRPC"]], lines
    assert lines[3:-1] == ([] if kind == "oauth2" else [f"header {HEADER.get(kind, 'authorization')}"]), lines
    assert lines[-1] in (read if isinstance(read, tuple) else (read,)), lines
