"""A fault reading a stream event by event reads it to its first MiB, to the byte, however the
agent chunks it: an agent may send many events in one chunk (up to the 1 MiB each chunk may
be), and the events of a chunk that runs past the mebibyte, those wholly within it, are still
read, passed on and acted on; only then is the stream cut (passing.py's `_within`).
"""
import random

import pytest

from proxy_helpers import proxy_to
from transports import sse
from transports.base import HttpResponse
from transports.errors import TransportError
from transports.network import HttpTransport
from transports.printer import MAX_STREAM_KEPT
from transports.server import PeerServer

EVENT = b'data: {"jsonrpc": "2.0", "id": 5, "result": {"kind": "artifact-update", "n": %d, "text": "%s"}}\n\n'


def chunks_past_the_mebibyte(rng):
    """A first chunk of a few events, then one of events filling the rest of 1 MiB and running
    past it: the chunks, and how many events are wholly within the MiB."""
    events = [EVENT % (n, b"x" * rng.randrange(1000, 20_000)) for n in range(200)]
    split = next(n for n in range(1, 200) if len(b"".join(events[:n])) > 25_000)  # more than one event is long
    ends = [len(b"".join(events[:n + 1])) for n in range(200)]
    past = next(n for n, end in enumerate(ends) if end > MAX_STREAM_KEPT)
    chunks = [b"".join(events[:split]), b"".join(events[split:past + 1])]
    assert len(chunks[1]) <= MAX_STREAM_KEPT and split < past - 2  # each chunk within the agent's bound
    return chunks, split, past


def through(chunks, fault):
    agent = PeerServer(lambda request: HttpResponse(200, {"Content-Type": "text/event-stream"}, iter(chunks)),
                       "127.0.0.1", 0, idle_timeout=2.0).start()
    got = bytearray()
    try:
        with proxy_to(agent.base_url, fault, timeout=10) as (proxy, lines):
            stream = HttpTransport(timeout=30, idle_streams=True).stream(
                proxy + "/a2a", b'{"jsonrpc": "2.0", "id": 5, "method": "x"}', {"Content-Type": "application/json"})
            try:
                for chunk in stream.body:
                    got += chunk
            except TransportError:
                pass
    finally:
        agent.stop()
    return bytes(got), lines.text()


@pytest.mark.parametrize("seed", range(3))
def test_a_cut_after_an_event_within_the_mebibyte_cuts_there_though_its_chunk_runs_past(seed):
    rng = random.Random(seed)
    chunks, split, within = chunks_past_the_mebibyte(rng)
    cut = rng.randrange(split + 1, within + 1)  # an event of the second chunk, wholly within the MiB
    got, text = through(chunks, f"cut-stream:{cut}")
    assert sse.decode(got) == sse.decode(b"".join(chunks))[:cut], text[-1000:]
    assert f"[fault] cut-stream:{cut}: cut the stream of request 1 after its event {cut}" in text


def test_the_events_within_the_mebibyte_go_on_before_the_cut_there():
    chunks, split, within = chunks_past_the_mebibyte(random.Random(7))
    got, text = through(chunks, "cut-stream:1000")
    sent = b"".join(chunks)
    assert sent.startswith(got) and sse.decode(got) == sse.decode(sent)[:within]  # all but the one past
    assert len(got) <= MAX_STREAM_KEPT < len(sent)
    assert f"the stream ran past the {MAX_STREAM_KEPT} bytes a fault reads event by event: cut there" in text
