"""A store file's rows read back into memory as `open_store` starts a peer (durable.py), each judged.

Rows are read oldest first, in the order made (`seq`), so the store comes back as it was: the
same tasks in the same order, each one's slot its own (durable_schema.py), the oldest forgotten
first again. A row this peer did not write (a type, a count, a key, a message out of place)
raises ValueError, or whatever reading it raised: open_store names the file, in one line. Each
row is read as it comes, never all of them at once. Of the ledger, its claims and counts alone
(durable_ledger.py): no effect done is forgotten, none is read. Of the tasks, only the newest
the store's bounds hold are read (a file kept under larger bounds, or made by hand, may hold
millions), and any task a claim names, so that the restart settles that claim as it would with
the task in memory (restart.py); as the store is cut to its bounds, those go, and the rows older
than the newest read (`cut_older`).
A completed task the restart reads whose effect's row is gone (deleted by hand) has its effect
recorded again (restart.py); one beyond the bounds, never read, does not. That is kept so: such
a task is forgotten as the store starts anyway, a row deleted by hand undoes the ledger for any
order whether or not its task is kept, and finding them would read every task the file holds,
the start growing with the file again.
"""
from __future__ import annotations

from peers.a2a.model import Task
from peers.durable_codec import from_json, ill_typed, message_keys
from peers.durable_schema import MAX_SEQ
from peers.store import MAX_TASK_BYTES
from peers.tenants import split

# A task's row: its conversation (at most MAX_TASK_BYTES, the `size` the store's bounds count) as JSON, each
# character at most six (\uXXXX), with the agent's turns and artifacts: far below this. A row past it was not ours;
# nor is a task's messages column past it (a pair a turn), nor an effect's row (its claim and its task's result).
MAX_ROW_CHARS = 16 * MAX_TASK_BYTES

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any


def read_back(file: Any, durable: Any, effects: Any) -> None:
    """What `file` keeps, into `durable` and `effects`: durable.py's StoreFile, and its store and
    ledger on it, new and empty (not named here: durable.py imports this module)."""
    db = file.db  # as the peer starts, no other thread uses it: its rows as they come (a cursor), not all at once
    effects.read_back(db)
    claims = {effect.task_id for _, effect in effects.claims()}
    for place in _within(db, durable, claims):
        row = db.execute("SELECT slot, seq, id, owner, size, messages, body FROM tasks WHERE slot = ?", place).fetchone()
        slot, seq, task_id, owner, size, kept, body = row
        if not isinstance(size, int) or not 0 <= size <= MAX_TASK_BYTES or _chars(body) > MAX_ROW_CHARS \
                or _chars(kept) > MAX_ROW_CHARS:
            # no task this peer keeps is larger: read no further
            raise ValueError(f"task {str(task_id)[:40]} is larger than a task this peer keeps")
        task, keys = from_json(body, Task), message_keys(kept)
        wrong = ill_typed(task)  # a field of another type would fail later, mid-request
        if task.id != task_id or not task.lifecycle or wrong or not isinstance(owner, str) \
                or not _counted(slot, seq, durable.seq):
            raise ValueError(f"task {str(task_id)[:40]} is not a task this peer wrote" + (f" ({wrong})" if wrong else ""))
        durable.seq, durable.slots.last = seq, max(durable.slots.last, slot)
        if task_id in durable.tasks:  # its id made again (a counter begun again): the later task has it
            durable._forget(task_id)
        durable.tasks[task_id], durable.owners[task_id], durable.order[task_id] = task, owner, seq
        durable.slots.of[task_id] = slot
        durable.held.setdefault(split(owner)[1], {})[task_id] = None
        durable.sizes[task_id], durable.message_keys[task_id] = size, []
        durable.kept_bytes += size
        for message_id, seen in keys:  # a message made or continued one task: kept once
            if (owner, message_id) in durable.by_message:
                raise ValueError(f"message {message_id[:40]!r} is kept twice")
            durable.by_message[(owner, message_id)] = (task_id, seen)
            durable.message_keys[task_id].append((owner, message_id))


def _within(db: Any, durable: Any, claims: set[str]) -> list[tuple[int]]:
    """The slots of the tasks to read, oldest first: the newest, up to the store's count and just past its bytes (the
    store's own rule then picks which go: the oldest of the caller holding the most), and older ones that `claims`
    name. `durable.older`: the newest seq not among the newest read, whose rows go as the store is cut (None: all read)."""
    newest, kept, out = [], 0, None
    for seq, slot, size, task_id in db.execute("SELECT seq, slot, size, id FROM tasks ORDER BY seq DESC LIMIT ?",
                                               (durable.max_tasks + 1,)):  # SQLite keeps only these as it sorts
        if len(newest) >= durable.max_tasks or kept > durable.max_bytes:
            out = seq
            break
        newest.append((seq, slot, task_id))
        kept += size if type(size) is int else 0  # a size of another type: the row is refused as it is read
    if out is None:
        return [(slot,) for _, slot, _ in reversed(newest)]
    if type(out) is not int or newest and newest[-1][0] == out:  # (a seq is a count given once: durable_schema.py)
        raise ValueError(f"a task's seq this peer did not give ({str(out)[:24]!r})")
    durable.older, wanted = out, claims - {task_id for _, _, task_id in newest}
    named = sorted((seq, slot) for seq, slot, task_id in db.execute("SELECT seq, slot, id FROM tasks WHERE seq <= ?",
                                                                    (out,)) if task_id in wanted) if wanted else []
    return [(slot,) for _, slot in named] + [(slot,) for _, slot, _ in reversed(newest)]


def cut_older(durable: Any) -> None:
    """As the store is cut to its bounds, before its own rule picks which go: the tasks read only as a claim named
    them, forgotten, and every row as old as those not read (`_within`), deleted with the next commit. Nothing older
    than the newest read is kept."""
    if durable.older is None:
        return
    with durable.lock:
        for task_id in [task_id for task_id, seq in durable.order.items() if seq <= durable.older]:
            durable._forget(task_id)
    durable.file.stage(("tasks", "older"), "DELETE FROM tasks WHERE seq <= ?", (durable.older,))
    durable.older = None


def _chars(value: Any) -> int:
    """A column's length as text (or bytes); 0 for a value of another type, which reading it refuses."""
    return len(value) if isinstance(value, (str, bytes)) else 0


def _counted(slot: Any, seq: Any, last: int) -> bool:
    """Whether a row's slot and seq are counts this peer gave, its seq after the `last` row's (read in seq order)."""
    return type(seq) is int and type(slot) is int and 0 < slot < MAX_SEQ and last < seq < MAX_SEQ
