"""Push notifications: a caller's webhook is told of each change to its task.

Spec: A2A 1.0 sections 3.1.7 to 3.1.10 (the config methods) and 4.3 (delivery). A caller
registers a webhook for one of its tasks (`PushConfig`); each time the task changes,
the peer POSTs the task (a StreamResponse `{"task": ...}`) to that URL, with the
config's `token` in `X-A2A-Notification-Token` and its `authentication` in
`Authorization`, so the receiver can tell a real notification from a forged one.

The rules, because a webhook URL is a caller telling the server where to send requests:
- server-side request forgery: the URL must be http(s), and its host must resolve only
  to public addresses, unless the server was started allowing private ones (the demo
  network, and `serve --allow-private-webhooks`, for a receiver on this machine). The
  address is checked again at delivery, and a plain-http delivery connects to the very
  address checked, so a second DNS answer cannot point it elsewhere;
- bounded: at most 10 configs per task and 1,000 in all; at most 3 attempts per
  delivery, 2 s each, with growing pauses; at most 1,000 deliveries waiting, one worker
  thread sending them (beyond that, a delivery is dropped and logged, never blocking a
  request);
- scoped: a caller sees and changes only the configs of its own tasks.
"""
from __future__ import annotations

import json
import threading
import time
from typing import Any, Callable

from peers.a2a.errors import TaskNotFound
from peers.a2a.model import PushConfig, Task
from transports.base import parse_url
from transports.errors import PeerError
from transports.jsonrpc import InvalidParams

MAX_PER_TASK, MAX_CONFIGS, MAX_WAITING, ATTEMPTS, ATTEMPT_SECONDS = 10, 1000, 1000, 3, 2.0
IDLE_SECONDS = 5.0  # the worker leaves when nothing has waited this long


def public_address(url: str, allow_private: bool) -> tuple[str, int]:
    """The (ip, port) a webhook URL reaches, checked; InvalidParams naming why not."""
    import ipaddress
    import socket  # here, not at the top: most runs never meet a webhook
    parsed = parse_url(url)
    if parsed is None:
        raise InvalidParams("the webhook url must be an http(s) URL")
    try:
        found = socket.getaddrinfo(parsed.host, parsed.port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        raise InvalidParams(f"the webhook host {parsed.host[:80]!r} does not resolve") from None
    addresses = [ipaddress.ip_address(info[4][0].split("%")[0]) for info in found]
    private = [a for a in addresses if not a.is_global]
    if private and not allow_private:
        raise InvalidParams(f"the webhook host {parsed.host[:80]!r} is a private, loopback or reserved "
                            "address; this server sends to public addresses only")
    return str(addresses[0]), parsed.port


def _is_literal(host: str) -> bool:
    import ipaddress
    try:
        ipaddress.ip_address(host.strip("[]"))
        return True
    except ValueError:
        return False


class Webhooks:
    """The push configs of one peer's tasks, and the one worker that delivers to them."""

    def __init__(self, *, allow_private: bool = False, log: Callable[[str], None] = lambda line: None) -> None:
        self.allow_private, self.log = allow_private, log
        self.payloads: dict[tuple[str, str, str], Callable[[Task], Any]] = {}  # how each was asked to be told
        self.configs: dict[tuple[str, str], dict[str, PushConfig]] = {}  # (owner, task id) -> id -> config
        self.lock = threading.Lock()
        import queue
        self.waiting: queue.Queue = queue.Queue(MAX_WAITING)
        self.delivered: list[tuple[str, int]] = []  # (url, HTTP status) of each delivery, for tests
        self.worker: threading.Thread | None = None  # started when there is something to send

    def set(self, owner: str, config: PushConfig, payload: Callable[[Task], Any]) -> PushConfig:
        """Keep `config`; its deliveries say the task as `payload` spells it (the wire it
        was registered in). A URL naming a private address outright is refused here; a
        host name is looked up, and judged, at each delivery."""
        named = parse_url(config.url)
        if named is None:
            raise InvalidParams("the webhook url must be an http(s) URL")
        if _is_literal(named.host) or named.host.lower() == "localhost":
            public_address(config.url, self.allow_private)
        with self.lock:
            kept = self.configs.setdefault((owner, config.task_id), {})
            if config.id not in kept and (len(kept) >= MAX_PER_TASK
                                          or sum(map(len, self.configs.values())) >= MAX_CONFIGS):
                raise InvalidParams(f"at most {MAX_PER_TASK} webhooks per task, {MAX_CONFIGS} in all")
            kept[config.id] = config
            self.payloads[(owner, config.task_id, config.id)] = payload
        return config

    def get(self, owner: str, task_id: str, config_id: str) -> PushConfig:
        with self.lock:
            found = self.configs.get((owner, task_id), {}).get(config_id)
        if found is None:
            raise TaskNotFound(f"task {task_id[:80]!r} has no push config {config_id[:80]!r}")
        return found

    def list(self, owner: str, task_id: str) -> list[PushConfig]:
        with self.lock:
            return list(self.configs.get((owner, task_id), {}).values())

    def delete(self, owner: str, task_id: str, config_id: str) -> None:
        with self.lock:  # deleting what is not there is fine: the result is the same
            self.configs.get((owner, task_id), {}).pop(config_id, None)
            self.payloads.pop((owner, task_id, config_id), None)

    def changed(self, task: Task, owner: str) -> None:
        """The store's listener: queue a delivery to each webhook of this task."""
        from queue import Full
        for config in self.list(owner, task.id):
            try:
                self.waiting.put_nowait((config, self.payloads.get((owner, task.id, config.id)), task))
            except Full:
                self.log(f"push to {config.url[:80]} dropped: {MAX_WAITING} deliveries already waiting")
                continue
            with self.lock:  # one worker, alive while there is work (it leaves after 5 s idle)
                if self.worker is None or not self.worker.is_alive():
                    self.worker = threading.Thread(target=self._deliver_while_busy, daemon=True)
                    self.worker.start()

    def _deliver_while_busy(self) -> None:
        from queue import Empty
        while True:
            try:
                config, payload, task = self.waiting.get(timeout=IDLE_SECONDS)
            except Empty:
                with self.lock:
                    if self.waiting.empty():
                        self.worker = None
                        return
                continue
            try:
                self._deliver(config, payload(task))
            except Exception as exc:  # noqa: BLE001 - one bad delivery must not stop the worker
                self.log(f"push to {config.url[:80]} failed: {exc!r}")

    def _deliver(self, config: PushConfig, said: Any) -> None:
        from transports.network import HttpTransport  # sockets: only when there is a webhook
        headers = {"Content-Type": "application/json"}
        if config.token:
            headers["X-A2A-Notification-Token"] = config.token
        if config.authentication:
            headers["Authorization"] = " ".join(config.authentication)
        body = json.dumps(said).encode()
        for attempt in range(ATTEMPTS):
            try:
                ip, port = public_address(config.url, self.allow_private)  # again: DNS may have changed
                url = parse_url(config.url)
                pinned = {url.host: (ip, port)} if url.scheme == "http" else None
                client = HttpTransport(resolve=pinned, timeout=ATTEMPT_SECONDS)
                try:
                    status = client.post(config.url, body, headers).status
                finally:
                    client.close()
                self.delivered.append((config.url, status))
                if status < 500:
                    return  # delivered (a 4xx will not get better by trying again)
            except (PeerError, InvalidParams) as exc:
                self.log(f"push to {config.url[:80]}, attempt {attempt + 1}: {exc}")
            time.sleep(0.2 * 2 ** attempt)


_MAKING = threading.Lock()


def webhooks_of(peer: Any) -> Webhooks:
    """The peer's webhooks, made (and told of every change in its store) when first needed,
    so a run that never registers one never pays for them."""
    with _MAKING:
        if peer.webhooks is None:
            peer.webhooks = Webhooks(allow_private=peer.allow_private_webhooks, log=peer.log)
            peer.store.listeners.append(peer.webhooks.changed)
        return peer.webhooks
