"""Where a peer keeps its tasks, and the ledger of what it has done.

Spec: A2A GetTask / CancelTask / ListTasks read tasks back; seed 004: duplicate delivery is harmless. So:
- bounded: past `max_tasks`, or past `max_bytes` of the messages the tasks keep, the oldest task of the
  caller holding the most, in every tenant it names (`held`), is forgotten ("not found" then, as the spec
  allows): a caller's own tasks make room for it, so none pushes out another's (as streams and webhooks);
- scoped: a task is visible only to the caller who created it (its `owner`, from its credentials);
- idempotent: `add` with a messageId this owner sent before returns the task it made (or
  continued) and stores nothing; the same messageId saying something else is -32602;
- turns: a paused task keeps what it waits for; `resume` hands that to one follow-up only, up to
  MAX_TURNS and MAX_TASK_BYTES of conversation (a GetTask answers all of it, within what a client reads).
The `Ledger` (peers/ledger.py) is kept apart, because this store's window forgets: no duplicate, however
late, makes an effect happen twice. Thread-safe: every method holds the store's own lock. `_kept(task_id)`
is told of each change under it, before anyone else hears of it (a hook: peers/durable.py stages the
change for its file there). Then it is published once on the store's feed (`changes`, peers/changes.py), which
streams, subscriptions and push delivery read (`flush()` first: on disk before anyone is told). Not here: who is told what.
"""
from __future__ import annotations

from _thread import allocate_lock  # threading.Lock itself, without loading threading (peers/ledger.py)
from collections import OrderedDict

from peers.a2a.errors import TaskNotCancelable, TaskNotFound, UnsupportedOperation
from peers.a2a.fields import instant
from peers.a2a.model import PAUSED, Message, Task, TaskState
from peers.changes import Changes
from peers.tenants import split
from transports.codec import encoder
from transports.digests import sha256
from transports.jsonrpc import InvalidParams

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable

MAX_MESSAGE_BYTES = 64 * 1024  # what one task may keep of the message that made it
MAX_TASK_BYTES, MAX_TURNS = 512 * 1024, 100  # of a task's whole conversation: GetTask answers it all at once
SORTED_JSON = encoder(sort_keys=True, default=repr)  # a function: SORTED_JSON(value) -> text (codec.py)


def content_of(message: Message) -> str:
    """What a message asks, of which task, as text: a resent copy from another request; its length is bytes kept."""
    parts = [p._asdict() for p in message.parts]
    for part in parts:
        if part["metadata"] is None:  # newer fields count only when given: digests kept on disk hold
            del part["metadata"]
    turn = [message.extensions, message.reference_task_ids] if message.extensions or message.reference_task_ids else []
    return SORTED_JSON([message.metadata, parts, message.task_id, *turn])


def digest(content: str) -> str:
    """`content`'s SHA-256: the same in every process (hash() is not), so kept on disk too."""
    return sha256(content.encode("utf-8", "surrogatepass")).hexdigest()


def refuse_if_too_big(content: str) -> None:
    """A message larger than a peer keeps is refused before any task, not truncated."""
    if len(content) > MAX_MESSAGE_BYTES:
        raise InvalidParams(f"the message is {len(content):,} bytes; this agent takes messages "
                            f"of at most {MAX_MESSAGE_BYTES:,} bytes")


class TaskStore:
    def __init__(self, max_tasks: int = 1000, max_bytes: int = 16 << 20, *,
                 remember_messages: bool = True, changes: Changes | None = None) -> None:
        self.max_tasks, self.max_bytes = max_tasks, max_bytes
        self.remember_messages = remember_messages  # False: each message is new (conformance.py's)
        self.tasks: OrderedDict[str, Task] = OrderedDict()  # oldest first
        self.owners: dict[str, str] = {}  # task id -> owner
        self.held: dict[str, dict[str, None]] = {}  # caller (any tenant: split) -> its task ids, oldest first
        self.by_message: dict[tuple[str, str], tuple[str, int]] = {}  # (owner, messageId) -> (its task, digest)
        self.message_keys: dict[str, list[tuple[str, str]]] = {}  # task id -> its messages
        self.sizes: dict[str, int] = {}  # task id -> the bytes of messages it keeps
        self.kept_bytes = 0  # the sum of `sizes`
        self.waiting: dict[str, Any] = {}  # task id -> what a paused task waits for
        self.seq, self.order = 0, {}  # task id -> the number it was made with (ListTasks's tie-break)
        self.lock = allocate_lock()
        self.changes = changes or Changes()  # where each change is published, once

    def add(self, make_task: Callable[[], Task], owner: str, message_id: str | None,
            content: str = "") -> tuple[Task, bool]:
        """Keep a new task, made by `make_task`; or, if this owner's message already made one, that
        task. Returns (the task, whether it is new), as one step: two copies of one message arriving
        together still make one task, and a copy uses up no task id. `content` tells a copy from a conflict."""
        with self.lock:
            seen = self._seen(owner, message_id, content)
            if seen is not None:
                return seen, False
            task = make_task()
            if task.id in self.tasks:  # an id used again (a counter begun again over a store file):
                self._forget(task.id)  # the task that had it goes wholly, not half kept as its owner's
            self._make_room(len(content), new_task=True)
            self.tasks[task.id], self.owners[task.id] = task, owner
            self.held.setdefault(split(owner)[1], {})[task.id] = None
            self.seq = self.order[task.id] = self.seq + 1
            self.sizes[task.id], self.message_keys[task.id] = 0, []
            self._keep(task.id, owner, message_id, content)
            self._kept(task.id)
        return self._tell(task, owner), True

    def pause(self, task: Task, waiting: Any) -> Task:
        """Keep a task that paused, and what would let it go on (see `resume`)."""
        with self.lock:
            owner = self.owners.get(task.id)
            if owner is not None:
                self.tasks[task.id], self.waiting[task.id] = task, waiting
                self._kept(task.id)
        return self._tell(task, owner)

    def paused_by(self, owner: str) -> int:
        """How many of `owner`'s tasks wait for it (a caller's share is bounded: pause.py)."""
        with self.lock:
            return sum(self.owners.get(task_id) == owner for task_id in self.waiting)

    def resume(self, task_id: str, owner: str, turns: tuple[Message, ...], content: str,
               accept: Callable[[Any], None]) -> tuple[Task, Any]:
        """Continue a paused task with a follow-up (the last of `turns`), as one step: `accept(waiting)`
        judges it against what the task waits for, raising to refuse it (the task stays paused). Accepted,
        the turns join the task's history; returns (the task, what it waited for). Of two follow-ups at
        once, one wins; the same follow-up again returns (the task as it is now, None)."""
        message_id = turns[-1].message_id
        with self.lock:
            task = self._get(task_id, owner)
            seen = self._seen(owner, message_id, content)
            if seen is not None:
                return seen, None
            waiting = self.waiting.get(task_id)
            if waiting is None:
                ended = "; send a new message (the same contextId keeps the conversation)" if task.state.is_terminal else ""
                raise UnsupportedOperation(f"task {task_id[:80]!r} is {task.state.value} and takes no more messages{ended}")
            if self.sizes[task_id] + len(content) > MAX_TASK_BYTES or len(task.history) >= 2 * MAX_TURNS:
                raise InvalidParams(f"task {task_id[:80]!r} keeps at most {MAX_TASK_BYTES:,} bytes and {MAX_TURNS} "
                                    "turns of conversation; send a new message (the same contextId keeps the thread)")
            accept(waiting)
            del self.waiting[task_id]
            self._make_room(len(content), new_task=False, keep=task_id)
            self._keep(task_id, owner, message_id, content)
            task = self.tasks[task_id] = task._replace(history=task.history + turns)
            self._kept(task_id)
        return self._tell(task, owner), waiting

    def cancel(self, task_id: str, owner: str, canceled: Callable[[Task], Task]) -> tuple[Task, Any]:
        """Cancel a task that waits for its caller, as one step with `resume`: of a cancel and a follow-up
        arriving together, one wins. A task being worked on is not stopped midway (its skill may be issuing
        a refund that moment), and an ended one stays so. Returns (the canceled task, what it waited for)."""
        with self.lock:
            task = self._get(task_id, owner)
            if task_id not in self.waiting:
                raise TaskNotCancelable(f"task {task_id[:80]!r} is " + (f"already {task.state.value}" if
                                        task.state.is_terminal else f"{task.state.value}: it cannot be stopped midway"))
            waiting = self.waiting.pop(task_id)
            task = self.tasks[task_id] = canceled(task)
            self._kept(task_id)
        return self._tell(task, owner), waiting

    def update(self, task: Task) -> Task:
        """The task's next state. A task forgotten meanwhile stays forgotten; one no longer paused waits for nothing."""
        with self.lock:
            owner = self.owners.get(task.id)
            if owner is not None:
                self.tasks[task.id] = task
                if task.state not in PAUSED:
                    self.waiting.pop(task.id, None)
                self._kept(task.id)
        return self._tell(task, owner)

    def _kept(self, task_id: str) -> None:
        """A hook, called under the lock after each change to a task (see the docstring)."""

    def flush(self) -> None:
        """Every change so far kept where it outlives the process, before anyone is told (durable.py)."""

    def _tell(self, task: Task, owner: str | None) -> Task:
        """Publish a change, outside the lock, once it is kept. Nobody follows, nearly always: then nothing is done."""
        if self.changes.followers and owner is not None:
            self.flush()
            self.changes.publish(task, owner)
        return task

    def get(self, task_id: str, owner: str) -> Task:
        with self.lock:
            return self._get(task_id, owner)

    def find(self, task_id: str, owner: str) -> Task | None:
        """The task as it is now, or None if it is forgotten (or another owner's)."""
        with self.lock:  # (a task's owner is kept as long as it is)
            return self.tasks.get(task_id) if self.owners.get(task_id) == owner else None

    def owned_by(self, owner: str, *, context_id: str | None = None, state: TaskState | None = None,
                 updated_after: str | None = None) -> list[tuple[tuple[str, int], Task]]:
        """This owner's tasks, each with its place, most recently updated first (A2A ListTasks: by status
        timestamp, newest first; of equal times, or none, the newest made first; at or after `updated_after`)."""
        with self.lock:
            found = [((instant(t.timestamp) or "", self.order[t.id]), t) for t in self.tasks.values()
                     if self.owners.get(t.id) == owner and (context_id is None or t.context_id == context_id)
                     and (state is None or t.state is state)
                     and (updated_after is None or (instant(t.timestamp) or "") >= updated_after)]
        return sorted(found, key=lambda placed: placed[0], reverse=True)

    def _get(self, task_id: str, owner: str) -> Task:
        task = self.tasks.get(task_id)
        if task is None or self.owners.get(task_id) != owner:
            raise TaskNotFound(f"no task {task_id[:80]!r}")  # another owner's: the same answer
        return task

    def made_by(self, owner: str, message_id: str | None, content: str) -> Task | None:
        with self.lock:  # the task this owner's message made (or continued), if kept: as `add` finds it
            return self._seen(owner, message_id, content)

    def _seen(self, owner: str, message_id: str | None, content: str) -> Task | None:
        seen = self.by_message.get((owner, message_id)) if self.remember_messages else None  # (no None id is kept)
        if seen is not None and seen[1] != digest(content):
            raise InvalidParams(f"messageId {message_id[:80]!r} was already used for a "
                                f"different message (task {seen[0]}); use a new messageId")
        return None if seen is None else self.tasks[seen[0]]

    def _keep(self, task_id: str, owner: str, message_id: str | None, content: str) -> None:
        self.sizes[task_id] += len(content)
        self.kept_bytes += len(content)
        if message_id is not None and self.remember_messages:
            self.by_message[(owner, message_id)] = (task_id, digest(content))
            self.message_keys[task_id].append((owner, message_id))

    def _make_room(self, size: int, *, new_task: bool, keep: str | None = None) -> None:
        """Forget the oldest tasks (never `keep`) until `size` more bytes fit, and one more task if `new_task`."""
        while (new_task and len(self.tasks) >= self.max_tasks) or self.kept_bytes + size > self.max_bytes:
            if len(self.held) == 1 and keep is None:  # one holder (one caller): its oldest is the store's oldest
                self._forget(next(iter(self.tasks)))
                continue
            # The largest holder gives up its oldest: counted per holder, as this runs on each request
            # once full. Of equal holders, the one whose oldest came first: the first such task kept.
            held = {owner: len(ids) for owner, ids in self.held.items()}
            if keep in self.owners:
                held[split(self.owners[keep])[1]] -= 1
            most = max(held.values(), default=0)
            if most == 0:
                return
            largest = {owner for owner, count in held.items() if count == most}
            ids = self.held[next(iter(largest))] if len(largest) == 1 else self.owners
            self._forget(next(task_id for task_id in ids if task_id != keep and split(self.owners[task_id])[1] in largest))

    def trim(self) -> None:
        """Forget the oldest tasks until within the bounds (a store read from a file kept under larger ones)."""
        with self.lock:
            self._make_room(0, new_task=False)
            while len(self.tasks) > self.max_tasks:
                self._forget(next(iter(self.tasks)))

    def _forget(self, task_id: str) -> None:
        task, owner = self.tasks.pop(task_id), self.owners.pop(task_id)
        del self.held[split(owner)[1]][task_id]
        if not self.held[split(owner)[1]]:
            del self.held[split(owner)[1]]
        self.kept_bytes -= self.sizes.pop(task_id)
        self.order.pop(task_id, None)
        self.waiting.pop(task_id, None)
        for key in self.message_keys.pop(task_id):
            del self.by_message[key]
        # Its webhooks go with it, a stream of it ends: a change promised to no one, told unflushed.
        self.changes.publish(task, owner, gone=True)
