"""A task's conversation is bounded: GetTask answers all of its history at once (and ListTasks
a page of such tasks), so a task taking follow-up after follow-up (the conformance agent asks
for input again each turn) kept growing, 3.5 MB and past what a client reads, each turn slower.
A turn past MAX_TURNS, or past MAX_TASK_BYTES of kept messages, is refused as invalid params;
the task stays as it was, paused, for a new message to take the conversation on elsewhere."""
import json

from peers import billing
from peers.a2a import wire_v10
from peers.app import PeerApp
from peers.conformance import conformance_agent
from peers.store import MAX_TASK_BYTES, MAX_TURNS
from transports.inprocess import InProcessTransport

HEADERS = {"Content-Type": "application/json", "A2A-Version": "1.0"}


def served():
    transport = InProcessTransport({billing.BASE_URL: PeerApp(conformance_agent(billing.BASE_URL), wire_v10)})

    def call(method, params):
        frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
        return transport.post(billing.BASE_URL + "/a2a", frame, HEADERS).body
    return call


def turn(n, text, task_id=None):
    return {"message": {"messageId": f"tck-input-required-{n}", "role": "ROLE_USER", "parts": [{"text": text}],
                        **({"taskId": task_id} if task_id else {})}}


def test_a_task_takes_max_turns_follow_ups_then_refuses_the_next_and_stays_paused():
    call = served()
    task = json.loads(call("SendMessage", turn(0, "hi")))["result"]["task"]["id"]
    for n in range(1, MAX_TURNS + 1):
        answered = json.loads(call("SendMessage", turn(n, "more", task)))
        assert answered["result"]["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", (n, answered)
    refused = json.loads(call("SendMessage", turn(MAX_TURNS + 1, "more", task)))
    assert refused["error"]["code"] == -32602 and f"and {MAX_TURNS} turns of conversation" in refused["error"]["message"]
    got = call("GetTask", {"id": task})
    assert json.loads(got)["result"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert len(json.loads(got)["result"]["history"]) == 1 + 2 * MAX_TURNS and len(got) < 1 << 20


def test_large_turns_stop_at_the_bytes_a_task_keeps_and_its_answers_stay_within_what_a_client_reads():
    call, text = served(), "x" * 60_000
    task = json.loads(call("SendMessage", turn(0, text)))["result"]["task"]["id"]
    taken = 0
    for n in range(1, 20):
        answered = json.loads(call("SendMessage", turn(n, text, task)))
        if "error" in answered:
            assert answered["error"]["code"] == -32602 and f"at most {MAX_TASK_BYTES:,} bytes" in answered["error"]["message"]
            break
        taken += 1
    assert taken == MAX_TASK_BYTES // 60_100 - 1, taken  # the first message and these fit; the next would not
    assert len(call("GetTask", {"id": task})) < 1 << 20
