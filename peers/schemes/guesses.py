"""How many wrong client secrets a token endpoint hears before it stops listening for a while.

RFC 6749 2.3.1: a server authenticating clients by password MUST protect the endpoint
against brute force. Each client id offered has its failures counted in a window of
WINDOW seconds: past PER_CLIENT, that id is answered 429 (RFC 6585 4, with Retry-After)
until its window ends, before its secret is looked at, so a guess made then tests
nothing. An attacker inventing a new id for every guess is held by the count over all
ids (OVERALL), which also bounds the memory: a failure is remembered only when it is
counted, and no more than OVERALL are counted in a window, so the ids whose window is
still open began in this window or the one before: the table holds at most twice OVERALL
(those whose window ended are dropped first), each a 32-byte digest however long the
id. The price, as with any lockout: a caller guessing wrong secrets keeps the rightful
client out until the window ends. Not here: the endpoint (oauth2.py), the secrets'
comparison (constant time, there).
"""
from __future__ import annotations

import hashlib
import math
import threading
import time

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Callable

PER_CLIENT = 5  # wrong secrets for one client id in a window: a client misconfigured learns it at once
OVERALL = 50  # wrong secrets for any ids in a window: at most 50 guesses a minute, however spread
WINDOW = 60.0  # seconds


class Guesses:
    def __init__(self, per_client: int = PER_CLIENT, overall: int = OVERALL, window: float = WINDOW,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.per_client, self.overall, self.window, self.clock = per_client, overall, window, clock
        self.failures: dict[bytes, list[float]] = {}  # digest of a client id -> [failures, window start]
        self.all_ids = [0, -math.inf]  # the same, over all ids
        self.lock = threading.Lock()  # a server's workers may ask at once

    def wait(self, client_id: bytes) -> int:
        """The seconds before a secret offered for `client_id` is looked at again; 0: now."""
        with self.lock:
            now = self.clock()
            held = max(self._left(self.all_ids, self.overall, now),
                       self._left(self.failures.get(_digest(client_id)), self.per_client, now))
        return math.ceil(held)

    def failed(self, client_id: bytes) -> None:
        """A wrong id or secret, counted for that id and for all."""
        with self.lock:
            now = self.clock()
            self._count(self.all_ids, now)
            digest = _digest(client_id)
            if digest not in self.failures and len(self.failures) >= 2 * self.overall:
                for old in [old for old, row in self.failures.items() if now >= row[1] + self.window]:
                    del self.failures[old]
                if len(self.failures) >= 2 * self.overall:  # a clock gone back: the oldest makes room
                    del self.failures[next(iter(self.failures))]
            self._count(self.failures.setdefault(digest, [0, now]), now)

    def succeeded(self, client_id: bytes) -> None:
        """The right secret: that client's count starts again (the count over all stays)."""
        with self.lock:
            self.failures.pop(_digest(client_id), None)

    def _left(self, row: list[float] | None, most: int, now: float) -> float:
        if row is None or row[0] < most:
            return 0.0
        left = row[1] + self.window - now
        return left if 0 < left <= self.window else 0.0  # a clock gone back holds no one longer than a window

    def _count(self, row: list[float], now: float) -> None:
        if not 0 <= now - row[1] < self.window:  # a new window (or a clock gone back)
            row[0], row[1] = 0, now
        row[0] += 1


def _digest(client_id: bytes) -> bytes:
    return hashlib.sha256(client_id).digest()
