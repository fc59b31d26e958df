"""Headless Firefox driven over WebDriver BiDi (the W3C protocol Firefox speaks), standard
library only, so the live page's tests that matter most also run in a second engine:
Debian's `firefox-esr`, on 127.0.0.1, a fresh profile that sends nothing off this
machine, every wait bounded. The same interface as tests/chromium.py: `Firefox(url)`,
`evaluate(js)` (a JSON-able value; promises awaited), `wait_for(js)`, `close()`."""
import json
import re
import shutil
import subprocess
import tempfile
import time

from chromium import _receive, _send, _websocket, wait_for

FIREFOX = shutil.which("firefox-esr") or shutil.which("firefox")
# Firefox calls home at start (updates, remote settings, telemetry): every one of those goes
# to a proxy on a loopback port that nothing listens on, so no test traffic leaves this machine.
OFFLINE_PREFS = {
    "network.proxy.type": 1, "network.proxy.http": "127.0.0.1", "network.proxy.http_port": 9,
    "network.proxy.ssl": "127.0.0.1", "network.proxy.ssl_port": 9, "network.proxy.share_proxy_settings": True,
    "services.settings.server": "http://127.0.0.1:9/v1", "app.update.enabled": False,
    "datareporting.policy.dataSubmissionEnabled": False, "toolkit.telemetry.enabled": False,
    "network.captive-portal-service.enabled": False, "network.connectivity-service.enabled": False,
    "browser.safebrowsing.malware.enabled": False, "browser.safebrowsing.phishing.enabled": False,
}


class Firefox:
    def __init__(self, url: str, timeout: float = 40.0) -> None:
        self.profile = tempfile.mkdtemp(prefix="a2a-web-firefox-")
        try:
            with open(f"{self.profile}/user.js", "w") as prefs:
                prefs.writelines(f"user_pref({json.dumps(name)}, {json.dumps(value)});\n"
                                 for name, value in OFFLINE_PREFS.items())
            self.process = subprocess.Popen(
                [FIREFOX, "--headless", "--no-remote", "--profile", self.profile, "--remote-debugging-port=0"],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            self.timeout, self.ids = timeout, iter(range(1, 1 << 30))
            deadline, address = time.monotonic() + timeout, None
            while address is None and time.monotonic() < deadline:
                line = self.process.stderr.readline()
                found = re.search(r"WebDriver BiDi listening on (ws://127\.0\.0\.1:\d+)", line)
                address = found and found[1]
                if not line and self.process.poll() is not None:
                    raise RuntimeError("firefox exited before it listened")
            self.sock = _websocket(address + "/session", timeout)
            self.call("session.new", capabilities={})
            self.context = self.call("browsingContext.getTree")["contexts"][0]["context"]
            self.call("browsingContext.navigate", context=self.context, url=url, wait="complete")
        except BaseException:
            self.close()
            raise

    def call(self, method: str, **params):
        """One BiDi command; its result (events that arrive meanwhile are passed over)."""
        call_id = next(self.ids)
        _send(self.sock, json.dumps({"id": call_id, "method": method, "params": params}))
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            reply = json.loads(_receive(self.sock))
            if reply.get("id") == call_id:
                if reply.get("type") == "error":
                    raise RuntimeError(f"{reply.get('error')}: {reply.get('message')}")
                return reply["result"]
        raise TimeoutError(f"no answer to {method}")

    def evaluate(self, expression: str):
        # BiDi returns typed remote values; JSON text is the one shape both engines' tests read alike
        result = self.call("script.evaluate", expression=f"(async () => JSON.stringify(await ({expression})))()",
                           target={"context": self.context}, awaitPromise=True, resultOwnership="none")
        if result["type"] == "exception":
            raise RuntimeError(result["exceptionDetails"].get("text"))
        value = result["result"].get("value")
        return None if value is None else json.loads(value)

    def wait_for(self, expression: str, timeout: float = 30.0):
        return wait_for(self.evaluate, expression, timeout)

    def close(self) -> None:
        try:
            self.sock.close()
        except (AttributeError, OSError):
            pass
        if getattr(self, "process", None) is not None:
            self.process.kill()
            self.process.wait(timeout=10)
            self.process.stderr.close()
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> "Firefox":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
