"""The command line: `a2a_delegation.py [flags]`, `a2a_delegation.py serve NAME [flags]`
and `a2a_delegation.py web [flags]` (the live page, WEB_FLAGS).

Each flag is written once, in the FLAGS table (and `serve NAME`'s in the peer side's
table, handed to `parse`): its name, default and help. From them come both --help (argparse) and the options of a run with no flags at
all, which never loads argparse (the essay's run has a start-up budget and nothing to
parse). A bad value is one line and exit status 2, argparse's own convention.
"""

import os
import sys
from types import SimpleNamespace
from typing import Any, NamedTuple

from peers.a2a.wire_format import CARD_PATH, NAMES, card_url
from peers.support import flag_values as values, scenarios
from peers.support.config import unwritable

HTTP_TIMEOUT = 10.0  # seconds for one whole exchange over HTTP, unless --timeout says


class Flag(NamedTuple):
    name: str  # "--registry", or a positional's name
    default: Any
    help: str
    group: str = ""  # the --help section
    options: dict[str, Any] = {}  # more argparse keywords: choices, type, action, metavar

    @property
    def dest(self) -> str:
        return self.options.get("dest") or self.name.lstrip("-").replace("-", "_")


MODEL, LEARN = "letting a model choose the delegation (generate())", "watching, stepping, saving"
LESSONS = "lessons beyond the essay's run"
FLAGS = (
    Flag("--registry", None, "where peers live: a list of Agent Card URLs (default: the "
         "registry.json beside a2a_delegation.py)", options={"metavar": "PATH"}),
    Flag("--allowlist", None, "which peers are trusted, by card name and endpoint (default: "
         "the allowlist.json beside a2a_delegation.py)", options={"metavar": "PATH"}),
    Flag("--credentials", None, 'the support agent\'s tokens, {"tokens": {endpoint: token}}, and other '
         'credentials, {"credentials": {endpoint: {"apiKey" | "basic" | "oauth2" | "clientCertificate": ...}}} '
         "(README: Authentication); each sent only to its own endpoint (default: $A2A_CREDENTIALS)",
         options={"metavar": "PATH"}),
    Flag("--allow-untrusted", [], "delegate to this peer even though it is not allowlisted; its "
         "output is tagged UNTRUSTED and kept apart (repeatable)",
         options={"action": "append", "metavar": "NAME"}),
    Flag("--peer", [], "add an A2A agent to this run: its card URL, or its base URL (the card is "
         f"then at {CARD_PATH}); repeatable; implies --transport http",
         options={"action": "append", "metavar": "URL", "type": values.base_url}),
    Flag("--token-env", None, "the environment variable holding a bearer token for the --peer "
         "agents: sent only to their own origin, never given on the command line",
         options={"metavar": "VAR"}),
    Flag("--transport", "in-process", "in-process: the shim, no sockets (default); http: serve the "
         "demo peers on 127.0.0.1 and talk to every peer over real HTTP; https: the same over real TLS, "
         "each certificate checked (against the demo CA, or --ca)", options={"choices": ["in-process", "http", "https"]}),
    Flag("--ca", None, "trust the https peers whose certificates this CA (a PEM file) issued, instead of the "
         "system's CAs (or, with --transport https, the demo CA)", options={"metavar": "FILE"}),
    Flag("--wire", None, "the A2A wire format: the demo peers serve this card, and the support "
         "agent speaks it to every peer (default: the essay's frames for the demo peers; for "
         "others, what each card declares)", options={"choices": list(NAMES)}),
    Flag("--binding", None, "how frames reach each peer: jsonrpc (one envelope per call, the essay's) or "
         "http+json (A2A 1.0's REST binding: a verb and a path per operation), where its card offers it "
         "(default: JSON-RPC where a card offers it, else HTTP+JSON)", options={"choices": ["jsonrpc", "http+json"]}),
    Flag("--timeout", None, f"how long one exchange with a peer may take (default: {HTTP_TIMEOUT:g} "
         "over HTTP; in process, no limit, so a debugger can stop inside a peer; a lesson may "
         "set its own: --scenario NAME --help says)",
         options={"type": values.seconds, "metavar": "SECONDS"}),
    Flag("--request", None, 'a customer\'s request, e.g. \'Please refund $180 on order ORD-3300\' '
         "(single quotes: in double quotes the shell expands $1): the model (by default an offline "
         "stand-in) picks the peer, skill and input; the trust gate still decides", MODEL,
         {"metavar": "TEXT"}),
    Flag("--generate", None, "use this Python callable, generate(prompt) -> str, as the model",
         MODEL, {"metavar": "MODULE:FUNCTION"}),
    Flag("--llm-url", None, "use an OpenAI-compatible chat-completions endpoint, e.g. "
         "http://localhost:11434/v1", MODEL, {"metavar": "URL", "type": values.base_url}),
    Flag("--llm-model", None, "the model name for --llm-url", MODEL, {"metavar": "NAME"}),
    Flag("--llm-key-env", "OPENAI_API_KEY", "environment variable holding the endpoint's API key "
         "(default: %(default)s; unset means no key)", MODEL, {"metavar": "VAR"}),
    Flag("--llm-timeout", 60.0, "how long to wait for the model (default: %(default)s)", MODEL,
         {"type": values.seconds, "metavar": "SECONDS"}),
    Flag("--show-prompts", False, "print every prompt and answer, exactly as the model saw them",
         MODEL, {"action": "store_true"}),
    Flag("--scenario", None, "run a lesson beyond the essay's run, by name (--list-scenarios "
         "says what each shows; --scenario NAME --help, what it teaches and how it runs)", LESSONS,
         {"type": values.lesson, "metavar": "NAME"}),
    Flag("--legacy-card-path", False, f"if a card is not at {CARD_PATH}, try "
         "/.well-known/agent.json (A2A 0.2 and earlier), with a warning", options={"action": "store_true"}),
    Flag("--stream", False, "stream each task, event by event, from a peer whose card offers it "
         "(0.3 and 1.0: message/stream, SendStreamingMessage)", options={"action": "store_true"}),
    Flag("--no-wait", False, "ask the peer for its task at once (returnImmediately), then ask "
         "again (GetTask) until it ends, within --timeout", options={"action": "store_true"}),
    Flag("--push", False, "like --no-wait, but the peer tells a webhook of ours (on 127.0.0.1) "
         "of each change instead of being asked, where its card offers push notifications",
         options={"action": "store_true"}),
    Flag("--interactive", False, "in a lesson where a person decides, you are that person "
         "(--scenario NAME --help says whether it has one)",
         LESSONS, {"action": "store_true"}),
    Flag("--list-scenarios", False, "list the lessons, one line each, in teaching order, and exit", LESSONS,
         {"action": "store_true"}),
    Flag("--step", False, "before each frame leaves, show it and wait: Enter sends it, q stops",
         LEARN, {"action": "store_true"}),
    Flag("--break", False, "stop in the Python debugger before each frame leaves (inspect "
         "`request`; `c` sends it, `q` stops)", LEARN, {"action": "store_true", "dest": "debugger"}),
    Flag("--trace", None, "write every frame, line and trust decision as JSON lines", LEARN,
         {"metavar": "FILE.jsonl"}),
    Flag("--replay", None, "print a saved trace again as the live run did, with no peers", LEARN,
         {"metavar": "FILE.jsonl"}),
    Flag("--diagram", None, "draw the run as a sequence diagram: .svg, .html or .mmd (Mermaid)",
         LEARN, {"metavar": "FILE"}),
    Flag("--no-color", False, "no colour (also when NO_COLOR is set, TERM is dumb, or output is "
         "not a terminal)", LEARN, {"action": "store_true"}),
    Flag("--verbose", False, "also show each frame's HTTP status, headers (masked) and timing; every frame whole",
         LEARN, {"action": "store_true"}),
    Flag("--frames", None, "full: every frame whole, a card as served (the default of the essay's run and --verbose); "
         "summary: a card as one line, a changed card as the fields that changed (the default of a lesson and "
         "--request); --trace keeps every frame whole", LEARN, {"choices": ["full", "summary"]}),
    Flag("--quiet", False, "print only the outcome lines", LEARN, {"action": "store_true"}),
)
WEB_FLAGS = (  # `web`: the live page, on 127.0.0.1 only (peers/support/web/)
    Flag("--port", 0, "the page's port on 127.0.0.1 (default: a free one)", options={"type": values.port}),
    Flag("--open", False, "also open the page in the default browser", options={"action": "store_true"}),
    Flag("--allowlist", None, "the allowlist the page edits and saves to when asked (default: the "
         "allowlist.json beside a2a_delegation.py)", options={"metavar": "PATH"}),
)
# What `serve NAME`'s flags are is the peer side's to say: main() hands its table to
# `parse` (serve_flags). A serve flag names the kind of its value; its check is here.
KINDS = {"port": values.port, "count": values.count, "base_url": values.base_url, "token": values.token,
         "seconds": values.seconds}


def defaults() -> SimpleNamespace:
    """The options of a run with no flags: each flag's default, argparse not loaded."""
    options = SimpleNamespace(command="run", **{f.dest: f.default for f in FLAGS})
    options.allow_untrusted, options.peer = [], []
    return _from_environment(options)


def parse(argv: list[str], *, serve_flags: tuple[Any, ...] = ()) -> SimpleNamespace:
    """The run's flags, or `serve NAME ...` with the peer side's `serve_flags`: each a
    name, default, help and argparse options (NAME's choices among them, a "type" by kind)."""
    if not argv:
        return defaults()
    import argparse

    serving, command = argv[0] in ("serve", "web"), argv[0] if argv[0] in ("serve", "web") else "run"
    lesson_help = None if serving else scenarios.help_asked(argv)  # --scenario NAME --help

    class OneLineParser(argparse.ArgumentParser):
        def error(self, message: str) -> None:  # one line, not the whole usage: exit 2 as argparse does
            self.exit(2, f"error: {message}{values.near_flag(message, [f.name for f in table] + ['--help'])} "
                         "(--help lists every flag)\n")

        def print_help(self, file: Any = None) -> None:
            if lesson_help is None:
                return super().print_help(file)
            (file or sys.stdout).write(lesson_help)

    parser = OneLineParser(
        prog=f"a2a_delegation.py {command}" if serving else "a2a_delegation.py",
        description="Serve the live page on 127.0.0.1 until Ctrl-C: runs, their frames as they cross, "
                    "the allowlist, any agent." if command == "web" else
        "Run one peer as a standalone A2A server (HTTP/1.1 JSON-RPC) until Ctrl-C "
                    "or SIGTERM." if serving else
        "Watch a support agent discover, trust or refuse, and delegate to A2A peers over "
        "JSON-RPC, every frame printed. 'a2a_delegation.py serve NAME --help' runs one peer "
        "as an HTTP server; 'a2a_delegation.py web' serves the live page.",
        epilog=None if serving else "Exit status: 0 when every peer was handled, 1 when a "
        "delegation failed, 2 for bad input (a data file, a flag, or a registry entry whose "
        "card cannot be fetched).")
    groups: dict[str, Any] = {}
    served = tuple(Flag(flag.name, flag.default, flag.help, options={
        **flag.options, **({"type": KINDS[flag.options["type"]]} if "type" in flag.options else {})})
        for flag in serve_flags)
    table = (WEB_FLAGS if command == "web" else served) if serving else FLAGS
    for flag in table:
        group = groups.setdefault(flag.group, parser.add_argument_group(flag.group)
                                  if flag.group else parser)
        options = dict(flag.options)
        if flag.name.startswith("-"):
            options.update(default=flag.default, dest=flag.dest)
            if options.get("action") == "append":
                options["default"] = []  # a fresh list per run, never the table's
        group.add_argument(flag.name, help=flag.help, **options)
    options = parser.parse_args(argv[1:] if serving else argv, namespace=SimpleNamespace(
        command=command, no_color=False, quiet=False) if serving else SimpleNamespace(command="run"))
    if not serving:
        _check_run(parser, options)
    return _from_environment(options)


def _check_run(parser: Any, options: SimpleNamespace) -> None:
    """What argparse cannot say about one flag alone. Output files are checked here,
    before any frame is sent, so a typo in a path never costs a whole run."""
    if options.verbose and options.quiet:
        parser.error("--verbose and --quiet cannot be used together")
    if options.step and options.quiet:
        parser.error("--step shows each frame before it leaves, and --quiet hides frames: use one of them")
    if options.diagram and not options.diagram.lower().endswith((".svg", ".html", ".mmd")):
        parser.error("--diagram FILE must end in .svg, .html or .mmd")
    for flag, path in (("--trace", options.trace), ("--diagram", options.diagram)):
        problem = path and unwritable(path)
        if problem:
            parser.error(f"{flag} {path}: {problem}")
    if options.trace and options.diagram and os.path.realpath(options.trace) == os.path.realpath(options.diagram):
        parser.error("--trace and --diagram need two different files")
    if options.llm_url and not options.llm_model:
        parser.error("--llm-url needs --llm-model")
    if options.replay:  # a saved run, printed again: the flags of a live run stay as given (ignored())
        return
    if options.peer and options.transport == "in-process":
        options.transport = "http"  # a real agent is reached over the network
    if options.token_env and not os.environ.get(options.token_env):
        parser.error(f"--token-env {options.token_env}: that environment variable is not set")
    scenarios.set_flags(options, {flag.name: flag.default for flag in FLAGS})  # what a lesson needs


def dest_of(flag: str) -> str:
    """The option a run's flag sets: --show-prompts -> show_prompts, --break -> debugger."""
    return next(entry.dest for entry in FLAGS if entry.name == flag)


def peer_card_urls(options: SimpleNamespace) -> list[str]:
    """--peer URLs as card URLs: a base URL gets the well-known path."""
    return [url if url.endswith(".json") else card_url(url) for url in options.peer]


def ignored(options: SimpleNamespace) -> list[str]:
    """Flags given that will do nothing in this run, each as a sentence to warn with."""
    without_request = [flag for flag, value in (("--generate", options.generate),
                                                ("--llm-url", options.llm_url),
                                                ("--show-prompts", options.show_prompts))
                       if value and options.request is None]
    warnings = [f"{flag} does nothing without --request (the essay's run delegates by rule)"
                for flag in without_request]
    if options.token_env and not options.peer:
        warnings.append("--token-env does nothing without --peer")
    if options.request is not None and options.scenario is not None and not scenarios.reads("--request", options):
        warnings.append(f"--request does nothing with --scenario {options.scenario}")
    if options.replay:  # a replay prints a saved run: nothing is asked of any peer
        warnings += [f"{flag} does nothing with --replay (it prints the saved run; no peer is asked)"
                     for flag, given in (("--scenario", options.scenario), ("--wire", options.wire),
                                         ("--transport", options.transport != "in-process"),
                                         ("--binding", options.binding), ("--frames", options.frames),
                                         ("--peer", options.peer), ("--request", options.request),
                                         ("--stream", options.stream), ("--push", options.push),
                                         ("--no-wait", options.no_wait), ("--step", options.step)) if given]
    if options.interactive and not scenarios.reads("--interactive", options):
        warnings.append("--interactive does nothing without " + " or ".join(
            f"--scenario {name}" for name in scenarios.readers_of("--interactive")))
    return warnings


def _from_environment(options: SimpleNamespace) -> SimpleNamespace:
    """Secrets and paths that may come from the environment instead of the command line."""
    if options.command == "serve":
        options.token = options.token or os.environ.get("A2A_SERVE_TOKEN")
    elif options.command == "run":
        options.credentials = options.credentials or os.environ.get("A2A_CREDENTIALS")
    return options
