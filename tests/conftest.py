"""Shared helpers: the CLI as a subprocess, a support agent wired to the real demo peers
over the real in-process transport, and loopback servers for the HTTP tests (each binds
127.0.0.1 port 0, has timeouts, and is stopped when its test ends). `misbehaving_peer`
is a deliberately broken peer (a fixture playing a peer we do not own), not a stand-in
for any of our code."""
import contextlib
import faulthandler
import io
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

import a2a_delegation as story
from peers import billing, demo
from peers.a2a import wire_essay, wire_v10
from peers.a2a.wire_format import by_name
from peers.app import PeerApp
from peers.ledger import WAITING
from peers.support.calling.config import AllowEntry, load_registry
from peers.support.output import Console
from transports.inprocess import InProcessTransport
from transports.network import HttpTransport
from transports.printer import FramePrinter
from transports.server import PeerServer

# A suite started in the background (`cmd &` in a script) inherits SIGINT ignored, and so would
# each process a test starts, whose Ctrl-C tests would then wait in vain. Python's handler here
# becomes the default in every child (exec resets a handled signal), as at a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"
BILLING = AllowEntry("billing-agent", "https://billing.acme.example/a2a")
ROGUE = AllowEntry("refund-bot-9000", "https://refunds-r-us.example/a2a")
CARDS = load_registry(str(ROOT / "registry.json"))
BILLING_CARD, ROGUE_CARD = CARDS
# A refund frame as a client would send it, and the headers of a client holding the token
# "t0k" that the `billing_server` fixture's peer requires.
FRAME = (b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/send", '
         b'"params": {"skill": "process_refund", "input": {"order_id": "ORD-1", "amount": 5}}}')
JSON_AUTH = {"Content-Type": "application/json", "Authorization": "Bearer t0k"}


@pytest.fixture(scope="session", autouse=True)
def temporary_folder(tmp_path_factory):
    """The session's temporary files, ours and every subprocess's, in one folder of their own
    (TMPDIR), so what a test leaves behind is found whatever else runs on the machine: the
    session fails naming it, and the folder is removed either way. pytest's own tmp_path
    folders stay where pytest keeps them between runs."""
    tmp_path_factory.getbasetemp()
    folder = tempfile.mkdtemp(prefix="a2a-tests-")
    before = os.environ.get("TMPDIR"), tempfile.tempdir
    os.environ["TMPDIR"] = tempfile.tempdir = folder
    yield folder
    if before[0] is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = before[0]
    tempfile.tempdir = before[1]
    left = sorted(os.listdir(folder))
    shutil.rmtree(folder, ignore_errors=True)
    assert left == [], f"the tests left these in the temporary folder: {left}"


@pytest.fixture(scope="session", autouse=True)
def bytecode_cache(tmp_path_factory):
    """Every Python the tests start shares one cache of compiled modules, in pytest's own
    temporary folder (PYTHONPYCACHEPREFIX): the workbench is compiled once a session, not
    again by each of the hundreds of subprocesses, and the checkout gets no __pycache__."""
    before = {name: os.environ.get(name) for name in ("PYTHONPYCACHEPREFIX", "PYTHONDONTWRITEBYTECODE")}
    os.environ["PYTHONPYCACHEPREFIX"] = str(tmp_path_factory.mktemp("bytecode"))
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    yield
    for name, value in before.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def refund_frame(order_id: str, amount: float = 5, request_id: int = 1) -> bytes:
    """A refund frame on the essay's wire for one order (an order is refunded only once)."""
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tasks/send", "params": {
        "skill": "process_refund", "input": {"order_id": order_id, "amount": amount}}}).encode()


def cli_process(*args, cwd=ROOT, stdin=None, env=None, timeout=30, pass_fds=()):
    """The workbench as a learner runs it: a subprocess, its output captured (its bytecode
    in the session's cache: see `bytecode_cache`). For what only a process shows: its
    imports, signals, exit status on a closed pipe, a server that runs until stopped."""
    env = dict(os.environ, **(env or {}))
    return subprocess.run([sys.executable, str(ROOT / "a2a_delegation.py"), *args], cwd=cwd,
                          input=stdin, capture_output=True, text=True, timeout=timeout, env=env, pass_fds=pass_fds)


RUNS_UNTIL_STOPPED = ("serve", "web")  # servers: they install signal handlers and wait for one


def cli(*args, cwd=ROOT, stdin=None, env=None, timeout=30):
    """A run of the workbench with its command line, what it printed and its exit status (a
    CompletedProcess, as cli_process gives): `main(args)` called in this process, its stdout,
    stderr and stdin replaced, and `env` and `cwd` set for the run and put back after. It is
    the same code a process runs (the live page runs main the same way for each run), short
    of Python's start-up, which costs more than most runs themselves. `timeout` is the
    process's; here the suite's per-test limit stands in for it."""
    if (args and args[0] in RUNS_UNTIL_STOPPED) or threading.current_thread() is not threading.main_thread():
        # A server waits for a signal; runs side by side would share this process's stdout.
        return cli_process(*args, cwd=cwd, stdin=stdin, env=env, timeout=timeout)
    out, err, before, here = io.StringIO(), io.StringIO(), dict(os.environ), os.getcwd()
    stdin_before = sys.stdin
    try:
        os.environ.update(env or {})
        os.chdir(cwd)
        sys.stdin = io.StringIO(stdin or "")
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = story.main(list(map(str, args)))
            except SystemExit as exc:  # a flag parser's refusal: as Python ends a process for it
                status = exc.code if isinstance(exc.code, int) or exc.code is None else 1
                if not isinstance(exc.code, (int, type(None))):
                    print(exc.code, file=sys.stderr)
    finally:
        sys.stdin = stdin_before
        os.chdir(here)
        os.environ.clear()
        os.environ.update(before)
    return subprocess.CompletedProcess(["a2a_delegation.py", *args], status or 0, out.getvalue(), err.getvalue())


TEST_SECONDS = 120  # no test waits for ever: past this, it fails with every thread's stack


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    """Fail a test that runs over TEST_SECONDS, naming where each thread was, rather than
    let one wait (a read of a silent child, a server that never answers) hang the suite."""
    def too_long(signum, frame):
        faulthandler.dump_traceback(all_threads=True)
        # pytest.fail raises a BaseException: code under test that catches OSError or Exception
        # (a TimeoutError is both) cannot take it for a slow peer and carry on.
        pytest.fail(f"{item.nodeid} ran over {TEST_SECONDS} s (every thread's stack is above)", pytrace=False)
    previous = signal.signal(signal.SIGALRM, too_long)
    signal.alarm(TEST_SECONDS)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


STARTED: list = []  # every Child, so that none a test started outlives it (left_running)


@pytest.fixture(autouse=True)
def left_running():
    """A child a test started and did not stop (it failed first, say) is killed as the test
    ends: a server left running would hold its port and files for the rest of the run."""
    before = len(STARTED)
    yield
    for child in STARTED[before:]:
        if child.poll() is None:
            child.kill()
            child.wait()
    del STARTED[before:]


class Child(subprocess.Popen):
    """A process a test started (stdout a pipe, text) whose output is read with a deadline:
    `until(marker)` is the lines up to the first holding `marker`. A child that stays silent,
    or exits first, is killed and fails the test with what it printed. The pipe is read
    straight from its descriptor, so `communicate()` still reads the rest afterwards."""

    def __init__(self, args, **kwargs):
        kwargs.setdefault("stdout", subprocess.PIPE)
        kwargs.setdefault("text", True)
        super().__init__(args, **kwargs)
        self.seen: list[str] = []
        self._partial = b""
        STARTED.append(self)

    def until(self, marker: str, seconds: float = 20) -> list[str]:
        deadline = time.monotonic() + seconds
        while not any(marker in line for line in self.seen):
            left = deadline - time.monotonic()
            ready = left > 0 and select.select([self.stdout], [], [], left)[0]
            chunk = os.read(self.stdout.fileno(), 65536) if ready else b""
            if not chunk:
                self._fail(f"no line holding {marker!r} " + ("before it exited" if ready else f"within {seconds} s"))
            *whole, self._partial = (self._partial + chunk).split(b"\n")
            self.seen += [line.decode("utf-8", "replace") + "\n" for line in whole]
        return self.seen[:next(n for n, line in enumerate(self.seen) if marker in line) + 1]

    def _fail(self, why: str) -> None:
        self.kill()
        try:
            _, err = self.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            err = ""
        printed = "".join(self.seen) + self._partial.decode("utf-8", "replace")
        pytest.fail(f"{why}: {self.args}\nit printed: {printed[-2000:]!r}\nstderr: {(err or '')[-2000:]!r}")

    def stop(self, sig: int = signal.SIGTERM) -> tuple[str, str]:
        """Signal it and wait for it to go (killed after 10 s): what else it printed."""
        self.send_signal(sig)
        try:
            return self.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()
            return self.communicate(timeout=10)


def start_serve(*args, env=None, stderr=subprocess.PIPE):
    """`a2a_delegation.py serve ARGS` and its banner, read up to how to stop it: (process, lines)."""
    process = Child([sys.executable, str(ROOT / "a2a_delegation.py"), "serve", *args], stderr=stderr,
                    env=dict(os.environ, **(env or {})))
    return process, process.until("Ctrl-C")


def base_url(banner_line: str) -> str:
    """The base URL a `[serve] NAME listening on URL ...` line names."""
    return banner_line.split("listening on ")[1].split()[0]


SHARED_RUNS: dict = {}


def cli_once(*args, runner=None):
    """cli(*args), run once a session and its output shared by every test that reads it: for
    runs of the checkout as it is, given no input, which print the same each time (the golden
    transcripts and the both-transports tests hold them to that)."""
    if args not in SHARED_RUNS:
        SHARED_RUNS[args] = (runner or cli)(*args)
    return SHARED_RUNS[args]


@pytest.fixture(scope="session")
def new_key(tmp_path_factory):
    """One key made by `python3 -m peers.signing.new_key`, shared by the tests that read what
    the tool made (finding an RSA key in pure Python takes about a second): (file, the run)."""
    path = tmp_path_factory.mktemp("new-key") / "key.pem"
    done = subprocess.run([sys.executable, "-m", "peers.signing.new_key", str(path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    return path, done


def cli_together(*runs: tuple) -> list:
    """cli_once for each tuple of flags in `runs`, four at a time (a lesson's run mostly waits
    on its peers' timings: run side by side, they wait once); in the order given. Each is a
    process: runs in this one share its stdout, so they cannot overlap."""
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(min(len(runs), 4)) as pool:
        return list(pool.map(lambda flags: cli_once(*flags, runner=cli_process), runs))


FINGERPRINT = re.compile(r"\*{4}#[0-9a-f]{4}")  # a masked secret's: a fresh token each run has a new one


def lesson(name, *extra):
    """A lesson's runs over both transports, which must print the same lines (bar the
    banner, and the fingerprints of the fresh secrets each run makes) and end the same:
    (the in-process run, its lines without the banner)."""
    runs = cli_together(*[("--scenario", name, *extra, *carrier) for carrier in ([], ["--transport", "http"])])
    shown = [[line for line in done.stdout.splitlines() if not line.startswith("[transport]")] for done in runs]
    same = [[FINGERPRINT.sub("****#", line) for line in lines] for lines in shown]
    assert same[0] == same[1], "the same frames, byte for byte, in process and over HTTP"
    assert runs[0].stderr == runs[1].stderr and runs[0].returncode == runs[1].returncode
    return runs[0], shown[0]


def frames(lines, arrow):
    """The JSON frames among printed lines, those going `arrow` ("-->" or "<--")."""
    return [json.loads(line[4:]) for line in lines if line.startswith(arrow + " {")]


def lesson_settings(name):
    """What the lesson `name` asks of the demo peers (its LESSON.peers); {} for none."""
    from peers.support.lessons import find
    return find(name).LESSON.peers if name else {}


def following_in(options):
    """`options` with stream=, no_wait= ("poll", "push") and patience= said as one Following."""
    from peers.support.calling.follow import Following
    if not {"stream", "no_wait", "patience"} & set(options):
        return options
    options = dict(options)
    following = Following(options.pop("no_wait", "") or "wait", options.pop("stream", False),
                          options.pop("patience", 10.0))
    return {**options, "following": following}


def support_agent(allowlist, *, apps=None, wire="essay", printed=False, scenario=None, **options):
    """A support agent wired to the demo peers (plus `apps`, and what the lesson `scenario`
    asks of them) through a recording printer.
    printed=True prints lines and frames to stdout (for capsys). Returns (agent, printer, apps)."""
    network = demo.network(by_name(wire), lesson_settings(scenario), log=lambda line: None)
    apps = {**network.apps, **(apps or {})}
    console = Console(colour=False) if printed else None
    printer = FramePrinter(InProcessTransport(apps), console.frame if console else None)
    say = console.say if console else (lambda *args, **facts: None)
    agent = story.SupportAgent(printer, allowlist, network.credentials, say, **following_in(options))
    return agent, printer, apps


@contextlib.contextmanager
def serving(app, **kwargs):
    server = PeerServer(app, "127.0.0.1", 0, **kwargs).start()
    try:
        yield server
    finally:
        server.stop()


def agent_card(base: str, name: str = "a", **fields) -> bytes:
    """A plain A2A 1.0 card of an agent a test plays, its JSON-RPC interface at `base`/a2a and one skill `s`;
    `fields` are top-level fields added or put in place of these (capabilities, skills ...)."""
    return json.dumps({
        "name": name, "description": "d", "version": "1",
        "supportedInterfaces": [{"url": base + "/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "s", "description": "d", "tags": []}], **fields}).encode()


def exchange(connection, method: str, path: str, body=b"", headers=None):
    """One request on an http.client connection a test made (plain or TLS, to a server it started), closed
    after: (status, headers, body)."""
    try:
        connection.request(method, path, body=body, headers=headers or {})
        answer = connection.getresponse()
        return answer.status, dict(answer.getheaders()), answer.read()
    finally:
        connection.close()


def refund_agent_card(base: str, **fields) -> bytes:
    """agent_card for an agent named "agent" whose one skill is the refund the support agent asks, taking JSON."""
    return agent_card(base, "agent", defaultInputModes=["application/json"],
                      skills=[{"id": "process_refund", "name": "s", "description": "d", "tags": []}], **fields)


class OutsidePeer(BaseHTTPRequestHandler):
    """A peer we do not own, played by a test (http.server, not our server): HTTP/1.1, silent,
    each answer one JSON document, with `extra_headers` beside it (a hostile peer's fill them)."""
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are two writes: no delayed ACK between them
    extra_headers: dict = {}

    def log_message(self, *args):
        pass

    def asked(self):
        return json.loads(self.rfile.read(int(self.headers["Content-Length"])))

    def reply(self, document):
        self.send(200, json.dumps(document).encode(), headers=self.extra_headers.items())

    def send(self, status, body, content_type="application/json", headers=()):
        """One whole answer; a HEAD's, or a 304's, without its body (RFC 9110 9.3.2, 15.4.5)."""
        self.send_response(status)
        for name, value in [("Content-Type", content_type), *headers, ("Content-Length", str(len(body)))]:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD" and status != 304:
            self.wfile.write(body)


class StreamingRefundAgent(OutsidePeer):
    """An agent a test plays whose card offers the refund skill and streaming (refund_agent_card); its POSTs the test's."""

    def do_GET(self):
        self.send(200, refund_agent_card(f"http://127.0.0.1:{self.server.server_port}", capabilities={"streaming": True}))


@contextlib.contextmanager
def outside_peer(handler, **server_attributes):
    """`handler` (an OutsidePeer) served on 127.0.0.1, port 0, from a thread: its base URL;
    stopped when the block ends. `server_attributes` are set on the server for it to read."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    for name, value in server_attributes.items():
        setattr(server, name, value)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


NO_CHROMIUM = ("headless Chromium is not installed here (Debian's chromium package; .ci/run installs it "
               "where the machine allows)")


@pytest.fixture(scope="session")
def chromium():
    """One headless Chromium for every page test of the session (tests/chromium.py): each test
    opens its own tab, the cookies cleared first. Skips, saying why, where it is absent."""
    from chromium import CHROMIUM, Chromium
    if not CHROMIUM:
        pytest.skip(NO_CHROMIUM)
    browser = Chromium()
    yield browser
    browser.close()


@pytest.fixture
def billing_server():
    app = PeerApp(billing.billing_agent(), wire_essay, token="t0k")
    with serving(app, idle_timeout=2.0) as server:
        yield server


def raw_exchange(address, data: bytes, *, timeout=3.0, wait_close=True) -> bytes:
    """Send raw bytes, return everything the server answers before closing (bounded)."""
    with socket.create_connection(address, timeout=timeout) as sock:
        sock.sendall(data)
        chunks, deadline = [], time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                break
            if not chunk:
                break
            chunks.append(chunk)
            if not wait_close and b"\r\n\r\n" in b"".join(chunks):
                break
        return b"".join(chunks)


@pytest.fixture
def misbehaving_peer():
    """Start a peer that serves a valid card, then misbehaves on POST in the given way."""
    servers, release = [], threading.Event()

    def start(mode: str):
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def reply(self, status, body, ctype="application/json"):
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                if mode == "slow-card":
                    release.wait(5)
                    return
                base = f"http://127.0.0.1:{self.server.server_address[1]}"
                card = wire_essay.card_to_wire(billing.billing_agent(base).card)
                self.reply(200, json.dumps(card).encode())

            def do_POST(self):
                asked = self.rfile.read(int(self.headers["Content-Length"]))
                if mode.startswith("error:"):  # a JSON-RPC error object with this code, for the request's id
                    self.reply(200, json.dumps({"jsonrpc": "2.0", "id": json.loads(asked)["id"], "error": {
                        "code": int(mode.split(":")[1]), "message": "as the test asked"}}).encode())
                elif mode == "slow":
                    release.wait(5)  # longer than the client's read timeout
                elif mode == "not-json":
                    self.reply(200, b"<html>refund done!</html>", "text/html")
                elif mode == "http-500":
                    self.reply(500, b"<h1>Internal Server Error</h1>", "text/html")
                elif mode == "close":
                    self.close_connection = True  # hang up without a word

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield start
    release.set()
    for server in servers:
        server.shutdown()
        server.server_close()


def free_port() -> int:
    """A loopback port nothing listens on, for a server started in a subprocess on a port it is told: drawn below
    the kernel's ephemeral range, which every port-0 bind and outgoing connection of the parts run at once draws
    from (a port found free there was taken, now and then, before the server bound it: Address already in use).
    Never one this process was given before: two drawn for one test came out the same once (a proxy --to itself)."""
    from transports.ports import spare_port
    for _ in range(100):
        port = spare_port()
        if port not in _GIVEN:
            _GIVEN.add(port)
            return port
    raise RuntimeError("no port not given before was found free")


_GIVEN: set[int] = set()  # the ports free_port gave, in this process: a few hundred at most


def loopback_source(address: str) -> tuple[str, int]:
    """A client's source address (127.0.0.x, any port), for a server that counts callers by address; the test
    skipped where the platform binds only 127.0.0.1."""
    try:
        with socket.socket() as probe:
            probe.bind((address, 0))
    except OSError as exc:
        pytest.skip(f"cannot bind a client to {address} here ({exc}): one loopback address only")
    return (address, 0)


SILENT = ".silent.test"  # host names `silent_resolver` never answers for


class SilentResolver:
    def __init__(self) -> None:
        self.released = threading.Event()

    def fill(self) -> None:
        """Every place transports/lookups.py keeps for lookups waiting on the resolver, taken by one each."""
        from transports import lookups
        for n in range(lookups.MOST_WAITING):  # each waits on the resolver after its asker has gone on
            assert lookups.addresses(f"pending-{n}{SILENT}", time.monotonic() + 0.05) is None


@pytest.fixture
def silent_resolver(monkeypatch):
    """The system's resolver, but one that never answers for a name ending in SILENT (an address written out
    asks it nothing), as a resolver may: the stdlib's takes no deadline. As the test ends the silent lookups
    end, and their threads are waited for, so that their places are free again for the tests after it."""
    silent, resolve = SilentResolver(), socket.getaddrinfo

    def answering(host, *args, **kwargs):
        if isinstance(host, str) and host.endswith(SILENT) and not kwargs.get("flags", 0) & socket.AI_NUMERICHOST:
            silent.released.wait(30)
            raise socket.gaierror("no answer")
        return resolve(host, *args, **kwargs)
    monkeypatch.setattr(socket, "getaddrinfo", answering)
    yield silent
    silent.released.set()
    for thread in [each for each in threading.enumerate() if each.name == "lookup"]:
        thread.join(5)


@pytest.fixture
def closed_port():
    """A loopback port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# A 1.0 client of one served billing peer, and the fixture that runs a test on each carrier.
HEADERS = {"Content-Type": "application/json", "Authorization": "Bearer t0k", "A2A-Version": "1.0"}


class Client:
    """A 1.0 client of one billing peer, over the carrier the test names."""

    def __init__(self, carrier: str, server=None, wire=wire_v10) -> None:
        if carrier == "http":
            self.peer = billing.billing_agent(server.base_url)
            server.app = self.app = PeerApp(self.peer, wire, token="t0k")
            self.url, self.transport = server.base_url + "/a2a", HttpTransport(timeout=5)
        else:
            self.peer = billing.billing_agent()
            self.app = PeerApp(self.peer, wire, token="t0k")
            self.url = billing.BASE_URL + "/a2a"
            self.transport = InProcessTransport({billing.BASE_URL: self.app})
        self.ids = 0

    def call(self, method: str, params: dict, headers=HEADERS) -> dict:
        self.ids += 1
        frame = json.dumps({"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params})
        return json.loads(self.transport.post(self.url, frame.encode(), headers).body)

    def send(self, message_id: str, data: dict, **fields) -> dict:
        message = {"messageId": message_id, "role": "ROLE_USER", "metadata": {"skillId": "process_refund"},
                   "parts": [{"data": data}], **fields}
        return self.call("SendMessage", {"message": message})

    def refunds(self) -> list[str]:
        """The refunds billing issued: its ledger, less the claims paused tasks hold."""
        return [effect.summary for effect in self.peer.ledger.effects.values() if effect.summary != WAITING]


@pytest.fixture(params=["in-process", "http"])
def client(request):
    if request.param == "http":
        with serving(None) as server:
            yield Client("http", server)
    else:
        yield Client("in-process")


def bytes_kept(run) -> int:
    """The bytes `run()` left allocated once the collector has run (tracemalloc): what a cache kept."""
    import gc
    import tracemalloc
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        run()
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
