"""A run keeps the frames it printed (check reads each request's back), but not all of them for ever: an agent
answering each of a long --no-wait's polls with a mebibyte would have made a caller keep about 1.8 GB over an
hour. A printer keeps its newest frames, within a number and their bodies' bytes; every frame is still shown
and told to its listeners (a --trace keeps its own), and numbered apart however many went. Real frames, an
agent on 127.0.0.1 (port 0) answering each POST with half a mebibyte."""
from transports.base import HttpResponse
from transports.network import HttpTransport
from transports.printer import FramePrinter
from transports.server import PeerServer

LARGE = b'{"jsonrpc": "2.0", "id": 1, "result": {"text": "%s"}}' % (b"y" * (1 << 19))


def test_a_printer_keeps_its_newest_frames_within_its_bytes_and_each_frame_keeps_its_own_number():
    agent = PeerServer(lambda request: HttpResponse(200, {"Content-Type": "application/json"}, LARGE),
                       "127.0.0.1", 0, idle_timeout=2.0).start()
    told, shown = [], []
    printer = FramePrinter(HttpTransport(timeout=10), lambda text, frame: shown.append(text))
    printer.most_kept = (2000, 4 << 20)
    printer.listeners.append(told.append)
    try:
        for n in range(24):  # 12 MiB of answers: 4 MiB kept at most
            mark = printer.recorded
            assert printer.post(agent.base_url + "/a2a", b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask"}',
                                {"Content-Type": "application/json"}).body == LARGE
            assert [frame.direction for frame in printer.since(mark)] == ["-->", "<--"], n  # a request's own, after trims
            assert sum(len(frame.body) for frame in printer.frames) <= (4 << 20) + len(LARGE)
    finally:
        agent.stop()
    assert len(told) == 48 and len(shown) == 48  # every frame told and shown, whatever was kept
    assert [frame.seq for frame in told] == list(range(1, 49))
    assert 4 <= len(printer.frames) < 24 and printer.frames[-1].seq == 48


def test_a_printer_keeps_at_most_its_number_of_frames_however_small():
    agent = PeerServer(lambda request: HttpResponse(200, {"Content-Type": "application/json"}, b"{}"),
                       "127.0.0.1", 0, idle_timeout=2.0).start()
    printer = FramePrinter(HttpTransport(timeout=10))
    printer.most_kept = (10, 64 << 20)
    try:
        for _ in range(30):
            printer.post(agent.base_url + "/a2a", b"{}", {"Content-Type": "application/json"})
            assert len(printer.frames) <= 10
    finally:
        agent.stop()
    assert printer.recorded == 60 and [frame.seq for frame in printer.frames] == list(range(61 - len(printer.frames), 61))
