"""`check --card-key FILE` given a file far larger than any JWK: refused in one line that says
so (exit status 2, before any frame is sent), not as the JSON error its first 64 KiB, cut
mid-string, would read as."""
import json

from conftest import cli


def test_a_card_key_file_too_large_for_a_jwk_says_so_in_one_line(tmp_path):
    key = tmp_path / "key.json"
    key.write_text(json.dumps({"kty": "OKP", "crv": "Ed25519", "x": "A" * 100_000}))
    done = cli("check", "http://127.0.0.1:9/", "--card-key", key, "--timeout", "1")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [f"error: check: --card-key {key}: larger than 65,536 bytes; "
                                                "is it a public JWK?"]
