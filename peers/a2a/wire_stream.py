"""How 0.3 and 1.0 spell a stream's events (peers/a2a/stream.py), on top of the task and
message spellings in wire_message.py.

1.0 wraps each result in the name of what it is, exactly one (`{"task"}`, `{"message"}`,
`{"statusUpdate"}`, `{"artifactUpdate"}`, defaults omitted); 0.3 sends it bare, tagged
by `kind` (`"status-update"` with `final`, `"artifact-update"` with `append` and
`lastChunk`). A status or artifact event is written and read through the same code as
a task's status and artifacts, so the two can never disagree.
"""
from __future__ import annotations

from peers.a2a import wire_message as shapes
from peers.a2a.fields import WireError, field, obj
from peers.a2a.model import Message, Task, TaskState
from peers.a2a.stream import ArtifactUpdate, Event, StatusUpdate

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

_KINDS = {"task": "task", "message": "message", "statusUpdate": "status-update",
          "artifactUpdate": "artifact-update"}  # 1.0's wrapper -> 0.3's kind


def event_to_wire(dialect: shapes.Dialect, event: Event, history_length: int | None = None) -> dict[str, Any]:
    if isinstance(event, Task):
        return _wrap(dialect, "task", shapes.task_to_wire(dialect, event, history_length=history_length))
    if isinstance(event, Message):
        return _wrap(dialect, "message", shapes.message_to_wire(dialect, event))
    body: dict[str, Any] = {"taskId": event.task_id, "contextId": event.context_id}
    if isinstance(event, StatusUpdate):
        standing = Task(event.task_id, (event.state,), (), event.message, event.context_id,
                        timestamp=event.timestamp, status_data=event.data)
        body["status"] = shapes.task_to_wire(dialect, standing)["status"]
        if dialect.kind:  # 0.3: the kind first, as on every object; `final` last
            body = {"kind": "status-update", **body, "final": event.final}
        return _wrap(dialect, "statusUpdate", body)
    holding = Task(event.task_id, artifacts=(event.artifact,), context_id=event.context_id)
    body["artifact"] = shapes.task_to_wire(dialect, holding)["artifacts"][0]
    if dialect.kind:
        body = {"kind": "artifact-update", **body, "append": event.append, "lastChunk": event.last_chunk}
    else:
        body.update({key: True for key, value in (("append", event.append), ("lastChunk", event.last_chunk))
                     if value})
    return _wrap(dialect, "artifactUpdate", body)


def other_spelling(value: dict[str, Any], kind: bool) -> str:
    """Where a result this wire cannot read is spelled as the other version spells one (0.3 names it by
    its `kind`, 1.0 by one wrapper key), those words: they tell the reader which --wire the peer speaks."""
    if kind and "kind" not in value and any(wrapper in value for wrapper in _KINDS):
        return ' (spelled as A2A 1.0 spells one, wrapped: {"task": ...})'
    return ' (spelled as A2A 0.3 spells one, by its "kind")' if not kind and value.get("kind") in _KINDS.values() else ""


def event_from_wire(dialect: shapes.Dialect, value: Any, path: str = "result") -> Event:
    """One stream result, read as the event it is; WireError naming what is wrong."""
    source = obj(value, path)
    if dialect.kind:
        kind = source.get("kind")
        name = next((wrapper for wrapper, tag in _KINDS.items() if tag == kind), None)
        body = source
    else:
        named = [wrapper for wrapper in _KINDS if wrapper in source]
        if len(named) > 1:  # a oneof: which one it is would be our guess
            raise WireError(f"{path} holds {' and '.join(named)}: a StreamResponse is exactly one of them")
        name = named[0] if named else None
        body = source.get(name) if name else None
    if name is None:
        raise WireError(f"{path} is none of a task, a message, a status update or an artifact update"
                        + other_spelling(source, dialect.kind))
    where = path if dialect.kind else f"{path}.{name}"
    if name == "task":
        return shapes.task_from_wire(dialect, body, where)
    if name == "message":
        return shapes.message_from_wire(dialect, body, where)
    event = obj(body, where)
    task_id = field(event, "taskId", str, where + ".")
    context_id = field(event, "contextId", str, where + ".", default=None)
    if name == "statusUpdate":
        read = shapes.task_from_wire(dialect, {"id": task_id, "status": event.get("status")}, where)
        return StatusUpdate(task_id, context_id, read.state, read.status_message, read.status_data,
                            read.timestamp, event.get("final") is True)
    holder = {"id": task_id, "status": {"state": dialect.states[TaskState.WORKING]},  # any state will do
              "artifacts": [event.get("artifact")]}
    read = shapes.task_from_wire(dialect, holder, where)
    return ArtifactUpdate(task_id, context_id, read.artifacts[0], event.get("append") is True,
                          event.get("lastChunk") is True)


def _wrap(dialect: shapes.Dialect, name: str, body: dict[str, Any]) -> dict[str, Any]:
    return body if dialect.kind else {name: body}
