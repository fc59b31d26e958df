"""The network transport: the same methods as the in-process shim, over real HTTP/1.1.

Essay: "a real network transport ... one step away". Raw sockets, not http.client: a peer we
do not own may answer anything, and http.client lets one that drips a byte at a time hold us
for ever. The rules, each tested against a hostile server in tests/test_network_client.py:

- One deadline, `timeout` seconds, bounds the whole exchange: connect, send, every byte of
  the reply. Each wait gets only the time left, so a dripped reply, endless headers,
  endless `100 Continue`s or an endless body all fail on time.
- The reply is read strictly by `http11.py` (RFC 9112): status line, bounded head, one framing,
  lengths in ASCII digits within `max_body`. `stream` reads a Server-Sent Events reply chunk by
  chunk, as it arrives, under the same deadline and `max_body`; with `idle_streams` (a proxy's,
  passing each chunk on), each chunk within `max_body`, each wait for the next within `timeout`.
- One kept-alive connection per (scheme, host, port), reused only if the peer has not closed
  it while idle: checked before sending, never by resending after a failure (a POST is never
  sent twice). Dropped after `Connection: close`, HTTP/1.0, a body ended by close, a HEAD (it says so), a 204/304, an error.
- A request's header names are tokens and its values hold no control character but a tab.
- `resolve` maps a hostname to (ip, port) like `curl --resolve`: a loopback peer this process started,
  spoken to in plain HTTP with the original Host header, or (`resolved_tls`) in TLS, its name sent (SNI)
  and checked against its certificate. Other https URLs get TLS with `tls` (a context trusting the CA --ca
  names) or the system's CA certificates; a host origin in `client_tls` gets its own context, which
  presents our client certificate to that origin alone (mutual TLS). `pinned` maps a hostname to the (ip,
  port) already checked (a webhook's, an interface `check` judged: the URL's own port is used), so no
  second DNS answer can move it; TLS is kept, its name sent and checked as ever. Redirects are never
  followed (a 3xx is returned): no peer can bounce a request, and its credentials, to another host.

Errors are TransportError: a one-line reason, and `sent`, False only when the request
certainly did not reach the peer (a retry is safe). Not here: pipelining, proxies, HTTP/2.
"""

from __future__ import annotations

import re
import select
import socket
import time
from functools import partial

from transports import sse
from transports.base import Body, ClientRequest, HttpResponse, parse_url, seconds_for
from transports.errors import TransportError
from transports.codec import MAX_FRAME_BYTES
from transports.http11 import TOKEN, MalformedMessage, Reader, left, read_reply
from transports.records import Record

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Iterator

_FRAMING = frozenset({"host", "content-length", "transfer-encoding"})  # request headers we write ourselves
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")  # in a field value, all but a tab [RFC 9110 5.5]
_TOKENS = re.compile(rf"{TOKEN.pattern}(?::{TOKEN.pattern})*")  # names joined by ":", which no token holds


class _Key(Record):
    """Which kept-alive connection a URL uses."""

    scheme: str
    host: str
    port: int


class HttpTransport:
    def __init__(self, *, resolve: dict[str, tuple[str, int]] | None = None,
                 timeout: float = 10.0, max_body: int = MAX_FRAME_BYTES, tls: Any = None,
                 pinned: dict[str, tuple[str, int]] | None = None, client_tls: dict[str, Any] | None = None,
                 resolved_tls: bool = False, idle_streams: bool = False) -> None:
        self.resolve = {host.lower(): addr for host, addr in (resolve or {}).items()}
        self.pinned = {host.lower(): addr for host, addr in (pinned or {}).items()}
        self.timeout, self.max_body, self.idle_streams = timeout, max_body, idle_streams
        self.label = ("HTTP JSON-RPC over real sockets"
                      + (" (the demo peers' hostnames mapped to 127.0.0.1, like curl --resolve;"
                         + (" TLS there, each certificate checked for its name)" if resolved_tls else
                            " plain HTTP there, no TLS)") if resolve else ""))
        self._connections: dict[_Key, socket.socket] = {}  # kept-alive, by where they go
        self.tls = tls  # an ssl.SSLContext; None: the system's, made on the first https URL
        self.client_tls = {origin.lower(): context for origin, context in (client_tls or {}).items()}
        self.resolved_tls = resolved_tls

    def get(self, url: str, headers: dict[str, str], *, binding: str | None = None) -> HttpResponse:
        return self._exchange("GET", url, None, headers)

    def post(self, url: str, body: bytes, headers: dict[str, str], *, binding: str | None = None) -> HttpResponse:
        return self._exchange("POST", url, body, headers)

    def head(self, url: str, headers: dict[str, str], *, binding: str | None = None) -> HttpResponse:
        """GET's status and headers without its body (a card's caching headers, checked)."""
        return self._exchange("HEAD", url, None, headers)

    def stream(self, url: str, body: bytes, headers: dict[str, str], *, binding: str | None = None) -> HttpResponse:
        """`post`, but a 200 text/event-stream reply (chunked or not) comes back as it arrives: its
        body an iterator of chunks, each read when asked for, within the same deadline.
        Closing the iterator early hangs up (the connection is not reused)."""
        return self._exchange("POST", url, body, headers, lazy=True)

    def exchange(self, request: ClientRequest, *, stream: bool = False) -> HttpResponse:
        """Any verb (DELETE, PUT ...; a GET that may answer a stream): what a proxy forwards.
        A body is sent, with its length, when there is one or the verb is not GET/HEAD/DELETE."""
        body = request.body if request.body or request.method not in ("GET", "HEAD", "DELETE") else None
        return self._exchange(request.method, request.url, body, request.headers, lazy=stream)

    def close(self) -> None:
        for key in list(self._connections):
            self._drop(key)

    def _exchange(self, method: str, url: str, body: bytes | None,
                  headers: dict[str, str], lazy: bool = False) -> HttpResponse:
        seconds = seconds_for(self.timeout)  # a caller's patience may leave it less (base.patient_until)
        deadline, key, head = time.monotonic() + seconds, *_request_head(method, url, body, headers)
        sock = self._connect(key, deadline, seconds)
        reader = Reader(sock, deadline)
        try:  # from the first byte written on, the request may have arrived: sent=True
            sock.settimeout(left(deadline))
            sock.sendall(head + (body or b""))  # one write: a lone head waits on a delayed ACK
            response, keep = read_reply(reader, method, self.max_body, lazy=lazy, endless=self.idle_streams)
            if not isinstance(response.body, bytes) and not (
                    response.status == 200 and sse.is_stream(response.header("Content-Type"))):
                response = response._replace(body=b"".join(response.body))  # not a stream: all now
        except (MalformedMessage, OSError) as exc:
            self._drop(key)
            raise _failure(exc, reader, seconds) from None
        if not isinstance(response.body, bytes):  # a stream: its connection is its own until it ends
            self._connections.pop(key, None)
            reader.idle = self.timeout if self.idle_streams else None
            return response._replace(body=Body(self._arriving(reader, response.body, seconds),
                                               partial(self._ended, key, sock, reader, keep)))
        if not keep or reader.buffer or method == "HEAD" or response.status in (204, 304):  # bytes after: untrusted
            self._drop(key)  # no body by rule (HEAD, 204, 304): one a wrong peer sends may come late, as the next reply
        return response

    def _arriving(self, reader: Reader, chunks: Iterator[bytes], seconds: float) -> Iterator[bytes]:
        """A stream's chunks as they are read; a failure is a TransportError, as ever."""
        try:
            yield from chunks
        except (MalformedMessage, OSError) as exc:
            raise _failure(exc, reader, self.timeout if reader.idle is not None else seconds) from None

    def _ended(self, key: _Key, sock: socket.socket, reader: Reader, keep: bool, completed: bool) -> None:
        """A stream's connection, once the stream is over: kept only if it was read to its end, cleanly (and no
        other connection to that peer was kept meanwhile); a stream given up half-read is hung up."""
        if completed and keep and not reader.buffer and key not in self._connections:
            self._connections[key] = sock
        else:
            sock.close()

    def _connect(self, key: _Key, deadline: float, seconds: float) -> socket.socket:
        kept = self._connections.get(key)
        if kept is not None:
            # Readable while we have sent nothing means the peer closed it (an idle timeout)
            # or sent junk: either way open a new one now, rather than resend after a failure.
            if not select.select([kept], [], [], 0)[0]:
                return kept
            self._drop(key)
        scheme, host, port = key
        address = (self.pinned[host][0], port) if host in self.pinned else self.resolve.get(host, (host, port))
        try:
            sock = _open(*address, deadline)
            if scheme == "https" and (host not in self.resolve or self.resolved_tls):
                if self.tls is None:
                    import ssl  # here, not at the top: start-up time matters, most runs never need it
                    self.tls = ssl.create_default_context()
                sock.settimeout(left(deadline))  # the handshake shares the deadline
                origin = f"https://{host}" + ("" if port == 443 else f":{port}")
                context = self.client_tls.get(origin, self.tls)  # our client certificate, to its origin only
                sock = context.wrap_socket(sock, server_hostname=host.strip("[]"))  # closes sock on failure
        except TimeoutError:
            raise TransportError(f"could not connect to {host}:{port} within {seconds:g}s (timeout)") from None
        except (OSError, UnicodeError) as exc:  # UnicodeError: a name the resolver cannot encode
            raise TransportError(f"could not connect to {host}:{port}: {_reason(exc)}") from None
        self._connections[key] = sock
        return sock

    def _drop(self, key: _Key) -> None:
        connection = self._connections.pop(key, None)
        if connection is not None:
            connection.close()


def _request_head(method: str, url: str, body: bytes | None, headers: dict[str, str]) -> tuple[_Key, bytes]:
    """The connection key and the request's head; nothing has been sent yet (sent=False)."""
    parsed = parse_url(url)  # the one URL check: visible ASCII, no user:password@, a valid port
    if parsed is None:
        raise TransportError(f"not an http(s) URL this transport can send to: {url[:80]!r}")
    host = parsed.origin.split("://", 1)[1]  # host, and the port unless it is the default
    lines = [f"{method} {parsed.target} HTTP/1.1", f"Host: {host}"]
    # Ours to frame: a caller's framing could smuggle a second. All at once (no name "" nor "A:B"); each, to say which.
    names, values = ":".join(headers), "".join(headers.values())
    if not _TOKENS.fullmatch(names) or names.count(":") != len(headers) - 1 or not _FRAMING.isdisjoint(
            names.lower().split(":")) or _CONTROL.search(values):
        for name, value in headers.items():
            if not TOKEN.fullmatch(name) or name.lower() in _FRAMING:
                raise TransportError(f"the request header name {name!r} is not allowed")
            if _CONTROL.search(value):  # a CR, LF or NUL could frame a second request; none is a value's
                said = "a CR, LF or NUL" if any(c in value for c in "\r\n\0") else "a control character"
                raise TransportError(f"the request header {name} has {said} in its value")
    lines += [f"{name}: {value}" for name, value in headers.items()]
    if method == "HEAD" and "connection" not in names.lower().split(":"):  # dropped after it anyway: said, so a server
        lines.append("Connection: close")  # closes at once, not waited on for a body it must not send (HEAD_LINGER)
    if body is not None:
        lines.append(f"Content-Length: {len(body)}")
    try:
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    except UnicodeEncodeError:
        raise TransportError("a request header value is not Latin-1 text") from None
    return _Key(parsed.scheme, parsed.host, parsed.port), head


def _open(host: str, port: int, deadline: float) -> socket.socket:
    """Connect to the first of the host's addresses that answers, within the deadline."""
    error: OSError = OSError("no address")
    # getaddrinfo takes no timeout, so a hung DNS server can overrun the deadline; a `resolve` entry never asks DNS.
    for family, kind, proto, _, address in socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM):
        sock = socket.socket(family, kind, proto)
        try:
            sock.settimeout(left(deadline))
            sock.connect(address)
        except OSError as exc:  # TimeoutError included: the next address gets what is left
            sock.close()
            error = exc
            continue
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no 40 ms stalls
        return sock
    raise error


def _failure(exc: BaseException, reader: Reader, timeout: float) -> TransportError:
    """Why an exchange failed, once the request may have arrived (any reply at all means it did): sent=True."""
    if isinstance(exc, MalformedMessage):
        return TransportError(str(exc), sent=True, status=reader.status)
    alert = str(getattr(exc, "reason", ""))
    # TLS 1.3: a client certificate refused after our Finished. Only that alert, before any
    # reply, says the request was never read: any other may come after the peer acted on it.
    if not reader.received and "ALERT" in alert and ("CERTIFICATE" in alert or alert.endswith("_CA")):
        return TransportError(f"{_reason(exc)} (our request was never read)")
    if not isinstance(exc, TimeoutError):
        reason = f"the connection broke before a full reply: {_reason(exc)}"
    elif reader.idle is not None:
        reason = f"the stream sent nothing for {timeout:g}s"
    elif reader.received:
        reason = f"the reply did not finish within {timeout:g}s"
    else:
        reason = f"no reply within {timeout:g}s (read timeout)"
    return TransportError(reason, sent=True, timed_out=isinstance(exc, TimeoutError), status=reader.status)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused (is the peer running?)"
    if getattr(exc, "verify_message", None):  # ssl.SSLCertVerificationError: the one line that matters
        untrusted = "issuer" in exc.verify_message or "self-signed" in exc.verify_message
        return f"TLS: certificate verify failed: {exc.verify_message}" + (
            " (--ca names the CA to trust)" if untrusted else "")
    reason = getattr(exc, "reason", None)
    if isinstance(reason, str) and exc.__class__.__module__ == "ssl":  # an alert: the peer ended the handshake
        refused = "ALERT" in reason and ("CERTIFICATE" in reason or reason.endswith("_CA"))
        said = reason.lower().replace("_", " ")
        return f"TLS: the peer refused our client certificate ({said})" if refused else f"TLS: {said}"
    if isinstance(exc, socket.gaierror):
        return "unknown host"
    return getattr(exc, "strerror", None) or str(exc) or exc.__class__.__name__
