"""The command line, parsed once: `a2a_delegation.py [flags]` into a run's `Settings`
(settings.py), `a2a_delegation.py serve NAME [flags]` and `a2a_delegation.py web [flags]`
into theirs.

The flags are flags.py's table (and `serve NAME`'s the peer side's, handed to `parse`).
Everything a run's settings are made of is settled here, before the record is made: the
checks argparse cannot make about one flag alone, the environment's defaults, the data
files beside the story, --transport http for --peer, the lesson --scenario names (found
once, by its flag's check) with the flags it sets and needs merged in, and the flags that
will do nothing, said once. A run with no flags never loads argparse (the essay's run has a
start-up budget and nothing to parse). A bad value is one line and exit status 2.
"""

from __future__ import annotations

import os
import sys

from peers.support.cli import scenarios
from peers.support.calling.config import unwritable, written_over
from peers.support.cli import flag_values as values
from peers.support.cli.flag_values import near_flag
from peers.support.cli.flags import CHECK_FLAGS, FLAGS, KINDS, PROXY_FLAGS, WEB_FLAGS, Flag, dest_of
from peers.support.cli.settings import Settings, following, frozen

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

HERE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))  # beside the story


def defaults() -> Settings:
    """The settings of a run with no flags: each flag's default, argparse not loaded."""
    return _settled({flag.dest: flag.default for flag in FLAGS})


def parse(argv: list[str], *, serve_flags: tuple[Any, ...] = ()) -> Any:
    """The run's Settings; or `serve NAME ...`'s, with the peer side's `serve_flags` (each a
    name, default, help and argparse options: NAME's choices among them, a "type" by kind),
    or `web ...`'s: a record of their flags' values."""
    if not argv:
        return defaults()
    import argparse

    serving = argv[0] in ("serve", "web", "check", "proxy")  # a command of its own, with its own flags
    command = argv[0] if serving else "run"
    lesson_help = None if serving else scenarios.help_asked(argv)  # --scenario NAME --help

    class OneLineParser(argparse.ArgumentParser):
        def error(self, message: str) -> None:  # one line, not the whole usage: exit 2 as argparse does
            self.exit(2, f"error: {message}{near_flag(message, [f.name for f in table] + ['--help'])} "
                         "(--help lists every flag)\n")

        def print_help(self, file: Any = None) -> None:
            if lesson_help is None:
                return super().print_help(file)
            (file or sys.stdout).write(lesson_help)

    parser = OneLineParser(
        prog=f"a2a_delegation.py {command}" if serving else "a2a_delegation.py",
        description="Stand between an A2A client and the agent at --to on 127.0.0.1: every frame forwarded as it "
                    "came and printed, annotated against the spec, with faults on demand." if command == "proxy" else
        "Serve the live page on 127.0.0.1 until Ctrl-C: runs, their frames as they cross, "
                    "the allowlist, any agent." if command == "web" else
        "Grade any A2A agent by requirement, with the frames that prove each verdict. Checking is not "
        "delegating: the allowlist is not consulted, and no message that could cause an effect is sent." if
        command == "check" else
        "Run one peer as a standalone A2A server (HTTP/1.1 JSON-RPC) until Ctrl-C "
                    "or SIGTERM." if serving else
        "Watch a support agent discover, trust or refuse, and delegate to A2A peers over "
        "JSON-RPC, every frame printed. 'a2a_delegation.py serve NAME --help' runs one peer "
        "as an HTTP server; 'a2a_delegation.py web' serves the live page.",
        epilog="Exit status: 0 when no MUST fails, 1 when one fails or goes unasked because the agent let its "
               "requests run past their deadline, 2 for a usage error or an agent that cannot be reached." if
        command == "check" else None if serving else "Exit status: 0 when every peer was handled (or a --step or --break "
        "run was stopped at your word), 1 when a delegation failed, 2 for bad input (a data file, a flag, a "
        "registry entry whose card cannot be fetched, or a lesson they cannot show).")
    groups: dict[str, Any] = {}
    served = tuple(Flag(flag.name, flag.default, flag.help, options={
        **flag.options, **({"type": KINDS[flag.options["type"]]} if "type" in flag.options else {})})
        for flag in serve_flags)
    table = {"web": WEB_FLAGS, "check": CHECK_FLAGS, "proxy": PROXY_FLAGS}.get(command, served) if serving else FLAGS
    for flag in table:
        group = groups.setdefault(flag.group, parser.add_argument_group(flag.group)
                                  if flag.group else parser)
        options = dict(flag.options)
        if flag.name.startswith("-"):
            options.update(default=flag.default, dest=flag.dest)
            if options.get("action") == "append":
                options["default"] = []  # a fresh list per run, never the table's
        group.add_argument(flag.name, help=flag.help, **options)
    given = vars(parser.parse_args(argv[1:] if serving else argv))
    if command == "serve":  # the secret --auth checks may come from the environment instead, held to the flag's rule
        from_environment = os.environ.get("A2A_SERVE_TOKEN") or None  # empty: none (one is made, serving.py)
        if given["token"] is None and from_environment is not None:
            try:
                values.token(from_environment)
            except argparse.ArgumentTypeError as exc:
                parser.error(f"$A2A_SERVE_TOKEN: {exc}")
        return frozen(command, {"no_color": False, "quiet": False, **given, "token": given["token"] or from_environment})
    if command == "check" and given["other_caller"] and not given["deep"]:  # caller B's checks need A's task
        parser.error("--other-caller needs --deep: caller B is asked about caller A's task, which only --deep makes")
    if command in ("check", "proxy"):
        return frozen(command, {"no_color": False, "quiet": False, **given})
    if command == "web":
        return frozen(command, {"no_color": False, "quiet": False,
                                **given, "allowlist": given["allowlist"] or os.path.join(HERE, "allowlist.json")})
    _check_run(parser, given)
    return _settled(given)


def _check_run(parser: Any, given: dict[str, Any]) -> None:
    """What argparse cannot say about one flag alone. Output files are checked here,
    before any frame is sent, so a typo in a path never costs a whole run."""
    if given["verbose"] and given["quiet"]:
        parser.error("--verbose and --quiet cannot be used together")
    if given["step"] and given["quiet"]:
        parser.error("--step shows each frame before it leaves, and --quiet hides frames: use one of them")
    if given["frames"] and given["quiet"]:
        parser.error(f"--frames {given['frames']} says how frames are shown, and --quiet hides them: use one of them")
    if given["diagram"] and not given["diagram"].lower().endswith((".svg", ".html", ".mmd")):
        parser.error("--diagram FILE must end in .svg, .html or .mmd")
    for flag, path in (("--trace", given["trace"]), ("--diagram", given["diagram"])):
        problem = unwritable(flag, path)
        if problem:
            parser.error(problem)
    if given["trace"] and given["diagram"] and os.path.realpath(given["trace"]) == os.path.realpath(given["diagram"]):
        parser.error("--trace and --diagram need two different files")
    problem = written_over({"--trace": given["trace"], "--diagram": given["diagram"]}, {
        "--allowlist": given["allowlist"] or os.path.join(HERE, "allowlist.json"), "--replay": given["replay"],
        "--registry": given["registry"] or os.path.join(HERE, "registry.json"),
        "--credentials": given["credentials"] or os.environ.get("A2A_CREDENTIALS")})
    if problem:
        parser.error(problem)
    if given["llm_url"] and not given["llm_model"]:
        parser.error("--llm-url needs --llm-model")
    if not given["replay"] and given["token_env"] and not os.environ.get(given["token_env"]):
        parser.error(f"--token-env {given['token_env']}: that environment variable is not set")


def _settled(given: dict[str, Any]) -> Settings:
    """The run's settings from its flags' values (option -> value): the lesson's flags merged
    in, then the defaults that are not a flag's own. A --replay prints a saved run: its flags
    stay as given (they are warned about, `_ignored`)."""
    lesson = given["scenario"]  # the lesson module: --scenario's check found it (flag_values.lesson)
    if not given["replay"]:
        given = {**given, "transport": "http"} if given["peer"] and given["transport"] == "in-process" \
            else given  # a real agent is reached over the network
        given = _with_lesson(given, lesson)
    name = None
    if lesson is not None:  # its name, as --scenario takes it
        from peers.support.lessons import name_of
        name = name_of(lesson.__name__)
    made = {"command": "run", "scenario": name, "lesson": lesson, "following": following(given),
            "registry": given["registry"] or os.path.join(HERE, "registry.json"),
            "allowlist": given["allowlist"] or os.path.join(HERE, "allowlist.json"),
            "credentials": given["credentials"] or os.environ.get("A2A_CREDENTIALS"),
            "allow_untrusted": tuple(given["allow_untrusted"]), "peer": tuple(given["peer"]),
            "frames": given["frames"] or ("summary" if (lesson or given["request"] is not None)
                                          and not given["verbose"] else "full"),
            "ignored": tuple(_ignored(given, name, lesson))}
    return Settings(**{field: made[field] if field in made else given[field] for field in Settings._fields})


def _with_lesson(given: dict[str, Any], lesson: Any) -> dict[str, Any]:
    """The flags the lesson sets (its LESSON.flags), where the command line left them at
    their defaults, and those it needs (LESSON.needs), whatever is given."""
    if lesson is None:
        return given
    defaults = {flag.name: flag.default for flag in FLAGS}
    sets = {dest_of(flag): value for flag, value in lesson.LESSON.flags.items()
            if given[dest_of(flag)] == defaults[flag]}
    return {**given, **sets, **{dest_of(flag): value for flag, (value, _) in lesson.LESSON.needs.items()}}


def _ignored(given: dict[str, Any], scenario: str | None, lesson: Any) -> list[str]:
    """Flags given that will do nothing in this run, each as a sentence to warn with."""
    reads = lesson.LESSON.reads if lesson is not None else {}
    without_request = [flag for flag, value in (("--generate", given["generate"]),
                                                ("--llm-url", given["llm_url"]),
                                                ("--show-prompts", given["show_prompts"]))
                       if value and given["request"] is None]
    warnings = [f"{flag} does nothing without --request (the essay's run delegates by rule)"
                for flag in without_request]
    if given["token_env"] and not given["peer"]:
        warnings.append("--token-env does nothing without --peer")
    if given["request"] is not None and scenario is not None and "--request" not in reads:
        warnings.append(f"--request does nothing with --scenario {scenario}")
    if given["replay"]:  # a replay prints a saved run: nothing is asked of any peer
        warnings += [f"{flag} does nothing with --replay (it prints the saved run; no peer is asked)"
                     for flag, value in (("--scenario", scenario), ("--wire", given["wire"]),
                                         ("--transport", given["transport"] != "in-process"),
                                         ("--binding", given["binding"]), ("--frames", given["frames"]),
                                         ("--peer", given["peer"]), ("--request", given["request"]),
                                         ("--stream", given["stream"]), ("--push", given["push"]),
                                         ("--no-wait", given["no_wait"]), ("--step", given["step"]),
                                         ("--strict-cards", given["strict_cards"]),
                                         # the data files and settings a live run reads, none read here
                                         ("--registry", given["registry"]), ("--allowlist", given["allowlist"]),
                                         ("--credentials", given["credentials"]), ("--ca", given["ca"]),
                                         ("--allow-untrusted", given["allow_untrusted"]),
                                         ("--timeout", given["timeout"]), ("--verbose", given["verbose"]),
                                         ("--legacy-card-path", given["legacy_card_path"]),
                                         ("--break", given["debugger"])) if value]
    if given["interactive"] and "--interactive" not in reads:
        warnings.append("--interactive does nothing without " + " or ".join(
            f"--scenario {name}" for name in scenarios.readers_of("--interactive")))
    return warnings
