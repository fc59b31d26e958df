"""A task followed past its answer (--no-wait's GetTask, --stream's SubscribeToTask after a
stream ended early) is followed within --timeout from the send, every request it makes
included: one asked just before the deadline gets what is left of it, not a --timeout of its
own. An agent the test plays on 127.0.0.1 (http.server, port 0) answers the send at once and
stalls what follows; the whole command line runs, timed."""
import json
import time

import pytest

from conftest import StreamingRefundAgent, cli, outside_peer

TIMEOUT, MARGIN = 2.0, 0.75  # the run's --timeout; what "within it" allows for a loaded machine
WORKING = {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_WORKING"}}


class Agent(StreamingRefundAgent):
    """A task that stays working: the send answered at once, then the server's `stall` says how the rest go."""

    def do_POST(self):
        frame = self.asked()
        self.server.asked.append(frame["method"])
        if frame["method"] == "SendMessage":
            return self.reply({"jsonrpc": "2.0", "id": frame["id"], "result": {"task": WORKING}})
        if frame["method"] == "GetTask":  # four answered at once; the fifth, the one asked last, never
            if self.server.asked.count("GetTask") >= 5:
                return self.server.stop.wait(10)
            return self.reply({"jsonrpc": "2.0", "id": frame["id"], "result": WORKING})
        self.send_response(200)  # a stream: the task, then silence (the send's: ended just before
        self.send_header("Content-Type", "text/event-stream")  # the deadline; a subscription's: never)
        self.end_headers()
        self.wfile.write(b"data: " + json.dumps({"jsonrpc": "2.0", "id": frame["id"], "result": {"task": WORKING}})
                         .encode() + b"\n\n")
        self.wfile.flush()
        self.server.stop.wait(TIMEOUT - 0.2 if frame["method"] == "SendStreamingMessage" else 10)
        self.close_connection = True


def timed(*flags):
    """The run against the agent: what it printed, and how long it took from its send to its end."""
    import threading
    with outside_peer(Agent, asked=[], stop=threading.Event(),
                      handle_error=lambda request, address: None) as base:
        done = cli("--peer", base, "--allow-untrusted", "agent", "--timeout", str(TIMEOUT), *flags,
                   env={"A2A_CREDENTIALS": ""})
        return done, time.monotonic()


def test_the_last_get_task_of_no_wait_gets_what_is_left_of_the_timeout_and_the_task_is_said_as_last_seen():
    started = time.monotonic()
    done, ended = timed("--no-wait")
    printed = done.stdout + done.stderr
    assert ended - started < TIMEOUT + MARGIN, f"{ended - started:.2f} s for a --timeout of {TIMEOUT:g} s"
    assert "Traceback" not in printed and "GetTask had no answer before the deadline" in printed, printed[-2000:]
    assert "still going when last seen" in printed and "delegation failed" not in printed, printed[-2000:]


def test_a_subscription_after_a_stream_ended_early_gets_what_is_left_of_the_timeout():
    started = time.monotonic()
    done, ended = timed("--stream")
    printed = done.stdout + done.stderr
    assert "subscribing to it again" in printed, printed[-2000:]
    assert ended - started < TIMEOUT + MARGIN, f"{ended - started:.2f} s for a --timeout of {TIMEOUT:g} s"
    assert "Traceback" not in printed and "was last seen working" in printed, printed[-2000:]


def test_a_get_task_that_finds_no_time_left_to_connect_in_leaves_the_task_as_last_seen():
    """The last pause ends at most a tenth of a second before the deadline, so the last GetTask
    may begin with nothing left: to an agent that closes each connection (Connection: close) it
    must connect anew, and 'could not connect ... within 0s (timeout)' (nothing sent, so not a
    reply timed out) failed the delegation, where the README says the task is reported as last seen."""
    import socket
    from peers import billing
    from peers.a2a import wire_v10
    from peers.a2a.model import Task, TaskState
    from peers.support.calling.follow import Delegation, polled
    from transports.base import patient_until
    from transports.network import HttpTransport

    listener, transport, said = socket.create_server(("127.0.0.1", 0)), HttpTransport(timeout=5.0), []
    deadline = time.monotonic() + 0.6  # one pause of 0.1 s, however late a loaded machine starts it

    def call(method, params, stream=False):  # the pause's sleep overran the deadline by a hair
        time.sleep(max(0.0, deadline - time.monotonic()) + 0.005)
        return transport.post(f"http://127.0.0.1:{listener.getsockname()[1]}/a2a", b"{}",
                              {"Content-Type": "application/json"})
    delegation = Delegation(billing.billing_agent().card, wire_v10, call, lambda line, **facts: said.append(line), None)
    try:
        with patient_until(deadline):
            assert list(polled(delegation, Task("t-1", (TaskState.SUBMITTED, TaskState.WORKING)), deadline)) == []
    finally:
        listener.close()
    assert "no answer before the deadline" in said[-1] and "last seen working" in said[-1], said


class SlowAgent(Agent):
    """A healthy agent, 0.15 s to answer each GetTask (a remote one's round trip): the task stays working."""

    def do_POST(self):
        frame = self.asked()
        if frame["method"] == "GetTask":
            time.sleep(0.15)
        self.reply({"jsonrpc": "2.0", "id": frame["id"], "result": {"task": WORKING} if frame["method"] ==
                    "SendMessage" else WORKING})


def test_the_last_get_task_is_asked_while_there_is_time_for_its_answer():
    """The last pause was cut to what was left of the deadline, in tenths, so the last GetTask often had
    under 0.1 s: to an agent answering in 0.15 s it was asked in vain, and the run said 'GetTask had no
    answer before the deadline' of a healthy agent. The pause leaves room for an answer as slow as the last."""
    import threading
    started = time.monotonic()
    with outside_peer(SlowAgent, asked=[], stop=threading.Event(), handle_error=lambda request, address: None) as base:
        done = cli("--peer", base, "--allow-untrusted", "agent", "--timeout", str(TIMEOUT), "--no-wait",
                   env={"A2A_CREDENTIALS": ""})
    printed = done.stdout + done.stderr
    assert time.monotonic() - started < TIMEOUT + MARGIN
    assert "Traceback" not in printed and "still going when last seen" in printed, printed[-2000:]
    assert "had no answer before the deadline" not in printed, printed[-2000:]


def test_a_patience_within_another_never_outlasts_it():
    """A block patient until later, inside one patient until sooner, kept the later moment: each
    exchange in it could outlast the outer deadline."""
    from transports.base import patient_until, seconds_for
    now = time.monotonic()
    with patient_until(now + 1.0):
        with patient_until(now + 60.0):
            assert seconds_for(30.0) <= 1.0
        assert seconds_for(30.0) <= 1.0
    assert seconds_for(30.0) == 30.0


def test_a_subscription_that_finds_no_time_left_to_connect_in_says_the_task_as_last_seen():
    """A stream that ended before its task did is joined again with what is left of the deadline; a
    subscription that could not even connect in it (nothing sent) failed the delegation with the bare
    'could not connect', where a stream still broken when time is up says the task as last seen."""
    from peers import billing
    from peers.a2a import wire_v10
    from peers.support.calling.follow import Delegation, streamed
    from transports.errors import TransportError
    deadline, said = time.monotonic() + 0.3, []

    def call(method, params, stream=False):  # the subscription, begun with a hair of the deadline left
        time.sleep(max(0.0, deadline - time.monotonic()) + 0.005)
        raise TransportError("could not connect to 127.0.0.1:9 within 0s (timeout)", sent=False)
    delegation = Delegation(billing.billing_agent().card, wire_v10, call, lambda line, **facts: said.append(line), None)
    with pytest.raises(TransportError) as raised:
        streamed((event for event in [{"task": WORKING}]), delegation, deadline)
    assert "task t-1 was last seen working" in str(raised.value), (str(raised.value), said)
