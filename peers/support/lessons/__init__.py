"""The lessons beyond the essay's run: `python3 a2a_delegation.py --scenario NAME`, one
module each. Each is a short story told with the same steps, printer and transport as the
essay's run, so its frames are printed like any others.

A lesson is one module: its `LESSON` (a `Lesson` below: what it is about, the essay's or
a seed's section it teaches, its place in the teaching order, the flags it sets, needs and
reads, what it asks of the demo peers, the servers of our own it needs), its docstring
(the longer explanation `--scenario NAME --help` prints), and `run(story, card_urls)`:
`story` is the story's `Steps` (peers/support/calling/story_steps.py), its steps as values: find a
card, gate it (a `Contact`, or the refusal), delegate, send, call, report, and a message
with the run's next id. A lesson is never handed the support agent: it reads and sets none
of its state; one that must vet a peer or hold a credential of its own asks
`story.vetting(...)` for steps that do, and the agent is left as it was. `card_urls` are
the registry's card URLs, billing's first.
Nothing else names a lesson: `every()` finds them here, so adding one adds one file.
A module without a `LESSON` (`turns.py`, `stages.py`) holds what lessons share.

May import what peers/support may: `peers.a2a`, `peers.contracts`, `peers.signing`,
`transports` and our own modules. Must not import billing or the rogue, or any module
directly in peers/: they are reached only through a transport, and what a lesson needs of
them is said as plain data (`Lesson.peers`) that peers/demo.py reads.
"""
from __future__ import annotations

from importlib import import_module
from types import ModuleType
from transports.records import Record

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any
    from peers.support.model.generate import Generate


class Lesson(Record):
    """What a lesson is, as data, built by keyword beside its `run()`."""

    about: str  # the one line --list-scenarios prints
    teaches: str  # the essay's or a seed's section it belongs to: "essay: ...", "seed 004: ..."
    order: int  # its place in the teaching order: the essay's sections, then seed 004, then seed 000
    # Flags it sets where the command line left them at their default, e.g. {"--wire": "1.0"}.
    flags: dict[str, Any] = {}
    # Flags it cannot be taught without, set whatever the command line says, each with why (the
    # run says it in one line), e.g. {"--transport": ("https", "mutual TLS is proved in TLS")}.
    needs: dict[str, tuple[Any, str]] = {}
    # Flags it gives a meaning to (flag -> that meaning); run() gets each as a keyword argument
    # named as the flag's option (--interactive: interactive). --request or --interactive given
    # to a lesson that does not read it is warned about (cli/command_line.py, as the flags are parsed).
    reads: dict[str, str] = {}
    # What it asks of each demo peer, as plain data (peer name -> settings; peers/demo.py says which).
    peers: dict[str, dict[str, Any]] = {}
    own_apps: dict[str, Any] = {}  # base URL -> app: servers of our own it needs beside the peers
    model: Generate | None = None  # the offline generate() a --request it reads uses


def name_of(module: str) -> str:
    """A lesson's name from its module's: broken_stream -> broken-stream."""
    return module.rsplit(".", 1)[-1].replace("_", "-")


def find(name: str | None) -> ModuleType | None:
    """The lesson called `name`, or None: only a module of this package that has a LESSON."""
    if not name:
        return None  # the essay's run: nothing to look for
    module_name = name.replace("-", "_")
    if name != name_of(module_name) or module_name not in _module_names():
        return None  # never an import of whatever was typed
    module = import_module(f"{__name__}.{module_name}")
    return module if isinstance(getattr(module, "LESSON", None), Lesson) else None


def every() -> list[ModuleType]:
    """Every lesson, in teaching order."""
    found = [find(name_of(module_name)) for module_name in _module_names()]
    return sorted((module for module in found if module is not None), key=lambda module: module.LESSON.order)


def _module_names() -> list[str]:
    """This package's modules, read from its folder (pkgutil would load typing, which no run needs)."""
    import os  # only a run that names a lesson looks for one
    return sorted(name[:-3] for name in os.listdir(__path__[0]) if name.endswith(".py") and name[:-3].isidentifier()
                  and name != "__init__.py")
