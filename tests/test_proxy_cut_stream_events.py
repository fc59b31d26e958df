"""cut-stream:E lets through exactly E events, however the agent spreads them over chunks: an
event's blank line split across two chunks, extra blank lines between events, CRLF line ends.
The client reads what it was given and finds E events, as the fault's line says."""
import pytest

from proxy_helpers import proxy_to
from transports import sse
from transports.base import HttpResponse
from transports.errors import TransportError
from transports.network import HttpTransport
from transports.server import PeerServer


def event(n, end=b"\n"):
    return b'data: {"jsonrpc": "2.0", "id": 5, "result": {"n": %d}}' % n + end


SPREADS = {
    "a blank line split across chunks": [event(1), b"\n" + event(2) + b"\n" + event(3) + b"\n", event(4) + b"\n"],
    "extra blank lines": [event(1) + b"\n\n\n" + event(2) + b"\n\n\n" + event(3) + b"\n\n" + event(4) + b"\n"],
    "CRLF, split": [event(1, b"\r\n") + b"\r", b"\n" + event(2, b"\r\n\r\n") + event(3, b"\r\n\r\n") + event(4, b"\r\n\r\n")],
}


@pytest.mark.parametrize("spread", list(SPREADS))
@pytest.mark.parametrize("cut", [1, 2, 3])
def test_cut_stream_lets_through_exactly_its_events(spread, cut):
    chunks = SPREADS[spread]
    agent = PeerServer(lambda request: HttpResponse(200, {"Content-Type": "text/event-stream"}, iter(chunks)),
                       "127.0.0.1", 0, idle_timeout=2.0).start()
    got = bytearray()
    try:
        with proxy_to(agent.base_url, f"cut-stream:{cut}") as (proxy, lines):
            stream = HttpTransport(timeout=5).stream(proxy + "/a2a", b'{"jsonrpc": "2.0", "id": 5, "method": "x"}',
                                                    {"Content-Type": "application/json"})
            with pytest.raises(TransportError):
                for chunk in stream.body:
                    got += chunk
    finally:
        agent.stop()
    assert len(sse.decode(bytes(got))) == cut, bytes(got)
    assert f"cut the stream of request 1 after its event {cut}" in lines.text()
