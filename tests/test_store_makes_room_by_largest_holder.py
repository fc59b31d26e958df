"""A full store forgets the oldest task of the caller holding the most (store.py), of equal
holders the one whose oldest task came first, and never the task a follow-up continues.

The store counts per holder (`held`), kept beside its tasks; this walks seeded random
sequences of what callers do (new tasks, pauses, follow-ups, cancels, tighter bounds read
back) and checks each task it forgot, in the order its change feed told of them, against
that rule applied to the tasks kept just before: counting every task, as the rule says.
"""
import random
from collections import Counter

from peers.a2a.model import Message, Task, TaskState
from peers.store import TaskStore


def chosen(owners: dict[str, str], keep: str | None) -> str:
    """The rule: the largest holder's oldest task but `keep` (owners: task id -> owner, oldest first)."""
    counted = Counter(owner for task_id, owner in owners.items() if task_id != keep)
    largest = max(counted, key=counted.__getitem__)  # of equal counts, the first met: the oldest task's
    return next(task_id for task_id, owner in owners.items() if owner == largest and task_id != keep)


def test_each_task_forgotten_is_the_largest_holders_oldest_over_seeded_sequences():
    forgotten_in_all = 0
    for seed in range(400):
        rnd = random.Random(seed)
        store = TaskStore(rnd.randint(1, 8), rnd.randint(10, 200))
        gone: list[str] = []
        store.changes.follow(lambda task, owner, is_gone: gone.append(task.id) if is_gone else None)
        callers = [f"caller-{n}" for n in range(rnd.randint(1, 5))]
        for step in range(rnd.randint(1, 60)):
            before, sizes, keep, what = dict(store.owners), dict(store.sizes), None, rnd.choice("nnnpfcb")
            caller, gone[:] = rnd.choice(callers), []
            if what == "n":
                task_id = f"task-{seed}-{step}"
                store.add(lambda: Task(task_id), caller, f"m-{step}", "x" * rnd.randint(0, 40))
            elif what == "p" and before:
                task = store.tasks[rnd.choice(list(before))]
                store.pause(task._replace(lifecycle=(TaskState.SUBMITTED, TaskState.INPUT_REQUIRED)), "an approval")
            elif what in "fc" and store.waiting:
                keep = rnd.choice(list(store.waiting))
                if what == "f":
                    turn = Message(f"m-{step}", "user", ())
                    store.resume(keep, before[keep], (turn,), "y" * rnd.randint(0, 60), lambda waiting: None)
                else:
                    store.cancel(keep, before[keep], lambda task: task._replace(
                        lifecycle=(*task.lifecycle, TaskState.CANCELED)))
            elif what == "b":
                store.max_tasks, store.max_bytes = rnd.randint(1, 8), rnd.randint(10, 200)
                store.trim()
            kept = dict(before)
            for task_id in gone:
                if what == "b" and sum(sizes[kept_id] for kept_id in kept) <= store.max_bytes:
                    assert task_id == next(iter(kept)), "trimmed to the count alone: the oldest goes"
                else:
                    assert task_id == chosen(kept, keep), (seed, step, what, gone)
                del kept[task_id]
            assert all(store.owners[task_id] == owner for owner, ids in store.held.items() for task_id in ids)
            assert sum(map(len, store.held.values())) == len(store.tasks), (seed, step)
            forgotten_in_all += len(gone)
    assert forgotten_in_all > 1000, "the store was at its bounds often enough for this to say something"
