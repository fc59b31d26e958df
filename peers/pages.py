"""ListTasks's pages: a page token is a cursor, the place in the listing a page ended.

Spec: A2A 1.0 section 3.1.4. Tasks are listed most recently updated first (by status
timestamp; of tasks updated at the same time, or without a time, the newest made
first), and pages follow each other by cursor, not by offset: an offset counts from the
top, so a task added on top between two pages pushes one already shown down into the
next page, and it is listed twice. A cursor names the last task's place in the order
instead (its timestamp and the number the store made it with), and the next page starts
just below that place. So, while a client pages through:
- a task made meanwhile sorts above the cursor: it is not on the next pages (a new
  listing shows it first), and it moves no other task;
- a task updated meanwhile moves to the top, as the order says: listed already, it is
  not listed again; not yet listed, it is not on the remaining pages either (a new
  listing, or statusTimestampAfter the time the walk began, finds it);
- every other task there at the first page, and still there, is listed exactly once.
`totalSize` counts the tasks the filters match now, on every page.

A token is opaque and its owner's alone: the place is sealed with a key the peer draws
at its first listing (a keyed hash over the caller, the filters and the place, which also hides the
place: the number a task was made with says how busy the store is). A token from another
caller, with other filters, from before a restart, forged or damaged reads as nothing
but an InvalidParams, and no token ever names a task.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os

from peers.a2a.model import ListQuery, Task, TaskPage
from transports.jsonrpc import InvalidParams

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Callable

Place = tuple[str, int]  # (the status timestamp as `instant` spells it, or ""; the number it was made with)
STAMP = 29  # len(instant(...)): "2026-11-30T12:00:00.500000000"
VERSION, TAG = b"\x01", 16
TOKEN_BYTES = len(VERSION) + TAG + STAMP + 8
MAX_PAGE_BYTES = 512 * 1024  # of messages the tasks of one page keep: the answer stays within a client's 1 MiB
REFUSED = ("pageToken is not a token this agent gave for this listing (another caller's, other "
           "filters, from before a restart, or altered); list again without it")


class Pages:
    """Cuts a listing into pages, and seals and opens the cursors between them."""

    def __init__(self) -> None:
        self.key = os.urandom(32)  # the peer's own: tokens die with the process that gave them

    def page(self, listing: list[tuple[Place, Task]], query: ListQuery, owner: str,
             kept: Callable[[str], int | None] = lambda task_id: 0) -> TaskPage:
        """The page of `listing` (this owner's matching tasks, in the order above) that
        `query.page_token` points to: the tasks below its place, `query.page_size` of them,
        or fewer, as the spec's "maximum" allows, where the bytes of messages they keep
        (`kept(task id)`) would pass MAX_PAGE_BYTES: a page is never more than a client reads."""
        whose = json.dumps([owner, query.context_id, query.state and query.state.value,
                            query.updated_after]).encode()
        if query.page_token:
            place = self._open(query.page_token, whose)
            rest = [(at, task) for at, task in listing if at < place]  # below it: descending order
        else:
            rest = listing
        shown, weight = rest[:query.page_size], 0
        for count, (_, task) in enumerate(shown):
            weight += kept(task.id) or 0
            if weight > MAX_PAGE_BYTES and count:  # one task always: a page is never empty
                shown = shown[:count]
                break
        more = len(rest) > len(shown)
        return TaskPage([task for _, task in shown], self._seal(shown[-1][0], whose) if more else "",
                        len(listing))

    def _seal(self, place: Place, whose: bytes) -> str:
        stamp, number = place
        plain = stamp.encode("ascii").ljust(STAMP) + number.to_bytes(8, "big")
        tag = self._tag(whose, plain)
        import base64  # a token is made or read only when a list is paged: not loaded before
        return base64.urlsafe_b64encode(VERSION + tag + _xor(plain, self._pad(tag))).decode("ascii")

    def _open(self, token: str, whose: bytes) -> Place:
        import base64
        import binascii
        try:
            raw = base64.b64decode(token.encode("ascii"), altchars=b"-_", validate=True)
        except (binascii.Error, ValueError, UnicodeError):
            raise InvalidParams(REFUSED) from None
        if len(raw) != TOKEN_BYTES or raw[:1] != VERSION \
                or base64.urlsafe_b64encode(raw).decode("ascii") != token:  # one spelling per token
            raise InvalidParams(REFUSED)
        tag = raw[1:1 + TAG]
        plain = _xor(raw[1 + TAG:], self._pad(tag))
        if not hmac.compare_digest(tag, self._tag(whose, plain)):  # another's, or altered
            raise InvalidParams(REFUSED)
        return plain[:STAMP].decode("ascii").rstrip(), int.from_bytes(plain[STAMP:], "big")

    def _tag(self, whose: bytes, plain: bytes) -> bytes:
        """Who may use the place, and the place: one changed byte of either, another tag."""
        return hmac.new(self.key, b"tag" + len(whose).to_bytes(8, "big") + whose + plain,
                        hashlib.sha256).digest()[:TAG]

    def _pad(self, tag: bytes) -> bytes:
        """What hides the place: a keyed hash of its tag (the tag differs whenever the place does)."""
        return hmac.new(self.key, b"pad" + tag, hashlib.sha512).digest()[:STAMP + 8]


def _xor(data: bytes, pad: bytes) -> bytes:
    return bytes(a ^ b for a, b in zip(data, pad))
