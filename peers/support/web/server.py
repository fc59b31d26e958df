"""`a2a_delegation.py web`: the live page's server, on 127.0.0.1 only, and its door.

The page can start runs, send frames and write the allowlist file, so any web page the
person has open elsewhere must not be able to do the same. Every request passes `door`:
- the Host must be 127.0.0.1:PORT or localhost:PORT, so a name rebound to 127.0.0.1 by a
  hostile DNS server reaches nothing (DNS rebinding);
- the token printed at start-up comes in the X-Workbench-Token header (constant-time
  compare); what a browser fetches itself, with no header of ours (a run's event stream,
  trace, step-through view), comes with that run's own key in its address, which opens that
  run's alone: browser history holds no page token. Never a cookie: a browser sends those of
  127.0.0.1 to all its ports. The page keeps the token in memory and its tab's sessionStorage
  (per port, unlike a cookie; a reload keeps it). The page, script and style hold no secret;
- a request that changes something (every POST) must carry the page's own Origin (CSRF).
Every answer carries a Content-Security-Policy that allows no inline script and nothing
from elsewhere, and is not cached. The server is the peers' own (transports/server.py):
strict parsing, bounded bodies, a deadline per request, a bounded number of connections.
A run's frames reach the page as server-sent events (runs.py); the page is live.html, .js
and .css. Not here: how a run is told (main(), session.py)."""
from __future__ import annotations

import hmac
import json
import os
import secrets
import shlex
import threading
from functools import partial
from urllib.parse import parse_qs, urlsplit

from peers.a2a import wire_format
from peers.support.output import Console, Kind
from peers.support.web import agent, allowlist, outside, tools
from peers.support.web.entered import FOLLOW, Entered, document_of, field, run_flags
from peers.support.web.pages import STATIC, headers, lessons, static, steps_view
from peers.support.web.conversation import Conversation, Conversations
from peers.support.web.runs import Run
from peers.support.web.runs_by_id import STOP_SECONDS, Runs
from transports.base import Body, HttpRequest, HttpResponse
from transports.codec import Limits

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable

FETCHED = ("events", "trace.jsonl", "steps.html")  # a run's, asked for by the browser itself: by the run's key
MAX_BODY = 1 << 20  # an allowlist of a few hundred entries; nothing the page sends is bigger
REQUEST_LIMITS = Limits(max_bytes=MAX_BODY, max_depth=16, max_containers=10_000)
REQUEST_TIMEOUT = 10.0  # seconds for a whole request to arrive, however it is dripped
MAX_CONNECTIONS = 128  # a browser opens about six a page, each event stream one (never closed for room)
STREAM_WAIT = 15.0  # seconds between keep-alive comments on an idle event stream
STREAM_LIFETIME = 3600.0  # an event stream ends after this; the browser reconnects where it left off
WORKERS = 64  # the page's server's threads
MOST_STREAMS = WORKERS // 2  # event streams open at once: each holds one of the workers while open


class WebApp:
    """The page's app (an App, as a peer's is): the door, then one route per path."""

    def __init__(self, port: int, token: str, runs: Runs, allowlist_path: str) -> None:
        self.hosts, self.token = {f"127.0.0.1:{port}", f"localhost:{port}"}, token
        self.runs, self.allowlist_path = runs, allowlist_path
        self.conversations = Conversations()  # the page's, each with the card and token it has had
        self.scratch, self.closing = allowlist.Scratch(), False  # the edited allowlists' folder: removed by close()
        self.streams = threading.BoundedSemaphore(MOST_STREAMS)  # a place for each open event stream

    def __call__(self, request: HttpRequest) -> HttpResponse:
        url = urlsplit(request.url)
        refused = self.door(request, url.path, parse_qs(url.query).get("key", [""])[0])
        if refused:
            return refused
        try:
            return self.route(request, url.path)
        except ValueError as exc:  # what was entered, or a body not as asked: one line, in its own words,
            return _answer(400, {"error": str(exc), "field": exc.field if isinstance(exc, Entered) else ""})  # and where

    def door(self, request: HttpRequest, path: str, key: str) -> HttpResponse | None:
        """None when the request may go on; else its refusal, saying why in one line."""
        host = request.header("host") or ""
        if host not in self.hosts:
            return _answer(421, {"error": "this page answers only at 127.0.0.1 or localhost on its own port"})
        if request.method == "GET" and path in STATIC:
            return None  # the page, its script and style: nothing secret in them
        parts = path.strip("/").split("/")
        run = self.runs.get(parts[1]) if len(parts) == 3 and parts[0] == "runs" and parts[2] in FETCHED else None
        if request.method == "GET" and run is not None and key and hmac.compare_digest(key.encode(), run.key.encode()):
            return None  # what the browser fetches itself, of the run this key is for
        given = request.header("x-workbench-token") or ""
        if not (given and hmac.compare_digest(given.encode(), self.token.encode())):
            return _answer(401, {"error": "no token: open the URL the web command printed"})
        if request.method != "GET" and request.header("origin") != f"http://{host}":
            return _answer(403, {"error": "a change must come from the page itself (its Origin)"})
        return None

    def route(self, request: HttpRequest, path: str) -> HttpResponse:
        parts, method = path.strip("/").split("/"), request.method
        if method == "GET" and path in STATIC:
            return static(path)
        if method == "GET" and path == "/lessons":
            return _answer(200, {"runs": lessons(), "wires": list(wire_format.NAMES)})
        if path == "/allowlist":
            if method != "POST":  # GET reads it; POST checks or saves it; any other verb is none of the page's
                return _answer(200, {"path": self.allowlist_path, "text": allowlist.read(self.allowlist_path)}) \
                    if method == "GET" else _answer(405, {"error": "the allowlist takes GET and POST"}, Allow="GET, POST, HEAD")
            document = document_of(request.body, REQUEST_LIMITS)  # read once, for both fields
            text = field(document, "text")
            if field(document, "save", bool, False):
                problem = allowlist.save(self.allowlist_path, text)
                return _answer(400 if problem else 200, {"problem": problem, "saved": not problem})
            problem, entries = allowlist.check(text, self.scratch.folder)
            return _answer(200, {"problem": problem, "entries": entries})
        if method == "POST" and path == "/runs":
            return self.start(request)
        if method == "POST" and path == "/agent":  # an operation on the agent the URL field names
            return self.talk(request)
        tool = tools.route(request, path, self.allowlist_path, self.runs)  # check, an entry, curl, a diff
        if tool is not None:
            return _answer(*tool)
        if method == "POST" and path == "/traces":  # a saved run, opened: checked as --replay checks it
            opened = self.runs.opened(field(document_of(request.body, REQUEST_LIMITS), "text"))
            return _answer(201, {"id": opened.id, "key": opened.key, "command": "a saved run"})
        run = self.runs.get(parts[1]) if len(parts) == 3 and parts[0] == "runs" else None
        if run is None:
            return _answer(404, {"error": "no such page or run"})
        if method == "GET" and parts[2] == "events":  # a tab's stream, or a page closed without closing it
            if not self.streams.acquire(blocking=False):
                return _answer(503, {"error": f"{MOST_STREAMS} event streams are open already: close a page or two"})
            return HttpResponse(200, {**headers(), "Content-Type": "text/event-stream"},
                                Body(self.stream(run, _after(request.header("last-event-id"))),
                                     lambda completed: self.streams.release()))
        if method == "GET" and parts[2] == "trace.jsonl":
            body = "".join(json.dumps(record) + "\n" for record in run.records()).encode()
            return HttpResponse(200, {**headers(), "Content-Type": "application/jsonl",
                                      "Content-Disposition": f'attachment; filename="run-{run.id}.jsonl"'}, body)
        if method == "GET" and parts[2] == "steps.html":  # the finished run in the step-through view
            return steps_view(run.records())
        if method == "POST" and parts[2] in ("send", "stop"):
            run.ask(parts[2])
            return _answer(200, {"asked": parts[2]})
        return _answer(404, {"error": "no such page or run"})

    def start(self, request: HttpRequest) -> HttpResponse:
        """POST /runs: the essay's run or a lesson, with the transport and wire asked for (entered.py)."""
        document = document_of(request.body, REQUEST_LIMITS)
        argv, peer, scheme, secret = run_flags(document, {entry["name"] for entry in lessons()}, wire_format.NAMES)
        credentials = agent.credentials(peer, scheme, secret) if peer else {}  # for its origin alone
        return self.launch(document, argv, "{command}", credentials)

    def talk(self, request: HttpRequest) -> HttpResponse:
        """POST /agent: one operation on the agent at the page's URL field (web/agent.py)."""
        document = document_of(request.body, REQUEST_LIMITS)
        asked, argv, credentials = agent.asked(document, FOLLOW)
        kept = self.conversations.of(document, asked.card_url)  # its card and token, had once (conversation.py)
        shown = f"{asked.operation}, from the page, to the agent `{{command}}` finds"
        return self.launch(document, argv, shown, credentials, partial(outside.talk, asked), kept)

    def launch(self, document: Any, argv: list[str], shown: str,
               credentials: dict[str, Any] | None = None, story: Callable[..., Any] | None = None,
               conversation: Conversation | None = None) -> HttpResponse:
        """A run of `argv` with the page's allowlist (checked by the loader first), started;
        `shown` says it, with {command}: the command that does the same in a terminal; `document`
        is the request's body, read (its allowlist and step fields)."""
        saved = allowlist.read(self.allowlist_path)
        text = field(document, "allowlist", str, "") or saved
        problem, path, remove = allowlist.for_a_run(text, self.scratch.folder)
        if problem:
            return _answer(400, {"error": problem, "field": "allowlist"})
        named = self.allowlist_path if text == saved else allowlist.kept(text, self.scratch.folder)  # kept: the command reads it
        command = " ".join(shlex.quote(part) for part in ["python3", "a2a_delegation.py", *argv, "--allowlist", named]) \
            + (" --credentials FILE (the credential entered, in a credential store: never shown)" if credentials else "")
        run = self.runs.start(argv + ["--allowlist", path], field(document, "step", bool, False), remove,
                              credentials, story, conversation)
        if run is None:
            remove()
            return _answer(429, {"error": "three runs are going already; stop one or wait"})
        return _answer(201, {"id": run.id, "key": run.key, "command": shown.replace("{command}", command)})

    def stream(self, run: Run, index: int) -> Any:
        """The run's events from `index` on, as server-sent events, each with its number as
        its id (a reconnecting browser sends the last in Last-Event-ID); ends with the run."""
        index, waited = min(index, len(run.events)), 0.0  # an id past the last (stale, made up): what comes next
        while not self.closing and waited < STREAM_LIFETIME:
            if run.events.ended_by(index):  # over, its end sent already (a browser back after it): nothing more comes
                return
            index, events = run.events_after(index, STREAM_WAIT)  # from the oldest kept, if some were dropped
            if not events:
                waited += STREAM_WAIT
                yield b": still running\n\n"
                continue
            for event in events:
                index += 1
                yield f"id: {index}\ndata: {json.dumps(event)}\n\n".encode()
            if events[-1]["type"] == "end":
                return


def listening(port: int, allowlist_path: str, again: Callable[[list[str], Any], int], *,
              request_timeout: float = REQUEST_TIMEOUT) -> tuple[Any, WebApp, str]:
    """The page's server, bound to 127.0.0.1:`port` and serving: (server, app, URL with its token)."""
    from transports.server import PeerServer
    token = secrets.token_urlsafe(24)
    server = PeerServer(None, "127.0.0.1", port, request_timeout=request_timeout, max_body=MAX_BODY,
                        max_connections=MAX_CONNECTIONS, max_workers=WORKERS, log=lambda line: None)
    app = server.app = WebApp(server.server_address[1], token, Runs(again), allowlist_path)
    return server.start(), app, f"{server.base_url}/?token={token}"


def serve(settings: Any, console: Console, again: Callable[[list[str], Any], int]) -> int:
    """Serve the page until Ctrl-C or SIGTERM; print its URL with the token. Returns 0, or 2
    when it cannot listen on the port."""
    import signal
    import threading, time  # noqa: E401
    asked: list[int] = []  # signals come. The handler takes no lock: an Event's set() hung on the one its wait() held
    if threading.current_thread() is threading.main_thread():  # before anything is made: a signal only asks to stop
        for each in (signal.SIGINT, signal.SIGTERM):  # (raised mid-start-up, Ctrl-C left the page's folder behind)
            signal.signal(each, lambda signum, frame: asked.append(signum))
    from transports.named_files import on_disk
    try:  # a file the page reads and saves: absent it is made on saving, but a folder or a pipe never serves
        if os.path.lexists(settings.allowlist):
            on_disk(settings.allowlist)
    except OSError as exc:
        console.say(f"--allowlist: {exc.strerror}; the page reads and saves the allowlist as a file", Kind.ERROR)
        return 2
    try:
        server, app, url = listening(settings.port, settings.allowlist, again)
    except OSError as exc:  # a port in use, or not ours to take: one line and 2, as `serve` says it
        console.say(f"cannot serve the page on 127.0.0.1:{settings.port}: {exc.strerror or exc}", Kind.ERROR)
        return 2
    console.say(f"[web] the live page: {url}")
    console.say("[web] on 127.0.0.1 only; the token is this page's alone. Ctrl-C or SIGTERM stops it.")
    console.out.flush()
    if settings.open:
        import webbrowser
        if not webbrowser.open(url):  # no browser this machine knows of: the person opens it
            console.say(f"--open found no browser to open; open {url} in one", Kind.WARNING)
    while not asked:  # a second Ctrl-C only asks again: it cannot cut the clean-up short
        time.sleep(0.1)
    console.say(f"[web] stopping: waiting up to {STOP_SECONDS:g} s for the runs going to end (a lesson's clean-up)")
    close(server, app)
    console.say("[web] stopped.")
    return 0


def close(server: Any, app: WebApp) -> None:
    """Stop every run before its next frame, end the event streams, stop serving, and remove
    the allowlist texts the page sent (its Scratch folder)."""
    app.closing = True
    app.runs.stop_all()
    server.stop()
    app.scratch.remove()




def _after(last_event_id: str | None) -> int:
    text = (last_event_id or "").strip()  # a browser's Last-Event-ID: the events after it
    return int(text) if text.isascii() and text.isdigit() and len(text) < 9 else 0


def _answer(status: int, document: dict[str, Any], **more: str) -> HttpResponse:
    return HttpResponse(status, {**headers(), "Content-Type": "application/json", **more}, json.dumps(document).encode())
