"""Server-Sent Events: how JSON-RPC responses are streamed over one HTTP response.

Protocols that stream JSON-RPC over HTTP do it this way: the response has
`Content-Type: text/event-stream`, and each event's `data:` is one whole JSON-RPC
response frame. Sans-IO, like jsonrpc.py: frames in, bytes out (`encode`), and bytes
in, each event's data out (`decode`). Only `data:` fields matter here; `event:`, `id:`
and `retry:` are read past, and comment lines (starting with ':') skipped, as the
WHATWG "server-sent events" parsing rules say. Lines may end in LF, CRLF or CR.
Bounded: a body of more than MAX_EVENTS events is cut there (the caller said how large
a body may be; this bounds the count).
"""
from __future__ import annotations

import re

MEDIA_TYPE = "text/event-stream"
KEEP_ALIVE = b": still here\n\n"  # a comment: no event, but a write that fails if nobody reads
MAX_EVENTS = 10_000
_LINES = re.compile(rb"\r\n|\r|\n")


def encode(frames: list[bytes]) -> bytes:
    """One event per frame. A frame is one line of JSON (our encoder writes no newline)."""
    return b"".join(b"data: " + frame + b"\n\n" for frame in frames)


def decode(body: bytes) -> list[bytes]:
    """The data of each event in `body`, in order; an event without data is no event."""
    events: list[bytes] = []
    data: list[bytes] = []
    for line in _LINES.split(body):
        if not line:  # a blank line ends an event
            if data:
                events.append(b"\n".join(data))
                if len(events) >= MAX_EVENTS:
                    return events
            data = []
        elif line.startswith(b"data"):
            field, _, value = line.partition(b":")
            if field == b"data":
                data.append(value[1:] if value.startswith(b" ") else value)
    if data:  # the last event, if the stream ended without its blank line
        events.append(b"\n".join(data))
    return events


def is_stream(content_type: str | None) -> bool:
    return (content_type or "").split(";")[0].strip().lower() == MEDIA_TYPE
