"""A private key given encrypted (it asks a passphrase) is one line and exit status 2, at
once: OpenSSL asked for the passphrase on the terminal, or read it from stdin, so a run
whose stdin was a pipe nobody writes (a service manager's, a CI job's) waited there for
good. Each place a key is loaded: `serve --tls-key` (tests/test_tls_serving.py), the
proxy's --tls-key and --client-key, and a client certificate in --credentials."""
import json
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

KEYS = ROOT / "peers" / "keys"
CLIENT_CERT, CLIENT_KEY = str(KEYS / "support-agent.DEMO-CLIENT-CERT.pem"), str(KEYS / "support-agent.DEMO-CLIENT-KEY.pem")
TLS_CERT, TLS_KEY = str(KEYS / "billing-agent.DEMO-TLS-CERT.pem"), str(KEYS / "billing-agent.DEMO-TLS-KEY.pem")

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed: it encrypts the key")


def encrypted(tmp_path, key):
    path = tmp_path / "encrypted.key"
    subprocess.run(["openssl", "pkey", "-in", key, "-aes256", "-passout", "pass:secret", "-out", str(path)],
                   capture_output=True, timeout=20, check=True)
    return str(path)


def run_with_stdin_open(*args):
    """(exit status, all it printed) of the workbench run with stdin a pipe nobody writes and
    no terminal, killed (status -9) if it has not ended in 15 s."""
    process = subprocess.Popen([sys.executable, str(ROOT / "a2a_delegation.py"), *args], cwd=ROOT,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        status = process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        status = process.wait()
    finally:
        process.stdin.close()
    return status, process.stdout.read() + process.stderr.read()


def said_in_one_line(status, said):
    assert status == 2, said
    assert "the key is encrypted" in said and "pass phrase" not in said.lower() and "Traceback" not in said, said
    assert len(said.strip().splitlines()) == 1, said


def test_a_client_certificate_in_the_credentials_file_with_an_encrypted_key_is_one_line(tmp_path):
    store = tmp_path / "credentials.json"
    store.write_text(json.dumps({"credentials": {"https://billing.acme.example/a2a": {
        "clientCertificate": {"certificate": CLIENT_CERT, "key": encrypted(tmp_path, CLIENT_KEY)}}}}))
    said_in_one_line(*run_with_stdin_open("--credentials", str(store)))


def test_the_proxys_client_key_encrypted_is_one_line_before_listening(tmp_path):
    said_in_one_line(*run_with_stdin_open("proxy", "--port", "0", "--to", "https://127.0.0.1:9",
                                          "--client-cert", CLIENT_CERT, "--client-key", encrypted(tmp_path, CLIENT_KEY)))


def test_the_proxys_tls_key_encrypted_is_one_line_before_listening(tmp_path):
    said_in_one_line(*run_with_stdin_open("proxy", "--port", "0", "--to", "http://127.0.0.1:9",
                                          "--tls-cert", TLS_CERT, "--tls-key", encrypted(tmp_path, TLS_KEY)))
