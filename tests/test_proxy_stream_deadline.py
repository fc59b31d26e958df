"""--timeout bounds each wait for a stream's next bytes, not the stream's whole life: a stream
that keeps talking is forwarded through the proxy for as long as it talks, and one that goes
silent for longer than --timeout is ended, said in one line (naming --timeout), without
charging the agent with a stream that "broke off" without a final event (WB-STREAM-FINAL-001):
it was our patience that ran out. A fault that drains a stream (drop-response) still ends
within --timeout of its start, however long the agent would talk."""
import threading
import time

import pytest

from proxy_helpers import proxy_to
from transports import sse
from transports.base import HttpResponse
from transports.errors import TransportError
from transports.network import HttpTransport
from transports.server import PeerServer

EVENT = b'data: {"jsonrpc": "2.0", "id": 5, "result": {"statusUpdate": {"status": {"state": "TASK_STATE_WORKING"}}}}\n\n'
FINAL = b'data: {"jsonrpc": "2.0", "id": 5, "result": {"statusUpdate": {"status": {"state": "TASK_STATE_COMPLETED"}}}}\n\n'
ASK = b'{"jsonrpc": "2.0", "id": 5, "method": "SendStreamingMessage"}'


def agent_streaming(events, pause, stop, *, then_silent=0.0):
    """An agent whose stream sends `events` one every `pause` s, then is silent `then_silent` s."""
    def app(request):
        def stream():
            for event in events:
                yield event
                if stop.wait(pause):
                    return
            stop.wait(then_silent)
        return HttpResponse(200, {"Content-Type": "text/event-stream"}, stream())
    return PeerServer(app, "127.0.0.1", 0, idle_timeout=2.0).start()


def read_through(proxy):
    """The client's stream through the proxy: (the events it got, whether it was cut, seconds taken)."""
    started, got, cut = time.monotonic(), bytearray(), False
    stream = HttpTransport(timeout=10).stream(proxy + "/a2a", ASK, {"Content-Type": "application/json"})
    try:
        for chunk in [stream.body] if isinstance(stream.body, bytes) else stream.body:
            got += chunk
    except TransportError:
        cut = True
    return sse.decode(bytes(got)), cut, time.monotonic() - started

def through_a_proxy_with_timeout(events, pause, **agent):
    """An agent streaming `events`, `pause` s apart, read through a proxy with --timeout 0.4:
    (the events read, whether the stream was cut, the seconds it took, the proxy's lines)."""
    stop = threading.Event()
    served = agent_streaming(events, pause, stop, **agent)
    try:
        with proxy_to(served.base_url, timeout=0.4) as (proxy, lines):
            return (*read_through(proxy), lines)
    finally:
        stop.set()
        served.stop()



def test_a_stream_that_keeps_talking_outlasts_the_proxys_timeout():
    # 0.9 s of events, through --timeout 0.4
    events, cut, seconds, lines = through_a_proxy_with_timeout([EVENT] * 10 + [FINAL], 0.08)
    assert (len(events), cut) == (11, False), lines.text()
    assert seconds > 0.8  # it lived twice --timeout
    assert "went silent" not in lines.text() and "broke off" not in lines.text() and "! " not in lines.text()


def test_a_stream_silent_for_longer_than_the_timeout_is_ended_in_one_line():
    events, cut, seconds, lines = through_a_proxy_with_timeout([EVENT, EVENT], 0.05, then_silent=5.0)
    assert (len(events), cut) == (2, True) and seconds < 2.0
    said = [line for line in lines.lines if "stream went silent" in line]
    assert len(said) == 1 and "sent nothing for 0.4s" in said[0] and "--timeout bounds each wait" in said[0], \
        lines.text()
    assert "WB-STREAM-FINAL-001" not in lines.text()


def test_a_fault_that_drains_an_endless_stream_ends_within_the_timeout():
    """An agent that keeps a stream alive with comments for 10 s: drained for --timeout, not waited on."""
    fault = "drop-response:1"
    stop = threading.Event()
    agent = agent_streaming([EVENT] + [sse.KEEP_ALIVE] * 200, 0.05, stop)
    try:
        with proxy_to(agent.base_url, fault, timeout=0.4) as (proxy, lines):
            started = time.monotonic()
            with pytest.raises(TransportError):  # the connection closed with no answer
                read_through(proxy)
            assert time.monotonic() - started < 2.0, lines.text()
    finally:
        stop.set()
        agent.stop()
    assert f"[fault] {fault}" in lines.text()
