"""A reply's head is read the same, to the byte and to the error, whether it is all there at once
or arrives a line at a time.

transports/http11.py reads a head it holds whole in one step and anything else line by line.
Each seeded case here (a well-formed head, or one broken the ways a hostile peer breaks
them) is read both ways over a real socket pair: once with every byte waiting, once with
only the first byte in hand, so the line-by-line reader takes it. The answers, or the
errors' words, must be the same.
"""
import random
import socket
import time

import pytest

from transports.http11 import MAX_HEADERS, MalformedMessage, Reader, read_reply

BROKEN = [
    lambda head: head.replace(b"\r\n", b"\n", 2),  # bare LF
    lambda head: head.replace(b"\r\nX-A:", b"\r\n X-A:", 1),  # obs-fold
    lambda head: head.replace(b"X-A:", b"X A:", 1),  # a name with a space
    lambda head: head.replace(b"X-A: ", b"X-A: \x00", 1),  # NUL in a value
    lambda head: head.replace(b"X-A: ", b"X-A: \x7f", 1),  # DEL in a value
    lambda head: b"HTTP/1.1 100 Continue\r\n\r\n" + head,  # an interim reply first
    lambda head: b"HTTP/1.1 101 Switching\r\n\r\n" + head,
    lambda head: head.replace(b"HTTP/1.1 200", b"HTTP/2.0 200", 1),
    lambda head: head.replace(b"HTTP/1.1 200", b"HTTP/1.1 99", 1),
    lambda head: head.replace(b"\r\n\r\n", b"\r\n" + b"X-N: n\r\n" * MAX_HEADERS + b"\r\n", 1),
    lambda head: head.replace(b"\r\n\r\n", b"\r\nX-Big: " + b"b" * 17000 + b"\r\n\r\n", 1),
    lambda head: head.replace(b"\r\n\r\n", b"\r\nTransfer-Encoding: chunked\r\n\r\n", 1),
    lambda head: head.replace(b"\r\n\r\n", b"\r\nContent-Length: 3\r\n\r\n", 1),
    lambda head: head.replace(b"Content-Length: 2", b"Content-Length: \xb2", 1),
    lambda head: head.replace(b"\r\n\r\n", b"\r\n", 1),  # no end to the head: the peer closes
]


def a_head(rng):
    fields = [b"Content-Length: 2", b"X-A: " + bytes(rng.choice(b"ab \t:,;=/") for _ in range(rng.randrange(12)))]
    for n in range(rng.randrange(6)):
        fields.append(b"X-%d:%s%s" % (n, b" " * rng.randrange(3), rng.choice([b"v", b"", b"a b", b"\xe9t\xe9"])))
    fields += [b"connection: close"] if rng.random() < 0.2 else []
    rng.shuffle(fields)
    return b"HTTP/1.%d %d %s\r\n" % (rng.choice([0, 1]), rng.choice([200, 204, 404, 503]), rng.choice([b"OK", b"", b"Odd \xff"])) \
        + b"\r\n".join(fields) + b"\r\n\r\n"


def read(data: bytes, in_hand: int | None):
    """What read_reply makes of `data`, all sent and the sender closed; `in_hand` bytes
    already in the reader's buffer (None: none, the first read gets them all)."""
    ours, theirs = socket.socketpair()
    with ours, theirs:
        theirs.sendall(data[in_hand or 0:])
        theirs.shutdown(socket.SHUT_WR)
        reader = Reader(ours, time.monotonic() + 5)
        reader.buffer += data[:in_hand or 0]
        try:
            response, keep = read_reply(reader, "GET", 1 << 20)
        except MalformedMessage as exc:
            return "refused", str(exc)
        return response, keep, bytes(reader.buffer)


@pytest.mark.parametrize("seed", range(40))
def test_a_head_read_whole_is_read_as_line_by_line(seed):
    rng = random.Random(seed)
    for breaking in [None, *BROKEN]:
        head = a_head(rng)
        data = (breaking(head) if breaking else head) + b"ok" + b"more" * rng.randrange(2)
        whole, in_pieces = read(data, None), read(data, 1)
        assert whole == in_pieces, (seed, data[:120])
        if breaking is None:
            assert whole[0] != "refused"
        elif breaking in BROKEN[:5]:
            assert whole[0] == "refused"
