"""The served schemes (issue 25) against what the hostile-case tests of test_auth_schemes.py
and test_tls_serving.py leave out, and checked by clients we did not write: every comparison
of a secret goes through hmac.compare_digest (read from the source, and the reader shown
to catch one that does not); a credential sent twice is refused, not either copy taken; a
client certificate from a CA made at test time, with the very subject the DEMO CA vouches
for, ends the handshake; curl follows each card as a stranger would, in both wire versions
(1.0 SendMessage, 0.3 message/send); openssl s_client checks the chain and the names a
client sends by SNI, and that mutual TLS refuses a request without a certificate and takes
one with. The outside tools' tests skip, saying why, where the tool is missing."""
import ast
import json
import re
import shutil
import socket
import subprocess
import time
from base64 import b64encode

import pytest

from conftest import ROOT
from peers.a2a import wire_v03, wire_v10
from test_auth_schemes import REFUND, SECRETS, served  # noqa: F401 (served: a fixture)
from test_tls_serving import CA, CLIENT, https  # noqa: F401 (https: the fixture serving billing over TLS)

OPENSSL, CURL = shutil.which("openssl"), shutil.which("curl")
# Where a served peer compares what a caller offers with what it holds.
SECRET_HOLDERS = sorted((ROOT / "peers/schemes").glob("*.py")) + [ROOT / "peers/app.py"]
SECRET_NAMES = {"key", "secret", "password", "user", "client_id", "token", "tokens", "offered", "known",
                "credential", "step_ups", "pair"}
SAME_VALUE = {"encode", "decode", "strip", "lower", "upper"}  # calls that leave a secret a secret
REFUND_V03 = {"message": {"kind": "message", "messageId": "m-1", "role": "user", "metadata": {"skillId": "process_refund"},
                          "parts": [{"kind": "data", "data": {"order_id": "ORD-1", "amount": 5}}]}}


def plain_comparisons_of_secrets(source: str) -> list[str]:
    """Each ==, !=, in or not in whose operand is a secret (a name above, as is or re-encoded)."""
    def secret(node: ast.AST) -> bool:
        while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SAME_VALUE:
            node = node.func.value
        while isinstance(node, ast.Subscript):  # offered[0]: still the secret
            node = node.value
        return (isinstance(node, ast.Name) and node.id in SECRET_NAMES or
                isinstance(node, ast.Attribute) and node.attr in SECRET_NAMES)
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare) and any(isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn))
                                                 for op in node.ops):
            if any(secret(operand) for operand in (node.left, *node.comparators)):
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def test_every_comparison_of_a_secret_on_the_served_side_goes_through_compare_digest():
    assert plain_comparisons_of_secrets("ok = offered.strip().encode() == self.key") != [], "the reader reads"
    assert plain_comparisons_of_secrets("ok = offered[0] in self.tokens") != []
    assert plain_comparisons_of_secrets("ok = hmac.compare_digest(offered, self.key)") == []
    for path in SECRET_HOLDERS:
        assert plain_comparisons_of_secrets(path.read_text()) == [], path.name
    # Those that hold a secret compare it, each as often as it has secrets to compare.
    for name, secrets in (("api_key.py", 1), ("http_basic.py", 2), ("oauth2.py", 2), ("app.py", 1)):
        path = next(path for path in SECRET_HOLDERS if path.name == name)
        # hmac's, or the same function without OpenSSL (transports/digests.py: the essay's run's bearer token)
        assert len(re.findall(r"\b(?:hmac|digests)\.compare_digest\(", path.read_text())) == secrets, name


def raw_call(peer, *headers: str) -> bytes:
    """A SendMessage with these header lines as given, repeats and all; the answer's first line."""
    frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": REFUND}).encode()
    head = "".join(f"{line}\r\n" for line in ("POST /a2a HTTP/1.1", "Host: 127.0.0.1", "Connection: close",
                                              "Content-Type: application/json", "A2A-Version: 1.0",
                                              f"Content-Length: {len(frame)}", *headers))
    with socket.create_connection(peer.server.server_address[:2], timeout=5) as sock:
        sock.sendall(head.encode() + b"\r\n" + frame)
        return sock.makefile("rb").readline()


def test_a_credential_sent_twice_is_refused_not_either_copy_taken(served):
    basic = "Authorization: Basic " + b64encode(SECRETS["basic"].encode()).decode()
    for kind, line in (("apikey", "X-API-Key: " + SECRETS["apikey"]), ("basic", basic)):
        peer = served(kind)
        assert raw_call(peer, line).startswith(b"HTTP/1.1 200")
        assert raw_call(peer, line, line).startswith(b"HTTP/1.1 401"), kind
    peer = served("oauth2")
    token = "Authorization: Bearer " + peer.token(client_id="support-agent", client_secret="s3cret")
    assert raw_call(peer, token).startswith(b"HTTP/1.1 200")
    assert raw_call(peer, token, token).startswith(b"HTTP/1.1 401")
    assert raw_call(peer, token, "Authorization: Bearer x").startswith(b"HTTP/1.1 401")


@pytest.mark.skipif(OPENSSL is None, reason="openssl is not installed: it makes the other CA")
def test_a_client_certificate_from_a_ca_made_now_with_the_trusted_subject_ends_the_handshake(https, tmp_path):
    import ssl
    subject = "/O=A2A workbench DEMO/CN=support-agent"  # the very subject the DEMO CA's client certificate has

    def openssl(*args):
        subprocess.run([OPENSSL, *args], cwd=tmp_path, capture_output=True, timeout=20, check=True)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "1", "-subj", "/O=A2A workbench DEMO/CN=demo CA")
    openssl("req", *ec, "-keyout", "client.key", "-out", "client.csr", "-subj", subject)
    openssl("x509", "-req", "-in", "client.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", "client.pem", "-days", "1")
    server, log = https(mtls=True)
    context = ssl.create_default_context(cafile=CA)
    context.load_cert_chain(str(tmp_path / "client.pem"), str(tmp_path / "client.key"))
    with pytest.raises((ssl.SSLError, ConnectionError)):
        with context.wrap_socket(socket.create_connection(server.server_address[:2], timeout=5),
                                 server_hostname="127.0.0.1") as sock:
            sock.sendall(b"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: x\r\n\r\n")
            sock.recv(65536)  # TLS 1.3: the server's verdict on our certificate arrives after our Finished
    deadline = time.monotonic() + 3
    while not any("certificate verify failed" in line for line in log) and time.monotonic() < deadline:
        time.sleep(0.02)
    failed = [line for line in log if "TLS handshake failed" in line]  # and which check, in OpenSSL's words
    assert len(failed) == 1 and failed[0].startswith("127.0.0.1 TLS handshake failed: certificate verify failed ("), log


ONE_OF = {"apiKeySecurityScheme": "apiKey", "httpAuthSecurityScheme": "http", "oauth2SecurityScheme": "oauth2",
          "openIdConnectSecurityScheme": "openIdConnect"}  # 1.0 wraps a scheme in one of these; 0.3 says "type"


def curl(*args) -> dict:
    done = subprocess.run([CURL, "-s", "--max-time", "5", *args], capture_output=True, timeout=10)
    return json.loads(done.stdout)


def as_a_stranger(card: dict, secret: str) -> list[str]:
    """The curl arguments that carry what `card`'s one security scheme asks for, found by
    reading the card alone; a token is fetched first where the scheme says so."""
    (_, scheme), = card["securitySchemes"].items()
    if "type" in scheme:
        kind, fields = scheme["type"], scheme
    else:
        (wrapper, fields), = scheme.items()
        kind = ONE_OF[wrapper]
    if kind == "apiKey":
        assert fields.get("location", fields.get("in")) == "header"
        return ["-H", f"{fields['name']}: {secret}"]
    if kind == "http":
        assert fields["scheme"].lower() == "basic"
        return ["-u", secret]
    token_url = (fields["flows"]["clientCredentials"]["tokenUrl"] if kind == "oauth2" else
                 curl(fields["openIdConnectUrl"])["token_endpoint"])
    token = curl("-u", secret, "-d", "grant_type=client_credentials", token_url)["access_token"]
    return ["-H", f"Authorization: Bearer {token}"]


@pytest.mark.skipif(CURL is None, reason="curl is not installed")
@pytest.mark.parametrize("kind, wire", [("apikey", wire_v10), ("basic", wire_v10), ("apikey", wire_v03),
                                        ("basic", wire_v03), ("oauth2", wire_v03), ("oidc", wire_v03)])
def test_curl_reads_the_scheme_from_the_card_and_gets_a_refund_with_it_refused_without(served, kind, wire):
    """oauth2 and oidc on the 1.0 wire: test_auth_schemes.py's curl test."""
    peer = served(kind, wire)
    card = curl(peer.base + "/.well-known/agent-card.json")
    v10 = wire is wire_v10
    endpoint = card["supportedInterfaces"][0]["url"] if v10 else card["url"]
    frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage" if v10 else "message/send",
                        "params": REFUND if v10 else REFUND_V03})
    plain = ["-H", "Content-Type: application/json", *(["-H", "A2A-Version: 1.0"] if v10 else []), "-d", frame]
    answer = curl(*as_a_stranger(card, SECRETS[kind]), *plain, endpoint)
    task = answer["result"]["task"] if v10 else answer["result"]
    assert task["status"]["state"] == ("TASK_STATE_COMPLETED" if v10 else "completed"), answer
    refused = curl(*plain, endpoint)["error"]
    assert refused["data"][0]["reason"] == "UNAUTHENTICATED", refused


def s_client(server, request: bytes, *extra: str) -> str:
    done = subprocess.run([OPENSSL, "s_client", "-connect", f"127.0.0.1:{server.server_address[1]}", "-CAfile", CA,
                           "-verify_return_error", "-ign_eof", *extra], input=request, capture_output=True, timeout=10)
    return done.stdout.decode(errors="replace") + done.stderr.decode(errors="replace")


@pytest.mark.skipif(OPENSSL is None, reason="openssl is not installed")
def test_openssl_s_client_verifies_the_chain_for_each_name_sent_by_sni_and_no_other(https):
    server, _ = https()
    card = b"GET /.well-known/agent-card.json HTTP/1.0\r\n\r\n"
    for name in ("localhost", "billing.acme.example"):
        said = s_client(server, card, "-servername", name, "-verify_hostname", name)
        assert "depth=1 O = A2A workbench DEMO, CN = demo CA" in said and "Verify return code: 0 (ok)" in said
        assert '"name": "billing-agent"' in said, said[-500:]
    said = s_client(server, card, "-verify_ip", "127.0.0.1", "-noservername")  # an IP is never sent by SNI
    assert "Verify return code: 0 (ok)" in said
    said = s_client(server, card, "-servername", "elsewhere.example", "-verify_hostname", "elsewhere.example")
    assert "hostname mismatch" in said and '"name": "billing-agent"' not in said


@pytest.mark.skipif(OPENSSL is None, reason="openssl is not installed")
def test_openssl_s_client_is_refused_a_refund_without_a_client_certificate_and_given_one_with(https):
    server, _ = https(mtls=True)
    frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": REFUND}).encode()
    request = (b"POST /a2a HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\n"
               b"A2A-Version: 1.0\r\nContent-Length: %d\r\n\r\n%s" % (len(frame), frame))
    without = s_client(server, request, "-verify_ip", "127.0.0.1")
    assert "HTTP/1.1 401" in without and 'WWW-Authenticate: MutualTLS realm="billing-agent"' in without
    with_one = s_client(server, request, "-verify_ip", "127.0.0.1", "-cert", CLIENT[0], "-key", CLIENT[1])
    assert "HTTP/1.1 200" in with_one and '"TASK_STATE_COMPLETED"' in with_one, with_one[-800:]


@pytest.mark.parametrize("around", ["\u00a0", "\u0085", "\u3000", "\u2028"], ids=["nbsp", "nel", "ideographic", "line-sep"])
def test_a_credential_with_another_kind_of_space_around_it_is_not_the_credential(around):
    """HTTP trims spaces and tabs around a field's value (RFC 9110 5.5); any other space is part
    of what was sent, so `t0k` followed by a no-break space is not the token, nor the key, nor
    the Basic pair (whose base64 was trimmed of every kind of space, NEL and NBSP as Latin-1
    bytes too, and taken), nor a client's Basic pair at the token endpoint."""
    from peers import billing
    from peers.app import PeerApp
    from peers.schemes.api_key import HEADER, ApiKey
    from peers.schemes.http_basic import Basic
    from peers.schemes.oauth2 import ClientCredentials
    from transports.inprocess import InProcessTransport
    frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
        "messageId": "m-1", "role": "ROLE_USER", "parts": [{"data": {"order_id": "ORD-1", "amount": 5}}]}}}).encode()
    headers = {"Content-Type": "application/json", "A2A-Version": "1.0"}
    pair = b64encode(b"support-agent:pa55").decode()
    for app, credential, value, secret in (
            (PeerApp(billing.billing_agent(), wire_v10, token="t0k"), "Authorization", "Bearer ", "t0k"),
            (PeerApp(billing.billing_agent(), wire_v10, scheme=ApiKey("k3y", "billing")), HEADER, "", "k3y"),
            (PeerApp(billing.billing_agent(), wire_v10, scheme=Basic("support-agent:pa55", "billing")),
             "Authorization", "Basic ", pair)):
        transport = InProcessTransport({billing.BASE_URL: app})
        sent = [transport.post(billing.BASE_URL + "/a2a", frame, {**headers, credential: value + shown}).status
                for shown in (f"{secret}{around}", f"{around}{secret}", f" \t{secret} \t")]
        assert sent == [401, 401, 200], (credential, value, sent)
    from peers.demo_auth import demo_key
    issuer = ClientCredentials("support-agent:pa55", billing.BASE_URL, billing.BASE_URL + "/a2a", "billing",
                               demo_key("billing-agent"))
    transport = InProcessTransport({billing.BASE_URL: PeerApp(billing.billing_agent(), wire_v10, scheme=issuer)})
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    sent = [transport.post(billing.BASE_URL + "/oauth2/token", b"grant_type=client_credentials",
                           {**form, "Authorization": "Basic " + shown}).status
            for shown in (f"{pair}{around}", f"{around}{pair}", f"{pair} \t")]
    assert sent == [401, 401, 200], ("token endpoint", sent)
