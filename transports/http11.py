"""Reading one HTTP/1.1 message from a socket, strictly and under a deadline (RFC 9112).

Used by the network transport to read a peer's reply. The rules, each tested against a hostile server in
tests/test_network_client.py:
- Every wait gets only the time left before one deadline for the whole exchange, so a dripped message,
  endless headers or an endless body end on time (TimeoutError); a reader given `idle` seconds waits that
  long for each next byte instead (a stream's body).
- Lines end in CRLF; at most MAX_HEADERS header lines and MAX_HEAD bytes of head; names are tokens, values
  hold no CR, LF or NUL, no obs-fold [5.2]; a status line is `HTTP/1.x NNN reason` [4], and at most
  MAX_INTERIM 1xx replies are skipped.
- Body length as in [6.3]: none after HEAD (bytes that come with its head anyway, or within HEAD_LINGER,
  are returned as its body, to be judged), 1xx, 204, 304. Content-Length with Transfer-Encoding is refused
  (two framings are how messages get smuggled); the only coding is "chunked" [7.1]. Content-Length is ASCII
  digits, every copy equal, at most max_body before reading. Else the body ends at close, up to max_body.
Anything else raises MalformedMessage with a one-line reason. Character classes are spelled out, because
`\\d` would also match "²" and other Unicode digits.
"""
from __future__ import annotations

import re
import socket
import time

from transports.base import HttpResponse

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Iterator

MAX_HEAD = 16 * 1024  # status line and header lines of one message, CRLFs included
MAX_HEADERS = 100
MAX_INTERIM = 10  # 1xx replies skipped before the final one
MAX_CHUNK_LINE = 1024  # a chunk-size line, extensions included
# Set-Cookie is the one field RFC 9110 5.3 says is not joined with commas (RFC 6265 3: a cookie's Expires
# holds one); repeated, its values are kept apart by a line feed, which no field value holds, and each is
# written back on a line of its own (http11_server.response_head).
COOKIES_APART = "\n"
HEAD_LINGER = 0.1  # s a reply to HEAD is heard out after its head: a body wrongly sent often comes apart, later

TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # a header name [RFC 9110 5.6.2]
FIELD_VALUE = re.compile(r"[\t\x20-\x7e\x80-\xff]*")  # a header value, decoded as Latin-1
STATUS_LINE = re.compile(r"HTTP/1\.([0-9]) ([1-5][0-9][0-9])(?: [\t\x20-\x7e\x80-\xff]*)?")
DIGITS = re.compile(r"[0-9]+")
CHUNK_SIZE = re.compile(r"([0-9A-Fa-f]{1,16})(?:[ \t]*;[\t\x20-\x7e\x80-\xff]*)?")  # size [; ext]


class MalformedMessage(ValueError):
    """What arrived is not an HTTP/1.1 message within our limits; the text says why."""


def left(deadline: float) -> float:
    """Seconds left before the deadline; TimeoutError once none are."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise TimeoutError
    return remaining


class Reader:
    """Buffered reads from one socket; each wait is cut to the time left (or `idle`, once set)."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self.sock, self.deadline = sock, deadline
        self.buffer = bytearray()
        self.received = 0  # tells "no reply" from "a reply too slow to finish"
        self.status: int | None = None  # the final reply's, once its head is read: a request taken, if 2xx
        self.idle: float | None = None  # set: each wait is this long, whatever the deadline (a stream's body)

    def fill(self) -> bool:
        """Wait for more bytes; False once the peer has closed the connection."""
        self.sock.settimeout(left(self.deadline) if self.idle is None else self.idle)
        data = self.sock.recv(65536)
        self.buffer += data
        self.received += len(data)
        return bool(data)

    def line(self, limit: int, too_long: str) -> str:
        """One CRLF-terminated line of at most `limit` bytes, without its CRLF."""
        while (end := self.buffer.find(b"\n")) < 0:
            if len(self.buffer) > limit:
                raise MalformedMessage(too_long)
            if not self.fill():
                raise MalformedMessage("the connection broke before a full reply: the peer closed it")
        if end > limit + 1:
            raise MalformedMessage(too_long)
        if not self.buffer[:end].endswith(b"\r"):  # refused at once, not waited on [2.2]
            raise MalformedMessage("a line of the reply ends with a bare LF instead of CRLF")
        line = self.buffer[:end - 1].decode("latin-1")  # any byte decodes; the regexes judge it
        del self.buffer[:end + 1]
        return line

    def exactly(self, size: int) -> bytes:
        while len(self.buffer) < size:
            if not self.fill():
                raise MalformedMessage("the connection broke before a full reply: the peer closed it mid-body")
        data = bytes(self.buffer[:size])
        del self.buffer[:size]
        return data

    def until_close(self, limit: int) -> bytes:
        while len(self.buffer) <= limit:  # the buffer may already hold the whole body
            if not self.fill():
                data = bytes(self.buffer)
                self.buffer.clear()
                return data
        raise MalformedMessage(f"the reply is over the {limit}-byte limit")

    def within(self, seconds: float, limit: int) -> bytes:
        """What is buffered; if nothing is, what arrives within `seconds` (and the deadline): up to `limit` bytes."""
        try:
            if not self.buffer:
                self.sock.settimeout(min(seconds, left(self.deadline)))
                self.buffer += self.sock.recv(limit)
        except (TimeoutError, OSError):  # nothing came, or the connection went: nothing is all
            pass
        return bytes(self.buffer[:limit])

    def as_it_comes(self, limit: int, endless: bool = False) -> Iterator[bytes]:
        """A body that ends as the connection does [6.3 item 8], given as its bytes arrive,
        within `limit` bytes in all (`endless`: each read): a stream needs no chunks to be one."""
        total = 0
        while self.buffer or self.fill():
            data = bytes(self.buffer)
            self.buffer.clear()
            total = len(data) if endless else total + len(data)
            if total > limit:
                raise MalformedMessage(f"the reply is over the {limit}-byte limit")
            yield data


def read_fields(reader: Reader, budget: int) -> list[tuple[str, str]]:
    """Header (or trailer) lines up to the empty line, within `budget` bytes [5]."""
    fields: list[tuple[str, str]] = []
    too_long = f"the reply's head is over {MAX_HEAD} bytes"
    while line := reader.line(budget, too_long):
        budget -= len(line) + 2
        if len(fields) == MAX_HEADERS:
            raise MalformedMessage(f"the reply has more than {MAX_HEADERS} header lines")
        if line[0] in " \t":
            raise MalformedMessage("the reply folds a header onto a second line (obs-fold, forbidden)")
        name, colon, value = line.partition(":")
        value = value.strip(" \t")
        if not colon or not TOKEN.fullmatch(name) or not FIELD_VALUE.fullmatch(value):
            raise MalformedMessage(f"the reply has a malformed header line: {line[:40]!r}")
        fields.append((name, value))
    return fields


# A whole final head at once, every line well formed: what nearly every reply is. Anything else (a 1xx
# first, a line this refuses, a head not yet all here) is read line by line below, which accepts the same
# heads and says what is wrong with any other.
_VALUE, _NAME = FIELD_VALUE.pattern.encode(), TOKEN.pattern.encode()
_WHOLE_HEAD = re.compile(rb"HTTP/1\.([0-9]) ([2-5][0-9][0-9])(?: %s)?\r\n((?:%s:%s\r\n)*)\r\n" % (_VALUE, _NAME, _VALUE))


def _whole_head(reader: Reader) -> tuple[int, int, list[tuple[str, str]]] | None:
    """Minor version, status and fields of a final head the buffer holds whole and well formed; else None."""
    if not reader.buffer:
        reader.fill()
    match = _WHOLE_HEAD.match(reader.buffer)
    if match is None or match.end() > MAX_HEAD or match[3].count(b"\n") > MAX_HEADERS:
        return None
    fields = []
    for line in match[3].decode("latin-1").split("\r\n")[:-1]:
        name, _, value = line.partition(":")
        fields.append((name, value.strip(" \t")))
    head = int(match[1]), int(match[2]), fields
    del reader.buffer[:match.end()]  # after reading the match: it reads the buffer itself
    return head


def _final_head(reader: Reader) -> tuple[int, int, list[tuple[str, str]]]:
    """The final head line by line, any 1xx replies before it skipped."""
    for _ in range(MAX_INTERIM + 1):
        line = reader.line(MAX_HEAD, f"the reply's status line is over {MAX_HEAD} bytes")
        match = STATUS_LINE.fullmatch(line)
        if not match:
            raise MalformedMessage(f"the reply does not start with an HTTP/1.x status line: {line[:40]!r}")
        minor, status = int(match[1]), int(match[2])
        if status >= 200:  # the final status line came: what breaks after it breaks a reply the peer sent
            reader.status = status
        fields = read_fields(reader, MAX_HEAD - len(line) - 2)
        if status == 101:
            raise MalformedMessage("the peer switched protocols (101), which was never asked for")
        if status >= 200:
            return minor, status, fields
    raise MalformedMessage(f"the peer sent more than {MAX_INTERIM} interim (1xx) replies")


def read_reply(reader: Reader, method: str, max_body: int, *,
               lazy: bool = False, endless: bool = False) -> tuple[HttpResponse, bool]:
    """The final reply, and whether its connection may be kept [6.3, 9.3]. `lazy`: a chunked
    or close-delimited body comes back unread, as an iterator of its chunks, each read when asked for;
    `endless`: a 200 text/event-stream's chunks, then, each within `max_body`, not all of them
    (its reader passes them on and keeps none); any other body is within it whole."""
    minor, status, fields = _whole_head(reader) or _final_head(reader)
    reader.status = status
    named = [(name.lower(), name, value) for name, value in fields]

    def values(wanted: str) -> list[str]:
        return [value for lowered, _, value in named if lowered == wanted]
    lengths, codings = set(values("content-length")), values("transfer-encoding")
    tokens = {t.strip().lower() for v in values("connection") for t in v.split(",")}
    keep = minor >= 1 and "close" not in tokens  # HTTP/1.0 peers are not kept: simpler
    if lengths and codings:
        raise MalformedMessage("the reply has both Content-Length and Transfer-Encoding")
    if len(lengths) > 1:
        raise MalformedMessage("the reply has two different Content-Length values")
    if codings and ",".join(codings).strip().lower() != "chunked":
        raise MalformedMessage(f"the reply's Transfer-Encoding is not plain chunked: {','.join(codings)[:40]!r}")
    length = next(iter(lengths), None)
    if length is not None and not DIGITS.fullmatch(length):
        raise MalformedMessage("the reply's Content-Length is not a number")
    media = [value.split(";")[0].strip().lower() for value in values("content-type")]
    endless = endless and status == 200 and media == ["text/event-stream"]
    if method == "HEAD":  # none; what came with the head anyway, or within HEAD_LINGER, is kept as one for a
        body = reader.within(HEAD_LINGER, max_body)  # caller to judge (check does; the connection is not kept)
    elif status in (204, 304):
        body = b""  # a Content-Length here describes what a GET would have returned
    elif codings:
        body = each_chunk(reader, max_body, endless) if lazy else read_chunked(reader, max_body)
    elif length is not None:
        if len(length) > 18 or int(length) > max_body:  # len first: int() refuses 4,301+ digits
            raise MalformedMessage(f"the reply's Content-Length is over the {max_body}-byte limit")
        body = reader.exactly(int(length))
    else:  # neither: the body is all the connection brings [6.3 item 8], read lazily as chunks are
        body, keep = (reader.as_it_comes(max_body, endless) if lazy else reader.until_close(max_body)), False
    headers: dict[str, str] = {}
    first: dict[str, str] = {}  # lower-cased name -> its first spelling
    for lowered, name, value in named:  # repeated fields are joined, as RFC 9110 5.3 allows
        name = first.setdefault(lowered, name)
        joint = COOKIES_APART if lowered == "set-cookie" else ", "
        headers[name] = f"{headers[name]}{joint}{value}" if name in headers else value
    return HttpResponse(status, headers, body), keep


def read_chunked(reader: Reader, max_body: int) -> bytes:
    return b"".join(each_chunk(reader, max_body))


def each_chunk(reader: Reader, max_body: int, endless: bool = False) -> Iterator[bytes]:
    """A chunked body [7.1]: hex size, CRLF, data, CRLF ... then 0, trailers, CRLF; each
    chunk's data given as it is read, within `max_body` bytes in all (`endless`: each)."""
    size_so_far = 0
    while True:
        line = reader.line(MAX_CHUNK_LINE, f"a chunk-size line is over {MAX_CHUNK_LINE} bytes")
        match = CHUNK_SIZE.fullmatch(line)
        if not match:
            raise MalformedMessage(f"the reply's chunk size is not 1 to 16 hex digits: {line[:40]!r}")
        size = int(match[1], 16)
        if size == 0:
            break
        size_so_far = size if endless else size_so_far + size
        if size_so_far > max_body:
            raise MalformedMessage(f"the reply is over the {max_body}-byte limit")
        data = reader.exactly(size)
        if reader.exactly(2) != b"\r\n":
            raise MalformedMessage("a chunk of the reply does not end with CRLF")
        yield data
    read_fields(reader, MAX_HEAD)  # trailers: bounded like headers, then ignored
