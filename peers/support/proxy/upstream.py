"""The proxy's way to the agent: one network transport per worker thread of its server.

A kept-alive connection to the agent serves one exchange at a time, and the proxy's server
(transports/server.py) answers several clients at once, each on a worker thread: so each
worker has its transport, made when it first forwards. Workers come and go (an idle one
leaves), so a transport whose thread has gone is closed when another is made: a long session
holds connections for the workers alive, not for all it had. Not here: what is forwarded (forward.py).
"""
from __future__ import annotations

import threading
import time

from transports import lookups
from transports.base import ClientRequest, HttpResponse, parse_url

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable

LOOKUP_SECONDS = 2.0  # the longest one request waits on the resolver for the receivers it names (leads_back)


class PerThread:
    """A transport as the printer takes one (get, post, stream, head, exchange), each call made on
    the calling thread's own network transport (`make()`, once a thread), as above."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make, self.label = make, "HTTP through the proxy"
        self.made, self._lock = {}, threading.Lock()  # made: each worker thread's transport

    def _mine(self) -> Any:
        me = threading.current_thread()
        with self._lock:
            transport = self.made.get(me)
            if transport is None:
                for gone in [thread for thread in self.made if not thread.is_alive()]:
                    self.made.pop(gone).close()
                transport = self.made[me] = self.make()
        return transport

    def get(self, url: str, headers: dict[str, str], *, binding: str | None = None) -> HttpResponse:
        return self._mine().get(url, headers, binding=binding)

    def post(self, url: str, body: bytes, headers: dict[str, str], *, binding: str | None = None) -> HttpResponse:
        return self._mine().post(url, body, headers, binding=binding)

    def stream(self, url: str, body: bytes, headers: dict[str, str], *, binding: str | None = None) -> HttpResponse:
        return self._mine().stream(url, body, headers, binding=binding)

    def head(self, url: str, headers: dict[str, str], *, binding: str | None = None) -> HttpResponse:
        return self._mine().head(url, headers, binding=binding)

    def exchange(self, request: ClientRequest, *, stream: bool = False) -> HttpResponse:
        return self._mine().exchange(request, stream=stream)

    def close(self) -> None:
        with self._lock:
            for transport in self.made.values():
                transport.close()


def leads_back(to: str, port: int, until: float | None = None) -> bool | None:
    """Whether `to` names where the proxy listens (127.0.0.1, its port) by any spelling, so what is
    sent there comes back to it (--to, a push receiver): an address it resolves to is 127.0.0.1
    or none at all (0, 2130706433, [::ffff:127.0.0.1], localhost, a name /etc/hosts gives
    127.0.0.1). Only asked when the ports are the same: no other lookup. An address, in any spelling,
    is read, not looked up; a name is waited for until `until` (time.monotonic's; else LOOKUP_SECONDS on),
    as a request waits on it: None if the resolver, which takes no deadline, had not answered by then;
    lookups.Busy if the name was not looked up, lookups no resolver answered holding every place."""
    import ipaddress
    import socket
    url = parse_url(to)
    if url is None or url.port != port:
        return False
    host = url.host.strip("[]")
    try:
        found = {info[4][0] for info in socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP,
                                                           flags=socket.AI_NUMERICHOST)}
    except socket.gaierror:  # a name: looked up, for as long as the request may wait on it
        looked_up = lookups.addresses(host, time.monotonic() + LOOKUP_SECONDS if until is None else until, port)
        if looked_up is None:
            return None  # not known: the caller says so
        found = set(looked_up)
    except (OSError, UnicodeError):  # not resolved: the first request forwarded says so
        return False
    addresses = [ipaddress.ip_address(address.split("%")[0]) for address in found]
    listening = ipaddress.ip_address("127.0.0.1")  # where the proxy is: [::1] or 127.0.0.2 is someone else
    return any((getattr(ip, "ipv4_mapped", None) or ip) == listening or ip.is_unspecified for ip in addresses)
