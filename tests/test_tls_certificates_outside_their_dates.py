"""`serve` and `proxy` refuse a --tls-cert that has expired or is not valid yet, in one line
naming the file and its dates, exit status 2: they started without a word, and every
client then failed its handshake ("certificate has expired") far from the cause. The calling
side refuses a client certificate in --credentials so too, before any frame. The dates
are read by a DER reader of our own (transports/certificate_dates.py), which any bytes
leave with a ValueError at worst. Certificates made here with `openssl ca`, which sets
both dates, for billing's DEMO TLS key."""
import base64
import random
import shutil
import subprocess

import pytest

from conftest import ROOT, cli_process, start_serve
from transports.certificate_dates import dates_in

KEY = ROOT / "peers/keys/billing-agent.DEMO-TLS-KEY.pem"
OPENSSL = shutil.which("openssl")
needs_openssl = pytest.mark.skipif(OPENSSL is None, reason="openssl is not installed: it makes the certificates")
CA_CONFIG = """[ca]
default_ca = demo
[demo]
database = index.txt
new_certs_dir = .
serial = serial
default_md = sha256
policy = anything
unique_subject = no
[anything]
commonName = supplied
"""


def certificate(folder, name, start, end):
    """A self-signed DEMO certificate for billing's DEMO TLS key, valid from `start` to `end` (YYYYMMDDHHMMSSZ)."""
    def openssl(*args):
        subprocess.run([OPENSSL, *args], cwd=folder, capture_output=True, timeout=30, check=True)
    (folder / "ca.cnf").write_text(CA_CONFIG)
    (folder / "index.txt").write_text("")
    (folder / "serial").write_text("01\n")
    openssl("req", "-new", "-key", str(KEY), "-subj", f"/O=A2A workbench DEMO/CN={name}", "-out", f"{name}.csr")
    openssl("ca", "-selfsign", "-keyfile", str(KEY), "-in", f"{name}.csr", "-startdate", start, "-enddate", end,
            "-config", "ca.cnf", "-batch", "-notext", "-out", f"{name}.DEMO-CERT.pem")
    return folder / f"{name}.DEMO-CERT.pem"


def refused_in_one_line(done, path, *said):
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-800:]
    (line,) = done.stderr.strip().splitlines()
    assert path.name in line and all(words in line for words in said), line
    return line


@needs_openssl
def test_serve_refuses_an_expired_certificate_in_one_line_naming_it_and_its_dates(tmp_path):
    expired = certificate(tmp_path, "expired", "20200101000000Z", "20210101000000Z")
    done = cli_process("serve", "billing-agent", "--port", "0", "--tls", "--tls-cert", expired, "--tls-key", KEY, timeout=20)
    refused_in_one_line(done, expired, "the certificate has expired",
                        "valid from 2020-01-01 00:00:00 UTC to 2021-01-01 00:00:00 UTC")
    assert "listening" not in done.stdout


@needs_openssl
def test_serve_refuses_a_certificate_not_valid_yet_its_dates_written_as_generalized_time(tmp_path):
    early = certificate(tmp_path, "early", "20990101000000Z", "21000101120000Z")  # past 2049: GeneralizedTime
    done = cli_process("serve", "billing-agent", "--port", "0", "--auth", "mtls", "--tls-cert", early, "--tls-key", KEY,
                       "--client-ca", ROOT / "peers/keys/demo-ca.DEMO-CERT.pem", timeout=20)
    refused_in_one_line(done, early, "the certificate is not valid yet",
                        "valid from 2099-01-01 00:00:00 UTC to 2100-01-01 12:00:00 UTC")


@needs_openssl
def test_the_proxy_refuses_an_expired_certificate_as_serve_does(tmp_path):
    expired = certificate(tmp_path, "expired", "20200101000000Z", "20210101000000Z")
    done = cli_process("proxy", "--to", "http://127.0.0.1:9", "--port", "0", "--tls-cert", expired, "--tls-key", KEY,
                       timeout=20)
    refused_in_one_line(done, expired, "the certificate has expired", "2021-01-01 00:00:00 UTC")


@needs_openssl
@pytest.mark.parametrize("start, end, said", [
    ("20200101000000Z", "20210101000000Z", "the certificate has expired (valid from 2020-01-01 00:00:00 UTC to "
                                           "2021-01-01 00:00:00 UTC"),
    ("20990101000000Z", "21000101000000Z", "the certificate is not valid yet (valid from 2099-01-01 00:00:00 UTC")])
def test_a_client_certificate_in_credentials_outside_its_dates_is_refused_in_one_line_before_any_frame(
        tmp_path, start, end, said):
    """Taken, it was presented in the handshake, and the server's refusal ("certificate expired", a
    handshake failure) said nothing of the file in our store."""
    import json
    client = certificate(tmp_path, "support-agent", start, end)
    credentials = tmp_path / "credentials.json"
    credentials.write_text(json.dumps({"credentials": {"https://127.0.0.1:9/a2a": {
        "clientCertificate": {"certificate": str(client), "key": str(KEY)}}}}))
    done = cli_process("--peer", "https://127.0.0.1:9", "--allow-untrusted", "billing-agent",
                       "--credentials", credentials, timeout=30)
    line = refused_in_one_line(done, client, said)
    assert credentials.name in line and "clientCertificate" in line, line
    assert "POST" not in done.stdout and "-->" not in done.stdout, "no frame was sent"


@needs_openssl
def test_a_certificate_valid_now_until_past_2049_is_served(tmp_path):
    lasting = certificate(tmp_path, "lasting", "20200101000000Z", "20900101000000Z")
    process, banner = start_serve("billing-agent", "--port", "0", "--tls-cert", str(lasting), "--tls-key", str(KEY))
    process.stop()
    assert any(f"https with {lasting}" in line for line in banner), banner


@needs_openssl
def test_the_dates_read_are_the_ones_openssl_reads_for_every_demo_certificate():
    import datetime
    for path in sorted((ROOT / "peers/keys").glob("*CERT.pem")):
        printed = subprocess.run([OPENSSL, "x509", "-in", str(path), "-noout", "-startdate", "-enddate"],
                                 capture_output=True, text=True, timeout=30, check=True).stdout.splitlines()
        said = [datetime.datetime.strptime(line.split("=", 1)[1], "%b %d %H:%M:%S %Y %Z") for line in printed]
        assert [when.replace(tzinfo=None) for when in dates_in(path.read_bytes())] == said, path.name


def _pem(der: bytes) -> bytes:
    return b"-----BEGIN CERTIFICATE-----\n" + base64.encodebytes(der) + b"-----END CERTIFICATE-----\n"


def test_any_bytes_in_a_certificate_block_are_a_value_error_at_worst():
    pem = (ROOT / "peers/keys/billing-agent.DEMO-TLS-CERT.pem").read_bytes()  # a DEMO line, then the block
    der = base64.b64decode(pem[pem.index(b"-----\n") + 6:pem.index(b"-----END")])
    hostile = [der[:cut] for cut in range(len(der))]  # every truncation
    hostile += [b"\x30\x84\xff\xff\xff\xff" + der, b"\x30\x80" + der[2:], b"\x30\x85" + b"\x01" * 5 + der,
                b"\x1f\x01\x00", b"\x30" * 4096]  # lengths past the end, indefinite, five bytes long, a long tag
    shuffle = random.Random(87)
    for _ in range(2000):  # the real certificate with a few bytes changed
        spoiled = bytearray(der)
        for _ in range(shuffle.randint(1, 4)):
            spoiled[shuffle.randrange(len(spoiled))] = shuffle.randrange(256)
        hostile.append(bytes(spoiled))
    for data in hostile:
        try:
            dates_in(_pem(data))
        except ValueError:
            pass
    assert dates_in(b"no certificate here") is None and dates_in(_pem(der))[1].year == 2036
    for broken in (b"-----BEGIN CERTIFICATE-----\nMIIB", _pem(b"hello"), _pem(der[:-40])):
        with pytest.raises(ValueError):
            dates_in(broken)


@needs_openssl
def test_a_demo_certificate_outside_its_dates_ends_an_https_run_in_one_line_not_a_traceback(tmp_path):
    """The DEMO certificates are dated too (to 2036), and a machine's clock may be wrong: the
    demo network's https run said it in a traceback, once the check refused to serve one."""
    copy = tmp_path / "wb"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".git", "__pycache__", ".sdk", ".venv", ".js-sdk", "tests"))
    expired = certificate(tmp_path, "billing.acme.example", "20200101000000Z", "20210101000000Z")
    shutil.copy(expired, copy / "peers/keys/billing-agent.DEMO-TLS-CERT.pem")
    import sys
    done = subprocess.run([sys.executable, str(copy / "a2a_delegation.py"), "--transport", "https"], cwd=copy,
                          capture_output=True, text=True, timeout=60)
    line = refused_in_one_line(done, copy / "peers/keys/billing-agent.DEMO-TLS-CERT.pem", "the certificate has expired")
    assert line.startswith("error: cannot serve the demo peers over https: "), line
