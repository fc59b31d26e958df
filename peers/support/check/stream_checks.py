"""The stream and push families, with --deep: SendStreamingMessage, SubscribeToTask, and
push-config CRUD (or its refusal), on every binding the card declares.

Spec: A2A 1.0 sections 3.1.2 (a stream: text/event-stream, a Task or Message first, closed
after the final state), 3.1.6 (SubscribeToTask: the task first; refused on a terminal
task), 3.1.7 to 3.1.10 (push configs), 3.3.4 (refused without pushNotifications), 13.2
(a webhook is a request the agent makes for a caller: one at a private address is a
request-forgery risk). The webhook given is on a documentation address
(https://example.com/hook), never a real delivery target; the private one,
http://127.0.0.1/, is asked for once, and whether it is accepted is reported, never failed
(a test instance may allow it on purpose), and deleted again if it was. A live task is
asked for with returnImmediately; an agent whose every task ends at once has none to
subscribe to, and that check is skipped saying so. Not here: the task family
(task_checks), other callers (caller_checks).
"""
from __future__ import annotations

import json

from peers.a2a.model import PushConfig
from peers.a2a.wire_format import method_for
from peers.support.check.deep_asking import TERMINAL, Deep, first_task, inner_of, kind_of, state_of, task_in
from peers.support.check.probe import SKIP, Answer, Verdict, verdict

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

HOOK, PRIVATE_HOOK = "https://example.com/hook", "http://127.0.0.1/"
NOTIFICATION_TOKEN = "wb-check-notification-token"  # set with the config: is it read back?
PUSH_NOT_SUPPORTED = -32003
PUSH_IDS = ("PUSH-CREATE-001", "PUSH-GET-001", "PUSH-LIST-001", "PUSH-DEL-001", "WB-PUSH-SSRF-001",
            "WB-PUSH-REDACT-001")


def streams(deep: Deep, streaming: bool) -> list[Verdict]:
    name = deep.reach.name
    ids = ("CORE-STREAM-001", "CORE-STREAM-003", "STREAM-SUB-001", "STREAM-SUB-003")
    if not streaming:
        return [Verdict(row, SKIP, "the card declares no streaming", (), name) for row in ids]
    head, events, frames, ended = deep.stream("stream", deep.reach.wire.send_params(deep.message()))
    found = [verdict("CORE-STREAM-001", head.status == 200 and head.content_type == "text/event-stream",
                     f"SendStreamingMessage: {head.said()}, Content-Type {head.content_type or '(none)'}",
                     frames, name, head)]
    kinds, others = [kind_of(event) or "?" for event in events], strays(events)
    began = bool(kinds) and kinds[0] in ("task", "message")
    found.append(verdict("CORE-STREAM-003", began and ended == "final" and not others,
                         f"{len(events)} events ({', '.join(kinds[:6])}{' ...' if len(kinds) > 6 else ''}), "
                         + (f"updates of another task than its own ({', '.join(others[:2])}), " if others else "")
                         + f"the stream {_ended(ended)}", frames, name, head if not events else None))
    task = next((_task(event) for event in events if _task(event) is not None), None)
    found.append(_live(deep))
    if task is None or state_of(_last_state(events, task)) not in TERMINAL:
        found.append(Verdict("STREAM-SUB-003", SKIP, "the stream left no terminal task to subscribe to", (), name))
        return found
    head, events, frames, ended = deep.stream("subscribe", {"id": task["id"]})
    taken = any(kind_of(event) == "task" for event in events)
    refused = head.code is not None or any(isinstance(event, dict) and "error" in event for event in events)
    found.append(verdict("STREAM-SUB-003", refused and not taken, "SubscribeToTask on a terminal task: "
                         + (f"{len(events)} events ({', '.join(kind_of(e) or 'error' for e in events[:4])})"
                            if events else head.said()), frames, name, head))
    return found


def strays(events: list[Any]) -> list[str]:
    """The other task ids a task's stream has updates of (3.1.2: its updates are of its task)."""
    first = first_task(events)
    named = [inner_of(each).get("taskId") for each in events if kind_of(each) in ("statusUpdate", "artifactUpdate")
             and isinstance(inner_of(each), dict)]
    return [str(each)[:40] for each in named if first is not None and each != first["id"]]


def _ended(ended: str) -> str:
    return {"final": "ended at its final event", "closed": "closed before any final event"}.get(ended, ended)


def _task(event: Any) -> dict[str, Any] | None:
    """The task an event carries, if it is one with a string id and a status."""
    return task_in(event) if kind_of(event) == "task" else None


def _last_state(events: list[Any], task: dict[str, Any]) -> dict[str, Any]:
    """The task's status as the last event that carries one says."""
    for event in reversed(events):
        kind = kind_of(event)
        if kind is None:
            continue
        inner = event.get(kind) if isinstance(event.get(kind), dict) else event
        if kind in ("task", "statusUpdate") and state_of(inner) is not None:
            return inner
    return task


def _live(deep: Deep) -> Verdict:
    name = deep.reach.name
    answer, frames = deep.send(deep.message(), at_once=True)
    task = deep.task(answer)
    if task is None or state_of(task) in TERMINAL:
        return Verdict("STREAM-SUB-001", SKIP, "no live task to subscribe to: with returnImmediately the task came "
                       f"back {state_of(task) or answer.said()} (every task ends at once)", frames, name)
    head, events, more, ended = deep.stream("subscribe", {"id": task["id"]})
    first = kind_of(events[0]) if events else None
    if first != "task":  # refused: was it because the task ended meanwhile? Then it was not live
        now, again = deep.ask("get", {"id": task["id"]})
        if state_of(deep.task(now)) in TERMINAL:
            return Verdict("STREAM-SUB-001", SKIP, f"no live task to subscribe to: the {state_of(task)} task had "
                           f"ended ({state_of(deep.task(now))}) when SubscribeToTask came ({head.said()})",
                           frames + more + again, name)
    return verdict("STREAM-SUB-001", first == "task" and (_task(events[0]) or {}).get("id") == task["id"],
                   f"SubscribeToTask on the {state_of(task)} task: {len(events)} events, the first "
                   f"{first or head.said()}; the stream {_ended(ended)}", frames + more, name, head)


def pushes(deep: Deep, declared: bool, task: dict[str, Any] | None) -> list[Verdict]:
    name, wire = deep.reach.name, deep.reach.wire
    if method_for(wire, "push-set") is None:
        return [Verdict(row, SKIP, f"the {wire.NAME} wire has no push configs", (), name)
                for row in (*PUSH_IDS, "CORE-CAP-001")]
    if task is None:
        return [Verdict(row, SKIP, "no task was made to set a push config on", (), name)
                for row in (*PUSH_IDS, "CORE-CAP-001")]
    config = PushConfig(task["id"], "wb-check-hook", HOOK, token=NOTIFICATION_TOKEN)
    answer, frames = deep.ask("push-set", wire.push_to_wire(config))
    if not declared:
        return [Verdict(row, SKIP, "the card declares no push notifications", (), name) for row in PUSH_IDS] + [
            verdict("CORE-CAP-001", answer.code == PUSH_NOT_SUPPORTED, f"a push config set: {answer.said()}",
                    frames, name, answer)]
    found = [verdict("PUSH-CREATE-001", _url(deep.result(answer)) == HOOK, f"set {HOOK}: " + (
        f"answered url {_url(deep.result(answer))}" if deep.result(answer) is not None else answer.said()),
        frames, name, answer),
        Verdict("CORE-CAP-001", SKIP, "the card declares push notifications", (), name)]
    query = _query(wire, task["id"], config.id)
    answer, frames = deep.ask("push-get", query)
    found.append(verdict("PUSH-GET-001", _url(deep.result(answer)) == HOOK, f"get: {answer.said()}, url "
                         f"{_url(deep.result(answer))}", frames, name, answer))
    if deep.result(answer) is not None:  # a finding either way: the spec lets an agent keep the token to itself
        echoed = NOTIFICATION_TOKEN in json.dumps(deep.result(answer))
        found.append(Verdict("WB-PUSH-REDACT-001", SKIP, "finding, not judged: the config read back " + (
            "echoes the notification token it was set with" if echoed else "leaves out the notification token it "
            "was set with"), frames, name))
    answer, frames = deep.ask("push-list", {"taskId": task["id"]} if wire.NAME == "1.0" else {"id": task["id"]})
    listed = _listed(deep.result(answer))
    found.append(verdict("PUSH-LIST-001", HOOK in listed, f"list: {answer.said()}, urls {listed[:4]}",
                         frames, name, answer))
    answer, frames = deep.ask("push-delete", query)  # HTTP+JSON's is a DELETE
    after, more = deep.ask("push-get", query)
    found.append(verdict("PUSH-DEL-001", answer.code is None and answer.status is not None and answer.status < 300
                         and after.code is not None, f"delete: {answer.said()}; get after it: {after.said()}",
                         frames + more, name, answer))
    found.append(_private(deep, task))
    return found


def _private(deep: Deep, task: dict[str, Any]) -> Verdict:
    wire, name = deep.reach.wire, deep.reach.name
    config = PushConfig(task["id"], "wb-check-private", PRIVATE_HOOK)
    answer, frames = deep.ask("push-set", wire.push_to_wire(config))
    if answer.status is None:
        return verdict("WB-PUSH-SSRF-001", False, "", frames, name, answer)
    if answer.code is None and answer.status < 300:
        deep.ask("push-delete", _query(wire, task["id"], config.id))  # not left behind
        return Verdict("WB-PUSH-SSRF-001", SKIP, f"finding, not judged: a webhook at {PRIVATE_HOOK} was accepted "
                       f"({answer.said()}): a request-forgery risk unless this is a test instance", frames, name)
    return Verdict("WB-PUSH-SSRF-001", "pass", f"a webhook at {PRIVATE_HOOK} was refused: {answer.said()}",
                   frames, name)


def _query(wire: Any, task_id: str, config_id: str) -> dict[str, str]:
    return {"taskId": task_id, "id": config_id} if wire.NAME == "1.0" else \
        {"id": task_id, "pushNotificationConfigId": config_id}


def _url(config: Any) -> Any:
    """A push config's url: 1.0's flat TaskPushNotificationConfig, or 0.3's nested one."""
    if not isinstance(config, dict):
        return None
    inner = config.get("pushNotificationConfig")
    return inner.get("url") if isinstance(inner, dict) else config.get("url")


def _listed(result: Any) -> list[Any]:
    configs = result.get("configs") if isinstance(result, dict) else result
    return [_url(each) for each in configs] if isinstance(configs, list) else []


def refused(answer: Answer, events: list[Any]) -> bool:
    """A request turned down: an error answer, or a stream whose events are errors only."""
    return answer.code is not None or (bool(events) and all(isinstance(e, dict) and "error" in e for e in events))
