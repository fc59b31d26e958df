"""The one function the workbench writes to the screen with: `say`.

Everything printed (story lines, and frames, which the printer hands to it) passes here,
so colour, --quiet and trace recording are decided in one place:
- colour by direction and outcome, only on a terminal, never with NO_COLOR set or
  --no-color (https://no-color.org), so output piped to a file has no escape codes;
- --quiet keeps only outcome lines (trust decisions, results, refusals) and errors;
- listeners (the --trace recorder) receive every line exactly as printed uncoloured.
Errors go to stderr, one line each, so a script can tell them from the story.
"""
from __future__ import annotations

import os
import sys
from typing import Callable

OUTCOMES = ("[trust]", "[support] trusted result", "[support] UNTRUSTED result",
            "-> delegation result", "[support] task ended", "[support] task paused",
            "[support] reply",
            "[support] the model chose it", "[model] chose")
_COLOURS = (("-->", "36"), ("<-- HTTP", "31"), ("<--", "34"), ("[trust]", None),
            ("[support] trusted result", "32"), ("[support] UNTRUSTED", "33"),
            ("-> delegation result", "31"))


class Settings:
    colour = False
    quiet = False
    listeners: list[Callable[[str], None]] = []


def configure(*, colour: bool | None = None, quiet: bool = False) -> None:
    """colour=None: on when stdout is a terminal and NO_COLOR is not set."""
    if colour is None:
        colour = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    Settings.colour, Settings.quiet = colour, quiet


def say(text: str = "", *, error: bool = False) -> None:
    if error:
        sys.stdout.flush()  # keep the error in its place among the lines before it
        sys.stderr.write(_paint(f"error: {text}", "31") + "\n")
        return
    for listener in Settings.listeners:
        listener(text)
    if Settings.quiet and not text.startswith(OUTCOMES):
        return
    sys.stdout.write(_paint(text, _colour_of(text)) + "\n")


def _colour_of(text: str) -> str | None:
    for prefix, colour in _COLOURS:
        if text.startswith(prefix):
            if prefix == "[trust]":  # green when trusted, red when refused, yellow otherwise
                return "31" if "REFUSED" in text else "33" if "UNTRUSTED" in text else "32"
            return colour
    return None


def _paint(text: str, colour: str | None) -> str:
    return f"\x1b[{colour}m{text}\x1b[0m" if colour and Settings.colour and text else text
