"""Server-Sent Events: how JSON-RPC responses are streamed over one HTTP response.

Protocols that stream JSON-RPC over HTTP do it this way: the response has
`Content-Type: text/event-stream`, and each event's `data:` is one whole JSON-RPC
response frame. Sans-IO, like jsonrpc.py: frames in, bytes out (`encode`), and bytes
in, each event's data out (`decode`). Only `data:` fields matter here; `event:`, `id:`
and `retry:` are read past, and comment lines (starting with ':') skipped, as the
WHATWG "server-sent events" parsing rules say. Lines may end in LF, CRLF or CR.
Bounded: `decode` gives at most MAX_EVENTS events of a whole body (the caller said how large
a body may be; this bounds the list). A `Decoder` fed a stream as it arrives counts every
event, however many (unless told `most`): each feed returns only what its chunk completed,
and the stream's own size limit bounds how many there can be (an event takes 6 bytes at
least: `data` and two line ends), so a count its reader keeps (a proxy's cut-stream) is exact.
"""
from __future__ import annotations

import re

from transports.base import Body, hang_up

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable, Iterator

MEDIA_TYPE = "text/event-stream"
KEEP_ALIVE = b": still here\n\n"  # a comment: no event, but a write that fails if nobody reads
MAX_EVENTS = 10_000
SHORTEST_EVENT = len(b"data\n\n")  # a stream of n bytes holds at most n // SHORTEST_EVENT events
_LINES = rb"\r\n|\r|\n"  # compiled on first use: a run that streams nothing never does


def encode(frames: list[bytes]) -> bytes:
    """One event per frame. A frame is one line of JSON (our encoder writes no newline)."""
    return b"".join(b"data: " + frame + b"\n\n" for frame in frames)


def decode(body: bytes) -> list[bytes]:
    """The data of each event in `body`, in order; an event without data is no event."""
    decoder = Decoder(most=MAX_EVENTS)
    return decoder.feed(body) + decoder.end()


class Decoder:
    """The same parsing, for a body read in chunks as they arrive: `feed` each chunk and
    get the events it completed; `end` when the body has ended. A line (or a CRLF) may be
    split across chunks, so an unfinished line is kept until its end arrives."""

    def __init__(self, most: int | None = None) -> None:
        self.most = most  # events read before the rest is ignored (decode's cap); None: every one
        self.pending = bytearray()  # the start of a line whose end has not arrived yet
        self.after_cr = False  # the last chunk ended with CR
        self.data: list[bytes] = []  # the data lines of the event being read
        self.count = 0  # events completed so far, every one
        self.data_bytes = 0  # the data lines of the event being read, as sent (without their line ends)
        self.unended = 0  # once ended: those bytes, and a data line cut off, of an event no blank line ended

    def feed(self, chunk: bytes) -> list[bytes]:
        if self.after_cr and chunk.startswith(b"\n"):  # the LF of a CRLF split across chunks
            chunk, self.after_cr = chunk[1:], False
        if chunk:
            self.after_cr = chunk.endswith(b"\r")  # a CR ends its line now; an LF after it is skipped
        self.pending += chunk  # amortised: a line dripped a byte at a time is not re-copied
        if b"\n" not in chunk and b"\r" not in chunk:
            return []
        lines = re.split(_LINES, bytes(self.pending))
        self.pending = bytearray(lines.pop())
        return self._lines(lines)

    def end(self) -> list[bytes]:
        """What is left once the body ends: nothing. An event is dispatched only by the blank
        line after it, so one cut off by the end (its blank line, or more, never came) is
        discarded, as the standard says: its data may be half of what was sent. How much
        was discarded is kept in `unended`, for a reader to say why an event it saw is none."""
        cut_off = len(self.pending) if self.pending.partition(b":")[0] == b"data" else 0
        self.unended = self.data_bytes + cut_off
        self.pending, self.data, self.data_bytes = bytearray(), [], 0
        return []

    def _lines(self, lines: list[bytes]) -> list[bytes]:
        events: list[bytes] = []
        for line in lines:
            if self.count == self.most:
                break
            if not line:  # a blank line ends an event
                if self.data:
                    events.append(b"\n".join(self.data))
                    self.count += 1
                self.data, self.data_bytes = [], 0
            elif line.startswith(b"data"):
                field, _, value = line.partition(b":")
                if field == b"data":
                    self.data.append(value[1:] if value.startswith(b" ") else value)
                    self.data_bytes += len(line)
        return events


def events(chunks: bytes | Iterable[bytes], decode: Callable[[bytes], Any] = bytes) -> Body:
    """Each event's data, `decode`d, as soon as the chunks that complete it arrive (or
    from a whole body). Closing this closes `chunks` too, even before the first read: a
    reader that stops early hangs up at once."""
    chunks = [chunks] if isinstance(chunks, bytes) else chunks
    decoder = Decoder()

    def read() -> Iterator[Any]:
        for chunk in chunks:
            yield from map(decode, decoder.feed(chunk))
        yield from map(decode, decoder.end())
    return Body(read(), lambda completed: hang_up(chunks))


def is_stream(content_type: str | None) -> bool:
    return (content_type or "").split(";")[0].strip().lower() == MEDIA_TYPE
