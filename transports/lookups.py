"""A host name's addresses, waited for until a deadline: the resolver (getaddrinfo) takes none, so one that never
answers would hold whoever asked for as long as it likes (a proxy's request, a check's budget).

The lookup runs on a thread of its own; past the deadline the asker goes on without it (None), and the thread
ends when the resolver answers. At most MOST_WAITING lookups wait on the resolver at once, in the whole process:
past them a name is not looked up (Busy, so that the asker can say which it was), so names no resolver answers
hold a bounded number of threads.
Not here: what an address means to the asker (peers/support/check/reach.py, peers/support/proxy/upstream.py).
"""
from __future__ import annotations

import threading
import time

MOST_WAITING = 8  # lookups the resolver has not answered, waited on at once

_waiting = threading.BoundedSemaphore(MOST_WAITING)


class Busy(Exception):
    """MOST_WAITING lookups were waiting on the resolver already: the name was not looked up at all."""


def addresses(host: str, until: float, port: int | None = None) -> list[str] | None:
    """The addresses the resolver gives `host` (an IPv6 address bracketed or not), in its order, each once;
    [] if it refused the name; None if it had not answered by `until` (time.monotonic's). Busy if MOST_WAITING
    lookups are waiting already."""
    import socket  # here: most runs look up no name this way
    if until <= time.monotonic():  # no time to wait for an answer: a lookup started would only hold a place
        return None
    if not _waiting.acquire(blocking=False):
        raise Busy(f"not looked up, as {MOST_WAITING} lookups were already waiting on the resolver")
    found: list[str] = []
    done = threading.Event()

    def look() -> None:
        try:
            found.extend(info[4][0] for info in socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM))
        except (OSError, UnicodeError):  # not resolved: the asker's own words say so
            pass
        finally:
            done.set()
            _waiting.release()
    threading.Thread(target=look, name="lookup", daemon=True).start()
    return list(dict.fromkeys(found)) if done.wait(max(0.0, until - time.monotonic())) else None
