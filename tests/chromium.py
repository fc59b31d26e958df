"""Headless Chromium driven over the DevTools protocol, standard library only, for the live
page's tests: Debian's `chromium`, on 127.0.0.1, a fresh profile, every wait bounded.

`Browser(url)` opens the page; `evaluate(js)` runs an expression in it and returns its
value (promises awaited); `wait_for(js)` polls until the expression is true. The
WebSocket client is the least RFC 6455 the protocol needs: text frames, masked as a
client's must be, unfragmented replies of any length."""
import base64
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request

CHROMIUM = shutil.which("chromium")


class Browser:
    def __init__(self, url: str, timeout: float = 30.0) -> None:
        self.profile = tempfile.mkdtemp(prefix="a2a-web-chromium-")
        self.process = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
             f"--user-data-dir={self.profile}", url],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.timeout, self.ids = timeout, iter(range(1, 1 << 30))
        deadline, port = time.monotonic() + timeout, None
        while port is None and time.monotonic() < deadline:
            line = self.process.stderr.readline()
            found = re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line)
            port = found and found[1]
            if not line and self.process.poll() is not None:
                raise RuntimeError("chromium exited before it listened")
        page = None
        while page is None and time.monotonic() < deadline:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as listing:
                page = next((t for t in json.load(listing) if t["type"] == "page"), None)
            time.sleep(0.05 if page is None else 0)
        self.sock = _websocket(page["webSocketDebuggerUrl"], timeout)

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

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(result["exceptionDetails"].get("text"))
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 30.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                value = self.evaluate(expression)
            except RuntimeError:  # the page is still loading: what it names is not there yet
                value = None
            if value:
                return value
            time.sleep(0.1)
        raise TimeoutError(f"never true: {expression}")

    def close(self) -> None:
        try:
            self.sock.close()
        except (AttributeError, OSError):
            pass
        self.process.kill()
        self.process.wait(timeout=10)
        self.process.stderr.close()
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _websocket(url: str, timeout: float) -> socket.socket:
    host_port, path = re.fullmatch(r"ws://([^/]+)(/.*)", url).groups()
    host, port = host_port.rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=timeout)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall((f"GET {path} HTTP/1.1\r\nHost: {host_port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    if b" 101 " not in head.split(b"\r\n")[0]:
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
