"""Push notifications: a caller's webhook is told of each change to its task.

Spec: A2A 1.0 sections 3.1.7 to 3.1.10 (the config methods) and 4.3 (delivery). A caller
registers a webhook for one of its tasks (`PushConfig`); each time the task changes,
the peer POSTs the task (a StreamResponse `{"task": ...}`) to that URL, with the
config's `token` in `X-A2A-Notification-Token` and its `authentication` in
`Authorization`, so the receiver can tell a real notification from a forged one.

The rules, because a webhook URL is a caller telling the server where to send requests:
- server-side request forgery: the URL must be http(s), and its host must resolve only
  to public addresses (an address in any spelling is judged when the config is made, a
  name at each delivery), unless the server was started allowing private ones (the demo
  network, and `serve --allow-private-webhooks`, for a receiver on this machine). The
  address is checked again at delivery, and a plain-http delivery connects to the very
  address checked, so a second DNS answer cannot point it elsewhere;
- bounded: at most 10 configs per task and 1,000 in all, gone with their task when the
  store forgets it; at most 3 attempts per delivery, 2 s each, with growing pauses, and
  none again for a refusal that would repeat; at most 1,000 deliveries waiting, and 4
  workers sending them, so one slow webhook does not hold up the rest (beyond the queue,
  a delivery is dropped and logged, never blocking a request);
- scoped: a caller sees and changes only the configs of its own tasks.
A peer's `Webhooks` is made with the peer, costing nothing until a caller registers one:
then it follows the store's change feed (peers/changes.py), and starts its first worker.
"""
from __future__ import annotations

import json
import threading
import time
from collections import deque
from typing import Any, Callable

from peers.a2a.errors import TaskNotFound
from peers.a2a.model import PushConfig, Task
from peers.changes import Changes
from transports.base import parse_url
from transports.errors import PeerError
from transports.jsonrpc import InvalidParams

MAX_PER_TASK, MAX_CONFIGS, MAX_WAITING, ATTEMPTS, ATTEMPT_SECONDS = 10, 1000, 1000, 3, 2.0
WORKERS, IDLE_SECONDS = 4, 5.0  # deliveries in parallel; a worker leaves when idle this long


def public_address(url: str, allow_private: bool, *, numeric_only: bool = False) -> tuple[str, int] | None:
    """The (ip, port) a webhook URL reaches, checked; InvalidParams naming why not. With
    `numeric_only`, a host that is a name (not an address in any of its spellings:
    2130706433, 0x7f.1, [::1] ...) is not looked up: None, judged at delivery instead."""
    import ipaddress
    import socket  # here, not at the top: most runs never meet a webhook
    parsed = parse_url(url)
    if parsed is None:
        raise InvalidParams("the webhook url must be an http(s) URL")
    host = parsed.host.strip("[]")  # an IPv6 address comes bracketed in a URL
    flags = socket.AI_NUMERICHOST if numeric_only and host.lower() != "localhost" else 0
    try:
        found = socket.getaddrinfo(host, parsed.port, type=socket.SOCK_STREAM, flags=flags)
    except (OSError, UnicodeError):
        if numeric_only:
            return None  # a name: looked up, and judged, when there is something to deliver
        raise InvalidParams(f"the webhook host {parsed.host[:80]!r} does not resolve") from None
    addresses = [ipaddress.ip_address(info[4][0].split("%")[0]) for info in found]
    if any(not address.is_global for address in addresses) and not allow_private:
        raise InvalidParams(f"the webhook host {parsed.host[:80]!r} is a private, loopback or reserved "
                            "address; this server sends to public addresses only")
    return str(addresses[0]), parsed.port


def _header_safe(value: str | None, what: str) -> None:
    """A token or credentials go in an HTTP header: visible ASCII only, or never sent."""
    if value is not None and not (value.isascii() and value.isprintable()):
        raise InvalidParams(f"the push config's {what} must be visible ASCII characters")


class Webhooks:
    """The push configs of one peer's tasks, and the few workers that deliver to them."""

    def __init__(self, changes: Changes, *, allow_private: bool = False,
                 log: Callable[[str], None] = lambda line: None) -> None:
        self.changes, self.allow_private, self.log = changes, allow_private, log
        self.payloads: dict[tuple[str, str, str], Callable[[Task], Any]] = {}  # how each was asked to be told
        self.configs: dict[tuple[str, str], dict[str, PushConfig]] = {}  # (owner, task id) -> id -> config
        self.lock = threading.Lock()
        # One queue and one worker per shard of webhook URLs: a URL's deliveries keep their
        # order, and a slow URL holds up only its own shard. Made with the first config:
        # queues and threads cost a run that never registers a webhook nothing.
        self.queues: list[Any] = []
        self.workers: list[threading.Thread | None] = [None] * WORKERS  # started when there is work
        self.delivered: deque[tuple[str, int]] = deque(maxlen=100)  # (url, HTTP status), the last 100

    def admit(self, owner: str, config: PushConfig) -> None:
        """Refuse, before anything is done, a config that could never be delivered: not
        http(s), an address that is not public (in any spelling), a header value that is
        not one, or one over the limits."""
        public_address(config.url, self.allow_private, numeric_only=True)
        _header_safe(config.token, "token")
        _header_safe(" ".join(config.authentication) if config.authentication else None, "authentication")
        with self.lock:
            kept = self.configs.get((owner, config.task_id), {})
            if config.id not in kept and (len(kept) >= MAX_PER_TASK
                                          or sum(map(len, self.configs.values())) >= MAX_CONFIGS):
                raise InvalidParams(f"at most {MAX_PER_TASK} webhooks per task, {MAX_CONFIGS} in all")

    def set(self, owner: str, config: PushConfig, payload: Callable[[Task], Any]) -> PushConfig:
        """Keep `config` (admitted first); its deliveries say the task as `payload` spells
        it (the wire it was registered in)."""
        self.admit(owner, config)
        with self.lock:
            if not self.queues:  # the first webhook: from now on, every change is heard
                import queue
                self.queues = [queue.Queue(MAX_WAITING // WORKERS) for _ in range(WORKERS)]
                self.changes.follow(self.heard)
            self.configs.setdefault((owner, config.task_id), {})[config.id] = config
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

    def heard(self, task: Task, owner: str, gone: bool) -> None:
        """The change feed's follower: a change is told to the task's webhooks; a task the
        store forgot takes its webhooks with it."""
        if not gone:
            self.tell(task, owner)
            return
        with self.lock:
            for config_id in self.configs.pop((owner, task.id), {}):
                self.payloads.pop((owner, task.id, config_id), None)

    def tell(self, task: Task, owner: str) -> None:
        """Queue a delivery of `task`, as it is now, to each webhook of it (kept already)."""
        from queue import Full
        for config in self.list(owner, task.id):
            shard = hash(config.url) % WORKERS
            try:
                self.queues[shard].put_nowait((config, self.payloads.get((owner, task.id, config.id)), task))
            except Full:
                self.log(f"push to {config.url[:80]} dropped: {MAX_WAITING // WORKERS} deliveries already waiting")
                continue
            with self.lock:
                worker = self.workers[shard]
                if worker is None or not worker.is_alive():
                    worker = self.workers[shard] = threading.Thread(target=self._deliver_while_busy,
                                                                    args=(self.queues[shard],), daemon=True)
                    worker.start()

    def _deliver_while_busy(self, waiting: Any) -> None:
        from queue import Empty
        while True:
            try:
                config, payload, task = waiting.get(timeout=IDLE_SECONDS)
            except Empty:
                with self.lock:  # idle: leave, unless a delivery arrived just now
                    if waiting.empty():
                        self.workers[self.queues.index(waiting)] = None
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
            except InvalidParams as refused:  # it will not change by trying again: not retried
                self.log(f"push to {config.url[:80]} refused: {refused}")
                return
            url = parse_url(config.url)
            client = HttpTransport(resolve={url.host: (ip, port)} if url.scheme == "http" else None,
                                   timeout=ATTEMPT_SECONDS)
            try:
                status = client.post(config.url, body, headers).status
                self.delivered.append((config.url, status))
                if status < 500:
                    return  # delivered (a 4xx will not get better by trying again)
            except PeerError as exc:
                self.log(f"push to {config.url[:80]}, attempt {attempt + 1}: {exc}")
            finally:
                client.close()
            time.sleep(0.2 * 2 ** attempt)
