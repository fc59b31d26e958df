"""Which connection makes room when a server is full: the one that has made the least progress.

A stranger may open more connections than a server holds (`max_connections`) and open each
again as soon as it is closed, paced or all at once, from the very address an honest client
uses (on loopback every client shares 127.0.0.1), so neither a share per address nor "first
come, first kept" keeps honest clients served. What a stranger cannot fake cheaply is
progress, so when a newcomer finds the server full, the connection closed for it is, of
those not being answered (an answer under way is never cut):
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
Not here: the cap itself and closing (server.py), what a connection has heard (server_answer.py).
"""
from __future__ import annotations

import select
import socket
from typing import Any, Callable

from transports.server_answer import Connection

YOUNG_SECONDS = 1.0
SILENT_SECONDS = 0.1  # a client that has said nothing for this long is silent; sooner, it may be on its way
BEING_ANSWERED = ("busy", "closing")  # a worker has it, or our answer is sent and drains


def least_progress(connections: dict[Any, Connection], now: float, read: Callable[[Connection], None]) -> \
        Connection | None:
    """The connection to close for a newcomer (see above); None when every one is being answered.
    A silent one whose first bytes have come meanwhile is `read` first (that is progress), a few at most."""
    for _ in range(8):
        waiting = [conn for conn in connections.values() if conn.state not in BEING_ANSWERED]
        least = min(waiting, key=lambda conn: (now - conn.since < YOUNG_SECONDS, conn.heard or now - conn.since
                                                 < SILENT_SECONDS, conn.since), default=None)
        if least is None or least.heard or not readable_now(least.sock):
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
