"""How many webhooks a peer keeps, and the id a webhook sent without one takes. Plain
functions of what peers/push.py keeps, which calls them holding its lock.

The rules:
- at most MAX_PER_TASK configs per task, MAX_PER_CALLER per caller (its credential, whatever
  tenants it names: `caller`, as its share of streams) and MAX_CONFIGS in all. A config
  admitted and not yet kept holds a `Place`, which counts as a config kept, so requests
  judged together never pass a limit. A place for a task not made
  yet (task id "") counts for its caller and in all: each such task will be one of its own;
- a webhook sent with no id of its own (with a message, or by CreateTaskPushNotificationConfig)
  replaces none: it takes the task's id if the task keeps none so named, else "<task id>-N",
  N one past the highest kept, so an id freed is not given again while one after it is kept
  (a list's page token names a config: one given again would be met in another place); the
  same webhook sent again (a resend) is the one kept. An id named replaces the config of that id.
"""
from __future__ import annotations

from collections import Counter

from peers.a2a.model import PushConfig
from peers.tenants import split

MAX_PER_TASK, MAX_CONFIGS, MAX_PER_CALLER = 10, 1000, 100
MAX_ID = 2048  # a config's id, as the wire reads one (peers/a2a/wire_push.py MAX_TEXT)
MAX_DROPPED = 1000  # destinations whose dropped pushes are counted (the latest): a caller names any number
LIMITS = f"at most {MAX_PER_TASK} webhooks per task, {MAX_PER_CALLER} per caller, {MAX_CONFIGS} in all"

Kept = dict[tuple[str, str], dict[str, PushConfig]]  # (owner, task id) -> config id -> config


class Place:
    """Where a config admitted will be kept: counted within the limits until kept, or freed."""

    def __init__(self, key: tuple[str, str], held: bool = True) -> None:
        self.key, self.held = key, held  # (owner, task id); whether it still counts as held


def full(configs: Kept, held: Counter[tuple[str, str]], key: tuple[str, str]) -> bool:
    """Whether one more config for `key` (owner, task id) would pass a limit."""
    owner, task_id = key
    on_task, me = len(configs.get(key, {})) + (held[key] if task_id else 0), caller(owner)
    mine = sum(len(kept) for (holder, _), kept in configs.items() if caller(holder) == me) + \
        sum(count for (holder, _), count in held.items() if caller(holder) == me)
    return on_task >= MAX_PER_TASK or mine >= MAX_PER_CALLER or \
        sum(map(len, configs.values())) + sum(held.values()) >= MAX_CONFIGS


def count_dropped(dropped: Counter[str], destination: str) -> int:
    """One more push dropped for `destination`, and how many so far: counted for the MAX_DROPPED destinations
    that dropped one latest, the oldest count let go (else each new origin named was kept for ever)."""
    dropped[destination] = count = dropped.pop(destination, 0) + 1  # the latest last
    if len(dropped) > MAX_DROPPED:
        del dropped[next(iter(dropped))]
    return count


def caller(owner: str) -> str:
    """Whose share an owner's configs and deliveries count in: its credential, in any tenant (peers/tenants.py).
    Per tenant, ten tenants were ten shares, and one token held all MAX_CONFIGS."""
    return split(owner)[1]


def unnamed(kept: dict[str, PushConfig], config: PushConfig) -> PushConfig:
    """`config`, sent with no id of its own, as a task that keeps `kept` keeps it: the same
    webhook kept already (its authentication scheme in any case: RFC 9110 11.1), or `config`
    under the task's id, or "<task id>-N", N one past the highest so numbered (see above)."""
    for existing in kept.values():
        if _alike(existing._replace(id=config.id)) == _alike(config):
            return existing
    prefix = config.task_id + "-"
    numbers = [1 if kept_id == config.task_id else int(kept_id[len(prefix):]) for kept_id in kept  # one's own
               if kept_id == config.task_id or kept_id.startswith(prefix) and _number(kept_id[len(prefix):])]
    number = max(numbers, default=0) + 1
    named = config.task_id if number == 1 else f"{prefix}{number}"
    if len(named) > MAX_ID:  # one past a number named that long: the first free instead (a task keeps 10)
        named = next(f"{prefix}{n}" for n in range(2, len(kept) + 3) if f"{prefix}{n}" not in kept)
    return config._replace(id=named)


def _alike(config: PushConfig) -> PushConfig:
    """`config` as compared: "Bearer" and "bearer" are one scheme."""
    if not config.authentication:
        return config
    schemes, credentials = config.authentication
    return config._replace(authentication=(tuple(scheme.lower() for scheme in schemes), credentials))


def _number(text: str) -> bool:  # as this module numbers ids, however long (not "²", which int() refuses)
    return text.isascii() and text.isdigit()
