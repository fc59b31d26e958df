"""Headless Chromium driven over the DevTools protocol, standard library only, for the pages'
tests: Debian's `chromium`, on 127.0.0.1, a private profile, every wait bounded.

One `Chromium` serves a whole test session (starting a browser costs about a second; a tab
a fraction of that). `tab(url)` opens the page in a tab of its own, after clearing the
browser's cookies (its profile is a fresh folder): sessionStorage is a tab's own, and
localStorage and the cache are kept per origin, which a test's server of its own (a port of
its own) makes new. (A browser context per tab isolated the same, at about 0.3 s of CPU more
a tab; one context of the tests' own, at a renderer more in five.) `evaluate(js)` runs an expression
in it and returns its value (promises awaited); `wait_for(js)` polls until the expression is
true; `dom()` is the document once loaded, as `--dump-dom` would print it. `dom(url)` of the
browser itself loads a page that keeps nothing (a file) as a new document in one tab kept
for that, and returns what --dump-dom would print: the cheapest fresh look. `close()` ends
the browser and removes its profile, in which Chromium also keeps its temporary files (it
is given the profile as TMPDIR), so nothing of it is left in /tmp however a test ended.
The WebSocket client is the least RFC 6455 the protocol needs: text frames, masked as a
client's must be, unfragmented replies of any length."""
import base64
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time

CHROMIUM = shutil.which("chromium")
LOADED = "location.href !== 'about:blank' && document.readyState === 'complete'"


class Chromium:
    """One headless browser process: `tab()` opens a page of a test's own, `dom(url)` reads a file's."""

    def __init__(self, timeout: float = 30.0) -> None:
        self.profile = tempfile.mkdtemp(prefix="a2a-web-chromium-")
        self.timeout, self.process, self.browser, self.reader = timeout, None, None, None
        try:
            with open(os.path.join(self.profile, "stderr.txt"), "w") as errors:
                self.process = subprocess.Popen(
                    [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                     "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
                     f"--user-data-dir={self.profile}", "about:blank"],
                    stdout=subprocess.DEVNULL, stderr=errors, start_new_session=True,
                    env={**os.environ, "TMPDIR": self.profile})
            self.port, path = self._listening()
            self.browser = Connection(f"ws://127.0.0.1:{self.port}{path}", timeout)
        except BaseException:
            self.close()
            raise

    def _listening(self) -> tuple[int, str]:
        """(port, browser path) from the DevToolsActivePort file Chromium writes once it listens."""
        active = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                with open(os.path.join(self.profile, "stderr.txt")) as errors:
                    raise RuntimeError(f"chromium exited before it listened: {errors.read()[-500:]}")
            try:
                with open(active) as file:
                    port, path = file.read().split("\n")[:2]
                if port.isdigit() and path.startswith("/devtools/browser/"):
                    return int(port), path
            except (OSError, ValueError):
                pass  # not written yet, or written half
            time.sleep(0.02)
        raise TimeoutError(f"chromium did not listen within {self.timeout}s")

    def tab(self, url: str = "about:blank", width: int | None = None, height: int = 900) -> "Tab":
        """A page of its own, `width` x `height` pixels if given, that goes to `url`."""
        if self.process.poll() is not None:
            raise RuntimeError("chromium has exited")
        self.browser.call("Storage.clearCookies")
        target = self.browser.call("Target.createTarget", url="about:blank")["targetId"]
        tab = Tab(self, target, Connection(f"ws://127.0.0.1:{self.port}/devtools/page/{target}", self.timeout))
        try:
            if width:
                tab.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1,
                         mobile=False)
            if url != "about:blank":
                tab.call("Page.navigate", url=url)
        except BaseException:
            tab.close()
            raise
        return tab

    def dom(self, url: str, width: int | None = None, height: int = 900) -> str:
        """The document at `url`, `width` x `height` if given, once loaded and its scripts ran.
        Each load goes by about:blank, so even a URL that differs only in its #fragment is a
        new document, opened as a browser opens a link, not a jump within the page before."""
        if self.reader is None:
            self.reader = self.tab()
        before = self.reader.evaluate("performance.timeOrigin")  # each document has its own
        if width:
            self.reader.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1,
                             mobile=False)
        else:
            self.reader.call("Emulation.clearDeviceMetricsOverride")
        self.reader.call("Page.navigate", url="about:blank")
        self.reader.call("Page.navigate", url=url)
        self.reader.wait_for(f"performance.timeOrigin !== {before} && {LOADED}")
        return self.reader.evaluate("document.documentElement.outerHTML")

    def close(self) -> None:
        """Ask the browser to quit, kill what is left of its process group, remove the profile."""
        if self.reader is not None:
            self.reader.page.close()
        if self.browser is not None:
            try:
                self.browser.call("Browser.close")
            except (OSError, RuntimeError, EOFError, ValueError):
                pass  # gone already: the kill below makes sure
            self.browser.close()
        if self.process is not None:
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(self.process.pid, signal.SIGKILL)  # its renderers and helpers too
            except (ProcessLookupError, PermissionError):
                pass
            self.process.wait(timeout=10)
        for _ in range(50):  # a helper still exiting may write a last file: try again, bounded
            shutil.rmtree(self.profile, ignore_errors=True)
            if not os.path.exists(self.profile):
                break
            time.sleep(0.05)


class Tab:
    """One page, a tab of its own; `close()` (or the with block) closes it."""

    def __init__(self, chromium: Chromium, target: str, page: "Connection") -> None:
        self.chromium, self.target, self.page = chromium, target, page

    def call(self, method: str, **params):
        return self.page.call(method, **params)

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(result["exceptionDetails"].get("text"))
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 30.0):
        return wait_for(self.evaluate, expression, timeout)

    def dom(self) -> str:
        """The document once loaded and its scripts have run, as --dump-dom prints it."""
        self.wait_for(LOADED)
        return self.evaluate("document.documentElement.outerHTML")

    def close(self) -> None:
        self.page.close()
        try:
            self.chromium.browser.call("Target.closeTarget", targetId=self.target)
        except (OSError, RuntimeError, EOFError):
            pass  # the browser is gone: closing it removes the rest

    def __enter__(self) -> "Tab":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Connection:
    """One DevTools WebSocket: commands in order, each answered by its id."""

    def __init__(self, url: str, timeout: float) -> None:
        self.sock, self.ids = _websocket(url, timeout), iter(range(1, 1 << 30))

    def call(self, method: str, **params):
        """One DevTools command; its result (events that arrive meanwhile are passed over)."""
        call_id = next(self.ids)
        _send(self.sock, json.dumps({"id": call_id, "method": method, "params": params}))
        while True:
            reply = json.loads(_receive(self.sock))
            if reply.get("id") == call_id:
                if "error" in reply:
                    raise RuntimeError(reply["error"].get("message"))
                return reply["result"]

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


def wait_for(evaluate, expression: str, timeout: float = 30.0):
    """Poll `expression` in a page (through its browser's `evaluate`) until it is true: its value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = evaluate(expression)
        except RuntimeError:  # the page is still loading: what it names is not there yet
            value = None
        if value:
            return value
        time.sleep(0.05)
    raise TimeoutError(f"never true: {expression}")


def _websocket(url: str, timeout: float) -> socket.socket:
    host_port, path = re.fullmatch(r"ws://([^/]+)(/.*)", url).groups()
    host, port = host_port.rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=timeout)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall((f"GET {path} HTTP/1.1\r\nHost: {host_port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head and len(head) < 8192:
        head += _exactly(sock, 1)
    if b" 101 " not in head.split(b"\r\n")[0]:
        sock.close()
        raise RuntimeError(f"no websocket: {head[:80]!r}")
    return sock


def _send(sock: socket.socket, text: str) -> None:
    data, mask = text.encode(), os.urandom(4)
    size = len(data)
    head = bytes([0x81]) + (bytes([0x80 | size]) if size < 126 else bytes([0x80 | 126]) + size.to_bytes(2, "big")
                            if size < 65536 else bytes([0x80 | 127]) + size.to_bytes(8, "big"))
    sock.sendall(head + mask + bytes(byte ^ mask[index % 4] for index, byte in enumerate(data)))


def _exactly(sock: socket.socket, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise EOFError("the browser hung up")
        data += chunk
    return bytes(data)


def _receive(sock: socket.socket) -> str:
    first, second = _exactly(sock, 2)
    size = second & 0x7F
    if size == 126:
        size = int.from_bytes(_exactly(sock, 2), "big")
    elif size == 127:
        size = int.from_bytes(_exactly(sock, 8), "big")
    payload = _exactly(sock, size)
    return payload.decode() if first & 0x0F == 1 else _receive(sock)  # skip anything but text
