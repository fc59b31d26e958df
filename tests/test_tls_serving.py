"""https and mutual TLS served by the standard library (issue 25, item 3, the serving half):
the DEMO certificate checked against the DEMO CA and the name 127.0.0.1; plain HTTP to the
TLS port and a client certificate from another CA are each one log line and a closed
connection, and a stalled handshake is closed at the request deadline while others are served; under --auth mtls the client certificate
is the caller. Checked by clients we did not write (curl, openssl s_client) where installed."""
import json
import shutil
import socket
import ssl
import subprocess
import time

import pytest

from conftest import ROOT, cli, exchange
from peers import billing
from peers.a2a import wire_v10
from peers.app import PeerApp
from peers.serving import scheme_for
from transports import tls
from transports.server import PeerServer

KEYS = ROOT / "peers/keys"
CA, CERT, KEY = (str(KEYS / name) for name in ("demo-ca.DEMO-CERT.pem", "billing-agent.DEMO-TLS-CERT.pem",
                                                "billing-agent.DEMO-TLS-KEY.pem"))
CLIENT = (str(KEYS / "support-agent.DEMO-CLIENT-CERT.pem"), str(KEYS / "support-agent.DEMO-CLIENT-KEY.pem"))
STRANGER = (str(ROOT / "tests/keys/stranger.DEMO-CLIENT-CERT.pem"), str(ROOT / "tests/keys/stranger.DEMO-CLIENT-KEY.pem"))
REFUND = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
    "messageId": "m-1", "role": "ROLE_USER", "parts": [{"data": {"order_id": "ORD-1", "amount": 5}}]}}}).encode()


@pytest.fixture
def https():
    servers = []

    def start(mtls=False, **options):
        log = []
        server = PeerServer(None, "127.0.0.1", 0, log=log.append, tls=tls.server_context(CERT, KEY, CA if mtls else None),
                            **options)
        peer = billing.billing_agent(server.base_url)
        scheme = scheme_for("mtls", None, server.base_url, peer, None, pytest.fail)[0] if mtls else None
        server.app = PeerApp(peer, wire_v10, token=None if mtls else "t0k", scheme=scheme, log=lambda line: None)
        servers.append(server.start())
        return server, log
    yield start
    for server in servers:
        server.stop()


def client_context(certificate=None):
    context = ssl.create_default_context(cafile=CA)  # hostname checked: the certificate names 127.0.0.1
    if certificate:
        context.load_cert_chain(*certificate)
    return context


def ask(server, method="GET", path="/.well-known/agent-card.json", body=None, headers=None, certificate=None):
    import http.client
    return exchange(http.client.HTTPSConnection("127.0.0.1", server.server_address[1], timeout=5,
                                                context=client_context(certificate)), method, path, body, headers)


def test_https_serves_the_card_under_an_https_url_with_a_certificate_the_demo_ca_vouches_for(https):
    server, _ = https()
    status, _, body = ask(server)
    assert server.base_url.startswith("https://127.0.0.1:") and status == 200
    assert json.loads(body)["supportedInterfaces"][0]["url"] == server.base_url + "/a2a"
    status, _, body = ask(server, "POST", "/a2a", REFUND, {"Content-Type": "application/json", "A2A-Version": "1.0",
                                                           "Authorization": "Bearer t0k"})
    assert status == 200 and json.loads(body)["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


def test_a_client_that_does_not_trust_the_demo_ca_refuses_the_server(https):
    server, _ = https()
    with socket.create_connection(server.server_address[:2], timeout=5) as sock:
        with pytest.raises(ssl.SSLCertVerificationError):
            ssl.create_default_context().wrap_socket(sock, server_hostname="127.0.0.1")


def test_plain_http_to_the_tls_port_is_a_closed_connection_and_one_log_line(https):
    server, log = https()
    with socket.create_connection(server.server_address[:2], timeout=5) as sock:
        sock.sendall(b"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: x\r\n\r\n")
        try:
            answer = sock.recv(65536)
        except ConnectionResetError:  # closed with our request unread: as good as end-of-file
            answer = b""
    assert b"HTTP/1.1 200" not in answer and b"billing-agent" not in answer  # no downgrade to plain http
    assert ask(server)[0] == 200, "the server serves on"
    assert any("TLS handshake failed: http request" in line for line in log), log


def test_tls_to_a_plain_http_port_is_refused_as_a_tls_handshake_not_as_bare_line_feeds():
    """A ClientHello sent to a plain port was refused and logged as "lines must end with CRLF,
    not a bare LF" (a byte of the hello is 0x0A), or, with no such byte, waited on until the
    request deadline: neither told the operator a client had said https to an http port."""
    log = []
    server = PeerServer(PeerApp(billing.billing_agent(), wire_v10, token="t0k", log=lambda line: None),
                        "127.0.0.1", 0, log=log.append).start()
    try:
        with socket.create_connection(server.server_address[:2], timeout=5) as raw:
            with pytest.raises((ssl.SSLError, ConnectionError)):
                client_context().wrap_socket(raw, server_hostname="127.0.0.1")
        deadline = time.monotonic() + 3
        while not log and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        server.stop()
    assert len(log) == 1 and log[0].endswith("400 refused: a TLS handshake: this port serves plain HTTP "
                                             "(http://, not https://)"), log


def test_a_stalled_handshake_neither_blocks_the_loop_nor_stays_open(https):
    server, log = https(request_timeout=0.5)
    with socket.create_connection(server.server_address[:2], timeout=5) as stalled:
        stalled.sendall(b"\x16\x03\x01")  # the first bytes of a ClientHello, and no more
        started = time.monotonic()
        assert ask(server)[0] == 200 and time.monotonic() - started < 2, "others are served meanwhile"
        stalled.settimeout(3)
        assert stalled.recv(100) == b"", "closed once the request deadline passed"


class RecordWriter:
    """A TLS client that chooses where its records are cut on the wire: its TLS is kept in
    memory (ssl.MemoryBIO), its bytes go through a plain socket, as many at a time as asked."""

    def __init__(self, server):
        self.sock = socket.create_connection(server.server_address[:2], timeout=5)
        self.incoming, self.outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        self.tls = client_context().wrap_bio(self.incoming, self.outgoing, server_hostname="127.0.0.1")
        for _ in range(20):  # a handshake is a few round trips
            try:
                return self.tls.do_handshake()
            except ssl.SSLWantReadError:
                self.sock.sendall(self.outgoing.read())
                self.incoming.write(self.sock.recv(65536))
        raise AssertionError("no handshake")

    def records(self, data):
        self.tls.write(data)
        return self.outgoing.read()

    def answer(self):
        """The status line of the next answer, once its body (Content-Length) is in."""
        got = b""
        for _ in range(100):
            head, _, body = got.partition(b"\r\n\r\n")
            if body and len(body) >= int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0]):
                return head.split(b"\r\n")[0]
            try:
                got += self.tls.read(65536)
            except ssl.SSLWantReadError:
                self.incoming.write(self.sock.recv(65536) or b"end")  # b"end": never a record, the test fails
        raise AssertionError(f"no whole answer: {got[:200]!r}")


def test_keep_alive_requests_over_tls_cut_mid_record_or_sent_two_in_one_are_each_answered(https):
    server, log = https()
    client = RecordWriter(server)

    def sent(number):
        frame = REFUND.replace(b'"m-1"', b'"m-%d"' % number).replace(b'"ORD-1"', b'"ORD-%d"' % number)
        return (b"POST /a2a HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\n"
                b"Authorization: Bearer t0k\r\nContent-Length: %d\r\n\r\n%s" % (len(frame), frame))
    client.sock.sendall(client.records(sent(1)))
    assert client.answer() == b"HTTP/1.1 200 OK"
    for number in (2, 3):  # the next request comes while the worker waits for it: half a record, then the rest
        record = client.records(sent(number))
        client.sock.sendall(record[:len(record) // 2])
        time.sleep(0.05)
        client.sock.sendall(record[len(record) // 2:])
        assert client.answer() == b"HTTP/1.1 200 OK"
    client.sock.sendall(client.records(sent(4) + sent(5)))  # two requests in one record
    assert [client.answer(), client.answer()] == [b"HTTP/1.1 200 OK"] * 2
    client.sock.close()
    assert [line for line in log if "200" not in line] == [], log


def test_mutual_tls_takes_a_demo_ca_client_certificate_as_the_caller(https):
    server, _ = https(mtls=True)
    headers = {"Content-Type": "application/json", "A2A-Version": "1.0"}
    card = json.loads(ask(server)[2])  # without a certificate: the card is public, and says what to present
    assert card["securitySchemes"] == {"mtls": {"mtlsSecurityScheme": {}}}
    status, answer_headers, _ = ask(server, "POST", "/a2a", REFUND, headers)
    assert status == 401 and answer_headers["WWW-Authenticate"] == 'MutualTLS realm="billing-agent"'
    status, _, body = ask(server, "POST", "/a2a", REFUND, headers, certificate=CLIENT)
    assert status == 200 and json.loads(body)["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    listed = ask(server, "POST", "/a2a", json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ListTasks",
                                                      "params": {}}).encode(), headers, certificate=CLIENT)
    assert len(json.loads(listed[2])["result"]["tasks"]) == 1, "the refused request made no task"


@pytest.mark.parametrize("certificate, why", [
    (STRANGER, "(unable to get local issuer certificate)"),
    ((CERT, KEY), "(unsuitable certificate purpose)"),  # the demo CA issued it, for a server
])
def test_the_log_line_of_a_refused_client_certificate_says_which_check_it_failed(https, certificate, why):
    """The handshake ends, in one log line saying why. It said "certificate verify failed" whatever the reason: another CA, a server's
    certificate presented as a client's, one expired; its holder was left guessing."""
    server, log = https(mtls=True)
    with pytest.raises((ssl.SSLError, ConnectionError)):
        ask(server, "POST", "/a2a", REFUND, {"Content-Type": "application/json"}, certificate=certificate)
    deadline = time.monotonic() + 3
    while not any("certificate verify failed" in line for line in log) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert any(line.endswith("TLS handshake failed: certificate verify failed " + why) for line in log), log


@pytest.mark.parametrize("flags, why", [
    (["--tls", "--tls-cert", CERT], "--tls-cert and --tls-key go together"),
    (["--tls", "--tls-cert", CA, "--tls-key", CA], "--tls: cannot use"),
    (["--client-ca", CA], "--client-ca names the CA of the client certificates --auth mtls requires"),
])
def test_serve_refuses_tls_files_it_cannot_use_in_one_line(flags, why):
    done = cli("serve", "billing-agent", "--port", "0", *flags)
    assert done.returncode == 2 and why in done.stderr and "Traceback" not in done.stderr


def test_serve_with_its_own_certificate_under_mtls_names_the_client_ca_rather_than_trust_the_demo_one():
    """`serve --auth mtls --tls-cert OURS --tls-key OURS` trusted the DEMO CA for client
    certificates, whose keys are published (peers/keys): anyone could call a server its
    operator had given a certificate of their own."""
    done = cli("serve", "billing-agent", "--port", "0", "--auth", "mtls", "--tls-cert", CERT, "--tls-key", KEY,
               timeout=15)
    assert done.returncode == 2 and "listening" not in done.stdout, done.stdout
    assert done.stderr.strip().splitlines() == [
        "error: --auth mtls with --tls-cert needs --client-ca: the default, the DEMO CA, vouches for client "
        "certificates whose keys are published in peers/keys, so anyone could call"], done.stderr


OPENSSL, CURL = shutil.which("openssl"), shutil.which("curl")


def s_client(server, *extra):
    request = b"GET /.well-known/agent-card.json HTTP/1.0\r\n\r\n"
    done = subprocess.run([OPENSSL, "s_client", "-connect", f"127.0.0.1:{server.server_address[1]}", "-CAfile", CA,
                           "-verify_return_error", "-verify_ip", "127.0.0.1", "-ign_eof", *extra],
                          input=request, capture_output=True, timeout=10)
    return done.stdout.decode(errors="replace") + done.stderr.decode(errors="replace")


@pytest.mark.skipif(OPENSSL is None, reason="openssl is not installed")
def test_openssl_s_client_verifies_the_server_and_completes_the_mutual_tls_handshake(https):
    server, _ = https(mtls=True)
    plain = s_client(server)
    assert "Verify return code: 0 (ok)" in plain and '"name": "billing-agent"' in plain
    mutual = s_client(server, "-cert", CLIENT[0], "-key", CLIENT[1])
    assert '"name": "billing-agent"' in mutual
    refused = s_client(server, "-cert", STRANGER[0], "-key", STRANGER[1])
    # Refused in the handshake, not by HTTP: no answer, and the alert that says why (the server drains
    # the request TLS 1.3 sent before it judged the certificate: closed unread, it was a reset instead)
    assert '"name": "billing-agent"' not in refused and "HTTP/1." not in refused and "alert" in refused.lower()


def test_a_stranger_whose_request_is_already_on_the_way_reads_the_alert_that_says_why_not_a_reset(https):
    """TLS 1.3: the client's handshake is done, and its request sent, before the server judges its
    certificate. Closing on that unread request would reset the connection, and the alert with it
    (half the time, before): the server drains it first, so the client reads why."""
    server, log = https(mtls=True)
    said = []
    for _ in range(5):
        raw = socket.create_connection(server.server_address[:2], timeout=5)
        with client_context(STRANGER).wrap_socket(raw, server_hostname="127.0.0.1") as stranger:
            stranger.sendall(b"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: x\r\n\r\n" + b"x" * 5000)
            time.sleep(0.2)  # the server has refused it meanwhile
            with pytest.raises(ssl.SSLError) as refused:
                stranger.recv(100)
            said.append(refused.value.reason)
    assert said == ["TLSV1_ALERT_UNKNOWN_CA"] * 5, said
    assert len([line for line in log if "TLS handshake failed" in line]) == 5, log


@pytest.mark.skipif(CURL is None, reason="curl is not installed")
def test_curl_calls_an_mtls_peer_with_its_certificate_and_is_refused_without(https):
    server, _ = https(mtls=True)

    def curl(*args):
        done = subprocess.run([CURL, "-s", "--max-time", "5", "--cacert", CA, "-H", "Content-Type: application/json",
                               "-H", "A2A-Version: 1.0", "-d", REFUND, *args, server.base_url + "/a2a"],
                              capture_output=True, timeout=10)
        return json.loads(done.stdout)
    assert curl("--cert", CLIENT[0], "--key", CLIENT[1])["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert curl()["error"]["data"][0]["reason"] == "UNAUTHENTICATED"


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed: it makes the test's CA")
def test_a_certificate_whose_subject_spells_another_callers_is_not_that_caller(tmp_path):
    """O="acme, commonName=alice" once read as O=acme, CN=alice: that certificate listed,
    read and could cancel alice's tasks. A caller is its certificate: subject escaped as
    RFC 4514 writes it, and the certificate's fingerprint."""
    def openssl(*args):
        subprocess.run(["openssl", *args], cwd=tmp_path, capture_output=True, timeout=20, check=True)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "1", "-subj", "/CN=test CA")
    for name, subject in (("alice", "/O=acme/CN=alice"), ("mallory", "/O=acme, commonName=alice"),
                          ("alice-again", "/O=acme/CN=alice")):  # the same subject, another key
        openssl("req", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", subject)
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                "-out", f"{name}.pem", "-days", "1")
    server = PeerServer(None, "127.0.0.1", 0, log=lambda line: None,
                        tls=tls.server_context(CERT, KEY, str(tmp_path / "ca.pem")))
    peer = billing.billing_agent(server.base_url)
    server.app = PeerApp(peer, wire_v10, scheme=scheme_for("mtls", None, server.base_url, peer, None, pytest.fail)[0],
                         log=lambda line: None)
    server.start()
    try:
        headers = {"Content-Type": "application/json", "A2A-Version": "1.0"}
        listing = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ListTasks", "params": {}}).encode()

        def as_(name, body):
            status, _, answer = ask(server, "POST", "/a2a", body, headers,
                                    certificate=(str(tmp_path / f"{name}.pem"), str(tmp_path / f"{name}.key")))
            assert status == 200, answer
            return json.loads(answer)["result"]
        made = as_("alice", REFUND)["task"]
        assert [task["id"] for task in as_("alice", listing)["tasks"]] == [made["id"]]
        for other in ("mallory", "alice-again"):
            assert as_(other, listing)["tasks"] == [], other
            asked = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "GetTask", "params": {"id": made["id"]}}).encode()
            status, _, answer = ask(server, "POST", "/a2a", asked, headers,
                                    certificate=(str(tmp_path / f"{other}.pem"), str(tmp_path / f"{other}.key")))
            assert json.loads(answer)["error"]["code"] == -32001, other
    finally:
        server.stop()


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed: it encrypts the key")
def test_serve_given_an_encrypted_key_says_so_in_one_line_and_never_waits_for_a_passphrase(tmp_path):
    """OpenSSL asked for the passphrase on the terminal, or on stdin: a server whose stdin is a
    pipe nobody writes (a service manager's) waited there, unserved, until it was killed."""
    from test_encrypted_keys_are_refused_without_a_prompt import encrypted, run_with_stdin_open, said_in_one_line
    said_in_one_line(*run_with_stdin_open("serve", "billing-agent", "--port", "0", "--tls", "--tls-cert", CERT,
                                          "--tls-key", encrypted(tmp_path, KEY)))
