"""Push notifications: a caller's webhook is told of each change to its task.

Spec: A2A 1.0 sections 3.1.7 to 3.1.10 (the config methods) and 4.3 (delivery). A caller
registers a webhook for one of its tasks (`PushConfig`); each time the task changes,
the peer POSTs what changed (a StreamResponse, spelled as push_payload.py says) to that
URL, with the config's `token` in `X-A2A-Notification-Token` and its `authentication`
in `Authorization`, so the receiver can tell a real notification from a forged one.

The rules, because a webhook URL is a caller telling the server where to send requests:
- server-side request forgery: the URL must be http(s), and its host must resolve only
  to public addresses (an address in any spelling is judged when the config is made, a
  name at each delivery), unless the server was started allowing private ones (the demo
  network, and `serve --allow-private-webhooks`, for a receiver on this machine). Public
  means the address reached: an IPv4 address inside an IPv6 one is unwrapped and judged,
  and multicast, reserved and unspecified ranges are refused (peers/addresses.py). The address
  is checked again at delivery, and the delivery connects to the very address checked,
  http or https (TLS keeps the name), so a second DNS answer cannot point it elsewhere;
- bounded and isolated: at most 10 configs per task (one more where a send that made it, or
  took its turn, came last), 100 per caller and 1,000 in all (push_limits.py), gone
  with their task when the store forgets it; at most 3 attempts per delivery, 10 s each
  (spec 4.3.3; so a webhook that hangs holds its sender some 31 s a delivery), with growing pauses,
  none again for a refusal that would repeat, nor after a status under 500 (the push arrived, though
  its reply be cut short or over the limit). Deliveries wait per caller and destination (a URL's
  origin), at most 100 each and 200 per caller, and each has a thread of its own (at most 256 at once,
  16 for one caller), so a webhook that hangs delays only its own pushes, and a caller cycling through
  hanging destinations holds up only its own; beyond a queue a delivery is dropped, counted and logged
  for that destination, never blocking a request. A config deleted (or gone with its task) takes its
  deliveries not yet made with it. The log shows a webhook URL without its query;
- scoped: a caller sees and changes only the configs of its own tasks.
A peer's `Webhooks` is made with the peer, costing nothing until a caller registers one:
then it follows the store's change feed (peers/changes.py), and starts its first worker.
"""
from __future__ import annotations

import json
import threading
import time
from collections import Counter, deque

from peers.a2a.errors import TaskNotFound
from peers.a2a.model import PushConfig, Task
from peers.addresses import public_address, shown
from peers.changes import Changes
from peers.push_limits import LIMITS, Place, caller, count_dropped, full, unnamed
from peers.push_payload import PushSettings, Telling, authorization, header_safe
from transports.base import parse_url
from transports.errors import PeerError, let_quit
from transports.jsonrpc import InvalidParams

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable

ATTEMPTS, ATTEMPT_SECONDS = 3, 10.0  # spec 4.3.3 recommends a timeout of 10 to 30 s
MAX_WAITING, MAX_SENDING = 100, 256  # deliveries waiting per caller and destination; sent to at once
MAX_WAITING_PER_CALLER, MAX_SENDING_PER_CALLER = 200, 16  # a caller's share of both


class Webhooks:
    """The push configs of one peer's tasks, and the few workers that deliver to them."""

    def __init__(self, changes: Changes, *, allow_private: bool = False, settings: PushSettings | None = None,
                 log: Callable[[str], None] = lambda line: None) -> None:
        self.changes, self.allow_private, self.log = changes, allow_private, log
        self.settings = settings or PushSettings()  # serve's --push-payload and --push-media-type
        self.telling: dict[tuple[str, str, str], Telling] = {}  # how each config is told, and what it was told last
        self.configs: dict[tuple[str, str], dict[str, PushConfig]] = {}  # (owner, task id) -> id -> config
        self.lock = threading.Lock()
        self.held: Counter[tuple[str, str]] = Counter()  # (owner, task id) -> places admitted, not yet kept
        self.following = False
        # Deliveries wait per (caller, destination), each sent to by a thread of its own, in
        # order: a webhook that hangs holds up only its own pushes, and a queue that overflows
        # drops only its own, counted in `dropped`. Nothing is made before there is something to deliver.
        self.waiting: dict[tuple[str, str], deque[tuple[PushConfig, Telling, Any]]] = {}
        self.sending: set[tuple[str, str]] = set()  # (caller, destination)s a thread is delivering to now
        self.dropped: Counter[str] = Counter()  # destination -> pushes dropped, since the start (the latest 1,000)
        self.delivered: deque[tuple[str, int]] = deque(maxlen=100)  # (url, HTTP status), the last 100

    def admit(self, owner: str, config: PushConfig, again: bool = False) -> Place:
        """Refuse, before anything is done, a config that could never be delivered: not http(s), an address that
        is not public (in any spelling), a header value that is not one, or one over the limits. Else its place
        within the limits is held until `set` keeps it there, or `free` gives it back (its send ended with no
        task to keep it for). A place held counts as a config kept: sends arriving together never pass a limit,
        and a config admitted with a send is never refused once the task it made exists. At a limit, a message
        sent `again` (a resend) gets no place: `set` judges it, its webhook perhaps the one kept already."""
        public_address(config.url, self.allow_private, numeric_only=True)
        header_safe(config.token, "token")
        header_safe(authorization(config), "authentication")
        key = (owner, config.task_id)  # a new task's is (owner, ""): each will be a task of its own
        with self.lock:
            if config.id in self.configs.get(key, {}):
                return Place(key, held=False)  # it replaces one kept: no new place
            if full(self.configs, self.held, key):
                if again:  # a message sent before: maybe the same webhook again, judged when kept (`set`)
                    return Place(key, held=False)
                raise InvalidParams(LIMITS)
            self.held[key] += 1
        return Place(key)

    def set(self, owner: str, config: PushConfig, wire: Any, *, place: Place | None = None,
            must_keep: bool = False, named: bool = True) -> PushConfig:
        """Keep `config` in the place its admission held (else admitted now), spelled in `wire`; sent with no id
        (not `named`), under the id push_limits.py gives it, or the same one kept (a resend: its queued pushes
        still go). Kept where no place was held for it (on an earlier task, which answered its send; or in place
        of a config gone meanwhile), it is judged by the limits now; never where its send set the task's work
        going (`must_keep`: a task made, a turn taken), which a refusal would leave undone."""
        place = place or self.admit(owner, config)
        key = (owner, config.task_id)
        with self.lock:
            counted = place.held and place.key == key
            self._free(place)
            kept = self.configs.get(key, {})
            config = config if named else unnamed(kept, config)
            if kept.get(config.id) == config:
                return kept[config.id]
            if not (counted or must_keep or config.id in kept) and full(self.configs, self.held, key):
                raise InvalidParams(LIMITS)
            if not self.following:  # the first webhook: from now on, every change is heard
                self.following = True
                self.changes.follow(self.heard)
            self.configs.setdefault((owner, config.task_id), {})[config.id] = config
            self.telling[(owner, config.task_id, config.id)] = Telling(wire, self.settings)
        return config

    def free(self, place: Place) -> None:
        """The place of a config admitted and never kept, given back (after `set`: nothing)."""
        with self.lock:
            self._free(place)

    def _free(self, place: Place) -> None:  # called holding the lock
        if place.held:
            place.held = False
            self.held[place.key] -= 1
            if not self.held[place.key]:
                del self.held[place.key]

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
        """Forget a config, and the deliveries to it not yet made (they no longer count in its
        caller's share); one being made stops before its next attempt."""
        with self.lock:  # deleting what is not there is fine: the result is the same
            self.configs.get((owner, task_id), {}).pop(config_id, None)
            self.telling.pop((owner, task_id, config_id), None)
            self._drop_waiting(owner, task_id, config_id)

    def _drop_waiting(self, owner: str, task_id: str, config_id: str | None) -> None:
        """Called holding the lock: the deliveries not yet made to one config (None: any) of a task."""
        for (holder, _), waiting in self.waiting.items():
            if holder == owner:
                kept = [item for item in waiting if item[0].task_id != task_id or config_id not in (None, item[0].id)]
                waiting.clear()
                waiting.extend(kept)

    def heard(self, task: Task, owner: str, gone: bool) -> None:
        """The change feed's follower: a change is told to the task's webhooks; a task the
        store forgot takes its webhooks with it."""
        if not gone:
            self.tell(task, owner)
            return
        with self.lock:
            for config_id in self.configs.pop((owner, task.id), {}):
                self.telling.pop((owner, task.id, config_id), None)
            self._drop_waiting(owner, task.id, None)

    def tell(self, task: Task, owner: str, only: PushConfig | None = None) -> None:
        """Queue the deliveries of a change that left `task` as it is now to each webhook of it (kept already;
        or the `only` one, while it is kept): what it tells each, in order (the task, or what changed)."""
        for config_id in [config.id for config in self.list(owner, task.id) if only in (None, config)]:
            with self.lock:  # the config and how it is told, as they are now: one may replace another meanwhile
                config = self.configs.get((owner, task.id), {}).get(config_id)
                telling = self.telling.get((owner, task.id, config_id))
                destination, dropped = parse_url(config.url).origin if config else "", 0
                told = telling is not None and config is not None and (only is None or config is only)
                for said in telling.told(task) if told else ():
                    waiting, mine = self.waiting.get((owner, destination), ()), self._waiting_for(owner)
                    if len(waiting) >= MAX_WAITING or mine >= MAX_WAITING_PER_CALLER:
                        dropped = count_dropped(self.dropped, destination)
                        continue
                    self.waiting.setdefault((owner, destination), deque()).append((config, telling, said))
                    if self._may_send((owner, destination)):
                        self.sending.add((owner, destination))
                        threading.Thread(target=self._deliver_while_busy, args=((owner, destination),),
                                         daemon=True).start()
            if dropped:
                self.log(f"push to {shown(config.url)} dropped: {MAX_WAITING} deliveries already wait for "
                         f"{destination}, or {MAX_WAITING_PER_CALLER} for its caller ({dropped} dropped for it so far)")

    def _waiting_for(self, owner: str) -> int:  # called holding the lock; in any tenant (push_limits.caller)
        return sum(len(waiting) for (holder, _), waiting in self.waiting.items() if caller(holder) == caller(owner))

    def _may_send(self, key: tuple[str, str]) -> bool:
        """Whether a thread may start on `key` now (called holding the lock): none is on it,
        fewer than MAX_SENDING are busy, and fewer than its caller's share."""
        return key not in self.sending and len(self.sending) < MAX_SENDING and \
            sum(caller(holder) == caller(key[0]) for holder, _ in self.sending) < MAX_SENDING_PER_CALLER

    def _deliver_while_busy(self, key: tuple[str, str]) -> None:
        """Deliver to a (caller, destination) until nothing waits for it; then take over one
        that waits with no thread (when all, or its caller's share, were busy), or leave."""
        while True:
            with self.lock:
                waiting = self.waiting.get(key)
                if not waiting:
                    self.waiting.pop(key, None)
                    self.sending.discard(key)
                    key = next((other for other in self.waiting if self._may_send(other)), None)
                    if key is None:
                        return
                    self.sending.add(key)
                    continue
                config, telling, said = waiting.popleft()
            try:
                self._deliver(key[0], config, telling, said)
            except Exception as exc:  # noqa: BLE001 - one bad delivery must not stop the worker
                let_quit(exc)
                self.log(f"push to {shown(config.url)} failed: {exc!r}")

    def _still_set(self, owner: str, config: PushConfig) -> bool:
        with self.lock:
            return self.configs.get((owner, config.task_id), {}).get(config.id) is config

    def _deliver(self, owner: str, config: PushConfig, telling: Telling, said: Any) -> None:
        """Up to ATTEMPTS tries, while the config is still set (deleted, the rest are not made)."""
        from transports.network import HttpTransport  # sockets: only when there is a webhook
        headers, body = telling.headers(config), json.dumps(telling.spell(said)).encode()
        for attempt in range(ATTEMPTS):
            if not self._still_set(owner, config):
                return
            try:
                ip, port = public_address(config.url, self.allow_private)  # again: DNS may have changed
            except InvalidParams as refused:  # it will not change by trying again: not retried
                self.log(f"push to {shown(config.url)} refused: {refused}")
                return
            url = parse_url(config.url)
            # To the very address checked, http or https (TLS still checks the name)
            client = HttpTransport(pinned={url.host: (ip, port)}, timeout=ATTEMPT_SECONDS)
            try:
                status = client.post(config.url, body, headers).status
            except PeerError as exc:
                status = getattr(exc, "status", None)  # a status line came, then the reply broke off: it is that
                landed = f" (after status {status}: delivered, not sent again)" if status and status < 500 else ""
                self.log(f"push to {shown(config.url)}, attempt {attempt + 1}: {exc}{landed}")
            finally:
                client.close()
            if status is not None:
                self.delivered.append((config.url, status))
                if status < 500:
                    return  # delivered (a 4xx will not get better by trying again), however its reply ended
            time.sleep(0.2 * 2 ** attempt)
