"""One run of the command line: everything main() hands over, from the flags to the exit status.

main() (a2a_delegation.py) shows the one shape of every run: the peers behind FramePrinter(InProcessTransport(...)),
and the support agent speaking through it. The rest is here, in the order a run needs it: the command line is parsed
once into the run's settings (command_line.py: a frozen record, settings.py), the data files (config.py) are read, the
demo network main() hands in is built (peers/demo.py plays the other teams' peers; our side never imports them), the
apps are served on 127.0.0.1 for --transport http, the lesson or model the run asks for is told (scenarios.py) with the
learner tools around it (tools.py), and the outcomes become the exit status. A run that is over before any peer is
needed (--list-scenarios, serve, --replay, a mistake in a flag or a file) ends in `begin`, as its exit status; so does
`web`, the live page (peers/support/web/), which runs main() again for each run it starts, with a `Watch`: the Console
the run's lines go to, and the printer's hooks it attaches once the printer is made.
"""
from __future__ import annotations

import atexit
import contextlib
import gc
import sys

from peers.a2a import wire_format
from peers.support.cli import command_line, flags, scenarios
from peers.support.calling.config import ConfigError, card_key, load_allowlist, load_credentials, trust_hint
from peers.support.calling.story_steps import StoppedShort
from peers.support.output import Console, Kind
from transports.base import Transport
from transports.errors import quit_in_debugger
from transports.escaping import escape
from transports.printer import FramePrinter, StopRun

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:  # a declared interface, for readers and type checkers: no cost at run time
    from typing import Any, Callable, Iterator, Protocol
    from peers.support.calling.story_steps import Steps
    from peers.support.calling.outcomes import Outcome
    from peers.support.cli.settings import Settings

    class DemoNetwork(Protocol):
        """What main() hands in of peers/demo.py: the peers this process plays for the demo."""

        SERVE_FLAGS: Any  # `serve NAME`'s flags: the peer side defines them (peers/demo.py)

        def network(self, card_format: Any, settings: dict[str, dict[str, Any]]) -> Any: ...

        def serve(self, options: Any, card_format: Any, *, say: Callable[..., None],
                  fail: Callable[[str], None]) -> int: ...

        def Served(self, apps: dict[str, Any], tls: bool = False) -> Any: ...  # noqa: N802 - a class: apps served on 127.0.0.1

    class Watch(Protocol):
        """Something following a run from outside the terminal (the web page): the Console the run says its lines to,
        `attach(printer, card_urls)`, which hooks the printer once it is made (and keeps the registry's card URLs, as
        --trace does) and may return what the run speaks through instead (the printer wrapped: a page's conversation),
        the credentials it was given for this run (origin -> a Held, credentials.py), held in memory only and merged
        into the run's credential store, and the story it tells instead of the essay's (one operation on an agent)."""

        console: Console
        credentials: dict[str, Any]
        story: Callable[[Steps, list[str]], list[Outcome]] | None

        def attach(self, printer: FramePrinter, card_urls: list[str]) -> Transport | None: ...


class Session:
    """One run, set up (`begin`), then told (`tell`)."""

    def __init__(self, settings: Settings, console: Console, demo: DemoNetwork, card_urls: list[str],
                 allowlist: list[Any], credentials: dict[str, str], apps: dict[str, Any], generate: Any,
                 watch: Watch | None = None) -> None:
        self.settings, self.console, self.demo = settings, console, demo  # settings: never changed
        self.card_urls, self.allowlist, self.credentials = card_urls, allowlist, credentials
        self.apps, self.generate = apps, generate  # base URL -> app: the demo's, and our own tools
        self.watch, self.printer = watch, None  # the printer main() makes, once it is `listening`
        self.story = self.told_instead()  # the story this run tells instead of the essay's; None: the essay's

    @classmethod
    def begin(cls, argv: list[str] | None, demo: DemoNetwork, read_registry: Callable[[str, int], list[str]],
              again: Callable[[list[str], Watch], int] | None = None, watch: Watch | None = None) -> Session | int:
        """The run the command line asks for, with its files read and its peers built; or, for a run that is over
        already, its exit status. `again(argv, watch)` runs once more (main itself), for `web`; `watch` follows this
        run instead of the terminal. `argv`: the flags (None: this process's own)."""
        if argv is None and not gc.isenabled():  # run as a program, the story file stopped the collector
            gc.freeze()  # while it started: what that made lives as long as the process, so is never
            gc.enable()  # walked again; it runs again for the rest, which may last
            atexit.register(gc.freeze)  # nor on the way out (bench/startup.py)
        argv = sys.argv[1:] if argv is None else argv
        settings = command_line.parse(argv, serve_flags=demo.SERVE_FLAGS)  # a run's Settings, or serve's, web's
        console = watch.console if watch is not None else Console(colour=False if settings.no_color else None, quiet=settings.quiet)
        if settings.command in ("serve", "web", "proxy"):  # they run until stopped: each line is seen as it is said
            console.line_by_line()
        if settings.command == "serve":  # one peer as a standalone A2A server
            return demo.serve(settings, wire_format.by_name(settings.wire), say=console.say,
                              fail=lambda line: console.say(line, Kind.ERROR))
        if settings.command == "check":  # grade one agent by requirement, and exit 0, 1 or 2
            from peers.support.check.run import check
            return check(settings, console)
        if settings.command == "proxy":  # stand between two A2A programs until Ctrl-C or SIGTERM
            from peers.support.proxy.run import proxy
            return proxy(settings, console)
        if settings.command == "web":  # the live page: each run it starts is `again`, watched
            from peers.support.web.server import serve
            return serve(settings, console, again)
        for warning in settings.ignored:
            console.say(warning, Kind.WARNING)
        if settings.list_scenarios:
            console.say(scenarios.listing())
            return 0
        try:
            if settings.replay:  # a saved run, printed again with no peers (and drawn, if asked)
                from peers.support.learner import tools, trace
                return tools.replay(trace.load(settings.replay), console.say, settings)
            listed = read_registry(settings.registry, len(settings.peer))  # then --peer: agents added to this run
            card_urls = listed + flags.unlisted(settings.peer, listed, lambda line: console.say(line, Kind.WARNING))
            allowlist = load_allowlist(settings.allowlist)
            credentials = {**load_credentials(settings), **(watch.credentials if watch is not None else {})}
            if settings.ca:  # a CA file that cannot be used is one line now, not a failed handshake later
                from peers.support.calling.credentials import trusting
                trusting(settings.ca)
            generate = scenarios.generator(settings)  # --request: the model that chooses
            # The demo peers serve the card of --wire, with what the lesson asks of them; a
            # token made for billing goes to our credential store, as a platform provisions one.
            network = demo.network(wire_format.by_name(settings.wire or wire_format.DEFAULT),
                                   scenarios.asked_of_peers(settings))
        except (ConfigError, ValueError) as exc:  # bad model hooks, traces and card files too
            console.say(str(exc), Kind.ERROR)
            return 2
        provisioned = {url: held for url, held in network.credentials.items() if isinstance(held, dict)}
        if provisioned:  # a lesson's credentials beyond bearer tokens, spelled as in a credentials file
            from peers.support.calling.held import read_held
            provisioned = read_held(provisioned, "the demo network")
        return cls(settings, console, demo, card_urls, allowlist, {**network.credentials, **provisioned, **credentials},
                   {**network.apps, **scenarios.own_apps(settings)}, generate, watch)

    @contextlib.contextmanager
    def over_http(self, transport: Transport) -> Iterator[Transport]:
        """`transport` as it is; with --transport http, the same apps served on 127.0.0.1 and reached over real HTTP
        instead, until the run ends; with https, over real TLS, each name checked against its certificate (demo CA's, or --ca's)."""
        if self.settings.transport not in ("http", "https"):
            yield self.named(transport)
            return
        from transports.network import HttpTransport
        https, ca = self.settings.transport == "https", self.settings.ca
        try:  # checked as the run began, and read again here: a file changed since is one line too, not a traceback
            made = self.tls(ca or (self.demo.Served.ca if https else None))
            served = self.demo.Served(self.apps, tls=https)  # OSError: a DEMO certificate outside its dates, say
        except (ConfigError, OSError) as exc:  # before any peer is served, as a flag refused is
            self.console.say(str(exc) if isinstance(exc, ConfigError) else f"cannot serve the demo peers over "
                             f"{self.settings.transport}: {exc.strerror or exc}{f' ({exc.filename})' if exc.filename else ''}",
                             Kind.ERROR)
            raise SystemExit(2) from None
        http = HttpTransport(resolve=served.resolve, timeout=self.settings.timeout or flags.HTTP_TIMEOUT,
                             resolved_tls=https, **made)
        try:
            yield self.named(http)
        finally:
            http.close()
            served.stop()

    def named(self, transport: Transport) -> Transport:
        """`transport`, its label naming the binding when --binding http+json sends no JSON-RPC."""
        if self.settings.binding == "http+json":
            transport.label = transport.label.replace("HTTP JSON-RPC", "HTTP+JSON").replace("JSON-RPC", "HTTP+JSON")
        return transport

    def tls(self, ca: str | None) -> dict[str, Any]:
        """How the HTTP transport checks https peers (trusting `ca`; None: the system's CAs) and presents the client
        certificates our store holds, each to its own host only. ConfigError for a file that cannot be used."""
        if ca is None and all(isinstance(held, str) or held.certificate is None for held in self.credentials.values()):
            return {}  # nothing asked of TLS beyond the defaults: ssl is loaded only for an https URL
        from peers.support.calling.credentials import client_tls, trusting
        return {"tls": trusting(ca), "client_tls": client_tls(self.credentials, ca)}

    @property
    def held(self) -> tuple[str, ...]:
        """Every secret our store holds, and any typed into a card URL's query: masked wherever a frame or a line shows one."""
        from transports.masking import query_secrets
        return tuple(secret for entry in self.credentials.values() for secret in (
            (entry,) if isinstance(entry, str) else entry.secrets())) + query_secrets(self.card_urls)

    def listening(self, printer: FramePrinter) -> Transport:
        """The printer main() made, with this run's listeners attached: a card in brief (--frames summary), the web
        page following the run; returns what the support agent speaks through: the printer, or what the watch wraps it
        in (with --legacy-card-path, asking at A2A 0.2's card path too)."""
        self.console.held, self.printer = printer.held, printer
        if self.settings.frames == "summary":  # a card as one line, a changed one as what changed
            from peers.support.learner.frame_summaries import Summaries
            printer.summarize = Summaries()
        spoken: Transport = printer
        if self.watch is not None:  # the web page: told of each frame, and may hold one before it leaves
            spoken = self.watch.attach(printer, self.card_urls) or printer
        if not self.settings.legacy_card_path:
            return spoken
        from peers.support.learner.legacy_cards import LegacyCardPath
        return LegacyCardPath(spoken, warn=lambda line: self.console.say(line, Kind.WARNING))

    def told_instead(self) -> Callable[[Any, list[str]], list[Outcome] | None] | None:
        """The story told instead of the essay's, with the agent's steps: the page's, a lesson, a model's; None: the essay's."""
        told_by_page = self.watch.story if self.watch is not None else None
        if told_by_page is not None:
            return lambda agent, card_urls: told_by_page(agent.steps(), card_urls)
        if self.settings.request is None and self.settings.scenario is None:
            return None
        return lambda agent, card_urls: scenarios.run(self.settings, agent.steps(), card_urls, self.generate)

    def options(self) -> dict[str, Any]:
        """How the support agent speaks, follows and trusts, as the flags say: its lines go to
        the Console, and each push to our webhook is shown as a frame by the printer `listening`."""
        settings = self.settings
        return {"say": self.console.say, "told": self.printer.received,
                "allow_untrusted": settings.allow_untrusted, "wire_name": settings.wire,
                "binding": settings.binding and settings.binding.upper(),  # as cards name it: JSONRPC, HTTP+JSON
                "following": settings.following, "verbose": settings.verbose, "strict_cards": settings.strict_cards}

    @contextlib.contextmanager
    def telling(self, agent: Any) -> Iterator[Told]:
        """Around the story: the learner tools (--step, --break, --trace, --diagram) hooked to the printer,
        and written however it ends; a stop at --step ends it quietly; then what trusting a --peer would take.
        `Told.status`, after: 0 every peer handled, 1 a delegation failed, 2 a peer unreachable, a file
        unwritten, or a story this run's files or flags cannot show (StoppedShort, said why already)."""
        settings, console, tools, told = self.settings, self.console, None, Told()
        if settings.step or settings.debugger or settings.trace or settings.diagram:
            from peers.support.learner.tools import LearnerTools  # they hook the printer and the console
            tools = LearnerTools(settings, self.printer, console, self.card_urls)
        try:  # a Ctrl-C as the files are written is said here: anywhere from the story's end, not only in finish
            try:
                yield told
            except Exception as stop:  # --step's q, --break's stop wherever stepped on to, a story stopped short
                if not isinstance(stop, (StopRun, StoppedShort)) and not (settings.debugger and quit_in_debugger(stop)):
                    raise  # (under `python -m pdb`, pdb's own q is pdb's to end the program with)
                if not isinstance(stop, StoppedShort):
                    console.say((str(stop) or "[step] stopped before that frame left; nothing more was sent.") if isinstance(
                        stop, StopRun) else "[break] quit in the debugger: the run ends there; nothing more is sent.")
                told.status = 2 if isinstance(stop, StoppedShort) else 0
                return
            finally:  # however the run ended: write what was recorded
                if problem := tools.finish() if tools else None:
                    console.say(problem, Kind.ERROR)
        except KeyboardInterrupt:
            if tools:
                tools.cut_short()
            raise
        outcomes = told.outcomes
        for card_url in flags.peer_card_urls(settings.peer):  # --peer: what trusting it would take
            found = next((fetched for fetched in agent.seen if card_key(fetched.fetched_from) == card_key(card_url)), None)
            asked = found is not None or any(card_key(outcome.peer) == card_key(card_url) for outcome in outcomes or ())
            console.say(trust_hint(found, self.allowlist) if asked else
                        f"[support] this run never asked {escape(card_url)} for its card, so there is nothing to trust yet")
        if outcomes is None:  # the model's answer could not be used: said already
            told.status = 1
        elif problem or any(o.error and o.verdict is None for o in outcomes):  # unwritten, or unreachable
            told.status = 2
        else:
            told.status = 1 if any(o.error for o in outcomes) else 0


class Told:
    """What a story told: its outcomes (set by main()), and the run's exit status (by `telling`)."""

    outcomes: list[Outcome] | None = None
    status: int = 0

