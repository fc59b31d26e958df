"""What a client did not take at once of a whole answer: left for the server's loop to write.

Why: a worker that waits for a client to read holds its thread while it waits (up to the write
timeout), and a client that never reads, on enough connections, held every worker: another
caller's request waited for one, 29 s. So a worker sends what the socket takes at once and
leaves the rest here, and the loop (server.py) writes it as the client reads: a client that
stops reading costs a socket and its answer's bytes, not a thread. A client is let go once it
has taken none of its answer for the write timeout (`request_timeout`: progress is what the
socket takes, which the kernel reports in steps of some of its buffer, so a reader far slower
than that may be taken for one that stopped), or is still reading after MOST_WRITING_SECONDS.
The answers kept so, all connections together, are bounded (`MOST_UNSENT`): past that, a client
that does not take an answer at once has its connection closed (`NotReading`), not a worker held.
When the server stops, what is unsent is written for a moment more (`finish`). A stream is
written by its worker (a caller's streams are bounded). Over TLS an answer goes in slices
(`TLS_SLICE`): a write that would wait is tried again with the same slice, as OpenSSL asks.
Not here: when the loop writes (server.py), the answer itself (server_answer.py).
"""
from __future__ import annotations

import ssl
import threading
import time

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable

MOST_UNSENT = 64 << 20  # bytes of answers kept for clients still reading them, all connections together
MOST_WRITING_SECONDS = 120  # however steadily a client reads, an answer is written within this, or cut
TLS_SLICE = 64 * 1024  # over TLS, the most of an answer one write sends
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


class NotReading(OSError):
    """No room is left to keep an answer its client has not taken at once: its connection is
    closed, rather than a worker held waiting for a client that may never read."""


def rest_of(sock: Any, data: bytes, unsent: Unsent) -> tuple[bytes | memoryview, int]:
    """A worker's: send a whole answer on a non-blocking socket, as much as the client takes now.
    Returns the rest, left for the loop, and the bytes that keeps alive, counted in `unsent` (all
    of `data`: a view of its tail keeps it whole); NotReading when `unsent` has no room for them."""
    sent = _sent_now(sock, data)
    if sent == len(data):  # nearly always: nothing more is made
        return b"", 0
    if not unsent.take(len(data)):
        raise NotReading(f"no room left to keep this answer for its client ({unsent.most >> 20} MiB of answers "
                         "wait for theirs): closed")
    return memoryview(data)[sent:], len(data)


def start_writing(conn: Any, patience: float) -> None:
    """The loop's, taking back a connection with an answer unsent: it waits to be writable, its
    client given `patience` seconds to take some (`since`: its last progress, as room.py reads it)."""
    conn.state, conn.since, conn.heard = "writing", time.monotonic(), False
    conn.give_up = conn.since + MOST_WRITING_SECONDS
    conn.deadline = min(conn.since + patience, conn.give_up)


def write_more(conn: Any, unsent: Unsent, patience: float) -> bool | None:
    """The loop's, when `conn`'s socket is writable: send what the client takes now of
    `conn.unsent`. Whether all is sent (its bytes given back to `unsent` then); None: the client is gone.
    A client that takes some has `patience` more seconds for the next (its `deadline`), until `give_up`."""
    try:
        sent = _sent_now(conn.sock, conn.unsent)
    except OSError:  # reset
        return None
    if sent:  # progress: a reader, however slow
        conn.unsent, conn.since = conn.unsent[sent:], time.monotonic()
        conn.deadline = min(conn.since + patience, conn.give_up)
    if conn.unsent:
        return False
    unsent.give(conn.counted)
    conn.counted = 0
    return True


def why_stalled(conn: Any, patience: float) -> str:
    """Why the loop lets `conn` go at its deadline, for its answer's line."""
    return (f"client still reading after {MOST_WRITING_SECONDS} s" if conn.deadline >= conn.give_up
            else f"client took none of its answer for {patience:g} s") + ": closed"


def finish(conns: list[Any], seconds: float, log: Callable[[str], None]) -> None:
    """The server stopping: what each connection still has unsent is written, all within `seconds`,
    and each answer's line said (cut short, if the client did not take it all by then)."""
    deadline = time.monotonic() + seconds
    for conn in conns:
        note = ""
        try:
            while conn.unsent:  # a slice at a time, each within what is left of `seconds` (TLS: as OpenSSL asks)
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError
                conn.sock.settimeout(left)
                conn.unsent = conn.unsent[_sent_now(conn.sock, conn.unsent[:TLS_SLICE]):]
        except TimeoutError:
            note = " cut short: the server stopped"
        except OSError:
            note = " client disconnected mid-response"
        log(conn.said + note)


def _sent_now(sock: Any, data: bytes | memoryview) -> int:
    """How much of `data` the socket takes now (a non-blocking one: 0 if it would wait). Over TLS,
    a slice at a time: OpenSSL takes a write whole or not at all, so slices are what progress is
    counted in, and one that would wait is sent again as it was, as OpenSSL asks."""
    if not isinstance(sock, ssl.SSLSocket):
        try:
            return sock.send(data)
        except WOULD_WAIT:
            return 0
    sent, view = 0, memoryview(data)
    while sent < len(view):
        try:
            sent += sock.send(view[sent:sent + TLS_SLICE])
        except WOULD_WAIT:
            break
    return sent
