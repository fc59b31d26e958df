"""The page's "Proxy" panel: `proxy --to URL` started by the page and watched live, as a run is.

Issue 35, item 3. A proxy session is a run of the page (runs.py) whose work is not main()
but the proxy's own build() (peers/support/proxy/run.py), in this process: its printer is
the run's watched printer (`attach`, as every run's is) and its Console the run's, so each
frame from either side is an event as it crosses, tagged as the terminal tags it, each
annotation (`    ! ID LEVEL ...`) and each `[fault]` line an event as it is said, and the
sequence diagram is drawn again as for any run. As the command's flags do, `seed` draws a
'?' in a fault, `webhook` fronts the client's push receiver too (its deliveries are frames
of their own, through the proxy's printer of pushes), and `step` holds each request before
it goes to the agent and each whole answer before it goes back, until the page's Send (the
run's, one frame at a time: `Holding`). A session may run for hours, so its run is rolling
(keeping.py): it keeps its newest events and trace records, and the page is told how many
older ones it dropped. Stop (the run's) ends the session: what is held goes on, the proxy
stops serving and its connections to the agent close. Its URL is on 127.0.0.1, a
free port, as `proxy` listens: any program of this machine may send through it, as through
the command's; the page's own door (token, Host, Origin) is unchanged. What crosses is from
outside: masked as the printer masks, escaped by the Console, and shown by the page as text.
Not here: forwarding, faults, annotations (the proxy room), the door (server.py).
"""
from __future__ import annotations

import shlex
import threading

from peers.support.output import Kind
from peers.support.web.entered import Entered
from transports import sse
from transports.base import header, is_http_url
from transports.printer import Frame, StopRun
from transports.records import Record

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

TIMEOUT = 30.0  # seconds for one exchange with the agent, and a stream's silence: `proxy`'s own default
MOST_FAULTS = 8  # faults one session arms; `proxy` takes each as a --fault
LIFETIME = 8 * 3600.0  # a session the page forgot ends on its own after this
BOUND_WITHIN = 10.0  # seconds the page waits for the session's server to listen


class Settings(Record):
    """What the proxy's build() reads of `proxy`'s settings, as the page asks it (no TLS
    toward the client; `step` stays False: the page holds frames itself, with `Holding`)."""
    to: str
    fault: list[str]
    seed: int = 0
    port: int = 0
    timeout: float = TIMEOUT
    verbose: bool = False
    step: bool = False
    webhook: bool = False
    keep_card: bool = False
    trace: str | None = None
    ca: str | None = None
    tls: bool = False
    tls_cert: str | None = None
    tls_key: str | None = None
    client_cert: str | None = None
    client_key: str | None = None
    allow_host: tuple[str, ...] = ()  # the page's proxies answer at 127.0.0.1 and localhost only


def start(body: dict[str, Any], runs: Any) -> tuple[int, dict[str, Any]]:
    """POST /proxy {to, faults, seed, step, webhook, verbose}: a session started, as (status,
    JSON document): 201 with the run's id and key, the command that does the same in a
    terminal and the proxy's own URL to point a client at. Entered (entered.py: one line,
    naming its field) for what cannot be a session."""
    to, faults, seed = body.get("to"), body.get("faults", ""), body.get("seed", 0)
    if not (isinstance(to, str) and len(to) <= 2000 and is_http_url(to)):
        raise Entered("to", "the agent to front is an http(s) URL, its origin, as proxy --to takes it")
    from peers.support.proxy.run import not_an_origin
    problem = not_an_origin(to)  # a path or a query, said as --to says it
    if problem:
        raise Entered("to", problem)
    if not isinstance(faults, str):
        raise Entered("faults", "faults are --fault specs, separated by spaces")
    if type(seed) is not int or not 0 <= seed < 1 << 32:
        raise Entered("seed", "the seed is a whole number from 0 to 4294967295, as --seed takes it")
    flags = {name: body.get(name, False) for name in ("step", "webhook", "verbose")}
    if not all(isinstance(value, bool) for value in flags.values()):
        raise ValueError("step, webhook and verbose are true or false")
    specs = faults.split()
    if len(specs) > MOST_FAULTS:
        raise Entered("faults", f"at most {MOST_FAULTS} faults a session")
    from peers.support.proxy.faults import Faults, parse
    try:
        armed = Faults([parse(spec, seed) for spec in specs])  # one line, as --fault says it
    except ValueError as exc:
        raise Entered("faults", str(exc)) from None
    settings = Settings(to.rstrip("/"), specs, seed, verbose=flags["verbose"], webhook=flags["webhook"])
    session = Session(settings, armed)
    argv = ["proxy", "--to", settings.to] + [word for spec in specs for word in ("--fault", spec)] \
        + (["--seed", str(seed)] if seed else []) + [f"--{name}" for name, on in flags.items() if on]
    run = runs.start(argv, flags["step"], lambda: None, again=session.serve, rolling=True)
    if run is None:
        return 429, {"error": "three runs are going already; stop one or wait"}
    if not session.bound.wait(BOUND_WITHIN) or session.problem:
        run.ask("stop")
        return 400, {"error": session.problem or "the proxy did not start listening in time"}
    return 201, {"id": run.id, "key": run.key, "proxy": session.url,
                 "command": " ".join(shlex.quote(part) for part in ["python3", "a2a_delegation.py", *argv])}


class Session:
    """One proxy session: built, served and stopped in its run's thread (Run.start calls `serve`)."""

    def __init__(self, settings: Settings, faults: Any) -> None:
        self.settings, self.faults = settings, faults
        self.bound = threading.Event()  # set once the server listens, or could not
        self.url, self.problem = "", ""

    def serve(self, argv: list[str], run: Any) -> int:
        """The proxy, serving until the run is stopped; its exit status as `proxy`'s."""
        from peers.support.proxy.run import build, said_at_start
        try:
            server, app, upstream = build(self.settings, run.console, self.faults)
        except (ValueError, OSError) as exc:  # an https agent's TLS that cannot be set up, no port free
            self.problem = f"proxy: {getattr(exc, 'strerror', None) or exc}"
            run.console.say(self.problem, Kind.ERROR)
            self.bound.set()
            return 2
        printers = [app.printer] + ([app.pushes] if app.pushes is not None else [])  # pushes: --webhook's
        run.attach(app.printer, None, *printers[1:])
        holding = Holding(run)  # with step, each frame waits for the page's Send
        for printer in printers:
            printer.before_send = holding
            printer.listeners.append(lambda frame: frame.direction == "<--" and not sse.is_stream(
                header(frame.headers, "Content-Type")) and holding(frame))
        # A client's credentials, masked wherever an agent says them back: in the run's events,
        # its lines and its trace, as in the printer's frames.
        app.holders += [run, run.console, run.recorder]
        for line in said_at_start(self.settings, server, app, self.faults):
            run.console.say(line)
        run.console.say("[proxy] Stop ends it.")
        server.start()
        self.url = server.base_url
        self.bound.set()
        try:
            with run.changed:
                stopped = run.changed.wait_for(lambda: run.stopping, timeout=LIFETIME)
        finally:
            server.stop()
            upstream.close()
        run.console.say("[proxy] stopped." if stopped else f"[proxy] stopped after {LIFETIME / 3600:g} hours; "
                        "start another")
        return 0


class Holding:
    """`step`, in the page: a request held before it goes to the agent, a whole answer before
    it goes back (a stream's events pass as they arrive), until the page's Send, as a run in
    step mode holds a frame (runs.py). Several clients: one frame at a time, the others wait
    their turn. Stop, or no Send within the run's patience, ends the holding: frames then pass."""

    def __init__(self, run: Any) -> None:
        self.run, self.holding, self._one_at_a_time = run, True, threading.Lock()

    def __call__(self, frame: Frame) -> None:
        with self._one_at_a_time:
            if not self.holding:
                return
            try:
                self.run.before_send(frame)  # returns at once unless the session was started with step
            except StopRun:
                self.holding = False
                if not self.run.stopping:
                    self.run.console.say("[step] no Send came in time: frames are no longer held, "
                                         "the proxy forwards each as it comes")
