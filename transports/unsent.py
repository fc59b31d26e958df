"""What a client did not take at once of a whole answer: left for the server's loop to write.

Why: a worker that waits for a client to read holds its thread while it waits (up to the write
timeout), and a client that never reads, on enough connections, held every worker: another
caller's request waited for one, 29 s. So a worker sends what the socket takes at once and
leaves the rest here, and the loop (server.py) writes it as the client reads, within the write
timeout: a client that stops reading costs a socket and its answer's bytes, not a thread.
The bytes left so, all connections together, are bounded (`MOST_UNSENT`): past that, a worker
writes the rest itself, as before. A stream is written by its worker (a caller's streams are
bounded). Over TLS, a write that would wait is tried again with the same bytes, as OpenSSL asks.
Not here: when the loop writes (server.py), the answer itself (server_answer.py).
"""
from __future__ import annotations

import ssl
import threading
from typing import Any

MOST_UNSENT = 64 << 20  # bytes left for the loop at once, all connections together
WOULD_WAIT = (BlockingIOError, InterruptedError, ssl.SSLWantWriteError, ssl.SSLWantReadError)


class Unsent:
    """How many bytes the connections have left for the loop: workers add, the loop takes away."""

    def __init__(self, most: int = MOST_UNSENT) -> None:
        self.most, self.held, self.lock = most, 0, threading.Lock()

    def take(self, size: int) -> bool:
        """Whether `size` more bytes may be left for the loop (then they count until `give`n back)."""
        with self.lock:
            if self.held + size > self.most:
                return False
            self.held += size
            return True

    def give(self, size: int) -> None:
        with self.lock:
            self.held -= size


def rest_of(sock: Any, data: bytes, unsent: Unsent | None, write_timeout: float) -> bytes | memoryview:
    """A worker's: send a whole answer on a non-blocking socket, as much as the client takes now;
    the rest is returned, left for the loop, if `unsent` has room for it; else it is sent here,
    within `write_timeout` (b"" is returned then, as when the client took it all)."""
    try:
        sent = sock.send(data)  # nearly always all of it
    except WOULD_WAIT:
        sent = 0
    if sent == len(data):
        return b""
    rest = memoryview(data)[sent:]
    if unsent is not None and unsent.take(len(rest)):
        return rest
    sock.settimeout(write_timeout)
    sock.sendall(rest)
    return b""


def write_more(conn: Any, unsent: Unsent) -> bool | None:
    """The loop's, when `conn`'s socket is writable: send what the client takes now of
    `conn.unsent`, giving those bytes back to `unsent`. Whether all is sent; None: the client is gone."""
    left = len(conn.unsent)
    try:
        conn.unsent = conn.unsent[_sent_now(conn.sock, conn.unsent):]
    except OSError:  # reset
        return None
    finally:
        unsent.give(left - len(conn.unsent))
    return not conn.unsent


def _sent_now(sock: Any, data: bytes | memoryview) -> int:
    """How much of `data` a non-blocking socket takes now (0: none, it would wait)."""
    try:
        return sock.send(data)
    except WOULD_WAIT:
        return 0
