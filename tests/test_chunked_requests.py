"""A request body sent chunked (RFC 9112 7.1: a recipient MUST be able to parse it) is read
as a Content-Length one is, under the same bounds, and what an attacker would send is refused
as soon as it shows: huge, negative or non-hex sizes, extensions or trailers without end, a
missing CRLF, a drip, a body in thousands of tiny chunks; two framings and codings other
than chunked as RFC 9112 6.1 and 6.3 say. Raw bytes on 127.0.0.1 to a server on port 0, and
the sans-IO decoder fed seeded random splits; every log line checked."""
import json
import random
import select
import socket
import time

import pytest

from conftest import FRAME, serving
from test_server_hardening import assert_refused, check_log, parse_responses, talk
from peers import billing
from peers.a2a import wire_essay
from peers.app import PeerApp
from transports.base import HttpResponse
from transports.chunked_body import ChunkedBody
from transports.http11_server import Refusal

HEAD = b"POST /a2a HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAuthorization: Bearer t0k\r\n"


def chunked(body, sizes, *, extension=b"", trailers=b""):
    """`body` in chunks of the given sizes (cycled), each size line with `extension`, then the last chunk."""
    out, at, index = bytearray(), 0, 0
    while at < len(body):
        size = sizes[index % len(sizes)]
        out += b"%x%s\r\n%s\r\n" % (len(body[at:at + size]), extension, body[at:at + size])
        at, index = at + size, index + 1
    return bytes(out + b"0\r\n" + trailers + b"\r\n")


@pytest.fixture
def echo():
    """A server whose app answers what it was handed: its headers and body's length (JSON)."""
    lines, seen = [], []

    def app(request):
        seen.append(request)
        return HttpResponse(200, {"Content-Type": "application/json"},
                            json.dumps({"headers": request.headers, "length": len(request.body)}).encode())
    with serving(app, log=lines.append, request_timeout=1.0, idle_timeout=2.0, max_body=4096) as server:
        server.lines, server.seen = lines, seen
        yield server
    check_log(lines)


def test_a_chunked_delegation_is_served_as_the_same_one_with_a_content_length():
    app = PeerApp(billing.billing_agent(), wire_essay, token="t0k")
    with serving(app, request_timeout=2.0) as server:
        closing = HEAD + b"Connection: close\r\n"
        whole, _ = talk(server.server_address, closing + b"Content-Length: %d\r\n\r\n" % len(FRAME) + FRAME)
        split, _ = talk(server.server_address, closing + b"Transfer-Encoding: chunked\r\n\r\n" + chunked(FRAME, [7, 1, 30]))
    [(status, _, first)], [(again, _, second)] = parse_responses(whole), parse_responses(split)
    assert status == again == 200 and json.loads(first)["result"]["status"] == json.loads(second)["result"]["status"]


def test_the_app_sees_one_framing_and_the_connection_serves_the_next_request(echo):
    body = b'{"ask": "' + b"x" * 300 + b'"}'
    sent = (HEAD + b"Transfer-Encoding: Chunked\r\n\r\n"
            + chunked(body, [1, 2, 100], extension=b' ;name="value";flag', trailers=b"X-Checksum: 1\r\nX-Other: two\r\n")
            + HEAD + b"Content-Length: 2\r\nConnection: close\r\n\r\n{}")
    (first, second) = parse_responses(talk(echo.server_address, sent)[0])
    seen = json.loads(first[2])
    assert first[0] == 200 and seen["length"] == len(body) and echo.seen[0].body == body
    assert seen["headers"]["content-length"] == str(len(body)) and "transfer-encoding" not in seen["headers"]
    assert "x-checksum" not in seen["headers"]  # trailers are dropped, never merged into the head
    assert second[0] == 200 and json.loads(second[2])["length"] == 2


def test_expect_100_continue_is_answered_before_a_chunked_body(echo):
    with socket.create_connection(echo.server_address, timeout=3) as sock:
        sock.sendall(HEAD + b"Transfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n")
        assert sock.recv(100).startswith(b"HTTP/1.1 100 Continue\r\n\r\n")
        sock.sendall(chunked(b"{}", [1]))
        assert b'"length": 2' in sock.recv(65536)


HOSTILE = {  # the body after the head, and the status it gets, at once (not at the deadline)
    "huge size": (b"FFFFFFFFFFFFFFFF\r\n", 413),
    "size over the limit": (b"1001\r\n", 413),
    "chunks adding up past the limit": (b"800\r\n" + b"x" * 0x800 + b"\r\n801\r\n", 413),
    "seventeen hex digits": (b"00000000000000001\r\nx\r\n0\r\n\r\n", 400),
    "negative size": (b"-1\r\nx\r\n0\r\n\r\n", 400),
    "plus sign": (b"+1\r\nx\r\n0\r\n\r\n", 400),
    "0x prefix": (b"0x1\r\nx\r\n0\r\n\r\n", 400),
    "not hex": (b"zz\r\n", 400),
    "unicode digit": ("١\r\nx\r\n0\r\n\r\n".encode(), 400),
    "empty size line": (b"\r\n", 400),
    "extension without end": (b"1;" + b"a" * 2000, 400),
    "size line without end": (b"1" * 2000, 400),
    "missing CRLF after data": (b"5\r\nhelloXX0\r\n\r\n", 400),
    "data longer than its size": (b"2\r\nhello\r\n0\r\n\r\n", 400),
    "bare LF in a size line": (b"5\nhello\r\n0\r\n\r\n", 400),
    "bare LF after data": (b"5\r\nhello\n0\r\n\r\n", 400),
    "endless trailer lines": (b"0\r\n" + b"X-T: 1\r\n" * 200, 431),
    "a trailer without end": (b"0\r\nX-T: " + b"y" * 20000, 431),
    "a malformed trailer": (b"0\r\nnot a field\r\n\r\n", 400),
    "a folded trailer": (b"0\r\nX-T: 1\r\n  more\r\n\r\n", 400),
    "many tiny chunks": (b"1\r\nx\r\n" * 20000, 413),  # framing past its bound: refused, not decoded for ever
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_hostile_chunked_body_is_refused_as_soon_as_it_shows(echo, name):
    body, status = HOSTILE[name]
    started = time.monotonic()
    answer, closed = talk(echo.server_address, HEAD + b"Transfer-Encoding: chunked\r\n\r\n" + body)
    assert_refused(answer, closed, status)
    assert time.monotonic() - started < 0.9, "refused on sight, not at the request deadline"
    assert echo.seen == []
    if name == "many tiny chunks":  # the framing's bound, before the body's: a bounded count of chunks decoded
        assert "the chunked framing is over 16640 bytes" in echo.lines[-1]


@pytest.mark.parametrize("headers, status", [
    (b"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n", 400),  # two framings: smuggling's way in
    (b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", 400),
    (b"Transfer-Encoding: gzip, chunked\r\n", 501),  # a coding we do not decode
    (b"Transfer-Encoding: chunked, gzip\r\n", 400),  # chunked not last: no length to go by
    (b"Transfer-Encoding: gzip\r\n", 400),
    (b"Transfer-Encoding: identity\r\n", 400),
    (b"Transfer-Encoding: chunked, chunked\r\n", 400),
    (b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", 400),
    (b"Transfer-Encoding: \r\n", 400),
])
def test_framing_rfc_9112_refuses_is_refused_and_closed(echo, headers, status):
    answer, closed = talk(echo.server_address, HEAD + headers + b"\r\n" + chunked(b"hello", [5]))
    assert_refused(answer, closed, status)
    assert echo.seen == []


@pytest.mark.parametrize("line", [b"GET /a2a HTTP/1.1", b"HEAD /a2a HTTP/1.1", b"DELETE /a2a HTTP/1.1",
                                  b"POST /a2a HTTP/1.0"])
def test_chunked_where_no_body_may_be_or_in_http_1_0_is_400(echo, line):
    hidden = HEAD + b"Content-Length: 2\r\n\r\n{}"  # a request hidden in the chunk, never parsed as one
    answer, closed = talk(echo.server_address, line + b"\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                          + chunked(hidden, [len(hidden)]))
    if line.startswith(b"HEAD "):  # an answer to HEAD is its head alone (RFC 9110 9.3.2)
        head, _, after = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 400 ") and after == b"" and closed, answer
    else:
        assert_refused(answer, closed, 400)
    assert echo.seen == []


def test_a_dripped_chunked_body_gets_408_at_the_request_deadline(echo):
    with socket.create_connection(echo.server_address, timeout=3) as sock:
        started = time.monotonic()
        sock.sendall(HEAD + b"Transfer-Encoding: chunked\r\n\r\n")
        for _ in range(30):  # a tiny chunk every 0.1 s: progress, but never done in time
            try:
                sock.sendall(b"1\r\nx\r\n")
            except OSError:
                break
            if select.select([sock], [], [], 0.1)[0]:  # the server has answered
                break
        answer = sock.recv(65536)
    assert answer.startswith(b"HTTP/1.1 408 ") and 0.9 < time.monotonic() - started < 2.5
    assert echo.seen == []


@pytest.mark.parametrize("seed", range(20))
def test_any_split_of_a_chunked_body_decodes_to_the_same_bytes(seed):
    """The decoder, fed the wire in random pieces (one byte at a time included), finds the same body."""
    rng = random.Random(seed)
    body = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 3000)))
    wire = chunked(body, [rng.randrange(1, 400) for _ in range(5)], extension=rng.choice([b"", b";a=b", b" ; x"]),
                   trailers=rng.choice([b"", b"X-T: 1\r\n"])) + b"NEXT"
    decoder, buffer, got, at = ChunkedBody(4096), bytearray(), None, 0
    while got is None:
        step = rng.choice([1, 2, 7, 100, 5000])
        buffer += wire[at:at + step]
        at += step
        got = decoder.take(buffer)
        assert at < len(wire) + 5000, "never whole"
    assert got == body and bytes(buffer) + wire[at:] == b"NEXT"  # the next request's bytes left for it


@pytest.mark.parametrize("seed", range(20))
def test_a_mangled_chunked_body_is_refused_with_a_status_never_an_error(seed):
    rng = random.Random(seed)
    wire = bytearray(chunked(b"x" * rng.randrange(1, 500), [rng.randrange(1, 50)], trailers=b"X-T: 1\r\n"))
    for _ in range(rng.randrange(1, 4)):
        wire[rng.randrange(len(wire))] = rng.choice(b"\r\n;:-0Fz\x00 \xff")
    decoder, buffer = ChunkedBody(4096), bytearray(wire)
    try:
        decoder.take(buffer)
    except Refusal as refused:
        assert refused.status in (400, 413, 431) and "\n" not in refused.why
