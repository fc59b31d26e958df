"""Stopping a standalone server on Ctrl-C or SIGTERM without cutting into what it is doing.

A signal's handler runs in the main thread between any two steps of the server's loop: raising
KeyboardInterrupt there could land between a send and its bookkeeping (an answer's slice then
sent twice by the stop that follows). So the handler only asks (`shutdown`): the loop ends at
its next turn, within its sweep, and the caller's clean-up runs after it. Once is enough: a
second signal (a supervisor repeating itself, a second Ctrl-C) is ignored from then on, so it
cannot cut the clean-up short. Used by `serve` and `proxy` (the main thread alone may set handlers).
"""
from __future__ import annotations

import signal
from typing import Any


def stopped_by_signals(server: Any) -> None:
    """From now on, Ctrl-C or SIGTERM asks `server` to stop (its `serve_forever` then returns).
    Set before saying so, so that a signal sent as soon as the banner is read is heard."""
    def asked(signum: int, frame: Any) -> None:
        for each in (signal.SIGINT, signal.SIGTERM):
            signal.signal(each, signal.SIG_IGN)
        server.shutdown()
    for each in (signal.SIGINT, signal.SIGTERM):
        signal.signal(each, asked)
