"""ES256 and EdDSA card signatures checked both ways with the official Python SDK's signing
(a2a-sdk's signing extra: PyJWT, with cryptography underneath), opt-in as tests/test_interop.py is:
    A2A_SDK_PYTHON=.sdk/bin/python python -m pytest tests/test_interop_card_signatures.py
For each algorithm: billing's card signed by us (pure Python) verifies in the SDK, and an
unsigned card the SDK signs (tests/interop/sdk_signing.py) verifies here against the pinned
key; each altered afterwards is refused on both sides. RS256 is tests/test_interop.py's
signed-card test. The keys are billing's DEMO keys."""
import json
import subprocess
from pathlib import Path

import pytest

from peers import billing
from peers.a2a import wire_v10
from peers.app import PeerApp
from peers.demo_auth import KEYS, demo_key
from peers.signing import card_signature
from peers.signing.rs256 import from_b64url
from test_interop import INTEROP, SDK_PYTHON

pytestmark = pytest.mark.skipif(not SDK_PYTHON, reason="set A2A_SDK_PYTHON to a Python with a2a-sdk")
SCRIPT = str(INTEROP / "sdk_signing.py")


@pytest.fixture(scope="module", autouse=True)
def signing_extra():
    if subprocess.run([SDK_PYTHON, "-c", "import jwt, cryptography"], capture_output=True).returncode != 0:
        pytest.skip("the SDK's signing extra (PyJWT with cryptography) is not installed: a2a-sdk[signing]")


def sdk(*args):
    return subprocess.run([SDK_PYTHON, SCRIPT, *map(str, args)], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("algorithm", ["ES256", "EdDSA"])
def test_a_card_we_sign_verifies_in_the_sdk_and_one_the_sdk_signs_verifies_here(algorithm, tmp_path):
    (key,) = demo_key("billing-agent", [algorithm])
    (tmp_path / "key.jwk").write_text(json.dumps(key.public.jwk()))
    ours = json.loads(PeerApp(billing.billing_agent(), wire_v10, signing_key=[key]).card_body)
    assert json.loads(from_b64url(ours["signatures"][0]["protected"]))["alg"] == algorithm
    (tmp_path / "ours.json").write_text(json.dumps(ours))
    verified = sdk("verify", tmp_path / "ours.json", tmp_path / "key.jwk", algorithm)
    assert verified.stdout.strip() == "verified", verified.stderr[-2000:]
    (tmp_path / "altered.json").write_text(json.dumps({**ours, "description": ours["description"] + " (altered)"}))
    refused = sdk("verify", tmp_path / "altered.json", tmp_path / "key.jwk", algorithm)
    assert refused.returncode != 0 and "InvalidSignaturesError" in refused.stderr, "the SDK checks, not just accepts"

    (tmp_path / "unsigned.json").write_bytes(PeerApp(billing.billing_agent(), wire_v10).card_body)
    (tmp_path / "key.private.jwk").write_text((Path(KEYS) / f"billing-agent.DEMO-KEY.{algorithm}.json").read_text())
    (tmp_path / "key.private.jwk.kid").write_text(json.dumps(key.public.jwk()))
    signed = sdk("sign", tmp_path / "key.private.jwk", tmp_path / "unsigned.json", algorithm)
    assert signed.returncode == 0, signed.stderr[-2000:]
    document = json.loads(signed.stdout)
    assert card_signature.unproven(card_signature.signed_content(document), key.public) is None
    document["description"] += " (altered)"
    assert "altered after it was signed" in card_signature.unproven(card_signature.signed_content(document), key.public)
