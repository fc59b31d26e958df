"""What can go wrong when we call a peer: one family of exceptions, `PeerError`.

These are the client side's errors, kept apart from the server side's (`jsonrpc.JsonRpcError`,
which a server raises on purpose to answer with an error object), as h11 keeps local and
remote errors apart. The class says who is at fault:

- `TransportError`: no exchange happened, or it broke off (nothing listens, a timeout,
  a hang-up, a reply too large or not HTTP at all).
- `HttpRefusal`: the peer answered at the HTTP level instead of with JSON-RPC (401, 404 ...).
- `RemoteError`: the peer answered with a JSON-RPC error object: it understood, and said no.
- `ProtocolViolation`: the peer answered, but with something the protocol does not allow
  (not JSON-RPC, the wrong id, a malformed card or task of any shape).

Each can say whether a retry is safe (seed 004: "a failure has to say whether retrying
is safe and which effects may already have landed"). The support agent catches
`PeerError` once per stage and turns it into an outcome; nothing a peer sends can get
past that as a traceback. Essay: Delegation over JSON-RPC. No A2A vocabulary here.
"""
from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

MAY_HAVE_ACTED = ("the request reached the peer and may have been acted on: retry is NOT "
                  "safe until the peer confirms what happened")
REFUSED_BEFORE_ACTING = "the peer refused the request before acting; the same request will fail again"
BUSY = "the peer was too busy to take the request and did nothing; it may be sent again later"
# JSON-RPC 2.0's own codes are all answered before a method runs, so nothing was done.
PRE_DISPATCH_CODES = (-32700, -32600, -32601, -32602)
# Every code that says the peer did nothing: JSON-RPC's above, and those a protocol built on
# it names so (A2A's: peers/a2a/errors.py adds them, as this layer knows no A2A).
REFUSING_CODES: set[int] = set(PRE_DISPATCH_CODES)
INTERNAL_ERROR = -32603  # JSON-RPC's: the peer broke, rather than refused
BUSY_CODE = -32050  # a server error of the workbench's own (JSON-RPC's -32000 to -32099): busy, nothing done
# Two more of the workbench's own, for a credential (A2A 1.0 section 3.3.2 names none for
# JSON-RPC: "JSON-RPC custom error"); the last digits echo HTTP's 401 and 403. Either way
# the peer did nothing.
UNAUTHENTICATED_CODE = -32041  # no credential, or a wrong one
PERMISSION_DENIED_CODE = -32043  # a credential it knows, without the scope this needs
FIX_CREDENTIALS = "the peer did nothing; retry once the credentials are fixed"


class PeerError(Exception):
    """Anything that went wrong in one exchange with a peer. `str()` is one line."""

    def retry_advice(self) -> str:
        return MAY_HAVE_ACTED


class TransportError(PeerError):
    """No complete exchange: `sent` says whether the request may have reached the peer,
    `timed_out` whether it was sent and the deadline passed before the reply (the peer
    may still be working on it), `status` the reply's status when its head came before
    it broke off (a 2xx: the peer took the request, whatever followed)."""

    def __init__(self, reason: str, *, sent: bool = False, timed_out: bool = False, status: int | None = None) -> None:
        super().__init__(reason)
        self.reason, self.sent, self.timed_out, self.status = reason, sent, timed_out, status

    def retry_advice(self) -> str:
        return MAY_HAVE_ACTED if self.sent else "nothing was sent, so a retry is safe"


class HttpRefusal(PeerError):
    """The peer answered with an HTTP status other than 200 instead of a JSON-RPC response,
    said as what that status means: a credential wanted or refused (401, 403), a redirect
    (never followed: no peer moves a request, or its credentials, elsewhere), too many
    requests (429: nothing done, later may do), its own failure (5xx), a refusal. A 429's or 503's
    Retry-After (RFC 9110 10.2.3: seconds, or a date) is said as the wait the peer asks for. What the
    body's error object `said` (its message) is said too, escaped and cut: the status alone may mislead
    (a 429 for wrong credentials, `code` UNAUTHENTICATED_CODE, is no load to wait out: a fix is due)."""

    def __init__(self, status: int, *, credentials_sent: bool, hint: str = "", wait: str | None = None,
                 said: str | None = None, code: Any = None) -> None:
        self.credentials_held_back = status == 429 and type(code) is int and code == UNAUTHENTICATED_CODE
        if self.credentials_held_back:
            reason = "the peer holds back our credentials: wrong ones came from us too often"
        elif status == 401 and not credentials_sent:
            reason = "the peer requires credentials and none were sent"
        elif status in (401, 403) and credentials_sent:
            reason = "the peer refused the credentials sent"
        elif status == 403:
            reason = "the peer forbids it, and no credential was sent"
        elif 300 <= status < 400 and status != 304:
            reason = "a redirect, not followed: no peer moves a request, or its credentials, elsewhere"
        elif status == 429:
            reason = "the peer has had too many requests"
        elif status >= 500:
            reason = "the peer failed at the HTTP level"
        else:
            reason = "the peer refused at the HTTP level"
        hint = hint if status in (401, 403) and not credentials_sent else ""  # a credential is no answer to a 404
        if said:
            from transports.escaping import cut, escape
            reason += f' (it says "{escape(cut(said, 200))}")'
        asked = retry_after(status, wait)  # a 429's or 503's Retry-After
        reason += f"; {asked}" if asked else ""
        super().__init__(f"HTTP {status}: {reason}" + (f" ({hint})" if hint else ""))
        self.status = status

    def retry_advice(self) -> str:
        if self.status in (401, 403) or self.credentials_held_back:
            return FIX_CREDENTIALS
        if self.status == 429:
            return BUSY
        return REFUSED_BEFORE_ACTING if self.status < 500 else MAY_HAVE_ACTED


def retry_after(status: int, wait: str | None) -> str:
    """How long a 429 or 503 asks us to wait, by its Retry-After (RFC 9110 10.2.3: seconds, or a date): the
    peer's own words, escaped and cut; "" for another status or none said."""
    if status not in (429, 503) or not wait:
        return ""
    from transports.escaping import escape
    seconds = wait.isascii() and wait.isdigit()  # delay-seconds are ASCII digits: "٣" is none
    return f"it asks us to wait {escape(wait[:40])}{' s' if seconds else ''}"


class RemoteError(PeerError):
    """The peer answered with a JSON-RPC error object."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} ({code})")
        self.code, self.message, self.data = code, message, data

    def retry_advice(self) -> str:
        if self.code == BUSY_CODE:
            return BUSY
        if self.code in (UNAUTHENTICATED_CODE, PERMISSION_DENIED_CODE):
            return FIX_CREDENTIALS
        return REFUSED_BEFORE_ACTING if self.code in REFUSING_CODES else MAY_HAVE_ACTED

    @property
    def refusal(self) -> bool:
        """Whether the peer said no (any error object but -32603, its own internal failure)."""
        return self.code != INTERNAL_ERROR


class ProtocolViolation(PeerError):
    """The peer answered, but not with anything the protocol allows."""


def let_quit(exc: BaseException) -> None:
    """Raise `exc` again if it is the debugger's quit (pdb's BdbQuit, which is an Exception),
    so `q` quits wherever a breakpoint stopped: a catch-all calls this first, or it would turn
    the quit into a made-up internal error and the run would go on. KeyboardInterrupt and
    SystemExit are BaseExceptions, never caught by `except Exception`. bdb is looked up, not
    imported: if no debugger loaded it, nothing can be its quit."""
    if quit_in_debugger(exc):
        raise exc


def quit_in_debugger(exc: BaseException) -> bool:
    """Whether `exc` is pdb's `q` (BdbQuit), raised wherever the learner had stepped to."""
    bdb = sys.modules.get("bdb")
    return bdb is not None and isinstance(exc, bdb.BdbQuit)
