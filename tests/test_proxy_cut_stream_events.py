"""cut-stream:E lets through exactly E events, however the agent spreads them over chunks: an
event's blank line split across two chunks, extra blank lines between events, CRLF line ends.
The client reads what it was given and finds E events, as the fault's line says, however many:
every event is counted, and a count no stream the proxy reads could reach is refused."""
import time

import pytest

from peers.support.proxy.faults import MOST_EVENTS
from proxy_helpers import broken_off_through_the_proxy, proxy_to
from transports import sse
from transports.base import HttpResponse
from transports.network import HttpTransport
from transports.server import PeerServer


def event(n, end=b"\n"):
    return b'data: {"jsonrpc": "2.0", "id": 5, "result": {"n": %d}}' % n + end


SPREADS = {
    "a blank line split across chunks": [event(1), b"\n" + event(2) + b"\n" + event(3) + b"\n", event(4) + b"\n"],
    "extra blank lines": [event(1) + b"\n\n\n" + event(2) + b"\n\n\n" + event(3) + b"\n\n" + event(4) + b"\n"],
    "CRLF, split": [event(1, b"\r\n") + b"\r", b"\n" + event(2, b"\r\n\r\n") + event(3, b"\r\n\r\n") + event(4, b"\r\n\r\n")],
}


def cut_through_the_proxy(events, cut, *, timeout, proxy_timeout=None):
    """What a client reads of an agent's stream (`events()` its chunks) through a proxy told
    `cut-stream:CUT`, which breaks it off (a TransportError): the bytes, and the proxy's lines."""
    return broken_off_through_the_proxy(events, f"cut-stream:{cut}", timeout=timeout, proxy_timeout=proxy_timeout)


@pytest.mark.parametrize("spread", list(SPREADS))
@pytest.mark.parametrize("cut", [1, 2, 3])
def test_cut_stream_lets_through_exactly_its_events(spread, cut):
    got, lines = cut_through_the_proxy(lambda: iter(SPREADS[spread]), cut, timeout=5)
    assert len(sse.decode(bytes(got))) == cut, bytes(got)
    assert f"cut the stream of request 1 after its event {cut}" in lines.text()


def minimal_events(count, per_chunk=4096):
    """`count` of the shortest events there are (`data`, two line ends), a few thousand a chunk."""
    for start in range(0, count, per_chunk):
        yield b"data\n\n" * min(per_chunk, count - start)


@pytest.mark.parametrize("cut, sent", [(10_001, 10_050), (25_000, 30_000)])
def test_cut_stream_counts_every_event_however_many(cut, sent):
    """The count is exact past the 10,000 events a whole body's decoding keeps (where it stopped
    counting before: such a cut never came)."""
    got, lines = cut_through_the_proxy(lambda: minimal_events(sent), cut, timeout=20, proxy_timeout=10)
    assert got.count(b"data\n\n") == cut and len(got) == cut * 6
    assert f"cut the stream of request 1 after its event {cut}:" in lines.text()


@pytest.mark.parametrize("spec", [f"cut-stream:{MOST_EVENTS + 1}", "cut-stream:999999", f"reorder:1:2:{MOST_EVENTS + 1}"])
def test_an_event_count_no_stream_can_reach_is_refused_in_one_line(spec):
    from conftest import cli
    from transports.codec import MAX_FRAME_BYTES
    assert len(b"data\n\n") * MOST_EVENTS <= MAX_FRAME_BYTES < len(b"data\n\n") * (MOST_EVENTS + 1)  # the most, reachable
    done = cli("proxy", "--to", "http://127.0.0.1:9", "--fault", spec)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert f"can never come: a fault reads a stream event by event as far as 1048576 bytes, so {MOST_EVENTS} events" in done.stderr
    said = " ".join(cli("proxy", "--help").stdout.split())
    assert f"every event is counted, and a count past what the 1 MiB a fault reads can hold, {MOST_EVENTS}, is refused" in said


def test_a_cut_past_the_streams_last_event_says_it_cut_nothing():
    """Armed and said to be, a cut the stream never reached says so: silence would read as a cut made."""
    agent = PeerServer(lambda request: HttpResponse(200, {"Content-Type": "text/event-stream"},
                                                    iter([event(1) + b"\n", event(2) + b"\n"])),
                       "127.0.0.1", 0, idle_timeout=2.0).start()
    try:
        with proxy_to(agent.base_url, "cut-stream:5") as (proxy, lines):
            stream = HttpTransport(timeout=5).stream(proxy + "/a2a", b'{"jsonrpc": "2.0", "id": 5, "method": "x"}',
                                                     {"Content-Type": "application/json"})
            got = b"".join(stream.body)
            assert len(sse.decode(got)) == 2
            for _ in range(100):  # bounded: the proxy says it as the stream ends
                if "nothing cut" in lines.text():
                    break
                time.sleep(0.02)
    finally:
        agent.stop()
    assert "[fault] cut-stream:5: the stream answering request 1 ended after 2 event(s): nothing cut" in lines.text()
