"""The callers family, with --deep and --other-caller: caller A makes a task; caller B (the
second credential store) asks for it every way there is.

Spec: A2A 1.0 section 13.1 (a task is its caller's: every operation is scoped to the
authenticated caller), 3.1.4 (ListTasks lists only the caller's tasks), 3.3.2 (another
caller is told nothing of a task that is not theirs: TaskNotFoundError, as for an id no
task has). One row per operation B tries on A's task: get, list, cancel, subscribe, set a
push config; each fails when B is given the task (or changes it), the leak a2a-python
#610 was for ListTasks. AUTH-SCOPE-003 judges what B's answers say: TaskNotFoundError
reveals nothing; a permission error, or TaskNotCancelableError, says the task is there.
Not here: one caller's checks (task_checks, stream_checks).
"""
from __future__ import annotations

from peers.a2a.model import PushConfig
from peers.a2a.wire_format import method_for
from peers.support.check.deep_asking import Deep, kind_of
from peers.support.check.probe import SKIP, Verdict, error_code, verdict
from peers.support.check.stream_checks import HOOK, PUSH_NOT_SUPPORTED

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

TASK_NOT_FOUND = -32001
IDS = ("WB-CALLER-GET-001", "CORE-LIST-001", "WB-CALLER-CANCEL-001", "WB-CALLER-SUBSCRIBE-001",
       "WB-CALLER-PUSH-001", "AUTH-SCOPE-003")


def checks(mine: Deep, theirs: Deep | None, why: str, streaming: bool) -> list[Verdict]:
    name = mine.reach.name
    if theirs is None:
        return [Verdict(row, SKIP, why, (), name) for row in IDS]
    answer, frames = mine.send(mine.message())
    task = mine.task(answer)
    if task is None or not isinstance(task.get("id"), str):
        return [Verdict(row, SKIP, f"caller A's message made no task ({answer.said()})", frames, name) for row in IDS]
    task_id, said, found = task["id"], [], []

    def judged(row: str, operation: str, answer: Any, frames: Any, leaked: bool, seen: str) -> None:
        said.append((operation, answer.code, leaked))
        found.append(verdict(row, not leaked, f"caller B {operation} A's task {task_id[:32]}: {seen}",
                             frames, name, answer))

    got, frames = theirs.ask("get", {"id": task_id})
    judged("WB-CALLER-GET-001", "gets", got, frames, theirs.task(got) is not None,
           "the task itself" if theirs.task(got) is not None else got.said())
    if method_for(theirs.reach.wire, "list"):
        listed, frames = theirs.ask("list", {"pageSize": 100})
        result = theirs.result(listed)
        tasks = result.get("tasks") if isinstance(result, dict) else None
        ids = [each.get("id") for each in tasks if isinstance(each, dict)] if isinstance(tasks, list) else []
        found.append(verdict("CORE-LIST-001", task_id not in ids, f"caller B lists {len(ids)} tasks"
                             + (", A's among them" if task_id in ids else ", none of them A's"), frames, name, listed))
    else:
        found.append(Verdict("CORE-LIST-001", SKIP, f"the {theirs.reach.wire.NAME} wire has no ListTasks", (), name))
    canceled, frames = theirs.ask("cancel", {"id": task_id})
    judged("WB-CALLER-CANCEL-001", "cancels", canceled, frames, theirs.task(canceled) is not None,
           "the task, canceled" if theirs.task(canceled) is not None else canceled.said())
    if streaming:
        head, events, frames, _ = theirs.stream("subscribe", {"id": task_id})
        leaked = any(kind_of(event) in ("task", "statusUpdate", "artifactUpdate") for event in events)
        code = head.code if head.code is not None else next(
            (error_code(event) for event in events if isinstance(event, dict) and "error" in event), None)
        judged("WB-CALLER-SUBSCRIBE-001", "subscribes to", head._replace(code=code), frames, leaked,
               f"{len(events)} events of it" if leaked else head.said() if head.code is not None or not events
               else f"an error event, code {code}")
    else:
        found.append(Verdict("WB-CALLER-SUBSCRIBE-001", SKIP, "the card declares no streaming", (), name))
    if method_for(theirs.reach.wire, "push-set"):
        config = PushConfig(task_id, "wb-check-other-caller", HOOK)
        pushed, frames = theirs.ask("push-set", theirs.reach.wire.push_to_wire(config))
        taken = pushed.code is None and pushed.status is not None and pushed.status < 300
        judged("WB-CALLER-PUSH-001", "sets a push config on", pushed, frames, taken,
               "accepted" if taken else pushed.said())
    else:
        found.append(Verdict("WB-CALLER-PUSH-001", SKIP, f"the {theirs.reach.wire.NAME} wire has no push configs",
                             (), name))
    revealing = [f"{operation}: {'the task' if leaked else code}" for operation, code, leaked in said
                 if leaked or code not in (TASK_NOT_FOUND, PUSH_NOT_SUPPORTED)]
    found.append(Verdict("AUTH-SCOPE-003", "fail" if revealing else "pass", (
        "caller B was told the task exists: " + "; ".join(revealing)) if revealing else
        f"caller B's {len(said)} answers were each what an id no task has gets", (), name))
    return found
