"""Which connection makes room when a server is full: the one that has made the least progress.

A stranger may open more connections than a server holds (`max_connections`) and open each
again as soon as it is closed, paced or all at once, from the very address an honest client
uses (on loopback every client shares 127.0.0.1), so neither a share per address nor "first
come, first kept" keeps honest clients served. What a stranger cannot fake cheaply is
progress, so when a newcomer finds the server full, the connection closed for it is, of
those not being answered (an answer a worker is making is never cut; one the loop is writing
counts its client's last read as its progress, so one whose client has taken none of it for
a while goes as a silent one does):
1. one open (or idle since its last answer) for over YOUNG_SECONDS before a younger one:
   a newcomer gets its second to speak, however fast others arrive behind it;
2. then a silent one (a TLS handshake that has sent nothing, an idle keep-alive, for over
   SILENT_SECONDS: a client's first bytes follow its connection within milliseconds)
   before one whose request (or handshake) has begun;
3. then the one longest without an answer (a request head still incomplete after the
   longest time).
So a stranger's connections close one another first: an honest request that arrives whole
is answered, whatever else is open, unless the stranger opens `max_connections` connections
in less time than it takes to arrive (then more slots, or a proxy in front, are the answer).
`make_room` and `turn_away` are what the server's loop (server.py) does, with itself, when a
newcomer finds it full. Not here: the cap itself, the loop and closing (server.py), what a
connection has heard (server_answer.py).
"""
from __future__ import annotations

import select
import selectors
import socket
import time

from transports.jsonrpc import InvalidRequest
from transports.server_answer import Connection, escape, refusal

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable

YOUNG_SECONDS = 1.0
SILENT_SECONDS = 0.1  # a client that has said nothing for this long is silent; sooner, it may be on its way
MOST_LINGERING = 1024  # connections being drained at once; beyond, closed at once
BEING_ANSWERED = ("busy", "closing")  # a worker has it, or our answer is sent and drains


def least_progress(connections: dict[Any, Connection], now: float, read: Callable[[Connection], None]) -> \
        Connection | None:
    """The connection to close for a newcomer (see above); None when every one is being answered.
    A silent one whose first bytes have come meanwhile is `read` first (that is progress), a few at most."""
    for _ in range(8):
        waiting = [conn for conn in connections.values() if conn.state not in BEING_ANSWERED]
        least = min(waiting, key=lambda conn: (now - conn.since < YOUNG_SECONDS, conn.heard or now - conn.since
                                                 < SILENT_SECONDS, conn.since), default=None)
        if least is None or least.heard or least.state == "writing" or not readable_now(least.sock):
            return least
        read(least)  # it may end (the client left): then one more is closed than need be, no harm
    return least


def reads_first(events: list) -> list:
    """A loop's ready sockets, its listening one ("accept") last: progress that has arrived is
    seen before a newcomer needs room."""
    return sorted(events, key=lambda event: event[0].data == "accept")


def readable_now(sock: socket.socket) -> bool:
    """Whether bytes (or the end) wait on `sock` already: a client's first ones often do, and
    read at once they count as progress before the next newcomer needs room."""
    waiting = select.poll()  # poll, not select: a server's descriptors may pass 1024
    waiting.register(sock, select.POLLIN)
    return bool(waiting.poll(0))


def make_room(server: Any) -> bool:
    """Close the connection of `server` that has made the least progress (above), saying so
    unless it was idle; False when every one is being answered."""
    least = least_progress(server._open, time.monotonic(), server._readable)
    if least is None:
        return False
    if least.state == "writing":  # its answer's line, said now: the client had taken none of it for a while
        server.log(f"{least.said} cut short to make room: {server.max_connections} open")
    elif least.state != "idle":  # a request begun, a TLS handshake: news; an idle one, none
        server.log(f'{least.ip} "{escape(least.first_line())}" closed to make room: {server.max_connections} open')
    server._close(least)
    return True


def turn_away(server: Any, sock: socket.socket, ip: str) -> None:
    """A newcomer to a full `server` with every connection being answered: a 503 (over TLS, a close)."""
    server.log(f"{ip} {'closed before TLS,' if server.tls else '503'} turned away: {server.max_connections} "
               "connections open")
    try:  # a fresh socket takes one small send without blocking; over TLS, see tls.py: no send, a close
        sock.setblocking(False)
        if server.tls is None:
            sock.send(refusal(503, InvalidRequest("too many connections; retry in a second"), **{"Retry-After": "1"}))
    except OSError:
        return sock.close()
    if server._closing >= MOST_LINGERING:  # a flood: no draining, a reset will do
        return sock.close()
    conn = server._open[sock] = Connection(sock, ip, time.monotonic(), 0.0)  # drained, as any we hang up on
    server._selector.register(sock, selectors.EVENT_READ, conn)
    server._linger(conn)
