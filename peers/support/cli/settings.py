"""The settings of one run: the command line, parsed once, as a frozen record.

`Settings` is what a run is asked to do, made once by peers/support/cli/command_line.py from
the flags (peers/support/cli/flags.py), the environment (A2A_CREDENTIALS), the defaults (the
data files beside the story; --transport http when --peer adds an agent) and the lesson
--scenario names, found once and its flags merged in. Nothing sets a field after that:
whatever needs a variant makes one (`settings._replace(...)`), and every reader sees the
same values. How a task is followed is one value of it (`following`), so a new way to
follow is a flag, a field of `Following` and the line here that makes it.

`serve NAME` and `web` are other commands with other flags: their settings are records
made from their own tables (`frozen`), read as attributes the same way.

A record (transports/records.py): built once by keyword, every field given, read only.
"""
from __future__ import annotations  # the fields' annotations stay unevaluated: read by tools, not run

from collections import namedtuple
from types import ModuleType

from peers.support.cli.flags import HTTP_TIMEOUT
from peers.support.calling.follow import Following
from transports.records import Record

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any


class Settings(Record):
    """A run's settings (`a2a_delegation.py [flags]`): each flag's value under its option's
    name (--break: debugger), then what was made of them once."""

    command: str  # "run": the essay's, a lesson's or a model's run
    registry: str  # the registry file: --registry, else the registry.json beside the story
    allowlist: str  # the allowlist file: --allowlist, else the allowlist.json beside the story
    credentials: str | None  # --credentials, else $A2A_CREDENTIALS; None: no file of ours
    allow_untrusted: tuple[str, ...]  # --allow-untrusted, and a lesson's
    peer: tuple[str, ...]  # --peer: agents added to this run, as given
    token_env: str | None
    transport: str  # "in-process", "http" (also when --peer is given) or "https"; a lesson's need wins
    ca: str | None
    wire: str | None
    binding: str | None
    timeout: float | None  # --timeout (or the lesson's); None: 10 s over HTTP, no limit in process
    request: str | None
    generate: str | None
    llm_url: str | None
    llm_model: str | None
    llm_key_env: str
    llm_timeout: float
    show_prompts: bool
    scenario: str | None  # the lesson's name, as --list-scenarios prints it
    legacy_card_path: bool
    strict_cards: bool  # a 1.0 card in an SDK's dialect is refused, not read as 1.0 spells it with a warning
    interactive: bool
    list_scenarios: bool
    step: bool
    debugger: bool  # --break
    trace: str | None
    replay: str | None
    diagram: str | None
    no_color: bool
    verbose: bool
    frames: str  # "full" or "summary": --frames, else full in the essay's run and with --verbose, else summary
    quiet: bool
    lesson: ModuleType | None  # the lesson module --scenario names (its LESSON, its run()), found once
    following: Following  # --stream, --no-wait, --push and --timeout: how each delegated task is followed
    ignored: tuple[str, ...]  # flags given that do nothing in this run, each a sentence to warn with


def following(given: dict[str, Any]) -> Following:
    """How a task is followed, from its flags (option -> value, a lesson's merged in): --push
    over --no-wait; for HTTP_TIMEOUT seconds when --timeout is not given."""
    mode = "push" if given["push"] else "poll" if given["no_wait"] else "wait"
    return Following(mode, given["stream"], given["timeout"] or HTTP_TIMEOUT)


def frozen(command: str, values: dict[str, Any]) -> Any:
    """`serve NAME`'s or `web`'s settings: a record of `values` (each flag's option -> value)."""
    return namedtuple(f"{command.title()}Settings", ["command", *values])(command, **values)
