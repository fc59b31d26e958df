"""The live page's diagram names each arrow by the frame it draws (its number, for the page to show when the
arrow is clicked) while frames go on crossing: a drawing reads the run's records, then draws them, which takes
a while for a long run, and named the arrows by the frames' numbers as they stood once it had drawn. With
frames crossing meanwhile (a proxy session's clients go on asking), those numbers ran past its records, and
each arrow was named by a frame after its own. The records and the numbers are now read together.

Real frames: a printer over our network transport to a server of ours on 127.0.0.1 port 0. The drawing is
held where it begins to draw (a profile hook on its own thread, nothing of ours replaced) while a request
crosses; every wait has a deadline."""
import json
import sys
import threading

from peers.support.web.runs import Run
from transports.base import HttpResponse
from transports.network import HttpTransport
from transports.printer import FramePrinter
from transports.server import PeerServer

ASKED = b'{"jsonrpc": "2.0", "id": %d, "method": "GetTask", "params": {"id": "t"}}'


def answered(request):
    asked = json.loads(request.body)
    return HttpResponse(200, {"Content-Type": "application/json"},
                        json.dumps({"jsonrpc": "2.0", "id": asked["id"], "result": {"id": "t"}}).encode())


def test_a_drawing_names_its_arrows_by_the_frames_it_read_though_more_cross_while_it_draws():
    server = PeerServer(answered, "127.0.0.1", 0, idle_timeout=2.0).start()
    transport = HttpTransport(timeout=5)
    printer = FramePrinter(transport)
    run = Run("r", [], False, lambda: None, rolling=True)
    run.attach(printer, None)
    drawing, release = threading.Event(), threading.Event()

    def held_as_it_draws(frame, event, arg):  # where the records read are drawn: held there until released
        if event == "call" and frame.f_code.co_name == "marked" and \
                frame.f_globals.get("__name__") == "peers.support.learner.diagram":
            drawing.set()
            release.wait(10)

    def draw():
        sys.setprofile(held_as_it_draws)
        try:
            run.draw_due()
        finally:
            sys.setprofile(None)
    try:
        with run.drawing:
            run.due = True  # a drawing is due: the frames below draw nothing of their own
        printer.post(server.base_url + "/a2a", ASKED % 1, {"Content-Type": "application/json"})
        drawer = threading.Thread(target=draw, daemon=True)
        drawer.start()
        assert drawing.wait(10), "the drawing began"
        with run.drawing:
            run.due = True  # the next request's frames draw nothing either: the drawing held is the one looked at
        printer.post(server.base_url + "/a2a", ASKED % 2, {"Content-Type": "application/json"})
        release.set()
        drawer.join(10)
    finally:
        release.set()
        transport.close()
        server.stop()
    crossed = list(run.frame_seqs)
    _, events = run.events_after(0, 0)
    named = [seq for seq in [event for event in events if event["type"] == "diagram"][-1]["frames"] if seq is not None]
    assert len(crossed) == 4 and named == crossed[:2], (named, crossed)
