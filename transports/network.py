"""The network transport: the same two methods as the in-process shim, over real HTTP/1.1.

Essay: "a real network transport ... one step away". Raw sockets, not http.client: a peer
we do not own may answer anything, and http.client lets one that drips a byte at a time
hold us for ever. The rules, from RFC 9112 [sections], each tested against a hostile
server in tests/test_network_client.py:

- One deadline, `timeout` seconds, bounds the whole exchange: connect, send, every byte of
  the reply. Each wait gets only the time left, so a dripped reply, endless headers,
  endless `100 Continue`s or an endless body all fail on time.
- Strict parsing: `HTTP/1.x NNN reason` [4]; at most 100 header lines and 16 KiB of head;
  names are tokens; values hold no CR, LF or NUL; no obs-fold [5.2]; lines end in CRLF.
- Body length as in [6.3]: none after HEAD, 1xx, 204, 304. Content-Length with
  Transfer-Encoding is refused (two framings are how replies get smuggled); the only coding
  is "chunked" [7.1]. Content-Length is ASCII digits, every copy equal, at most `max_body`
  (checked before reading). Else the body ends at close, up to `max_body`. At most 10
  interim 1xx replies are skipped.
- One kept-alive connection per (scheme, host, port), reused only if the peer has not closed
  it while idle: checked before sending, never by resending after a failure, so a POST is
  never sent twice. Dropped after `Connection: close`, HTTP/1.0, a body ended by close, or
  any error.
- `resolve` maps a hostname to (ip, port) like `curl --resolve`: a loopback peer this process
  started, spoken to in plain HTTP with the original Host header. Other https URLs get TLS
  with the system's CA certificates. Redirects are never followed (a 3xx is returned), so a
  peer cannot bounce a request, and its credentials, to another host.

Errors are TransportError: a one-line reason, and `sent`, False only when the request
certainly did not reach the peer (a retry is safe). Not here: pipelining, proxies, HTTP/2.
"""
from __future__ import annotations

import re
import select
import socket
import time
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from transports.base import HttpResponse
from transports.errors import TransportError
from transports.codec import MAX_FRAME_BYTES

MAX_HEAD = 16 * 1024  # status line and header lines of one reply, CRLFs included
MAX_HEADERS = 100
MAX_INTERIM = 10  # 1xx replies skipped before the final one
MAX_CHUNK_LINE = 1024  # a chunk-size line, extensions included

# Character classes spelled out, because \d would also match "²" and other Unicode digits.
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # a header name [RFC 9110 5.6.2]
_VALUE = re.compile(r"[\t\x20-\x7e\x80-\xff]*")  # a header value, decoded as Latin-1
_STATUS = re.compile(r"HTTP/1\.([0-9]) ([1-5][0-9][0-9])(?: [\t\x20-\x7e\x80-\xff]*)?")
_DIGITS = re.compile(r"[0-9]+")
_CHUNK = re.compile(r"([0-9A-Fa-f]{1,16})(?:[ \t]*;[\t\x20-\x7e\x80-\xff]*)?")  # size [; ext]
_PRINTABLE = re.compile(r"[!-~]+")  # a request target or Host: visible ASCII, no space
_FRAMING = ("host", "content-length", "transfer-encoding")  # request headers we write ourselves

class _Key(NamedTuple):
    """Which kept-alive connection a URL uses."""

    scheme: str
    host: str
    port: int


class _Connection(NamedTuple):
    sock: socket.socket


class HttpTransport:
    def __init__(self, *, resolve: dict[str, tuple[str, int]] | None = None,
                 timeout: float = 10.0, max_body: int = MAX_FRAME_BYTES, tls: Any = None) -> None:
        self.resolve = {host.lower(): addr for host, addr in (resolve or {}).items()}
        self.timeout, self.max_body = timeout, max_body
        self.label = ("HTTP JSON-RPC over real sockets"
                      + (" (hostnames mapped to 127.0.0.1, like curl --resolve)" if resolve else ""))
        self._connections: dict[_Key, _Connection] = {}
        self.tls = tls  # an ssl.SSLContext; None: the system's, made on the first https URL

    def get(self, url: str, headers: dict[str, str]) -> HttpResponse:
        return self._exchange("GET", url, None, headers)

    def post(self, url: str, body: bytes, headers: dict[str, str]) -> HttpResponse:
        return self._exchange("POST", url, body, headers)

    def close(self) -> None:
        for key in list(self._connections):
            self._drop(key)

    def _exchange(self, method: str, url: str, body: bytes | None,
                  headers: dict[str, str]) -> HttpResponse:
        deadline = time.monotonic() + self.timeout
        key, head = _request_head(method, url, body, headers)
        sock = self._connect(key, deadline)
        reader = _Reader(sock, deadline)
        try:  # from the first byte written on, the request may have arrived: sent=True
            sock.settimeout(_left(deadline))
            sock.sendall(head + (body or b""))  # one write: a lone head waits on a delayed ACK
            response, keep = _read_reply(reader, method, self.max_body)
        except TransportError:
            self._drop(key)
            raise
        except OSError as exc:  # TimeoutError included
            self._drop(key)
            if not isinstance(exc, TimeoutError):
                reason = f"the connection broke before a full reply: {_reason(exc)}"
            elif reader.received:
                reason = f"the reply did not finish within {self.timeout:g}s"
            else:
                reason = f"no reply within {self.timeout:g}s (read timeout)"
            raise TransportError(reason, sent=True) from None
        if not keep or reader.buffer:  # bytes after the reply: its framing is not to be trusted
            self._drop(key)
        return response

    def _connect(self, key: _Key, deadline: float) -> socket.socket:
        kept = self._connections.get(key)
        if kept is not None:
            # Readable while we have sent nothing means the peer closed it (an idle timeout)
            # or sent junk: either way open a new one now, rather than resend after a failure.
            if not select.select([kept.sock], [], [], 0)[0]:
                return kept.sock
            self._drop(key)
        scheme, host, port = key
        address = self.resolve.get(host, (host, port))
        try:
            sock = _open(*address, deadline)
            if scheme == "https" and host not in self.resolve:
                if self.tls is None:
                    import ssl  # here, not at the top: start-up time matters, most runs never need it
                    self.tls = ssl.create_default_context()
                sock.settimeout(_left(deadline))  # the handshake shares the deadline
                sock = self.tls.wrap_socket(sock, server_hostname=host)  # closes sock on failure
        except TimeoutError:
            raise TransportError(f"could not connect to {host}:{port} within "
                                 f"{self.timeout:g}s (timeout)") from None
        except OSError as exc:
            raise TransportError(f"could not connect to {host}:{port}: {_reason(exc)}") from None
        self._connections[key] = _Connection(sock)
        return sock

    def _drop(self, key: _Key) -> None:
        connection = self._connections.pop(key, None)
        if connection is not None:
            connection.sock.close()


def _request_head(method: str, url: str, body: bytes | None,
                  headers: dict[str, str]) -> tuple[_Key, bytes]:
    """The connection key and the request's head; nothing has been sent yet (sent=False)."""
    try:
        parts = urlsplit(url)
        port = parts.port  # ValueError when not a number or out of range
    except ValueError:
        raise TransportError(f"bad host or port in {url!r}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise TransportError(f"not an http(s) URL: {url!r}")
    if port == 0:
        raise TransportError(f"bad port in {url!r}")
    host = parts.netloc.rpartition("@")[2]  # never send user:password@ in the Host header
    target = (parts.path or "/") + ("?" + parts.query if parts.query else "")
    if not _PRINTABLE.fullmatch(target) or not _PRINTABLE.fullmatch(host):
        raise TransportError(f"the URL has a space, control or non-ASCII character: {url!r}")
    lines = [f"{method} {target} HTTP/1.1", f"Host: {host}"]
    for name, value in headers.items():
        # The transport frames the request itself; a caller's framing could smuggle a second.
        if not _TOKEN.fullmatch(name) or name.lower() in _FRAMING:
            raise TransportError(f"the request header name {name!r} is not allowed")
        if any(c in value for c in "\r\n\0"):
            raise TransportError(f"the request header {name} has a CR, LF or NUL in its value")
        lines.append(f"{name}: {value}")
    if body is not None:
        lines.append(f"Content-Length: {len(body)}")
    try:
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    except UnicodeEncodeError:
        raise TransportError("a request header value is not Latin-1 text") from None
    default = 443 if parts.scheme == "https" else 80
    return _Key(parts.scheme, parts.hostname.lower(), port or default), head


def _open(host: str, port: int, deadline: float) -> socket.socket:
    """Connect to the first of the host's addresses that answers, within the deadline."""
    error: OSError = OSError("no address")
    # getaddrinfo takes no timeout, so a hung DNS server can overrun the deadline; a
    # `resolve` entry (an IP address) never asks DNS.
    for family, kind, proto, _, address in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
        sock = socket.socket(family, kind, proto)
        try:
            sock.settimeout(_left(deadline))
            sock.connect(address)
        except OSError as exc:  # TimeoutError included: the next address gets what is left
            sock.close()
            error = exc
            continue
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no 40 ms stalls
        return sock
    raise error


def _left(deadline: float) -> float:
    """Seconds left before the deadline; TimeoutError once none are."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError
    return left


def _bad(reason: str) -> TransportError:
    return TransportError(reason, sent=True)  # any reply at all means the request arrived


class _Reader:
    """Buffered reads from one socket; each wait is cut to the time left."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self.sock, self.deadline = sock, deadline
        self.buffer = bytearray()
        self.received = 0  # tells "no reply" from "a reply too slow to finish"

    def fill(self) -> bool:
        """Wait for more bytes; False once the peer has closed the connection."""
        self.sock.settimeout(_left(self.deadline))
        data = self.sock.recv(65536)
        self.buffer += data
        self.received += len(data)
        return bool(data)

    def line(self, limit: int, too_long: str) -> str:
        """One CRLF-terminated line of at most `limit` bytes, without its CRLF."""
        while (end := self.buffer.find(b"\n")) < 0:
            if len(self.buffer) > limit:
                raise _bad(too_long)
            if not self.fill():
                raise _bad("the connection broke before a full reply: the peer closed it")
        if end > limit + 1:
            raise _bad(too_long)
        if not self.buffer[:end].endswith(b"\r"):  # refused at once, not waited on [2.2]
            raise _bad("a line of the reply ends with a bare LF instead of CRLF")
        line = self.buffer[:end - 1].decode("latin-1")  # any byte decodes; the regexes judge it
        del self.buffer[:end + 1]
        return line

    def exactly(self, size: int) -> bytes:
        while len(self.buffer) < size:
            if not self.fill():
                raise _bad("the connection broke before a full reply: the peer closed it mid-body")
        data = bytes(self.buffer[:size])
        del self.buffer[:size]
        return data

    def until_close(self, limit: int) -> bytes:
        while len(self.buffer) <= limit:  # the buffer may already hold the whole body
            if not self.fill():
                data = bytes(self.buffer)
                self.buffer.clear()
                return data
        raise _bad(f"the reply is over the {limit}-byte limit")


def _read_fields(reader: _Reader, budget: int) -> list[tuple[str, str]]:
    """Header (or trailer) lines up to the empty line, within `budget` bytes [5]."""
    fields: list[tuple[str, str]] = []
    too_long = f"the reply's head is over {MAX_HEAD} bytes"
    while line := reader.line(budget, too_long):
        budget -= len(line) + 2
        if len(fields) == MAX_HEADERS:
            raise _bad(f"the reply has more than {MAX_HEADERS} header lines")
        if line[0] in " \t":
            raise _bad("the reply folds a header onto a second line (obs-fold, forbidden)")
        name, colon, value = line.partition(":")
        value = value.strip(" \t")
        if not colon or not _TOKEN.fullmatch(name) or not _VALUE.fullmatch(value):
            raise _bad(f"the reply has a malformed header line: {line[:40]!r}")
        fields.append((name, value))
    return fields


def _read_reply(reader: _Reader, method: str, max_body: int) -> tuple[HttpResponse, bool]:
    """The final reply, and whether its connection may be kept [6.3, 9.3]."""
    for _ in range(MAX_INTERIM + 1):
        line = reader.line(MAX_HEAD, f"the reply's status line is over {MAX_HEAD} bytes")
        match = _STATUS.fullmatch(line)
        if not match:
            raise _bad(f"the reply does not start with an HTTP/1.x status line: {line[:40]!r}")
        minor, status = int(match[1]), int(match[2])
        fields = _read_fields(reader, MAX_HEAD - len(line) - 2)
        if status == 101:
            raise _bad("the peer switched protocols (101), which was never asked for")
        if status >= 200:
            break
    else:
        raise _bad(f"the peer sent more than {MAX_INTERIM} interim (1xx) replies")
    values = lambda wanted: [v for n, v in fields if n.lower() == wanted]  # noqa: E731
    lengths, codings = set(values("content-length")), values("transfer-encoding")
    tokens = {t.strip().lower() for v in values("connection") for t in v.split(",")}
    keep = minor >= 1 and "close" not in tokens  # HTTP/1.0 peers are not kept: simpler
    if lengths and codings:
        raise _bad("the reply has both Content-Length and Transfer-Encoding")
    if len(lengths) > 1:
        raise _bad("the reply has two different Content-Length values")
    if codings and ",".join(codings).strip().lower() != "chunked":
        raise _bad(f"the reply's Transfer-Encoding is not plain chunked: {','.join(codings)[:40]!r}")
    length = next(iter(lengths), None)
    if length is not None and not _DIGITS.fullmatch(length):
        raise _bad("the reply's Content-Length is not a number")
    if method == "HEAD" or status in (204, 304):
        body = b""  # a Content-Length here describes what a GET would have returned
    elif codings:
        body = _read_chunked(reader, max_body)
    elif length is not None:
        if len(length) > 18 or int(length) > max_body:  # len first: int() refuses 4,301+ digits
            raise _bad(f"the reply's Content-Length is over the {max_body}-byte limit")
        body = reader.exactly(int(length))
    else:
        body, keep = reader.until_close(max_body), False
    headers: dict[str, str] = {}
    first: dict[str, str] = {}  # lower-cased name -> its first spelling
    for name, value in fields:  # repeated fields are joined, as RFC 9110 5.3 allows
        name = first.setdefault(name.lower(), name)
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return HttpResponse(status, headers, body), keep


def _read_chunked(reader: _Reader, max_body: int) -> bytes:
    """A chunked body [7.1]: hex size, CRLF, data, CRLF ... then 0, trailers, CRLF."""
    body = bytearray()
    while True:
        line = reader.line(MAX_CHUNK_LINE, f"a chunk-size line is over {MAX_CHUNK_LINE} bytes")
        match = _CHUNK.fullmatch(line)
        if not match:
            raise _bad(f"the reply's chunk size is not 1 to 16 hex digits: {line[:40]!r}")
        size = int(match[1], 16)
        if size == 0:
            break
        if len(body) + size > max_body:
            raise _bad(f"the reply is over the {max_body}-byte limit")
        body += reader.exactly(size)
        if reader.exactly(2) != b"\r\n":
            raise _bad("a chunk of the reply does not end with CRLF")
    _read_fields(reader, MAX_HEAD)  # trailers: bounded like headers, then ignored
    return bytes(body)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused (is the peer running?)"
    if isinstance(exc, socket.gaierror):
        return "unknown host"
    return getattr(exc, "strerror", None) or str(exc) or exc.__class__.__name__
