"""How many wrong secrets a server hears before it stops listening for a while, counted per source address.

RFC 6749 2.3.1: a server authenticating clients by password MUST protect the endpoint against brute
force (OWASP asks it of every login). Counted: each wrong secret for the one client id (oauth2.py's token
endpoint) or Basic user (http_basic.py) the peer knows, and each wrong API key (api_key.py: a key names
no one, so every key offered is a guess at it). A guess under a client id the peer does not know tests
no secret: not counted, and nothing is kept of it, so no one can lock anything by inventing ids. A Basic
user name is half of what is compared, and a status must not say which half was wrong (a 429 coming only
under the right name would): a guess under another name counts at its address as a wrong password does
(`named` False), never toward the count from all addresses (below), so inventing names holds back no one
else. Past MOST wrong secrets from one address within WINDOW seconds of its first, that address is
answered 429 (RFC 6585 4, with Retry-After) until its window ends, before its secret is looked at, so a
guess made then tests nothing; the right secret starts its count again. Being held, counting and
comparing are one step under one lock: of guesses sent at once, no more than MOST are compared, and
right secrets sent at once never hold each other back.

Why per address. An id is no secret (RFC 6749 2.2), nor a user name one to lean on: counted per name
alone, anyone who knew it locked the rightful client out by guessing wrong. Per address, a guesser holds back its own
address and those who share it (a NAT; behind a proxy every caller is the proxy's address). An IPv6
host commonly holds a whole /64, so that is one address here. Guessing from many addresses is still
bounded for a name: past MOST_IN_ALL wrong secrets within a window from all of them, every address is
held for it, the rightful client too. That is the price of bounding distributed guessing at all:
someone holding MOST_IN_ALL / MOST addresses can still lock the name out. An API key names no one, so
it has no count in all (one would let any stranger lock out every holder); guessing it from many
addresses is bounded by how many addresses a guesser holds. At most KEPT addresses are kept, the one
heard from longest ago forgotten first: memory stays bounded whoever calls, and a guesser must cycle
through more than KEPT addresses to have its count forgotten. Not here: the comparisons (constant
time, in each scheme).
"""
from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Callable

MOST = 5  # wrong secrets from one address in a window: a client misconfigured learns it at once, a guesser makes 5 a minute
MOST_IN_ALL = 50  # wrong secrets for a name from all addresses in a window: ten addresses' worth
WINDOW = 60.0  # seconds
KEPT = 1024  # addresses kept: a few hundred bytes each, a few hundred KiB in all


class Window:
    """Wrong secrets within a window begun at `since`."""

    __slots__ = ("wrong", "since")  # one per address kept: no __dict__ beside each

    def __init__(self) -> None:
        self.wrong, self.since = 0, -math.inf

    def held(self, most: int, window: float, now: float) -> int:
        """The seconds to wait before a guess is heard (0: now), a new window begun if the last one ended."""
        if not 0 <= now - self.since < window:  # a new window (or a clock gone back)
            self.wrong, self.since = 0, now
        return max(1, math.ceil(self.since + window - now)) if self.wrong >= most else 0


class Guesses:
    def __init__(self, most: int = MOST, window: float = WINDOW, clock: Callable[[], float] = time.monotonic, *,
                 in_all: int | None = MOST_IN_ALL, kept: int = KEPT) -> None:
        self.most, self.window, self.clock, self.most_in_all, self.most_kept = most, window, clock, in_all, kept
        self.kept: OrderedDict[str, Window] = OrderedDict()  # address -> its window, the least recent first
        self.in_all = Window()  # from every address: counted only with a bound (`in_all`)
        self.lock = threading.Lock()  # a server's workers may ask at once

    def heard(self, address: str, right: Callable[[], bool], named: bool = True) -> tuple[int, bool]:
        """A secret offered from `address` (a request's client_address; "" in process): (seconds to wait,
        False) while it is held, `right` not called; else (0, right()), a wrong one counted; toward the
        count from all addresses only if `named` (under the name the peer knows)."""
        source = _source(address)
        with self.lock:
            now = self.clock()
            own = self.kept.get(source) or Window()
            held = max(own.held(self.most, self.window, now), 0 if self.most_in_all is None else
                       self.in_all.held(self.most_in_all, self.window, now))
            if held:
                return held, False
            if right():
                self.kept.pop(source, None)  # the count starts again
                return 0, True
            own.wrong += 1
            self.in_all.wrong += self.most_in_all is not None and named
            self.kept[source] = own
            self.kept.move_to_end(source)
            if len(self.kept) > self.most_kept:
                self.kept.popitem(last=False)
            return 0, False


def _source(address: str) -> str:
    """The address guesses are counted under: an IPv6 one's /64 (one host's, commonly), an IPv4 one as it is,
    also when written inside IPv6 (::ffff:a.b.c.d)."""
    if ":" not in address:
        return address
    import ipaddress
    try:
        parsed = ipaddress.IPv6Address(address.partition("%")[0])
    except ValueError:
        return address
    if parsed.ipv4_mapped is not None:
        return str(parsed.ipv4_mapped)
    return str(ipaddress.IPv6Network((parsed, 64), strict=False).network_address) + "/64"
