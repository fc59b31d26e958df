"""--webhook: the proxy fronts the client's push receiver too (A2A section 9, push notifications).

A push config a client sets through the proxy (a send's configuration.taskPushNotificationConfig
or 0.3's pushNotificationConfig, CreateTaskPushNotificationConfig and 0.3's set, either binding)
has its `url` moved to a path of the proxy's, /webhook/K, said in one line; the agent then
delivers there, and the proxy forwards each delivery to the URL the client gave, printed and
faulted as any request is (forward.py). An answer that says a moved URL back (a config read or
listed) says the client's own again, so a client checking its config is not misled. This is the
one change the proxy makes to a request's body, and only with --webhook (to its headers, one more:
Accept-Encoding asks for identity, and Via names the proxy: message_forwarding.py). Not here: the sending.
"""
from __future__ import annotations

import json
import re
import threading
import time

from peers.support.proxy.upstream import LOOKUP_SECONDS, leads_back
from transports.lookups import Busy
from transports.base import parse_url
from transports.codec import dumps_as_text, loads_strict

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

PATH = "/webhook/"
MOST_MOVED = 256  # distinct receivers a session moves; more are forwarded as they came, and said
CONFIG_KEYS = ("taskPushNotificationConfig", "pushNotificationConfig", "task_push_notification_config",
               "push_notification_config")
SETS = ("CreateTaskPushNotificationConfig", "tasks/pushNotificationConfig/set")
_SET_PATH = re.compile(r"(?:/[^?]*)?/tasks/[^/?]+/pushNotificationConfigs/?(?:\?.*)?")


class Webhooks:
    """The receivers moved so far: K -> the client's URL (threads share it)."""

    def __init__(self, base: str) -> None:
        self.base, self.moved, self._index = base, {}, {}  # base: the proxy's URL, once bound
        self._lock = threading.Lock()

    def receiver(self, target: str) -> str | None:
        """The client's URL a delivery to `target` (/webhook/K) goes on to; None: not one of ours."""
        if not target.startswith(PATH):
            return None
        return self.moved.get(target[len(PATH):])

    def move(self, body: bytes, method: str, target: str) -> tuple[bytes, list[str]]:
        """The request's body with each push config's url moved to the proxy, and a line for each."""
        if not body or b"url" not in body:
            return body, []
        try:
            document = loads_strict(body)
        except ValueError:
            return body, []
        requests = document if isinstance(document, list) else [document]
        configs = [config for request in requests for config in _configs(request, method, target)]
        said, changed, literal = [], False, body
        until = time.monotonic() + LOOKUP_SECONDS  # the receivers' hosts, looked up, hold this request so long at most
        for config in configs:
            original = config["url"]
            if parse_url(original) is None:  # nothing the proxy could deliver to: the agent judges it, as sent
                said.append(f"[proxy] webhook {original[:80]!r}: not moved (not an http(s) URL); sent on as given")
                continue
            proxy = parse_url(self.base)
            try:
                leads, unknown = leads_back(original, proxy.port, until) if proxy is not None else False, \
                    f"was not resolved within {LOOKUP_SECONDS:g} s"
            except Busy as exc:  # not asked at all: the resolver is not slow for this name, just not free
                leads, unknown = None, f"was {exc}"
            if leads is not False:  # moved, each delivery would be sent to us again; or might be: not moved either
                said.append(f"[proxy] webhook {original[:120]}: not moved (" + (
                    "it names this proxy itself: its deliveries would come back to the proxy without end" if leads else
                    f"its host, at this proxy's port, {unknown}: it may name this proxy itself") + "); sent on as given")
                continue
            with self._lock:
                key = self._index.get(original)
                if key is None and len(self._index) < MOST_MOVED:
                    key = self._index[original] = str(len(self._index) + 1)
                    self.moved[key] = original
            if key is None:
                said.append(f"[proxy] webhook {original[:80]}: not moved ({MOST_MOVED} receivers moved already); "
                            "its deliveries bypass the proxy")
                continue
            config["url"], changed = self.base + PATH + key, True
            literal = literal.replace(json.dumps(original).encode(), json.dumps(config["url"]).encode())
            said.append(f"[proxy] webhook moved to the proxy: {original[:120]} -> {config['url']} "
                        "(each delivery is printed, then forwarded there)")
        if not changed:
            return body, said
        try:  # the client's bytes with the URLs alone changed, if that says it exactly; else re-encoded
            if loads_strict(literal) == document:
                return literal, said
        except ValueError:
            pass
        return dumps_as_text(document), said

    def refused(self, sent: bytes, status: int, body: bytes) -> list[str]:
        """A finding when the agent refused a config moved to the proxy (in `sent`, the request as
        forwarded) for where the proxy is: an agent that sends only to public addresses refuses
        127.0.0.1, and its error names an address the client never sent."""
        proxy = parse_url(self.base)
        if proxy is None or (self.base + PATH).encode() not in sent or proxy.host.encode() not in body \
                or not (status >= 400 or b'"error"' in body):
            return []
        return [f"[proxy] finding: the agent refused the webhook moved to the proxy ({self.base}{PATH}...), "
                "not the client's own: serve the agent with --allow-private-webhooks, or run the proxy "
                "without --webhook"]

    def restore(self, body: bytes) -> bytes:
        """An answer's body with each moved URL the client's own again."""
        if not self.moved or b"webhook" not in body:  # as /webhook/ or, slashes escaped, \/webhook\/
            return body
        for key, original in list(self.moved.items()):
            ours = json.dumps(self.base + PATH + key)
            for spelled in (ours, ours.replace("/", "\\/")):  # JSON may write "/" as "\/" (PHP does)
                body = body.replace(spelled.encode(), json.dumps(original).encode())
        return body


def _configs(request: Any, method: str, target: str) -> list[dict[str, Any]]:
    """The push configs in one request: named by a config key, or the whole params (a set's)."""
    if not isinstance(request, dict):
        return []
    found = []
    if request.get("method") in SETS and isinstance(request.get("params"), dict):
        found.append(request["params"])  # 1.0 flattens the config into the params
    if method == "POST" and "jsonrpc" not in request and _SET_PATH.fullmatch(target):
        found.append(request)  # HTTP+JSON: the body is the config
    stack, seen = [(request, 0)], 0
    while stack and seen < 10_000:  # the codec bounds depth and size; this bounds the walk too
        node, depth = stack.pop()
        seen += 1
        if isinstance(node, dict):
            found += [node[key] for key in CONFIG_KEYS if isinstance(node.get(key), dict)]
            stack += [(value, depth + 1) for value in node.values() if isinstance(value, (dict, list)) and depth < 8]
        elif isinstance(node, list):
            stack += [(value, depth + 1) for value in node if isinstance(value, (dict, list)) and depth < 8]
    unique = {id(config): config for config in found}
    return [config for config in unique.values() if isinstance(config.get("url"), str)]
