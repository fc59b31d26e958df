"""The one output path: a `Console` the story says each line to, with what kind it is.

Everything printed passes here: story lines (`console.say(text, Kind.TRUSTED)`) and
frames (the FramePrinter calls `console.frame(text, frame)`). Because each line says
what it is, colour and --quiet follow the story's meaning, never the wording:
- colour by kind and direction, on a stream that is a terminal, unless NO_COLOR is set,
  TERM is dumb, or --no-color (https://no-color.org); stdout and stderr decide apart;
- --quiet keeps only outcomes (trust decisions, results, refusals, escalations) and errors;
- listeners (the --trace recorder) receive every line uncoloured, with its kind and facts.
Errors (an exchange that broke, a file that cannot be read) go to stderr, one line each,
so a script can tell them from the story; a refusal, ours or a peer's, is the story's
point and goes to stdout with the rest of it (`--scenario contract > out.txt` keeps it).
A Console is made per run and passed along: there is no global output state.
"""
from __future__ import annotations

import os
import sys
from enum import Enum

from transports.escaping import escape
from transports.masking import mask_body
from transports.printer import MAX_SHOWN, Frame

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Protocol, TextIO
else:  # an interface below is a documented class at run time, and typing's Protocol to a checker
    Protocol = object


class Kind(Enum):
    """What a printed line is, in the story's terms: (value, colour, is an outcome)."""

    BANNER = ("banner", None, False)  # the [transport] line, the closing comparison
    STORY = ("story", None, False)  # discovery, a task's lifecycle, the model's steps
    TRUSTED = ("trusted", "32", True)  # the gate let a vetted peer through; its result
    UNTRUSTED = ("untrusted", "33", True)  # an unvetted peer the user opted in to; its result
    REFUSED = ("refused", "31", True)  # the gate refused a peer; nothing was sent
    ESCALATED = ("escalated", "33", True)  # a task paused or failed: a person decides
    MODEL = ("model", None, True)  # what the model chose; the gate decides after it
    FRAME = ("frame", None, False)  # a frame that crossed the transport (coloured by direction)
    ERROR = ("error", "31", True)  # a failure, to stderr
    WARNING = ("warning", "33", True)  # something asked for that will do nothing, to stderr

    def __init__(self, label: str, colour: str | None, is_outcome: bool) -> None:
        self.label, self.colour, self.is_outcome = label, colour, is_outcome


STDOUT, STDERR = "standard output", "standard error"  # as an error names the stream it could not write
FRAME_COLOURS = {"-->": "36", "<--": "34"}  # sent cyan, received blue; an HTTP error red


class Listener(Protocol):
    """Told of every line as it is printed: its text, its kind, the story's facts."""

    def __call__(self, text: str, kind: Kind, facts: dict[str, Any]) -> None: ...


def wants_colour(stream: TextIO | None) -> bool:
    """Colour only for a person at a terminal that can show it."""
    return (stream is not None and stream.isatty() and not os.environ.get("NO_COLOR")
            and os.environ.get("TERM") != "dumb")


class Console:
    def __init__(self, *, colour: bool | None = None, quiet: bool = False,
                 out: TextIO | None = None, err: TextIO | None = None) -> None:
        self.out, self.err = out or sys.stdout, err or sys.stderr  # None: closed by the shell (`>&-`)
        for stream in (self.out, self.err):  # an ASCII or Latin-1 terminal: a peer's other letters shown as \xe9
            if (getattr(stream, "encoding", None) or "utf-8").lower().replace("-", "") != "utf8" and hasattr(
                    stream, "reconfigure"):
                stream.reconfigure(errors="backslashreplace")
        self.colour_out = wants_colour(self.out) if colour is None else colour
        self.colour_err = wants_colour(self.err) if colour is None else colour
        self.quiet = quiet
        self.listeners: list[Listener] = []  # --trace: told of every line
        self.held: tuple[str, ...] | list[str] = ()  # the run's secrets (session.py sets them): masked in every line

    def line_by_line(self) -> None:
        """For a command that runs until it is stopped (`serve`, `web`): each line reaches
        a pipe when it is said. Python writes to a pipe in blocks unless PYTHONUNBUFFERED is
        set, which a stock machine does not set: a log collector, a process manager or a
        test reading the banner would see nothing until the server stopped."""
        for stream in (self.out, self.err):
            if hasattr(stream, "reconfigure"):  # a TextIOWrapper; a test's StringIO needs nothing
                stream.reconfigure(line_buffering=True)

    def say(self, text: str = "", kind: Kind = Kind.STORY, **facts: Any) -> None:
        """Print one story line. `facts` (peer, verdict ...) go to listeners only. Whatever
        a caller forgot to escape, no control character reaches the terminal raw; an error or a
        warning is one line, whatever a name in it holds (a file's, from $A2A_CREDENTIALS)."""
        text = escape(text, keep_newlines=kind not in (Kind.ERROR, Kind.WARNING))
        if self.held:  # a peer's error message may say our secret back: it is never shown, nor traced
            text = mask_body(text, self.held)
            facts = {name: mask_body(fact, self.held) if isinstance(fact, str) else fact for name, fact in facts.items()}
        for listener in self.listeners:
            listener(text, kind, facts)
        if len(text) > MAX_SHOWN:  # a line a screen cannot hold (a peer's 900 KB result) is cut as a frame is; a trace keeps it
            text = "\n".join(line if len(line) <= MAX_SHOWN else f"{line[:MAX_SHOWN]} ... ({len(line) - MAX_SHOWN} more "
                             "characters not shown)" for line in text.split("\n"))
        if kind in (Kind.ERROR, Kind.WARNING):
            if self.out is not None:  # keep the error in its place among the lines before it
                _write(self.out, "", STDOUT, flush=True)
            _write(self.err, _paint(f"{kind.label}: {text}", kind.colour, self.colour_err) + "\n", STDERR, flush=True)
        elif not self.quiet or kind.is_outcome:
            _write(self.out, _paint(text, kind.colour, self.colour_out) + "\n", STDOUT)

    def frame(self, text: str, frame: Frame) -> None:
        """Print one frame line for the FramePrinter (hidden by --quiet)."""
        for listener in self.listeners:
            listener(text, Kind.FRAME, {})
        if not self.quiet:
            failed = frame.status is not None and frame.status >= 400
            colour = "31" if failed else FRAME_COLOURS[frame.direction]
            _write(self.out, _paint(text, colour, self.colour_out) + "\n", STDOUT)


class OutputLost(Exception):
    """Standard output or error cannot be written: a full disk, a closed stream. Not an OSError, so that no handler
    of a file's failure takes it for its own: main() ends the run with one line (`ended`)."""


def _write(stream: TextIO | None, text: str, name: str, flush: bool = False) -> None:
    try:
        if stream is None:
            raise OSError("the shell closed it")
        stream.write(text)
        if flush:
            stream.flush()
    except BrokenPipeError:  # `| head` stopped reading: main() ends quietly, as a shell expects
        raise
    except OSError as exc:
        raise OutputLost(f"cannot write to {name}: {exc.strerror or exc}") from None


def flush_output() -> None:
    """What stdout's buffer holds, written now: a full disk is said here, not at exit (OutputLost)."""
    if sys.stdout is not None:  # closed by the shell: nothing is held for it
        _write(sys.stdout, "", STDOUT, flush=True)


def ended(lost: BrokenPipeError | OutputLost) -> int:
    """The exit status of a run whose output could not be written: 141 for a closed pipe, as a shell says, quietly;
    else 2, said in one line on stderr, if it can be. Stdout (and stderr, if that failed too) is pointed at /dev/null
    so that exit's own flush of what their buffers hold cannot fail (status 120, where output is buffered)."""
    if sys.stdout is not None:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    if isinstance(lost, BrokenPipeError):
        return 141
    try:
        _write(sys.stderr, f"error: {lost}\n", STDERR, flush=True)
    except (OSError, OutputLost):  # stderr is lost too: the status says it
        if sys.stderr is not None:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stderr.fileno())
    return 2


def _paint(text: str, colour: str | None, enabled: bool) -> str:
    return f"\x1b[{colour}m{text}\x1b[0m" if colour and enabled and text else text
