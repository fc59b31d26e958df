"""Two clients through one proxy at once: their frame lines interleave, so each says the number of the
request it belongs to (as --fault counts them), a stream's events too. The agent here is a test double on
127.0.0.1 that holds the first client's stream open until the second client has been answered."""
import json
import re
import threading

from proxy_helpers import proxy_to
from transports.base import HttpResponse
from transports.network import HttpTransport
from transports.server import PeerServer

STREAM = b'{"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {}}'
ASK = b'{"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": "task-2"}}'
TAGGED = re.compile(r"\[#([0-9]+) (?:client -> agent|agent -> client)\] (-->|<--) (.*)")


def test_the_lines_of_two_clients_at_once_each_name_their_own_request():
    answered = threading.Event()

    def agent(request):
        if json.loads(request.body)["id"] == 2:
            return HttpResponse(200, {"Content-Type": "application/json"}, b'{"jsonrpc": "2.0", "id": 2, "result": {}}')

        def events():  # the first event at once, the last only once the other client has its answer
            yield b'data: {"jsonrpc": "2.0", "id": 1, "result": {"n": 1}}\n\n'
            answered.wait(5)
            yield b'data: {"jsonrpc": "2.0", "id": 1, "result": {"n": 2}}\n\n'
        return HttpResponse(200, {"Content-Type": "text/event-stream"}, events())

    server = PeerServer(agent, "127.0.0.1", 0, idle_timeout=2.0).start()
    try:
        with proxy_to(server.base_url) as (proxy, lines):
            streamed = []
            first = threading.Thread(target=lambda: streamed.append(b"".join(HttpTransport(timeout=5).stream(
                proxy + "/a2a", STREAM, {"Content-Type": "application/json"}).body)))
            first.start()
            for _ in range(500):  # until the stream's first event has been shown (bounded: 5 s)
                if "<-- [1] " in lines.text():
                    break
                answered.wait(0.01)
            second = HttpTransport(timeout=5).post(proxy + "/a2a", ASK, {"Content-Type": "application/json"})
            answered.set()
            first.join(5)
    finally:
        server.stop()
    assert second.status == 200 and b'"n": 2' in streamed[0]
    shown = [TAGGED.fullmatch(line).groups() for line in lines.text().splitlines() if TAGGED.fullmatch(line)]
    numbered = [(number, direction, text[:12]) for number, direction, text in shown]
    assert numbered == [("1", "-->", '{"jsonrpc": '), ("1", "<--", "a stream of "), ("1", "<--", '[1] {"jsonrp'),
                        ("2", "-->", '{"jsonrpc": '), ("2", "<--", '{"jsonrpc": '), ("1", "<--", '[2] {"jsonrp')], shown
