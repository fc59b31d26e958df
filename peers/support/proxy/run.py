"""`a2a_delegation.py proxy --to URL`: from its settings to a proxy serving until Ctrl-C or SIGTERM.

Listens on 127.0.0.1 (--port, 0: a free one), says its URL in one line, and forwards each
request to the agent at --to (forward.py). Frames are printed as every run prints them
(the frame printer, secrets masked, each event of a stream its own line), each tagged with
who sent it and the request's number (faults.py's count): `[#2 client -> agent]` crossed the proxy toward the
agent, `[#2 agent -> client]` back; the proxy's own lines start with `[proxy]` or `[fault]`. --trace writes the same
records a run's --trace does (learner/trace.py: every frame and every line), when it stops.
The server's limits and deadlines are the served peers' (transports/server.py); the
agent's answer is read within --timeout and the frame limit (transports/network.py), a
stream's each chunk within it, --timeout bounding each wait for its next bytes. Exit
status 0 once stopped, 2 for a usage error said in one line (a fault, a trace file, a port).
"""
from __future__ import annotations

import re
import sys
import threading

from peers.a2a.bindings import HTTP_JSON
from peers.support.learner.trace import Recorder, Window
from peers.support.output import Kind
from peers.support.calling.config import unwritable, written_over
from peers.support.proxy import tls as proxy_tls
from peers.support.proxy.faults import Faults, parse
from peers.support.proxy.forward import Proxy
from peers.support.proxy.upstream import LOOKUP_SECONDS, PerThread, leads_back
from transports import lookups
from transports.base import parse_url
from transports.printer import Frame, FramePrinter, StopRun, named_by_path
from transports.signals import stopped_by_signals

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable

MOST_TRACED = 10_000  # --trace: a session's newest records kept, and their characters: even if every one were
MOST_TRACED_BYTES = 8 << 20  # escaped 6-fold in JSON, the file stays within what --replay reads (MAX_TRACE_CHARS)
_ANSWERED = re.compile(r'\S+ ".*" [0-9]{3}')  # the server's line for a request answered, nothing more to say
TAGS = {"-->": "client -> agent]", "<--": "agent -> client]"}  # after the request's number: [#2 client -> agent]
PUSH_TAGS = {"-->": "agent -> client] (push)", "<--": "client -> agent] (push answered)"}


def not_an_origin(to: str) -> str | None:
    """Why `to` cannot be what --to names, or None: each request goes to the agent's origin
    with its own path and query, so a URL naming a path or a query would seem to go somewhere
    it does not (the page's Proxy panel asks the same)."""
    url = parse_url(to)
    if url is None:
        return f"{to[:200]!r} is not an http(s) URL such as http://billing.internal:8001"
    if url.target != "/":
        return (f"{to[:200]!r} names a path or query: give the agent's origin ({url.origin}); each request "
                "goes there with its own path and query, as the client sent it")
    return None


def proxy(settings: Any, console: Any) -> int:
    try:
        faults = Faults([parse(spec, settings.seed) for spec in settings.fault or []])
    except ValueError as exc:
        console.say(f"proxy: {exc}", Kind.ERROR)
        return 2
    read = {f"--{name.replace('_', '-')}": getattr(settings, name)
            for name in ("ca", "tls_cert", "tls_key", "client_cert", "client_key")}
    problem = unwritable("--trace", settings.trace) or written_over({"--trace": settings.trace}, read)
    if problem:
        console.say(f"proxy: {problem}", Kind.ERROR)
        return 2
    recorder = Recorder("HTTP through the proxy") if settings.trace else None
    try:
        server, app, upstream = build(settings, console, faults, recorder)
    except ValueError as exc:  # a TLS flag or file that cannot be used, or --to naming the proxy itself
        console.say(f"proxy: {exc}", Kind.ERROR)
        return 2
    except OSError as exc:
        console.say(f"proxy: cannot listen on 127.0.0.1:{settings.port}: {exc.strerror or exc}", Kind.ERROR)
        return 2
    stopped_by_signals(server)  # from now a signal asks the loop to stop (raised, it could skip the clean-up below)
    status = 0
    try:
        for line in said_at_start(settings, server, app, faults):
            console.say(line)
        console.say("[proxy] Ctrl-C or SIGTERM stops it.")
        try:
            server.serve_forever(poll_interval=0.2)
        except KeyboardInterrupt:  # not from a signal (a handler asks the loop to stop): kept as serve keeps it
            pass
        for line in faults.never_met():
            console.say(line)
        console.say("[proxy] stopped.")
    finally:
        server.server_close()
        upstream.close()
        if recorder is not None:
            try:
                recorder.write(settings.trace)
            except OSError as exc:
                console.say(f"proxy: --trace {settings.trace}: not written ({exc.strerror or exc})", Kind.ERROR)
                status = 2  # as a run's trace not written: a script asked for a file that is not there
    return status


def build(settings: Any, console: Any, faults: Faults, recorder: Recorder | None = None,
          read: Callable[[str], str] | None = None) -> tuple[Any, Proxy, PerThread]:
    """The proxy's server, bound (not yet serving), its app, and the transports to the agent;
    `read`: where --step's answers come from (default: the terminal, if stdin is one).
    ValueError, one line, for TLS flags or files that cannot be used (tls.py), or --to naming the proxy."""
    from transports.network import HttpTransport
    from transports.server import PeerServer
    toward_agent, toward_client = ({}, None) if not proxy_tls.asked(settings) else \
        (proxy_tls.toward_agent(settings), proxy_tls.toward_client(settings))
    upstream = PerThread(lambda: HttpTransport(timeout=settings.timeout, idle_streams=True, **toward_agent))

    def show(text: str, frame: Frame, tags: dict[str, str] = TAGS) -> None:
        console.frame(f"[#{app.exchange.number} {tags[frame.direction]} {text}", frame)
    printer = FramePrinter(upstream, show, verbose=settings.verbose)
    printer.by_path = by_binding  # a client's HTTP+JSON request in plain application/json is still one
    if not settings.verbose:  # a card in one line; --verbose and --trace keep it whole
        printer.summarize = lambda frame, text: _card_line(text)
    printers, pushes, traced = [printer], None, []
    if recorder is not None:  # a session may run for days: its trace is of its newest part, said when it drops
        traced.append(Window(recorder.records, lambda told: console.say(f"[proxy] {told['text']}"),
                             MOST_TRACED, MOST_TRACED_BYTES, keeper="--trace keeps"))
        console.listeners += [recorder.line, *traced]
    if settings.webhook:  # deliveries cross the other way: the agent sends, the client's receiver answers
        pushes = FramePrinter(upstream, lambda text, frame: show(text, frame, PUSH_TAGS), verbose=settings.verbose,
                              numbered_with=printer)  # a live page shows both, each frame by its number
        printers.append(pushes)
    for each in printers:
        each.listeners += [recorder.frame, *traced] if recorder is not None else []  # a printer keeps its newest frames
    if settings.step and read is None and not sys.stdin.isatty():
        console.say("[proxy] --step: stdin is not a terminal, so no one can press Enter: frames are not held")
    elif settings.step:
        holding = Holding(console.say, read or input)
        for each in printers:
            each.before_send = holding
            each.listeners.append(lambda frame: frame.direction == "<--" and not _is_stream(frame) and holding(frame))
    app = Proxy(settings.to, printer, console.say, faults, keep_card=settings.keep_card, pushes=pushes,
                hosts=tuple(settings.allow_host or ()),
                timeout=settings.timeout)
    app.holders += ([recorder] if recorder is not None else []) + ([pushes] if pushes is not None else [])

    def log(line: str) -> None:  # an incident, not each request answered, nor a fault (said already)
        if not _ANSWERED.fullmatch(line) and not line.endswith("as the app asked"):
            console.say(f"[proxy] client {line}")
    server = PeerServer(app, port=settings.port, log=log, tls=toward_client)
    try:
        leads, unknown = leads_back(settings.to, server.server_address[1]), f"was not resolved within {LOOKUP_SECONDS:g} s"
    except lookups.Busy as exc:  # not asked at all (a proxy built in a process already waiting on the resolver)
        leads, unknown = None, f"was {exc}"
    if leads:  # each request would come back to it, without end
        server.server_close()
        raise ValueError(f"--to {settings.to} is this proxy itself (127.0.0.1:{server.server_address[1]}): "
                         "it would forward every request to itself; name the agent's origin")
    if leads is None:  # not known: a name the resolver did not answer for in time (it takes no deadline)
        console.say(f"[proxy] --to {settings.to}: its host, at this proxy's port, {unknown}: it may name this "
                    "proxy itself, which would forward every request to itself")
    app.base = server.base_url
    if app.webhooks is not None:
        app.webhooks.base = server.base_url
    return server, app, upstream


def said_at_start(settings: Any, server: Any, app: Proxy, faults: Faults) -> list[str]:
    """Where the proxy listens and what it forwards to, its TLS, and each fault armed."""
    lines = [f"[proxy] listening on {server.base_url}, forwarding to {app.agent}"]
    lines += proxy_tls.banner(settings) if proxy_tls.asked(settings) else []
    return lines + [f"[proxy] fault armed: {fault.spec}" + (
        f" ({'after event' if fault.kind == 'cut-stream' else 'request'} {fault.number}, from --seed {settings.seed})"
        if "?" in fault.spec else "") for fault in faults.faults]


class Holding:
    """--step: each request held before it goes to the agent, each whole answer before it goes
    back (a stream's events pass as they arrive), until Enter, as the workbench's --step holds a
    frame (transports/stepping.py asks). Several clients: one prompt at a time, the others wait
    their turn. q or end of input ends the holding, not the proxy: frames then pass as they come."""

    def __init__(self, say: Callable[[str], None], read: Callable[[str], str]) -> None:
        from transports.stepping import Stepper
        self.say, self.stepper, self.holding = say, Stepper(read=read), True
        self._one_at_a_time = threading.Lock()

    def __call__(self, frame: Frame) -> None:
        with self._one_at_a_time:
            if not self.holding:
                return
            try:
                self.stepper(frame)
            except StopRun:
                self.holding = False
                self.say("[step] q or end of input: frames are no longer held, the proxy forwards each as it comes")


def by_binding(binding: str | None, headers: dict[str, str]) -> bool:
    """Whether a request names its operation by its verb and path: by the binding forward.py found
    it in (what its body is), not the media type a client claims; a card's GET, a HEAD, a push: by that."""
    return binding == HTTP_JSON.name if binding is not None else named_by_path(headers)


def _is_stream(frame: Frame) -> bool:
    return any(name.lower() == "content-type" and value.split(";")[0].strip().lower() == "text/event-stream"
               for name, value in frame.headers.items())


def _card_line(text: str) -> str | None:
    """A card the agent served, as one line (its name and how many interfaces it gives)."""
    from transports.codec import loads_strict
    try:
        document = loads_strict(text.encode())
    except ValueError:
        return None
    if not isinstance(document, dict) or not isinstance(document.get("name"), str):
        return None
    from peers.support.proxy.card import interface_urls
    return (f"the agent card of {document['name']!r}, {len(interface_urls(document))} interface URL(s) "
            "(--verbose shows it whole; --trace keeps it)")
