"""The task family, with --deep: what needs a task, on every binding the card declares.

Spec: A2A 1.0 sections 3.1.1 (SendMessage, and a message to a terminal task), 3.1.3 and
3.2.4 (GetTask, historyLength), 3.1.4 (ListTasks: pages, a cursor that stays put as tasks
are added, filters), 3.1.5 (CancelTask on a terminal task), 3.3.1 (a messageId sent twice:
Send Message MAY be idempotent), 3.4 (task ids, a task continued), 5.1 (both bindings answer alike). These
requests make tasks, and a task may be an effect (a refund): --deep says so, and is meant
for a test instance. Each check judges what came back (deep_asking reads it leniently);
one that needs what the agent did not give (a task, a paused one, ListTasks in 0.3) is
skipped saying so. Not here: streams and push configs (stream_checks), other callers
(caller_checks).
"""
from __future__ import annotations

from peers.a2a.wire_format import method_for
from peers.support.check.deep_asking import TERMINAL, Deep, kind_of, state_of, task_in
from peers.support.check.probe import SKIP, Answer, Verdict, verdict
from transports.printer import Frame

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

TASK_NOT_CANCELABLE = -32002
LIST_IDS = ("CORE-LIST-002", "CORE-LIST-004", "WB-LIST-FILTER-001")


class Made:
    """What the send checks made on one binding, for the checks after them to use."""

    def __init__(self) -> None:
        self.task: dict[str, Any] | None = None  # the first task, as SendMessage answered it
        self.why = ""  # why there is none, for the checks that are skipped
        self.paused: dict[str, Any] | None = None  # a task waiting in input-required, if one was had
        self.ids: list[str] = []  # every task id made


def shape(deep: Deep, answer: Answer) -> tuple[bool, str]:
    """Whether a SendMessage answer is a Task or Message in the card's version's shape; what it is."""
    result, v10 = deep.result(answer), deep.reach.wire.NAME == "1.0"
    if not isinstance(result, dict):
        return False, answer.said() + ", no result"
    kind = kind_of(result)
    if kind == "message":
        inner = result.get("message") if v10 else result
        ok = isinstance(inner, dict) and isinstance(inner.get("messageId"), str) and isinstance(inner.get("parts"), list)
        return ok and (v10 or result.get("kind") == "message"), "a Message" + ("" if ok else " without messageId or parts")
    task = task_in(result)
    if task is None or kind != "task":
        return False, f"neither a task nor a message: keys {sorted(result)[:6]}"
    raw = task["status"].get("state")
    missing = [name for name in ("id", "contextId") if not isinstance(task.get(name), str)]
    spelled = isinstance(raw, str) and (raw.startswith("TASK_STATE_") if v10 else raw == raw.lower())
    wrapped = ("task" in result) if v10 else task.get("kind") == "task"
    problems = [f"no {name}" for name in missing] + ([] if spelled else [f"state {str(raw)[:30]} not in "
                                                                          f"{deep.reach.wire.NAME}'s spelling"])
    problems += [] if wrapped else ["not wrapped in {\"task\": ...}" if v10 else "no kind \"task\""]
    return not problems, f"a Task in state {state_of(task)}" + (f": {', '.join(problems)}" if problems else "")


def checks(deep: Deep) -> tuple[list[Verdict], dict[str, Any] | None]:
    """The verdicts, and the first task made (for the checks after these), if one was."""
    name, made = deep.reach.name, Made()
    message = deep.message()
    answer, frames = deep.send(message)
    if answer.status in (401, 403):
        return [Verdict(row, SKIP, f"SendMessage was refused ({answer.said()}): give --credentials one for "
                        f"{deep.reach.endpoint[:80]}", frames, name) for row in IDS], None
    ok, said = shape(deep, answer)
    found = [verdict("CORE-SEND-001", ok, f"SendMessage: {said}", frames, name, answer)]
    made.task = deep.task(answer)
    if made.task is None or not isinstance(made.task.get("id"), str):
        made.task, made.why = None, f"SendMessage answered no task ({said})"
        return found + [Verdict(row, SKIP, made.why, frames, name) for row in IDS if row != "CORE-SEND-001"], None
    made.ids.append(made.task["id"])
    _note_paused(made, made.task)
    again, more = deep.send(deep.message())
    second = deep.task(again)
    if second is not None:
        made.ids.append(str(second.get("id")))
        _note_paused(made, second)
    found.append(verdict("CORE-MULTI-003", second is not None and second.get("id") != made.task["id"],
                         f"two messages: tasks {made.ids}", frames + more, name, again)
                 if second is not None else Verdict("CORE-MULTI-003", SKIP, "the second message made no task", more, name))
    found += _get(deep, made.task)
    found += _list(deep, made) if method_for(deep.reach.wire, "list") else \
        [Verdict(row, SKIP, f"the {deep.reach.wire.NAME} wire has no ListTasks", (), name) for row in LIST_IDS]
    found += _terminal(deep, made.task)
    found.append(_duplicate(deep, message, made.task))
    found.append(_continued(deep, made))
    return found, made.task


IDS = ("CORE-SEND-001", "CORE-MULTI-003", "CORE-GET-001", "CORE-HIST-001", "CORE-HIST-002", *LIST_IDS,
       "CORE-CANCEL-002", "CORE-SEND-002", "WB-SEND-DUP-001", "WB-MULTI-TURN-001")


def _note_paused(made: Made, task: dict[str, Any]) -> None:
    if made.paused is None and state_of(task) == "input-required":
        made.paused = task


def _get(deep: Deep, task: dict[str, Any]) -> list[Verdict]:
    name, task_id = deep.reach.name, task["id"]
    answer, frames = deep.ask("get", {"id": task_id})
    got = deep.task(answer)
    same = got is not None and got.get("id") == task_id and got.get("contextId") == task.get("contextId") \
        and state_of(got) is not None
    found = [verdict("CORE-GET-001", same, f"GetTask {task_id[:40]}: " + (
        f"the task, {state_of(got)}" if got else answer.said()), frames, name, answer)]
    for length, row in ((0, "CORE-HIST-001"), (1, "CORE-HIST-002")):
        answer, frames = deep.ask("get", {"id": task_id, "historyLength": length})
        got = deep.task(answer)
        history = got.get("history") if got is not None else None
        count = len(history) if isinstance(history, list) else 0 if history is None else -1
        found.append(verdict(row, got is not None and 0 <= count <= length,
                             f"historyLength {length}: " + (f"{count} history messages" if got else answer.said()),
                             frames, name, answer))
    return found


def _ids(deep: Deep, answer: Answer) -> list[str] | None:
    result = deep.result(answer)
    tasks = result.get("tasks") if isinstance(result, dict) else None
    return [str(each.get("id")) for each in tasks if isinstance(each, dict)] if isinstance(tasks, list) else None


def _list(deep: Deep, made: Made) -> list[Verdict]:
    name, task = deep.reach.name, made.task or {}
    first, frames = deep.ask("list", {"pageSize": 1})
    page, result = _ids(deep, first), deep.result(first)
    token = result.get("nextPageToken") if isinstance(result, dict) else None
    newer = deep.task(deep.send(deep.message())[0])  # a task added between the two pages
    if newer is not None:
        made.ids.append(str(newer.get("id")))
    if page is None or not token:
        paged = verdict("CORE-LIST-002", False, f"pageSize 1 with {len(made.ids)} tasks made: " + (
            first.said() if page is None else f"{len(page)} tasks, nextPageToken {token!r}"), frames, name, first)
    else:
        then, more = deep.ask("list", {"pageSize": 1, "pageToken": token})
        after = _ids(deep, then)  # a token promised more: at least one task made before the first page
        stable = len(page) == 1 and bool(after) and not set(after) & set(page) and \
            (newer is None or newer.get("id") not in after)
        paged = verdict("CORE-LIST-002", stable, f"page 1 {page}, a task added, page 2 {after}"
                        + (f": {then.said()}" if after is None else ", though page 1 gave a nextPageToken"
                           if not after else ""), frames + more, name, then)
    context = task.get("contextId")
    by_context, frames = deep.ask("list", {"contextId": context, "pageSize": 100})
    inside, result = _tasks(deep, by_context), deep.result(by_context)
    last = result.get("nextPageToken", "") if isinstance(result, dict) else None
    found = [paged, verdict("CORE-LIST-004", last == "", f"the only page of contextId {str(context)[:40]}: "
                            f"nextPageToken {last!r}", frames, name, by_context)]
    listed = next((t for t in inside or () if t.get("id") == task.get("id")), None)
    raw = (listed or task).get("status")  # as it is now: it may have ended since it was made
    status = raw.get("state") if isinstance(raw, dict) else None
    by_state, more = deep.ask("list", {"status": status, "pageSize": 100})
    states = _tasks(deep, by_state)
    # In the state it was just listed in, it is found by it: only a task still going may have left it meanwhile.
    found_by_state = states is not None and (task.get("id") in [t.get("id") for t in states]
                                             or state_of(listed) in ("submitted", "working"))
    filtered = listed is not None and found_by_state and all(t.get("contextId") == context for t in inside) \
        and all(t["status"].get("state") == status for t in states)
    found.append(verdict("WB-LIST-FILTER-001", filtered, f"contextId {str(context)[:40]}: "
                         f"{len(inside) if inside is not None else by_context.said()} tasks; status {status}: " +
                         (f"states {sorted({str(t['status'].get('state')) for t in states})[:4]}"
                          if states is not None else by_state.said())
                         + ("" if found_by_state or states is None else f", without task {str(task.get('id'))[:40]}"),
                         frames + more, name, by_state))
    return found


def _tasks(deep: Deep, answer: Answer) -> list[dict[str, Any]] | None:
    result = deep.result(answer)
    tasks = result.get("tasks") if isinstance(result, dict) else None
    return [each for each in tasks if isinstance(each, dict) and isinstance(each.get("status"), dict)] \
        if isinstance(tasks, list) else None


def _terminal(deep: Deep, task: dict[str, Any]) -> list[Verdict]:
    name, state = deep.reach.name, state_of(task)
    if state not in TERMINAL:
        why = f"the task did not end ({state}): no terminal task to ask about"
        return [Verdict("CORE-CANCEL-002", SKIP, why, (), name), Verdict("CORE-SEND-002", SKIP, why, (), name)]
    answer, frames = deep.ask("cancel", {"id": task["id"]})
    canceled = deep.task(answer)
    found = [verdict("CORE-CANCEL-002", answer.code == TASK_NOT_CANCELABLE, f"CancelTask on a {state} task: "
                     f"{answer.said()}" + (f", the task back in state {state_of(canceled)}" if canceled else ""),
                     frames, name, answer)]
    answer, frames = deep.send(deep.message(task_id=task["id"], context_id=task.get("contextId")))
    taken = deep.task(answer)
    found.append(verdict("CORE-SEND-002", answer.code is not None and taken is None,
                         f"a message to the {state} task: {answer.said()}" + (
                             f", a task in state {state_of(taken)}" if taken else ""), frames, name, answer))
    return found


def _duplicate(deep: Deep, message: Any, task: dict[str, Any]) -> Verdict:
    """The first message again, its messageId and all: the first task, or a refusal, where Send
    Message is idempotent (3.3.1 leaves it to the agent: a second task is a MAY not done)."""
    answer, frames = deep.send(message)
    again = deep.task(answer)
    one = again is None and answer.code is not None or again is not None and (
        again.get("id") == task["id"] or state_of(again) == "rejected")
    return verdict("WB-SEND-DUP-001", one, f"messageId {message.message_id[:50]} again: " + (
        f"task {str(again.get('id'))[:40]} ({state_of(again)}), the first was {task['id'][:40]}" if again
        else answer.said()), frames, deep.reach.name, answer)


def _continued(deep: Deep, made: Made) -> Verdict:
    name, paused = deep.reach.name, made.paused
    if paused is None or not deep.reach.wire.TURNS:
        return Verdict("WB-MULTI-TURN-001", SKIP, "no task paused in input-required (each ended at once: "
                       f"{state_of(made.task)}), so there was no turn to continue", (), name)
    answer, frames = deep.send(deep.message(task_id=paused["id"], context_id=paused.get("contextId")))
    task = deep.task(answer)
    kept = task is not None and task.get("id") == paused["id"] and task.get("contextId") == paused.get("contextId")
    return verdict("WB-MULTI-TURN-001", kept, f"the next turn of task {paused['id'][:40]} in context "
                   f"{str(paused.get('contextId'))[:40]}: " + (f"task {str(task.get('id'))[:40]} in context "
                                                               f"{str(task.get('contextId'))[:40]}" if task else answer.said()),
                   frames, name, answer)


def compared(deeps: list[Deep], task: dict[str, Any] | None) -> list[Verdict]:
    """BIND-EQUIV-002: one GetTask over JSON-RPC and over HTTP+JSON, field by field."""
    pair = [deep for deep in deeps if deep.reach.name in ("JSONRPC", "HTTP+JSON") and deep.reach.wire.NAME == "1.0"]
    if len(pair) < 2 or task is None:
        return [Verdict("BIND-EQUIV-002", SKIP, "needs a task and a 1.0 card declaring both JSON-RPC and HTTP+JSON")]
    asked = [deep.ask("get", {"id": task["id"]}) for deep in pair]
    got = [deep.task(answer) for deep, (answer, _) in zip(pair, asked)]
    frames: tuple[Frame, ...] = asked[0][1] + asked[1][1]
    if None in got:
        return [Verdict("BIND-EQUIV-002", "fail", "GetTask: " + "; ".join(
            f"{deep.reach.name} {answer.said()}" for deep, (answer, _) in zip(pair, asked)), frames)]
    differing = differences(got[0], got[1])
    return [Verdict("BIND-EQUIV-002", "fail" if differing else "pass", (
        f"{len(differing)} fields differ: " + "; ".join(differing[:4])) if differing else
        f"GetTask {task['id'][:40]}: the same task over both bindings", frames)]


def differences(one: Any, other: Any, path: str = "") -> list[str]:
    """Where two JSON values differ: each path, with both values (short)."""
    if isinstance(one, dict) and isinstance(other, dict):
        return [found for key in sorted(set(one) | set(other), key=str)
                for found in differences(one.get(key), other.get(key), f"{path}.{key}" if path else str(key))]
    if isinstance(one, list) and isinstance(other, list) and len(one) == len(other):
        return [found for n, pair in enumerate(zip(one, other)) for found in differences(*pair, f"{path}[{n}]")]
    return [] if one == other else [f"{path}: JSON-RPC {str(one)[:30]} / HTTP+JSON {str(other)[:30]}"]
