"""The network transport: the same two methods as the in-process shim, over real HTTP.

Essay: "a real network transport ... one step away". Built on http.client: one kept-alive
connection per host, explicit connect and read timeouts, bounded response bodies. A
`resolve` map sends a hostname to another address the way `curl --resolve` does, so the
registry's https://billing.acme.example URLs reach a peer served on 127.0.0.1 while the
frames, the Host header and the cards stay unchanged. A mapped host is spoken to in plain
HTTP: it is a loopback peer this process started. Redirects are never followed, so a
peer cannot bounce a request (and its credentials) to another host.

Errors are TransportError with `sent` telling whether the request may have reached the
peer: before the request is written, a retry is safe; after, it may already have acted.
"""
from __future__ import annotations

import http.client
import select
import socket
from urllib.parse import urlsplit

from transports.base import HttpResponse
from transports.errors import TransportError
from transports.jsonrpc import MAX_FRAME_BYTES

_Key = tuple[str, str, int]  # (scheme, host, port)


class HttpTransport:
    def __init__(self, *, resolve: dict[str, tuple[str, int]] | None = None,
                 timeout: float = 10.0, max_body: int = MAX_FRAME_BYTES) -> None:
        connect_timeout = read_timeout = timeout
        self.resolve = {host.lower(): addr for host, addr in (resolve or {}).items()}
        self.connect_timeout, self.read_timeout, self.max_body = connect_timeout, read_timeout, max_body
        self.label = ("HTTP JSON-RPC over real sockets"
                      + (" (hostnames mapped to 127.0.0.1, like curl --resolve)" if resolve else ""))
        self._connections: dict[_Key, http.client.HTTPConnection] = {}

    def get(self, url: str, headers: dict[str, str]) -> HttpResponse:
        return self._exchange("GET", url, None, headers)

    def post(self, url: str, body: bytes, headers: dict[str, str]) -> HttpResponse:
        return self._exchange("POST", url, body, headers)

    def close(self) -> None:
        for connection in self._connections.values():
            connection.close()
        self._connections.clear()

    def _exchange(self, method: str, url: str, body: bytes | None,
                  headers: dict[str, str]) -> HttpResponse:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise TransportError(f"not an http(s) URL: {url!r}")
        try:
            key = (parts.scheme, parts.hostname.lower(),
                   parts.port or (443 if parts.scheme == "https" else 80))
        except ValueError:
            raise TransportError(f"bad port in {url!r}") from None
        target = parts.path or "/"
        if parts.query:
            target += "?" + parts.query
        headers = {"Host": parts.netloc, **headers}
        connection = self._connect(key)
        try:
            connection.request(method, target, body=body, headers=headers)
        except OSError as exc:
            self._drop(key)
            raise TransportError(f"sending failed: {_reason(exc)}", sent=True) from None
        try:
            response = connection.getresponse()
            length = response.getheader("Content-Length")
            if length is not None and length.isdigit() and int(length) > self.max_body:
                raise TransportError(f"the reply announces {length} bytes, over the "
                                     f"{self.max_body}-byte limit", sent=True)
            data = response.read(self.max_body + 1)
            if len(data) > self.max_body:
                raise TransportError(f"the reply is over the {self.max_body}-byte limit", sent=True)
        except TransportError:
            self._drop(key)
            raise
        except TimeoutError:
            self._drop(key)
            raise TransportError(f"no reply within {self.read_timeout:g}s (read timeout)",
                                 sent=True) from None
        except (OSError, http.client.HTTPException) as exc:
            self._drop(key)
            raise TransportError(f"the connection broke before a full reply: {_reason(exc)}",
                                 sent=True) from None
        if response.will_close:
            self._drop(key)
        return HttpResponse(response.status, dict(response.getheaders()), data)

    def _connect(self, key: _Key) -> http.client.HTTPConnection:
        kept = self._connections.get(key)
        if kept is not None:
            # Reuse a kept-alive connection only if the server has not closed it meanwhile
            # (an idle timeout): readable with nothing sent means EOF is waiting. Checking
            # first, instead of retrying after a failure, means a POST is never sent twice.
            if not select.select([kept.sock], [], [], 0)[0]:
                return kept
            self._drop(key)
        scheme, host, port = key
        address = self.resolve.get(host)
        if address is not None:
            connection = http.client.HTTPConnection(*address, timeout=self.connect_timeout)
        elif scheme == "https":
            connection = http.client.HTTPSConnection(host, port, timeout=self.connect_timeout)
        else:
            connection = http.client.HTTPConnection(host, port, timeout=self.connect_timeout)
        try:
            connection.connect()
        except TimeoutError:
            raise TransportError(f"could not connect to {host}:{port} within "
                                 f"{self.connect_timeout:g}s (connect timeout)") from None
        except OSError as exc:
            raise TransportError(f"could not connect to {host}:{port}: {_reason(exc)}") from None
        connection.sock.settimeout(self.read_timeout)  # from now on, waits are reads
        connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._connections[key] = connection
        return connection

    def _drop(self, key: _Key) -> None:
        connection = self._connections.pop(key, None)
        if connection is not None:
            connection.close()


def _reason(exc: BaseException) -> str:
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused (is the peer running?)"
    if isinstance(exc, socket.gaierror):
        return "unknown host"
    return getattr(exc, "strerror", None) or exc.__class__.__name__
