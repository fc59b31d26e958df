"""--step and --break: pause at each frame, on any transport, by wrapping it.

Placed inside the FramePrinter (printer -> stepper -> transport), so the learner first
sees the frame printed, then the workbench waits before it leaves:
- `--step`: Enter sends it, `q` stops the run cleanly (StopRun); end of input sends.
- `--break`: the Python debugger stops in `post`/`get` below, where the frame about to
  leave is the local `request` (parsed JSON, or the card URL) and, one stop later, the
  answer is `reply`. Try `pp request`, then `c`; `pp reply`, then `c`.
Same two methods as any transport; nothing here knows A2A.
"""
from __future__ import annotations

import json
from typing import Any, Callable

from transports.base import HttpResponse, StopRun, Transport


class Stepper:
    def __init__(self, inner: Transport, *, debugger: bool = False,
                 read: Callable[[str], str] = input) -> None:
        self.inner, self.debugger, self.read = inner, debugger, read
        self.label = inner.label

    def get(self, url: str, headers: dict[str, str]) -> HttpResponse:
        request = url  # a card fetch: what is asked for is the URL
        self._pause(request)
        response = self.inner.get(url, headers)
        reply = _parsed(response.body)  # noqa: F841 - for the debugger: `pp reply`
        self._after(response)
        return response

    def post(self, url: str, body: bytes, headers: dict[str, str]) -> HttpResponse:
        request = _parsed(body)  # the JSON-RPC request about to leave: `pp request`
        self._pause(request)
        response = self.inner.post(url, body, headers)
        reply = _parsed(response.body)  # noqa: F841 - the peer's answer: `pp reply`
        self._after(response)
        return response

    def _pause(self, request: Any) -> None:
        if self.debugger:
            _debug()  # stops in post()/get() on the line that sends it: `pp request`
            return
        try:
            answer = self.read("[step] Enter sends it, q stops: ")
        except EOFError:  # no one to ask: keep going
            return
        if answer.strip().lower() in ("q", "quit"):
            raise StopRun()

    def _after(self, response: HttpResponse) -> None:
        if self.debugger:
            _debug()  # stops in post()/get() on its return: `pp reply`


def _debug() -> None:
    import pdb
    import sys
    # Stop two frames up, in Stepper.post()/get(), where the frame is a plain local.
    pdb.Pdb().set_trace(sys._getframe(2))


def _parsed(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return body
