"""Ctrl-C and SIGTERM kept from cutting into what is being done: a server's stop, a clean-up.

A signal's handler runs in the main thread between any two steps of the server's loop: raising
KeyboardInterrupt there could land between a send and its bookkeeping (an answer's slice then
sent twice by the stop that follows). So the handler only asks (`shutdown`): the loop ends at
its next turn, within its sweep, and the caller's clean-up runs after it. Once is enough: a
second signal (a supervisor repeating itself, a second Ctrl-C) is ignored from then on, so it
cannot cut the clean-up short. Used by `serve` and `proxy` (the main thread alone may set handlers).
`made_and_removed` holds both back while something is made and removed (the crash lesson's folder).
"""
from __future__ import annotations

import contextlib
import signal
import threading

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable, Iterator, TypeVar
    Made = TypeVar("Made")


def stopped_by_signals(server: Any) -> None:
    """From now on, Ctrl-C or SIGTERM asks `server` to stop (its `serve_forever` then returns).
    Set before saying so, so that a signal sent as soon as the banner is read is heard."""
    def asked(signum: int, frame: Any) -> None:
        for each in (signal.SIGINT, signal.SIGTERM):
            signal.signal(each, signal.SIG_IGN)
        server.shutdown()
    for each in (signal.SIGINT, signal.SIGTERM):
        signal.signal(each, asked)


STOPS = (signal.SIGTERM, signal.SIGINT)  # in this order, set and put back: SIGTERM is never left noted alone


@contextlib.contextmanager
def made_and_removed(make: Callable[[], Made], remove: Callable[[Made], Any]) -> Iterator[Made]:
    """What `make` makes (a temporary folder, say), given to the body and removed by `remove`
    however the body ends. A Ctrl-C or SIGTERM that arrives while it is made (Python's first
    temporary file may be a probe it writes, then deletes) or removed is noted, and acts once
    that is done. It is held back by Python's own handlers, not by the thread's signal mask:
    the kernel may give a signal to any thread (a lesson's servers run in their own), and
    Python runs the handler in the main thread whichever took it. In the body, either unwinds
    it (SIGTERM, from `kill` or a CI job's timeout, as Ctrl-C does), the handlers noting from
    that moment, so the removal runs whole; then SIGTERM ends the process as it would have.
    Off the main thread (the page's runs) no handler can be set: made, given, removed."""
    if threading.current_thread() is not threading.main_thread():
        made = make()
        try:
            yield made
        finally:
            remove(made)
        return
    came: list[int] = []

    def noted(signum: int, frame: Any) -> None:
        came.append(signum)

    def unwound(signum: int, frame: Any) -> None:  # from now on noted, so the clean-up cannot be cut short
        if signum == signal.SIGTERM:  # acted on again once removed (kept first: a Ctrl-C may cut in)
            came.append(signum)
        _handled_by(dict.fromkeys(STOPS, noted))
        raise KeyboardInterrupt

    before = _handled_by(dict.fromkeys(STOPS, noted))
    try:
        made = make()
    except BaseException:
        _handled_by(before)
        _act_on(came)
        raise
    try:  # Ctrl-C unwinds only where it would have (not where it was ignored: a run in the background)
        _handled_by({signal.SIGTERM: unwound, signal.SIGINT: unwound if before[signal.SIGINT]
                     is signal.default_int_handler else before[signal.SIGINT]})
        _act_on(came)  # one that came meanwhile: the body does not start, and what was made goes
        yield made
    finally:
        _handled_by(dict.fromkeys(STOPS, noted))
        try:
            remove(made)
        finally:
            _handled_by(before)
            _act_on(came)  # removed: SIGTERM now ends the process, Ctrl-C goes on


def _handled_by(handlers: dict[int, Any]) -> dict[int, Any]:
    """Each signal's handler set, in the order given; the ones they replace (one not set from
    Python, which signal() reports as None, is put back as the default). Cut short by a signal
    between two, those set already are put back: none is left noting with no one to act."""
    replaced: dict[int, Any] = {}
    try:
        for signum, handler in handlers.items():
            replaced[signum] = signal.signal(signum, handler)
    except BaseException:
        for signum, handler in replaced.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
        raise
    return {signum: signal.SIG_DFL if handler is None else handler for signum, handler in replaced.items()}


def _act_on(came: list[int]) -> None:
    """The signals noted, each handed now to the handler in place, as if it had just come: SIGTERM
    first, which ends the process (a Ctrl-C raised first would leave it unheard)."""
    came.sort(key=lambda signum: signum != signal.SIGTERM)
    while came:
        signal.raise_signal(came.pop(0))
