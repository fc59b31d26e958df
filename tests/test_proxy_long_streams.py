"""A stream longer than the 1 MiB the proxy keeps of it goes through whole, byte for byte.

The proxy passes a stream on as it arrives, so a stream may run on however long (an agent
streaming a large artifact, or status updates for hours): each chunk is bounded, not the
whole. What it keeps to print, record and judge is the first 1 MiB (printer.MAX_STREAM_KEPT),
each said in one line; memory stays bounded. A fault that reads events one by one
(cut-stream, corrupt, reorder) reads as far as 1 MiB and says where it cut.
"""
import pytest

from proxy_helpers import proxy_to
from transports.base import HttpResponse
from transports.errors import TransportError
from transports.network import HttpTransport
from transports.printer import MAX_STREAM_KEPT
from transports.server import PeerServer

EVENT = b'data: {"jsonrpc": "2.0", "id": 5, "result": {"kind": "artifact-update", "text": "%s"}}\n\n'
FINAL = b'data: {"jsonrpc": "2.0", "id": 5, "result": {"kind": "status-update", "status": {"state": "completed"}, "final": true}}\n\n'


def long_stream(megabytes):
    """Events of about 16 KiB each, `megabytes` of them in all, then a final one: what was sent."""
    events = [EVENT % (b"%07d" % n + b"x" * 16_000) for n in range(megabytes * 64)] + [FINAL]
    return events, b"".join(events)


def broken_off(events):
    """The events, then the connection dropped mid-stream (no last chunk)."""
    yield from events
    raise ConnectionResetError("the agent fell over")


def through_the_proxy(events, *faults, answer=None):
    answer = answer or (lambda request: HttpResponse(200, {"Content-Type": "text/event-stream"}, iter(events)))
    agent = PeerServer(answer, "127.0.0.1", 0, idle_timeout=2.0).start()
    got = bytearray()
    try:
        with proxy_to(agent.base_url, *faults, timeout=10) as (proxy, lines):
            stream = HttpTransport(timeout=30, idle_streams=True).stream(proxy + "/a2a", b'{"jsonrpc": "2.0", "id": 5, "method": "x"}',
                                                      {"Content-Type": "application/json"})
            try:
                for chunk in stream.body:
                    got += chunk
            except TransportError:
                got += b"(broken off)"
    finally:
        agent.stop()
    return bytes(got), lines


def test_a_stream_over_a_mebibyte_goes_through_whole_and_what_is_kept_is_said():
    events, sent = long_stream(3)
    got, lines = through_the_proxy(events)
    assert got == sent  # all 3 MiB, unchanged
    text = lines.text()
    assert text.count(f"the stream is over {MAX_STREAM_KEPT} bytes: its first events are shown and kept") == 1, text[-2000:]
    assert text.count(f"the stream ran on past {MAX_STREAM_KEPT} bytes: passed on whole, its end not judged") == 1
    shown = [line for line in lines.lines if line.startswith("[#1 agent -> client] <-- [")]
    assert 60 <= len(shown) <= 66  # about 1 MiB of 16 KiB events: not all 193
    kept = [frame.body for frame in lines.app.printer.frames if frame.direction == "<--"]
    assert kept == [sent[:MAX_STREAM_KEPT]]  # the first MiB exactly, recorded as the stream's frame
    assert "limit" not in text and "broke off" not in text and "Traceback" not in text


def test_a_stream_within_the_mebibyte_is_shown_and_judged_whole():
    events, sent = long_stream(0)
    events = events[:0] + [EVENT % b"short"] * 3  # no final event: the rule says so
    got, lines = through_the_proxy(events)
    assert got == b"".join(events)
    assert "the stream is over" not in lines.text()
    assert "WB-STREAM-FINAL-001" in lines.text()


@pytest.mark.parametrize("fault", ["cut-stream:1000", "reorder:1:1:500"])
def test_a_fault_reading_events_one_by_one_reads_a_mebibyte_and_says_it_cut_there(fault):
    events, sent = long_stream(3)
    got, lines = through_the_proxy(events, fault)
    assert got.endswith(b"(broken off)") and len(got) <= MAX_STREAM_KEPT + 64 * 1024
    assert f"the stream ran past the {MAX_STREAM_KEPT} bytes a fault reads event by event: cut there" in lines.text()


def test_a_long_stream_that_breaks_off_is_said_to_have_broken_off_and_nothing_else():
    events, sent = long_stream(2)
    got, lines = through_the_proxy(broken_off(events[:-1]))
    assert got.endswith(b"(broken off)")
    assert "the agent's stream broke off" in lines.text()
    assert "passed on whole" not in lines.text()


def test_what_the_proxy_keeps_of_its_frames_is_bounded_in_bytes_not_only_in_number(monkeypatch):
    from transports import printer
    monkeypatch.setattr(printer, "MOST_BYTES_KEPT", 4 << 20)
    large = b'{"jsonrpc": "2.0", "id": 5, "result": {"text": "%s"}}' % (b"y" * (1 << 19))
    answer = lambda request: HttpResponse(200, {"Content-Type": "application/json"}, large)  # noqa: E731
    agent = PeerServer(answer, "127.0.0.1", 0, idle_timeout=2.0).start()
    try:
        with proxy_to(agent.base_url) as (proxy, lines):
            client = HttpTransport(timeout=10)
            for _ in range(24):  # 12 MiB of answers, 4 MiB kept at most
                assert client.post(proxy + "/a2a", b'{"jsonrpc": "2.0", "id": 5, "method": "x"}',
                                   {"Content-Type": "application/json"}).body == large
                held = sum(len(frame.body) for frame in lines.app.printer.frames)
                assert held <= (4 << 20) + len(large)
    finally:
        agent.stop()
    assert 4 <= len(lines.app.printer.frames) <= 16


def test_a_stream_whose_first_mebibyte_ends_where_a_chunk_ends_is_said_to_run_over_it_as_any_other():
    """The line saying the rest passes unshown was said only by the chunk that held the 1 MiB mark within it: a
    stream whose first 1 MiB ended exactly with a chunk (an agent writing in 64 KiB pieces) ran on unsaid."""
    event = EVENT % (b"y" * 16_000)
    whole = event * (MAX_STREAM_KEPT // len(event))
    whole += EVENT % (b"z" * (MAX_STREAM_KEPT - len(whole) - len(EVENT % b"")))  # the last one ends at the mark
    assert len(whole) == MAX_STREAM_KEPT
    got, lines = through_the_proxy([whole, event * 3, FINAL])
    assert got == whole + event * 3 + FINAL
    text = lines.text()
    assert text.count(f"the stream is over {MAX_STREAM_KEPT} bytes: its first events are shown and kept") == 1, text[-2000:]
    assert [frame.body for frame in lines.app.printer.frames if frame.direction == "<--"] == [whole]
