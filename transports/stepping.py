"""--step and --break: pause before each frame leaves, on any transport.

A hook on the FramePrinter (`printer.before_send = Stepper(...)`), so the learner first
sees the frame printed, then the workbench waits before it leaves:
- `--step`: Enter sends it, `q` stops the run cleanly (StopRun), and so does end of input
  (nobody is there to say "send"); any other answer is asked again, a few times at most.
- `--break`: the Python debugger stops in `Stepper.__call__` below, where the frame about
  to leave is the local `request` (the parsed JSON-RPC request, or the card URL), and,
  as a listener of the printer, once more in `Stepper.on_reply`, where the peer's answer
  is `reply`. Try `pp request`, `c`, `pp reply`, `c`; `q` ends the run cleanly too.
Nothing here knows A2A.
"""
from __future__ import annotations

import bdb
import json
import sys

from transports.printer import Frame, StopRun

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable, TextIO


ASKS = 5  # answers that are neither Enter nor q before the run stops: a prompt never loops forever
MOST_ANSWER = 1024  # characters of an answer read from a pipe or a file, where a line may never end
MOST_COMMANDS = 1000  # debugger commands read from a pipe or a file at one stop: `yes ""` never says `c`


def answer(prompt: str) -> str:
    """What the person answered: input()'s line at a terminal (whose lines are bounded); from a pipe
    or a file (/dev/zero, a program writing without newlines) at most MOST_ANSWER characters of it.
    EOFError at the end of input, as input() says it, and where the shell closed it (`<&-`)."""
    if sys.stdin is None:
        raise EOFError
    if sys.stdin.isatty():
        return input(prompt)
    sys.stdout.write(prompt)
    sys.stdout.flush()
    line = sys.stdin.readline(MOST_ANSWER)
    if not line:
        raise EOFError
    return line.removesuffix("\n")


class Stepper:
    def __init__(self, *, debugger: bool = False, read: Callable[[str], str] = answer,
                 prompt_to: TextIO = sys.stdout) -> None:
        self.debugger, self.read, self.prompt_to = debugger, read, prompt_to

    def __call__(self, frame: Frame) -> None:
        request = _parsed(frame.body) if frame.body else frame.url  # noqa: F841 - `pp request`
        if not self.debugger:
            return self._ask()
        try:
            _start_debugger()  # pdb stops on the next line, in this function
            stopped = True  # noqa: F841 - stopped here: `pp request` is the frame about to leave
        except bdb.BdbQuit:  # `q` in the debugger: end the run as cleanly as --step's q
            raise StopRun() from None

    def on_reply(self, frame: Frame) -> None:
        """A printer listener: with --break, stop again when the peer's answer arrives."""
        if not self.debugger or frame.direction != "<--":
            return
        reply = _parsed(frame.body)  # noqa: F841 - for the debugger: `pp reply`
        try:
            _start_debugger()  # pdb stops on the next line, in this function
            stopped = True  # noqa: F841 - stopped here: `pp reply` is the peer's answer; `c` goes on
        except bdb.BdbQuit:  # the frame has left, and been answered: not the request stop's words
            raise StopRun("[break] quit in the debugger at the peer's answer: nothing more was sent.") from None

    def _ask(self) -> None:
        """Only Enter sends: a frame leaves because someone said so, never by default."""
        for _ in range(ASKS):
            self.prompt_to.flush()
            try:
                answer = self.read("[step] Enter sends it, q stops: ")
            except (EOFError, OSError):  # no one left to ask (a terminal that hung up reads EIO): stop, as q would
                answer = "q"
            if sys.stdin is None or not sys.stdin.isatty():  # a piped answer is not echoed: end the prompt's line
                self.prompt_to.write("\n")
            if not answer.strip(" \t\r"):  # Enter (a CRLF file's too); a control character is no Enter
                return
            if answer.strip().lower() in ("q", "quit"):
                raise StopRun()
            self.prompt_to.write(f"[step] {answer.strip()[:20]!r} is neither Enter nor q\n")
        raise StopRun()  # asked ASKS times with no answer either way: nothing is sent


def _start_debugger() -> None:
    import pdb
    piped = sys.stdin is None or not sys.stdin.isatty()  # from a pipe or a file: read bounded, as --step's answers
    debugger = pdb.Pdb(**({"stdin": _Commands(sys.stdin)} if piped else {}))
    debugger.use_rawinput = not piped  # input() would read sys.stdin itself, unbounded
    debugger.set_trace(sys._getframe(1))  # trace the caller, Stepper.__call__ or on_reply


class _Commands:
    """The debugger's input from a pipe or a file, where a line may never end (/dev/zero) and lines may never stop
    (`yes ""`): each command at most MOST_ANSWER characters, and after MOST_COMMANDS at one stop, the end of input,
    where the debugger quits, as it does at a pipe's end. None (stdin closed): the end of input at once."""

    def __init__(self, stdin: TextIO | None) -> None:
        self.stdin, self.read = stdin, 0

    def readline(self) -> str:
        self.read += 1
        if self.stdin is None or self.read > MOST_COMMANDS:
            return ""
        line = self.stdin.readline(MOST_ANSWER)
        return line if line.endswith("\n") or len(line) < MOST_ANSWER else line + "\n"


def _parsed(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return body
