"""A stream whose reply has neither Content-Length nor chunks ends when its connection does
(RFC 9112 6.3, the last rule), and HTTP/1.0 servers and simple SSE servers send streams that
way. It is still a stream: the proxy forwards each event as it comes (not the whole reply once
the agent hangs up), a long one is bounded per read, not as one 1 MiB body, its faults act on
its events, and our own client reads it as it arrives too. A stream sent whole, with its
Content-Length, is still judged as a stream, not as a JSON-RPC answer of the wrong type."""
import socket
import threading
import time

from proxy_helpers import proxy_to
from transports import sse
from transports.errors import TransportError
from transports.network import HttpTransport

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
EVENT = b'data: {"jsonrpc": "2.0", "id": 5, "result": {"statusUpdate": {"status": {"state": "TASK_STATE_WORKING"}}}}\n\n'
FINAL = b'data: {"jsonrpc": "2.0", "id": 5, "result": {"statusUpdate": {"status": {"state": "TASK_STATE_COMPLETED"}}}}\n\n'
ASK = b'{"jsonrpc": "2.0", "id": 5, "method": "SendStreamingMessage", "params": {}}'


class Agent:
    """One connection at a time on 127.0.0.1 port 0: reads a request's head and body, sends
    `head` (HEAD: no length) and `first`, waits (at most 5 s) until `go` is set, sends `rest`, and closes."""

    def __init__(self, first, rest=b"", head=HEAD):
        self.first, self.rest, self.go, self.head = first, rest, threading.Event(), head
        self.waited_out = False  # True: nobody set `go` within 5 s
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(10)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        with self.listener:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(10)
                got = b""
                while b"\r\n\r\n" not in got or not got.endswith(b"}"):
                    data = conn.recv(65536)
                    if not data:
                        return
                    got += data
                conn.sendall(self.head + self.first)
                self.waited_out = not self.go.wait(5)
                try:
                    conn.sendall(self.rest)
                except OSError:  # the reader hung up first
                    pass


def read_stream(url, *, on_first=None, endless=False):
    """The events of a stream read with our client, and whether it ended in an error;
    `endless`: a client that bounds each read, not the stream (as the proxy does), and
    the events' count, not the events."""
    reply = HttpTransport(timeout=8, idle_streams=endless).stream(url + "/a2a", ASK, {"Content-Type": "application/json"})
    assert not isinstance(reply.body, bytes), "a stream came back as one whole body"
    got, failed = bytearray(), False
    try:
        for chunk in reply.body:
            got += chunk
            if on_first is not None and sse.decode(bytes(got)):
                on_first()
                on_first = None
    except TransportError:
        failed = True
    if endless:  # a decode stops at its limit on events; here they are counted as sent
        return bytes(got).count(b"\ndata: ") + bytes(got).startswith(b"data: "), failed
    return sse.decode(bytes(got)), failed


def test_our_client_reads_a_close_delimited_stream_as_it_arrives():
    agent = Agent(EVENT, FINAL)
    started = time.monotonic()
    events, failed = read_stream(agent.url, on_first=agent.go.set)
    assert (len(events), failed, agent.waited_out) == (2, False, False)
    assert time.monotonic() - started < 4


def test_the_proxy_forwards_each_event_of_a_close_delimited_stream_as_it_comes():
    agent = Agent(EVENT, FINAL)
    with proxy_to(agent.url, timeout=8.0) as (proxy, lines):
        events, failed = read_stream(proxy, on_first=agent.go.set)
    assert agent.waited_out is False, "the first event reached the client only once the agent hung up"
    assert (len(events), failed) == (2, False), lines.text()
    assert "JSONRPC-FMT-002" not in lines.text() and "WB-STREAM-FINAL-001" not in lines.text(), lines.text()


def test_a_close_delimited_stream_longer_than_a_mebibyte_goes_through_the_proxy():
    many = EVENT * (1_600_000 // len(EVENT))  # 1.6 MB of events in all, none of them large
    agent = Agent(many + FINAL)
    agent.go.set()
    with proxy_to(agent.url, timeout=8.0) as (proxy, lines):
        count, failed = read_stream(proxy, endless=True)
    assert (count, failed) == (many.count(b"data: ") + 1, False), lines.text()[-2000:]


def test_a_cut_stream_fault_acts_on_a_close_delimited_stream():
    agent = Agent(EVENT * 3, FINAL)
    with proxy_to(agent.url, "cut-stream:2", timeout=8.0) as (proxy, lines):
        events, failed = read_stream(proxy, on_first=lambda: None)
        agent.go.set()
    assert (len(events), failed) == (2, True), lines.text()


def test_a_stream_sent_with_its_length_is_judged_as_a_stream_and_its_faults_act():
    whole = EVENT * 3 + FINAL
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: %d\r\n\r\n" % len(whole)
    for faults, expected in (((), (4, False)), (("cut-stream:2",), (2, True))):
        agent = Agent(whole, head=head)
        agent.go.set()
        with proxy_to(agent.url, *faults, timeout=8.0) as (proxy, lines):
            events, failed = read_stream(proxy)
        assert (len(events), failed) == expected, lines.text()
        assert "JSONRPC-FMT-002" not in lines.text() and "Content-Type is text/event-stream" not in lines.text()


def test_a_final_event_that_no_blank_line_ends_is_said_to_be_no_event_and_why():
    """The agent closes just after its final event's data line, before the blank line that would
    end the event: by the event-stream rules it is no event, and the proxy says so, with why."""
    agent = Agent(EVENT, FINAL[:-1])
    agent.go.set()
    with proxy_to(agent.url, timeout=8.0) as (proxy, lines):
        events, failed = read_stream(proxy)
        deadline = time.monotonic() + 5
        while "WB-STREAM-FINAL-001" not in lines.text() and time.monotonic() < deadline:
            time.sleep(0.02)
    assert len(events) == 1, "the final event, never ended, is no event"
    unended = len(FINAL) - 2  # its data line as sent, without the line end and the blank line
    assert f"none of them final; an event's data lines after them ({unended} bytes) were never ended by a blank " \
        "line" in lines.text(), lines.text()
