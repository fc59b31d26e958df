"""Interoperability with the official A2A SDK, the acceptance test of the 1.0 wire.

The project stays dependency-free, so these tests need an interpreter that has the SDK,
named by A2A_SDK_PYTHON; without it they are skipped. To run them:
    python -m venv .sdk && .sdk/bin/pip install "a2a-sdk[http-server,signing]" uvicorn
    A2A_SDK_PYTHON=.sdk/bin/python python -m pytest tests/test_interop.py
Everything listens on 127.0.0.1 and is stopped when the test ends.
"""
import json
import os
import socket
import subprocess
import sys
import time

import pytest

from conftest import ROOT, free_port

SDK_PYTHON = os.environ.get("A2A_SDK_PYTHON")
pytestmark = pytest.mark.skipif(not SDK_PYTHON, reason="set A2A_SDK_PYTHON to a Python with a2a-sdk")
INTEROP = ROOT / "tests" / "interop"


def wait_for_line(process, marker: str, seconds: float = 20) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if marker in line:
            return line
        if not line and process.poll() is not None:
            break
    raise AssertionError(f"no {marker!r} from {process.args}: {process.stderr.read()[:2000]}")


@pytest.fixture
def served_billing():
    """`serve billing-agent --wire 1.0` on a free port: its base URL, until the test ends."""
    serve = subprocess.Popen([sys.executable, str(ROOT / "a2a_delegation.py"), "serve", "billing-agent",
                              "--wire", "1.0", "--token", "interop-token"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        yield wait_for_line(serve, "listening on").split("listening on ")[1].split()[0]
    finally:
        serve.terminate()
        serve.communicate(timeout=10)


def sdk_client(base, text, *flags):
    done = subprocess.run([SDK_PYTHON, str(INTEROP / "sdk_client.py"), base, "interop-token", text, *flags],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_the_official_sdk_client_gets_the_refund_from_our_served_peer(served_billing):
    out = sdk_client(served_billing, "Please refund $42 on order ORD-42")
    assert "text refund of $42.00 issued for ORD-42 (ref BILL-ORD-42)" in out


def test_the_official_sdk_client_streams_a_refund_from_our_served_peer(served_billing):
    out = sdk_client(served_billing, "Please refund $42 on order ORD-42", "--stream")
    kinds = [line.split()[1] for line in out.splitlines() if line.startswith("event ")]
    assert kinds == ["task", "status_update", "artifact_update", "status_update"], out
    assert "text refund of $42.00 issued for ORD-42 (ref BILL-ORD-42)" in out


def test_the_official_sdk_client_continues_a_task_paused_for_approval_on_our_served_peer(served_billing):
    out = sdk_client(served_billing, "Please refund $6200 on order ORD-62", "--approve")
    states = [line.split() for line in out.splitlines() if line.startswith("state ")]
    assert [fields[1] for fields in states] == ["6", "3"], out  # INPUT_REQUIRED, then COMPLETED
    assert states[0][3] == states[1][3], "the same task, continued"
    assert states[1][5] == "3", "its history holds all three turns"
    assert "text refund of $6,200.00 issued for ORD-62 (ref BILL-ORD-62)" in out


def test_our_support_agent_delegates_to_an_agent_built_with_the_official_sdk(tmp_path):
    port = free_port()
    server = subprocess.Popen([SDK_PYTHON, str(INTEROP / "sdk_server.py"), str(port)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_line(server, "ready")
        base = f"http://127.0.0.1:{port}"
        for _ in range(100):  # "ready" comes just before uvicorn binds; wait until it does
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        (tmp_path / "reg.json").write_text(json.dumps({"peers": [{"cardUrl": f"{base}/.well-known/agent-card.json"}]}))
        (tmp_path / "allow.json").write_text(json.dumps({"trusted": [{"name": "echo-refunds", "endpoint": f"{base}/"}]}))
        done = subprocess.run([sys.executable, str(ROOT / "a2a_delegation.py"), "--transport", "http",
                               "--registry", str(tmp_path / "reg.json"), "--allowlist", str(tmp_path / "allow.json")],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert '"method": "SendMessage"' in done.stdout
        result = next(line for line in done.stdout.splitlines() if line.startswith("[support] trusted result"))
        assert result.startswith("[support] trusted result (from echo-refunds): sdk-agent received: ")
        assert '"order_id": "ORD-3300"' in result and '"amount": 180.0' in result  # our data part arrived
    finally:
        server.terminate()
        server.communicate(timeout=10)


def test_a_card_we_sign_verifies_in_the_official_sdk_and_one_it_signs_verifies_here(tmp_path):
    """A2A 1.0 signed cards: the same canonical bytes on both sides (RFC 8785, empties dropped)."""
    if subprocess.run([SDK_PYTHON, "-c", "import jwt"], capture_output=True).returncode != 0:
        pytest.skip("the SDK's signing extra (PyJWT) is not installed: a2a-sdk[signing]")
    from peers import billing
    from peers.a2a import wire_v10
    from peers.signing import card_signature, rs256
    from peers.app import PeerApp
    key_file = ROOT / "tests" / "keys" / "signer.pem"
    key = rs256.private_from_pem(key_file.read_text())
    (tmp_path / "ours.json").write_bytes(PeerApp(billing.billing_agent(), wire_v10, signing_key=key).card_body)
    (tmp_path / "key.jwk").write_text(json.dumps(key.public.jwk()))
    script = str(INTEROP / "sdk_signing.py")
    verified = subprocess.run([SDK_PYTHON, script, "verify", str(tmp_path / "ours.json"), str(tmp_path / "key.jwk")],
                              capture_output=True, text=True, timeout=60)
    assert verified.stdout.strip() == "verified", verified.stderr[-2000:]
    (tmp_path / "unsigned.json").write_bytes(PeerApp(billing.billing_agent(), wire_v10).card_body)
    (tmp_path / "key.pem").write_text(key_file.read_text())
    (tmp_path / "key.pem.kid").write_text(json.dumps(key.public.jwk()))
    signed = subprocess.run([SDK_PYTHON, script, "sign", str(tmp_path / "key.pem"), str(tmp_path / "unsigned.json")],
                            capture_output=True, text=True, timeout=60)
    assert signed.returncode == 0, signed.stderr[-2000:]
    document = json.loads(signed.stdout)
    assert card_signature.unproven(card_signature.signed_content(document), key.public) is None
    document["description"] += " (altered)"
    assert "altered after it was signed" in card_signature.unproven(card_signature.signed_content(document), key.public)
