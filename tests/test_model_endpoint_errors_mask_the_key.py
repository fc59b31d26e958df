"""A model endpoint (--llm-url) that says our API key back in its refusal, as an
OpenAI-compatible server or a gateway in front of one may ("Incorrect API key provided:
Bearer sk-..."), must not have it printed or traced in the clear: the error line and the
--trace file mask it, as every peer's echo of our bearer token is masked (and `check`'s
reports mask what an agent echoes). The key is a secret of ours like any credential:
terminals are screenshotted and CI logs and traces are shared. The refusal is shown as its
first 300 bytes: masked, then cut, so a key standing across byte 300 (a gateway's long
message before it) is not shown in part either.

A hostile round's and a review's findings: the endpoint is a server of the test's own on 127.0.0.1, port 0."""
import pytest

from conftest import OutsidePeer, cli, outside_peer

KEY = "sk-test-0123456789abcdefSECRET"
LONG = "Incorrect API key provided to this deployment of the gateway; check the key and the deployment name. "


class EchoingModel(OutsidePeer):
    def do_POST(self):
        self.asked()
        said = self.headers.get("Authorization", "")
        if self.server.across_the_cut:  # the key begins before byte 300 and ends after it
            head = '{"error": {"message": "' + LONG * 3
            return self.send(401, (head[:300 - len("Bearer ") - 12] + said + '"}}').encode())
        self.send(401, ('{"error": {"message": "Incorrect API key provided: %s"}}' % said).encode())


@pytest.mark.parametrize("across_the_cut", [False, True], ids=["whole", "across the cut"])
def test_a_model_endpoint_echoing_our_key_is_not_printed_or_traced_in_the_clear(tmp_path, across_the_cut):
    trace = tmp_path / "run.jsonl"
    with outside_peer(EchoingModel, across_the_cut=across_the_cut) as base:
        done = cli("--request", "Please refund $180 on order ORD-3300", "--llm-url", base + "/v1",
                   "--llm-model", "m", "--llm-key-env", "WB_TEST_MODEL_KEY", "--trace", str(trace),
                   env={"WB_TEST_MODEL_KEY": KEY})
    assert done.returncode == 1 and "answered HTTP 401" in done.stderr, done.stderr
    assert KEY[:12] not in done.stdout + done.stderr, done.stderr
    assert KEY[:12] not in trace.read_text(), "the --trace file holds the model's API key, or its first part"
