"""What the official conformance kit (a2a-tck) checks that the workbench's own tests did
not: ListTasks' order, filter and artifact rules (A2A 1.0 section 3.1.4). Real frames
through the real billing app."""
import itertools
import json

import pytest

from peers import billing
from peers.a2a import wire_v10
from peers.a2a.model import instant
from peers.app import PeerApp
from transports.inprocess import InProcessTransport

HEADERS = {"Content-Type": "application/json", "Authorization": "Bearer t0k", "A2A-Version": "1.0"}


def peer_with_clock():
    """billing with a clock that ticks a second per reading, so every state change is later."""
    seconds = itertools.count()
    clock = lambda: f"2026-11-30T12:{next(seconds) // 60:02d}:{next(seconds) % 60:02d}.5Z"  # noqa: E731
    transport = InProcessTransport({billing.BASE_URL: PeerApp(billing.billing_agent(clock=clock), wire_v10, token="t0k")})

    def call(method, params):
        frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
        return json.loads(transport.post(billing.BASE_URL + "/a2a", frame, HEADERS).body)
    return call


def send(call, message_id, order, context="ctx"):
    return call("SendMessage", {"message": {"messageId": message_id, "role": "ROLE_USER", "contextId": context,
                                            "parts": [{"data": {"order_id": order, "amount": 5}}]}})["result"]["task"]


def test_list_tasks_puts_the_most_recently_updated_first_and_leaves_artifacts_out_unless_asked():
    call = peer_with_clock()
    made = [send(call, f"m-{n}", f"ORD-{n}")["id"] for n in range(3)]
    listed = call("ListTasks", {"contextId": "ctx"})["result"]
    assert [t["id"] for t in listed["tasks"]] == made[::-1]
    stamps = [t["status"]["timestamp"] for t in listed["tasks"]]
    assert stamps == sorted(stamps, key=instant, reverse=True)
    assert all("artifacts" not in t for t in listed["tasks"]) and listed["nextPageToken"] == ""
    with_artifacts = call("ListTasks", {"contextId": "ctx", "includeArtifacts": True})["result"]["tasks"]
    assert all(t["artifacts"][0]["parts"][0]["text"].startswith("refund of $5.00") for t in with_artifacts)


def test_list_tasks_filters_by_status_timestamp_after():
    call = peer_with_clock()
    first = send(call, "m-1", "ORD-1")
    later = send(call, "m-2", "ORD-2")
    after = call("ListTasks", {"statusTimestampAfter": first["status"]["timestamp"]})["result"]["tasks"]
    assert [t["id"] for t in after] == [later["id"]]
    whole_second = first["status"]["timestamp"].replace(".5Z", "Z")  # .5 is after :ss, not before
    assert [t["id"] for t in call("ListTasks", {"statusTimestampAfter": whole_second})["result"]["tasks"]] == [
        later["id"], first["id"]]


@pytest.mark.parametrize("value", ["yesterday", "2026-11-30", "2026-11-30T12:00:00+01:00", "2026-11-30T12:00:00",
                                   "\u0662026-11-30T12:00:00Z", "2026-11-30T12:00:00.1234567890Z", 5, None, True])
def test_a_status_timestamp_after_that_is_not_a_utc_timestamp_is_invalid_params(value):
    call = peer_with_clock()
    answer = call("ListTasks", {"statusTimestampAfter": value})
    if value is None:
        assert "result" in answer
    else:
        assert answer["error"]["code"] == -32602


@pytest.mark.parametrize("value", [1, "true", None])
def test_include_artifacts_must_be_true_or_false(value):
    answer = peer_with_clock()("ListTasks", {"includeArtifacts": value})
    assert ("result" in answer) if value is None else answer["error"]["code"] == -32602


@pytest.mark.parametrize("text, sortable", [
    ("2026-11-30T12:00:00Z", "2026-11-30T12:00:00.000000000"), ("2026-11-30T12:00:00.5Z", "2026-11-30T12:00:00.500000000"),
    ("2026-11-30T12:00:00.123456789Z", "2026-11-30T12:00:00.123456789"), ("2026-11-30 12:00:00Z", None),
    ("2026-11-30T12:00:00.Z", None), ("2026-1-30T12:00:00Z", None), ("", None), ("Z", None)])
def test_instant_makes_timestamps_sort_as_text_in_time_order(text, sortable):
    assert instant(text) == sortable
