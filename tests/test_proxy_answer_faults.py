"""proxy --fault drip, corrupt and reorder (issue 34, item 5): the answer the client gets is
changed as the spec says, the printer still shows what the agent sent, and one [fault] line
says what was done to which frame. Real frames through the proxy to the real billing app."""
import json
import time

import pytest

from conftest import OutsidePeer, outside_peer
from peers.support.proxy.faults import Faults, parse
from proxy_helpers import billing_served, broken_off_through_the_proxy, proxy_to
from test_proxy_faults import HEADERS, refund
from transports import sse
from transports.network import HttpTransport


def exchange(*faults, seed=0, method="SendMessage", count=1):
    with billing_served() as agent, proxy_to(agent, *faults, seed=seed) as (proxy, lines):
        client = HttpTransport(timeout=10)
        answers = [client.post(proxy + "/a2a", refund(order, method), HEADERS) for order in range(1, count + 1)]
    return answers, lines


def kinds(body):
    return [next(iter(json.loads(event)["result"])) for event in sse.decode(body)]


def test_corrupt_gives_the_named_field_a_value_of_the_wrong_type():
    (answer,), lines = exchange("corrupt:1:result.task.status.state")
    assert json.loads(answer.body)["result"]["task"]["status"]["state"] is True
    assert '"state": "TASK_STATE_COMPLETED"' in lines.text()  # the printer shows what the agent sent
    assert ('[fault] corrupt:1:result.task.status.state: in the answer to request 1, result.task.status.state '
            '("TASK_STATE_COMPLETED", a string) replaced by true (a boolean)') in lines.text()


def test_corrupt_in_a_stream_changes_the_first_event_that_has_the_field():
    (answer,), lines = exchange("corrupt:1:result.statusUpdate.status.state", method="SendStreamingMessage")
    states = [json.loads(event)["result"].get("statusUpdate", {}).get("status", {}).get("state")
              for event in sse.decode(answer.body)]
    assert states == [None, True, None, "TASK_STATE_COMPLETED"]
    assert "in event 2 of the stream answering request 1" in lines.text()


class EchoingAgent(OutsidePeer):
    """An agent (not ours: ours refuses the escape) whose answer echoes a lone surrogate it was sent."""

    def do_POST(self):
        asked = self.asked()
        note = asked["params"]["message"]["metadata"]["note"]
        self.reply({"jsonrpc": "2.0", "id": asked["id"], "result": {"task": {
            "id": "task-1", "contextId": "c-1", "status": {"state": "TASK_STATE_COMPLETED"},
            "history": [{**asked["params"]["message"], "metadata": {"note": note}}]}}})


def test_corrupt_of_an_answer_holding_a_lone_surrogate_still_answers():
    """The answer echoes the message's metadata: a lone surrogate there made the re-encoding a 500."""
    asked = refund(1).replace(b'"skillId": "process_refund"', b'"skillId": "process_refund", "note": "\\ud800"')
    with outside_peer(EchoingAgent) as agent, proxy_to(agent, "corrupt:1:result.task.id") as (proxy, lines):
        answer = HttpTransport(timeout=10).post(proxy + "/a2a", asked, HEADERS)
    task = json.loads(answer.body)["result"]["task"]
    assert answer.status == 200 and task["id"] is True and task["history"][0]["metadata"]["note"] == "\ud800"


def test_corrupt_of_a_field_not_there_forwards_the_answer_unchanged_and_says_so():
    (answer,), lines = exchange("corrupt:1:result.nothing.here")
    assert json.loads(answer.body)["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert "has no JSON field result.nothing.here; forwarded unchanged" in lines.text()


def test_reorder_swaps_two_events_of_the_named_stream_only():
    answers, lines = exchange("reorder:2:1:3", method="SendStreamingMessage", count=2)
    assert kinds(answers[0].body) == ["task", "statusUpdate", "artifactUpdate", "statusUpdate"]
    assert kinds(answers[1].body) == ["artifactUpdate", "statusUpdate", "task", "statusUpdate"]
    assert lines.text().count("[fault] reorder:2:1:3: swapped events 1 and 3 of the stream answering request 2") == 1


def test_reorder_past_the_end_of_a_stream_swaps_nothing_and_loses_nothing():
    (answer,), lines = exchange("reorder:1:2:9", method="SendStreamingMessage")
    assert kinds(answer.body) == ["task", "statusUpdate", "artifactUpdate", "statusUpdate"]
    assert "ended after 4 event(s): nothing swapped" in lines.text()


def test_drip_passes_the_same_bytes_on_slowly():
    (plain,), _ = exchange()
    started = time.monotonic()
    (dripped,), lines = exchange("drip:1:20000")
    assert time.monotonic() - started >= len(plain.body) / 20000
    assert dripped.body == plain.body
    assert f"[fault] drip:1:20000: passing the answer to request 1 on at 20000 bytes a second (its {len(plain.body)} " \
           "bytes, sent chunked" in lines.text()


@pytest.mark.parametrize("spec", ["drip:1:0", "drip:1:x", "corrupt:1", "corrupt:1:a..b", "corrupt:1:a b",
                                  "reorder:1:2", "reorder:1:2:2", "reorder:1:0:3", "reorder:?:1:x"])
def test_an_answer_fault_written_wrong_is_one_line(spec):
    with pytest.raises(ValueError) as bad:
        parse(spec, 0)
    assert "\n" not in str(bad.value) and spec[:10] in str(bad.value)


@pytest.mark.parametrize("specs", [["drop-response:2", "corrupt:2:id"], ["drip:1", "reorder:1:1:2"]])
def test_two_faults_that_each_change_one_answer_are_refused(specs):
    with pytest.raises(ValueError, match="each changes its answer"):
        Faults([parse(spec, 0) for spec in specs])


@pytest.mark.parametrize("seed", [2, 9])
def test_one_seed_names_the_same_stream_to_reorder(seed):
    drawn = parse("reorder:?:1:2", seed).number
    answers, lines = exchange("reorder:?:1:2", seed=seed, method="SendStreamingMessage", count=4)
    swapped = [index + 1 for index, answer in enumerate(answers) if kinds(answer.body)[0] == "statusUpdate"]
    assert swapped == [drawn] and f"of the stream answering request {drawn}" in lines.text()


@pytest.mark.parametrize("spread", ["a blank line split across chunks", "extra blank lines", "CRLF, split"])
def test_reorder_and_corrupt_act_on_whole_events_however_the_agent_spreads_them(spread):
    from test_proxy_cut_stream_events import SPREADS
    from transports.base import HttpResponse
    from transports.server import PeerServer
    agent = PeerServer(lambda request: HttpResponse(200, {"Content-Type": "text/event-stream"}, iter(SPREADS[spread])),
                       "127.0.0.1", 0, idle_timeout=2.0).start()
    try:
        with proxy_to(agent.base_url, "reorder:1:1:4", "corrupt:2:result.n") as (proxy, lines):
            client = HttpTransport(timeout=5)
            asked = b'{"jsonrpc": "2.0", "id": 5, "method": "x"}'
            swapped, corrupted = (client.post(proxy + "/a2a", asked, {"Content-Type": "application/json"})
                                  for _ in range(2))
    finally:
        agent.stop()
    assert [json.loads(event)["result"]["n"] for event in sse.decode(swapped.body)] == [4, 2, 3, 1]
    assert [json.loads(event)["result"]["n"] for event in sse.decode(corrupted.body)] == [True, 2, 3, 4]
    assert "in event 1 of the stream answering request 2, result.n (1, a number) replaced by true" in lines.text()


@pytest.mark.parametrize("spec", ["reorder:1:3:4", "reorder:1:2:3"], ids=["before the swap began", "at its first event"])
def test_reorder_on_a_stream_whose_client_hung_up_before_the_swap_reached_it_says_nothing_was_swapped(spec):
    """The client takes event 1, then hangs up (a reset) before the agent sends the rest: the proxy's first write
    after it fails. Said nothing (an armed fault silent), or that it swapped events the client never got."""
    import socket
    import struct
    import threading
    from transports.base import HttpResponse
    from transports.server import PeerServer
    go = threading.Event()

    def events():
        yield b'data: {"jsonrpc": "2.0", "id": 5, "result": {"n": 1}}\n\n'
        go.wait(5)
        for n in range(2, 6):
            yield b'data: {"jsonrpc": "2.0", "id": 5, "result": {"n": %d}}\n\n' % n
    agent = PeerServer(lambda request: HttpResponse(200, {"Content-Type": "text/event-stream"}, events()),
                       "127.0.0.1", 0, idle_timeout=2.0).start()
    try:
        with proxy_to(agent.base_url, spec) as (proxy, lines):
            asked = b'{"jsonrpc": "2.0", "id": 5, "method": "SendStreamingMessage"}'
            with socket.create_connection(("127.0.0.1", int(proxy.rsplit(":", 1)[1])), timeout=5) as client:
                client.sendall(b"POST /a2a HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                               b"Content-Length: %d\r\n\r\n%s" % (len(asked), asked))
                got, deadline = b"", time.monotonic() + 5
                while b'"n": 1}' not in got and time.monotonic() < deadline:
                    got += client.recv(4096)
                assert b'"n": 1}' in got, got[:300]
                client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # closed with a reset
            go.set()
            deadline = time.monotonic() + 5
            while "the client's stream ended early" not in lines.text() and time.monotonic() < deadline:
                time.sleep(0.02)
            said = lines.text()
    finally:
        go.set()
        agent.stop()
    first, second = spec.split(":")[2:]
    assert "the client's stream ended early" in said and "swapped events" not in said, said
    assert f"[fault] {spec}: the client stopped taking the stream before event {second} of the stream answering request 1 was " \
           f"passed on in event {first}'s place: nothing swapped" in said, said


@pytest.mark.parametrize("cut, said", [
    (2, "the stream was cut mid-swap in the stream answering request 1: event 3 went in event 1's place, event 1 "
        "never did"),
    (3, "swapped events 1 and 3 of the stream answering request 1")])
def test_reorder_on_a_stream_cut_mid_swap_says_which_of_the_swapped_events_the_client_got(cut, said):
    """Events 3, 2, 1 go on in that order; a cut after two of them leaves event 1 never sent: 'swapped events 1
    and 3' was said as the swap began, whatever came of it."""
    events = [b'data: {"jsonrpc": "2.0", "id": 5, "result": {"n": %d}}\n\n' % n for n in range(1, 6)]
    got, lines = broken_off_through_the_proxy(lambda: iter(events), "reorder:1:1:3", f"cut-stream:{cut}", timeout=5)
    assert [json.loads(event)["result"]["n"] for event in sse.decode(bytes(got))] == [3, 2, 1][:cut]
    assert lines.text().count("[fault] reorder:1:1:3: ") == 1 and f"[fault] reorder:1:1:3: {said}" in lines.text()
