"""A chunked request body (RFC 9112 7.1), decoded as it arrives: the server's half, sans-IO.

A recipient MUST be able to parse chunked [7.1], so the server reads a request body sent
with `Transfer-Encoding: chunked` as it reads one with a Content-Length, under the same
bounds. `ChunkedBody.take(buffer)` decodes what has arrived from the front of the buffer,
removing what it decoded, and returns the whole body once its last chunk and trailers are
in (None until then). What must not be served is `Refusal(status, why)`, raised as soon as
the bytes that show it arrive, never after waiting for more:
- A chunk-size line is 1 to 16 hex digits (no sign, no "0x"), any extensions (`;name=value`,
  ignored [7.1.1]), then CRLF; at most MAX_CHUNK_LINE bytes, so an extension that never
  ends is 400 once that many bytes have come without its CRLF. A bare LF is 400.
- The body is at most `max_body` bytes in all, as with Content-Length: a chunk whose size
  would pass it is 413 before its data is read.
- Each chunk's data ends with CRLF, else 400: bytes where the CRLF belongs are how a second
  message would hide in the first.
- Trailers after the last chunk are field lines as in a head (400 if malformed), at most
  MAX_HEAD bytes and MAX_HEADERS lines (431), then dropped [7.1.2: a recipient may].
- The framing (size lines with their extensions, CRLFs, trailers) is at most MAX_HEAD bytes
  and a sixteenth of `max_body` more (413): a body spread over many tiny chunks costs its
  sender bytes, and the server a bounded number of chunks; each byte is looked at once or
  twice, however the body is dripped.
A slow drip is the server loop's to end: a request's deadline runs from its first byte.
Not here: which requests may have a body (http11_server.py), sockets (server_answer.py).
"""
from __future__ import annotations

from transports.http11 import CHUNK_SIZE, FIELD_VALUE, MAX_CHUNK_LINE, MAX_HEAD, MAX_HEADERS, TOKEN
from transports.http11_server import Refusal

SIZE, DATA, DATA_END, TRAILERS = "size", "data", "data end", "trailers"  # what the next bytes are


class ChunkedBody:
    """One chunked body being read: its data so far and where in its framing the next bytes fall."""

    def __init__(self, max_body: int) -> None:
        self.max_body, self.most_framing = max_body, MAX_HEAD + max_body // 16
        self.body = bytearray()
        self.state, self.left = SIZE, 0  # left: bytes of the current chunk's data still to come
        self.framing, self.trailers, self.trailer_lines = 0, 0, 0
        self.searched = 0  # bytes of the line now arriving already searched for its end

    def take(self, buffer: bytearray) -> bytes | None:
        """Decode what `buffer` holds (removing it); the whole body once it has all come."""
        at, whole = 0, None
        try:
            while whole is None and at < len(buffer):
                if self.state == DATA:
                    piece = buffer[at:at + self.left]
                    self.body += piece
                    at, self.left = at + len(piece), self.left - len(piece)
                    self.state = DATA if self.left else DATA_END
                elif self.state == DATA_END:
                    if buffer[at:at + 2] != b"\r\n"[:len(buffer) - at]:
                        raise Refusal(400, "a chunk's data must end with CRLF")
                    if len(buffer) - at < 2:
                        break
                    at, self.state = at + 2, SIZE
                    self._framed(2)
                else:
                    end = self._line_end(buffer, at)
                    if end is None:
                        break
                    line = buffer[at:end - 1].decode("latin-1")  # any byte decodes; the patterns judge
                    at = end + 1
                    self._framed(len(line) + 2)
                    whole = self._size(line) if self.state == SIZE else self._trailer(line)
        finally:
            del buffer[:at]  # once per arrival, not once per chunk: tiny chunks stay cheap
        return whole

    def _line_end(self, buffer: bytearray, at: int) -> int | None:
        """Where the line starting at `at` ends (its LF), or None while more must come."""
        limit = MAX_CHUNK_LINE if self.state == SIZE else MAX_HEAD - self.trailers
        end = buffer.find(b"\n", at + self.searched, at + limit + 2)
        if end < 0:
            self.searched = len(buffer) - at
            if self.searched > limit:
                raise Refusal(400, f"a chunk-size line is over {MAX_CHUNK_LINE} bytes") if self.state == SIZE \
                    else Refusal(431, f"the trailers are over {MAX_HEAD} bytes")
            return None
        self.searched = 0
        if end == at or buffer[end - 1] != 0x0D:
            raise Refusal(400, "lines must end with CRLF, not a bare LF")
        return end

    def _framed(self, size: int) -> None:
        self.framing += size
        if self.framing > self.most_framing:
            raise Refusal(413, f"the chunked framing is over {self.most_framing} bytes: send fewer, larger chunks")

    def _size(self, line: str) -> bytes | None:
        match = CHUNK_SIZE.fullmatch(line)
        if match is None:
            raise Refusal(400, "a chunk size must be 1 to 16 hex digits, then any extensions")
        size = int(match[1], 16)
        if size > self.max_body - len(self.body):
            raise Refusal(413, f"body larger than {self.max_body} bytes")
        self.state, self.left = (DATA, size) if size else (TRAILERS, 0)
        return None

    def _trailer(self, line: str) -> bytes | None:
        if not line:  # the empty line: the body is whole
            return bytes(self.body)
        self.trailers, self.trailer_lines = self.trailers + len(line) + 2, self.trailer_lines + 1
        if self.trailer_lines > MAX_HEADERS:
            raise Refusal(431, f"more than {MAX_HEADERS} trailer lines")
        name, colon, value = line.partition(":")
        if not colon or not TOKEN.fullmatch(name) or not FIELD_VALUE.fullmatch(value.strip(" \t")):
            raise Refusal(400, "malformed trailer line")
        return None
