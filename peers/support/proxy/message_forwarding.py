"""What the proxy changes in a message's header fields as it forwards it (RFC 9110 7.6, Message Forwarding).

Dropped: the hop-by-hop fields and those each hop writes for itself (7.6.1: `end_to_end`). Asked as identity:
Accept-Encoding (`uncoded`). Added: the proxy itself, to the Via of each message it forwards either way
(7.6.3: `with_via`), so that a request that comes round to a proxy again is seen (`came_round`): proxy A
forwarding to B and B back to A passed one request round until a worker, a socket or --timeout ran out.
Each proxy names itself by a pseudonym of its own (7.6.3 allows one in place of a host, and a host would
not do: two proxies on one machine, or in one process, share it), unguessable, so no chain is taken for a
loop. A Via is as long as a client makes it within the head our server reads (transports/http11.py's
MAX_HEAD: 431 past it), so it is looked through in bounded time. Not here: the forwarding (forward.py).
"""
from __future__ import annotations

import os

# RFC 9110 7.6.1's hop-by-hop fields, Proxy-* (ours, not the agent's), and what each hop writes itself.
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding",
                        "upgrade", "proxy-authorization", "proxy-authenticate", "host", "content-length", "expect"})
RECEIVED_PROTOCOL = "1.1"  # HTTP/1.1, the version our server answers in (an HTTP/1.0 client is said as 1.1)


def pseudonym() -> str:
    """A proxy's name in a Via: its own, however many proxies run on the machine."""
    return f"a2a-proxy-{os.urandom(8).hex()}"


def end_to_end(headers: dict[str, str]) -> dict[str, str]:
    """The headers a proxy forwards: all but the hop-by-hop ones, and any Connection names."""
    named = {token.strip().lower() for name, value in headers.items() if name.lower() == "connection"
             for token in value.split(",")}
    dropped = HOP_BY_HOP | named if named else HOP_BY_HOP
    return {name: value for name, value in headers.items() if name.lower() not in dropped}


def uncoded(headers: dict[str, str]) -> dict[str, str]:
    """A request's headers with any Accept-Encoding asking for identity: an agent that compresses
    when a client accepts it (gzip from 500 bytes, as Starlette's middleware does) would have the
    proxy print and judge compressed bytes. Identity is acceptable to every client [RFC 9110 12.5.3]."""
    return {name: "identity" if name.lower() == "accept-encoding" else value for name, value in headers.items()}


def _via(headers: dict[str, str]) -> tuple[str, str]:
    """The Via field's name as these headers spell it, and its value ("" for none); repeated fields arrive
    joined by ", " (transports/http11_server.py), as one list."""
    return next(((name, value) for name, value in headers.items() if name.lower() == "via"), ("Via", ""))


def came_round(headers: dict[str, str], name: str) -> bool:
    """Whether the Via names the proxy `name` already: each entry is received-protocol, then received-by
    (a comma inside an entry's comment only splits off words that name no one)."""
    return any(entry.split()[1:2] == [name] for entry in _via(headers)[1].split(","))


def with_via(headers: dict[str, str], name: str) -> dict[str, str]:
    """The headers with the proxy `name` added at the end of their Via [RFC 9110 7.6.3]."""
    field, value = _via(headers)
    return {**headers, field: f"{value}, {RECEIVED_PROTOCOL} {name}" if value else f"{RECEIVED_PROTOCOL} {name}"}
