"""A stream is judged once it has ended, whatever its events hold: a task state that is a list or
an object (unhashable) is no final state, said as the one finding it is; the client's stream
ends cleanly, as the agent ended it, rather than being broken off by the judging."""
import json

import pytest

from proxy_helpers import proxy_to
from transports.base import HttpResponse
from transports.network import HttpTransport
from transports.server import PeerServer

STATES = {"a list": ["TASK_STATE_COMPLETED"], "an object": {"state": "completed"}, "a number": 7}


@pytest.mark.parametrize("kind", list(STATES))
def test_a_stream_whose_state_is_not_a_string_is_judged_and_ends_cleanly(kind):
    events = [json.dumps({"jsonrpc": "2.0", "id": 5, "result": {"task": {"status": {"state": STATES[kind]}}}}),
              json.dumps({"jsonrpc": "2.0", "id": 5, "result": {"statusUpdate": {"status": {"state": STATES[kind]}}}})]
    body = b"".join(b"data: " + event.encode() + b"\n\n" for event in events)
    agent = PeerServer(lambda request: HttpResponse(200, {"Content-Type": "text/event-stream"}, iter([body])),
                       "127.0.0.1", 0, idle_timeout=2.0).start()
    try:
        with proxy_to(agent.base_url) as (proxy, lines):
            stream = HttpTransport(timeout=5).stream(proxy + "/a2a", b'{"jsonrpc": "2.0", "id": 5, "method": "x"}',
                                                    {"Content-Type": "application/json"})
            assert b"".join(stream.body) == body  # read to its clean end: no TransportError
    finally:
        agent.stop()
    notes = [line for line in lines.lines if line.startswith("    ! ")]
    assert len(notes) == 1 and "WB-STREAM-FINAL-001" in notes[0] and "closed after 2 event(s)" in notes[0], lines.text()
    assert "raised" not in lines.text()
