"""The live page tells a stream's status and headers as it starts, before its events (runs.py `_stream_head`), under
the number of the frame the stream is recorded as once it ends. Every stream's start is told, however many a session
reads: the starts were kept in a set for the session's life, keyed by id(frame), which Python gives again once a
frame is freed, so a later stream's start could be taken for one told already. And no two frames share a number: a
stream's start was numbered as the frame recorded next, and a push recorded while the stream ran took that number too.

Real frames: a printer over our network transport to a server of ours on 127.0.0.1 port 0, each request deadlined."""
import json

from peers.support.web.runs import Run
from transports.base import HttpResponse
from transports.network import HttpTransport
from transports.printer import FramePrinter
from transports.server import PeerServer

ASKED = b'{"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": "t"}}'
EVENT = b'data: {"jsonrpc": "2.0", "id": 1, "result": {"task": {"id": "t", "status": {"state": "TASK_STATE_WORKING"}}}}\n\n'


def streamed(request):
    return HttpResponse(200, {"Content-Type": "text/event-stream"}, iter([EVENT, EVENT]))  # sent as it comes: chunked


def watched():
    """A server streaming to every request, a printer showing (nowhere) what crosses, and a live page's run of it."""
    server = PeerServer(streamed, "127.0.0.1", 0, idle_timeout=2.0).start()
    transport = HttpTransport(timeout=5)
    printer = FramePrinter(transport, lambda text, frame: None)
    run = Run("r", [], False, lambda: None, rolling=True)
    run.attach(printer, None)
    return server, transport, printer, run


def frame_events(run):
    return [event for event in run.events_after(0, 0)[1] if event["type"] == "frame"]


def test_every_one_of_a_long_sessions_many_streams_has_its_start_told():
    """A long session's printer lets its oldest frames go (MOST_FRAMES_KEPT): here past 10, so that within 200 streams
    a freed frame's memory, and so its id, is given to a later stream's start, as over a proxy session's days."""
    server, transport, printer, run = watched()
    printer.most_kept = (10, 64 << 20)
    try:
        for _ in range(200):  # each read to its end and dropped, as a session's streams are
            response = printer.stream(server.base_url + "/a2a", ASKED, {"Content-Type": "application/json"})
            assert b"".join(response.body).count(b"data: ") == 2
            del response
    finally:
        transport.close()
        server.stop()
    starts = [event["seq"] for event in frame_events(run) if event["stream"] == "starts"]
    assert len(starts) == 200, f"{200 - len(starts)} streams' starts were not told"


def test_a_push_recorded_while_a_stream_runs_has_a_number_of_its_own_and_the_stream_keeps_its_start_number():
    server, transport, printer, run = watched()
    try:
        response = printer.stream(server.base_url + "/a2a", ASKED, {"Content-Type": "application/json"})
        printer.received("http://127.0.0.1:1/webhook", {"Content-Type": "application/json"},
                         json.dumps({"statusUpdate": {"taskId": "t"}}).encode(), server.base_url)
        b"".join(response.body)
    finally:
        transport.close()
        server.stop()
    told = frame_events(run)
    start = next(event["seq"] for event in told if event["stream"] == "starts")
    pushed = next(event["seq"] for event in told if event["pushed_by"])
    whole = [frame.seq for frame in printer.frames if frame.direction == "<--" and frame.sender is None]
    assert pushed != start and whole == [start], (start, pushed, whole)
    assert len({frame.seq for frame in printer.frames}) == len(printer.frames) == 3
