"""A model endpoint's refusal is shown as its first 300 bytes, with our API key masked
(peers/support/model/generate.py). The body is cut before the key is looked for, so a key
standing across byte 300 (a gateway's long message before "... key provided: <key>") is no
longer there whole to be masked: its first part is printed and traced in the clear. Masked,
then cut, no part of the key is shown.

Review finding: the endpoint is a server of the test's own on 127.0.0.1, port 0."""
from conftest import OutsidePeer, cli, outside_peer

KEY = "sk-test-0123456789abcdefSECRET"
SAID = "Incorrect API key provided to this deployment of the gateway; check the key and the deployment name. "


class EchoingModel(OutsidePeer):
    def do_POST(self):
        self.asked()
        said = self.headers.get("Authorization", "")
        head = '{"error": {"message": "' + SAID * 3  # the key begins before byte 300 and ends after it
        body = (head[:300 - len("Bearer ") - 12] + said + '"}}').encode()
        self.send(401, body)


def test_a_key_standing_across_the_shown_part_of_a_refusal_is_not_shown_in_part(tmp_path):
    trace = tmp_path / "run.jsonl"
    with outside_peer(EchoingModel) as base:
        done = cli("--request", "Please refund $180 on order ORD-3300", "--llm-url", base + "/v1",
                   "--llm-model", "m", "--llm-key-env", "WB_TEST_MODEL_KEY", "--trace", str(trace),
                   env={"WB_TEST_MODEL_KEY": KEY})
    assert done.returncode == 1 and "answered HTTP 401" in done.stderr, done.stderr
    assert KEY[:12] not in done.stdout + done.stderr, done.stderr
    assert KEY[:12] not in trace.read_text(), "the --trace file holds the first part of the API key"
