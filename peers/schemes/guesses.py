"""How many wrong secrets a token endpoint hears for its client before it stops listening for a while.

RFC 6749 2.3.1: a server authenticating clients by password MUST protect the endpoint against brute
force. The endpoint knows one client (oauth2.py): only a guess at its secret can ever succeed, so only
those are counted. Past MOST wrong secrets within WINDOW seconds of the first, the client's id is
answered 429 (RFC 6585 4, with Retry-After) until the window ends, before its secret is looked at, so a
guess made then tests nothing; the right secret starts the count again. Each secret is counted as it
arrives, before it is compared, so guesses sent at once cannot slip in before the first is counted. A
guess under an id the endpoint does not know tests no secret, and is not counted: no one can lock the
endpoint by inventing ids, and nothing is kept per id. The price, as of any lockout: someone guessing wrong secrets under the
client's id (an id is no secret: RFC 6749 2.2) keeps the rightful client out until the window ends.
Not here: the endpoint (oauth2.py), the secrets' comparison (constant time, there).
"""
from __future__ import annotations

import math
import threading
import time

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Callable

MOST = 5  # wrong secrets in a window: a client misconfigured learns it at once, a guesser makes 5 a minute
WINDOW = 60.0  # seconds


class Guesses:
    def __init__(self, most: int = MOST, window: float = WINDOW, clock: Callable[[], float] = time.monotonic) -> None:
        self.most, self.window, self.clock = most, window, clock
        self.wrong, self.since = 0, -math.inf  # wrong secrets in the window begun at `since`
        self.lock = threading.Lock()  # a server's workers may ask at once

    def attempt(self) -> int:
        """One secret offered for the client, counted before it is looked at, as one step (of guesses sent
        at once, no more than MOST are looked at): the seconds to wait instead; 0, look at it now."""
        with self.lock:
            now = self.clock()
            if not 0 <= now - self.since < self.window:  # a new window (or a clock gone back)
                self.wrong, self.since = 0, now
            if self.wrong >= self.most:
                return max(1, math.ceil(self.since + self.window - now))
            self.wrong += 1  # wrong until it is known right (`succeeded`)
            return 0

    def succeeded(self) -> None:
        """The right secret: the count starts again."""
        with self.lock:
            self.wrong, self.since = 0, -math.inf
