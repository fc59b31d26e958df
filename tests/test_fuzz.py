"""Thousands of seeded hostile frames, and no client mistake is ever our internal error:
every answer is a well-formed JSON-RPC error (never -32603) or a result, nothing is
logged as an internal error, and a valid delegation still succeeds afterwards. In
process for the bulk, then a share over real HTTP through the real server."""
import json

import pytest

from conftest import JSON_AUTH, refund_frame, serving
from fuzz_frames import cases
from peers import billing, rogue
from peers.a2a import wire_v10
from peers.app import PeerApp
from transports import sse
from transports.inprocess import InProcessTransport
from transports.network import HttpTransport

ENDPOINT_PATH = "/a2a"


def check_answer(status, body, logged, headers=None):
    assert status in (200, 204, 401, 413, 415), status
    if status == 204:
        assert body == b""
        return
    if sse.is_stream((headers or {}).get("Content-Type")):  # a stream: each event is a whole answer
        events = sse.decode(body)
        assert events, "a stream of no events"
        for event in events:
            check_answer(status, event, logged)
        return
    answer = json.loads(body)
    assert answer["jsonrpc"] == "2.0" and ("result" in answer) != ("error" in answer)
    if "error" in answer:
        assert isinstance(answer["error"]["code"], int) and answer["error"]["code"] != -32603, answer
        assert isinstance(answer["error"]["message"], str)
    assert not [line for line in logged if "internal error" in line], logged[-1:]


@pytest.mark.parametrize("make", [billing.billing_agent, rogue.refund_bot_9000], ids=["billing", "rogue"])
def test_three_thousand_hostile_frames_in_process_are_each_answered_cleanly(make):
    logged = []
    app = PeerApp(make(), wire_v10, token="t0k", log=logged.append)
    transport = InProcessTransport({"https://peer.example": app})
    codes = {}
    for body, headers in cases(seed=11, count=3000):
        response = transport.post(f"https://peer.example{ENDPOINT_PATH}", body, headers)
        check_answer(response.status, response.body, logged, response.headers)
        streamed = sse.is_stream(response.headers.get("Content-Type"))
        code = "stream" if streamed else json.loads(response.body).get("error", {}).get("code") if response.body else None
        codes[code] = codes.get(code, 0) + 1
    assert len(codes) > 5, f"the cases reach many different answers: {codes}"
    assert transport.post(f"https://peer.example{ENDPOINT_PATH}", refund_frame("ORD-77"), JSON_AUTH).status == 200


def test_hostile_frames_over_http_are_each_answered_and_the_peer_still_serves():
    logged = []
    with serving(None) as server:
        server.app = PeerApp(billing.billing_agent(server.base_url), wire_v10, token="t0k", log=logged.append)
        transport = HttpTransport(timeout=5)
        for body, headers in cases(seed=12, count=600):
            response = transport.post(server.base_url + ENDPOINT_PATH, body, headers)
            check_answer(response.status, response.body, logged, response.headers)
        valid = json.loads(transport.post(server.base_url + ENDPOINT_PATH, refund_frame("ORD-78"), JSON_AUTH).body)
        assert valid["result"]["status"]["state"] == "completed"


def test_the_fuzz_bench_counts_a_streamed_reply_instead_of_crashing_on_it():
    """bench/fuzz.py read every answer as one JSON document and died on the first
    text/event-stream reply; a run short enough to reach a few counts them by their events."""
    import sys
    from conftest import ROOT
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import fuzz as bench
    finally:
        sys.path.remove(str(ROOT / "bench"))
    answers = bench.fuzz_in_process(100)
    assert answers["HTTP 200, streamed: result"] >= 1, answers
    assert answers["internal errors logged"] == 0 and sum(answers.values()) == 100
