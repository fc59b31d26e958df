"""Where a peer keeps its tasks: bounded, scoped to their owner, idempotent per message.

Spec: A2A GetTask / CancelTask / ListTasks read tasks back; seed 004's failure list asks
for duplicate delivery to be harmless. So:
- bounded: past `max_tasks` the oldest task is forgotten, so a long-running server does
  not grow without limit (a forgotten task is then "not found", as the spec allows);
- scoped: a task is visible only to the caller who created it (its `owner`, derived from
  the credentials it presented), so nobody reads another client's refund by its id;
- idempotent: a repeated messageId from the same owner finds the task it already made,
  and the skill does not run twice (no second refund).
Thread-safe: a served peer calls it from one thread per connection.
"""
from __future__ import annotations

import threading
from collections import OrderedDict

from peers.model import Task, TaskState


class TaskStore:
    def __init__(self, max_tasks: int = 1000) -> None:
        self.max_tasks = max_tasks
        self.tasks: OrderedDict[str, Task] = OrderedDict()  # oldest first
        self._owner: dict[str, str] = {}  # task id -> owner
        self._by_message: dict[tuple[str, str], str] = {}  # (owner, messageId) -> task id
        self._message_of: dict[str, tuple[str, str]] = {}  # task id -> (owner, messageId)
        self.lock = threading.RLock()  # held by Peer.send across "seen it? / create it"

    def put(self, task: Task, owner: str = "", message_id: str | None = None) -> Task:
        if task.id in self.tasks:  # a known task's next state: one dict store, no lock
            self.tasks[task.id] = task
            return task
        with self.lock:  # a new task: register its owner and message, evict the oldest
            self._owner[task.id] = owner
            if message_id is not None:
                self._by_message[(owner, message_id)] = task.id
                self._message_of[task.id] = (owner, message_id)
            if len(self.tasks) >= self.max_tasks:
                self._forget(next(iter(self.tasks)))
            self.tasks[task.id] = task
            return task

    def get(self, task_id: str, owner: str = "") -> Task:
        task = self.tasks.get(task_id)
        if task is None or self._owner.get(task_id) != owner:
            from peers.errors import TaskNotFound  # only the 0.3/1.0 wires look tasks up
            raise TaskNotFound(f"no task {task_id!r}")  # another owner's task: same answer
        return task

    def by_message(self, owner: str, message_id: str) -> Task | None:
        task_id = self._by_message.get((owner, message_id))
        return None if task_id is None else self.tasks.get(task_id)

    def owned_by(self, owner: str, *, context_id: str | None = None,
                 state: TaskState | None = None) -> list[Task]:
        with self.lock:
            return [t for t in self.tasks.values() if self._owner.get(t.id) == owner
                    and (context_id is None or t.context_id == context_id)
                    and (state is None or t.state is state)]

    def _forget(self, task_id: str) -> None:
        self.tasks.pop(task_id, None)
        self._owner.pop(task_id, None)
        key = self._message_of.pop(task_id, None)
        if key is not None:
            self._by_message.pop(key, None)
