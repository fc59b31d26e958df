"""A stream that outlasts the proxy's --timeout is cut by the proxy, and said to be: the finding
names --timeout, and the agent is not charged with a stream that "broke off" without a final
event (WB-STREAM-FINAL-001), since it was still sending when our deadline fell."""
import threading

from proxy_helpers import proxy_to
from transports.base import HttpResponse
from transports.errors import TransportError
from transports.network import HttpTransport
from transports.server import PeerServer

EVENT = b'data: {"jsonrpc": "2.0", "id": 5, "result": {"statusUpdate": {"status": {"state": "TASK_STATE_WORKING"}}}}\n\n'


def test_a_stream_cut_by_the_proxys_deadline_is_not_the_agents_fault():
    stop = threading.Event()

    def app(request):
        def events():
            for _ in range(40):  # a live task: an event every 0.1 s, for up to 4 s
                yield EVENT
                if stop.wait(0.1):
                    return
        return HttpResponse(200, {"Content-Type": "text/event-stream"}, events())
    agent = PeerServer(app, "127.0.0.1", 0, idle_timeout=2.0).start()
    try:
        with proxy_to(agent.base_url, timeout=0.5) as (proxy, lines):
            stream = HttpTransport(timeout=5).stream(proxy + "/a2a", b'{"jsonrpc": "2.0", "id": 5, "method": "x"}',
                                                    {"Content-Type": "application/json"})
            try:
                for _ in stream.body:
                    pass
            except TransportError:
                pass  # cut, as the finding says
    finally:
        stop.set()
        agent.stop()
    said = [line for line in lines.lines if "the agent's stream broke off" in line]
    assert len(said) == 1 and "--timeout bounds a whole stream" in said[0], lines.text()
    assert "WB-STREAM-FINAL-001" not in lines.text()
