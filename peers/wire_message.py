"""What A2A 0.3 and 1.0 share: messages made of parts, tasks with a status, artifacts and
history. They differ only in spelling, so each version is a `Dialect` (wire_v03.py,
wire_v10.py) and this module writes and reads both from the same code.

Spec: A2A 1.0 "Data model" (Message, Part, Task, TaskStatus, Artifact) and 0.3's JSON
schema (the `kind` discriminators, kebab-case states, lowercase roles). Reading what a
peer sent raises ValueError naming the field; the server side turns that into -32602.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

from peers.errors import ContentTypeNotSupported, PushNotificationNotSupported, UnsupportedOperation
from peers.fields import field, obj, strings
from peers.model import AgentCard, AgentSkill, Artifact, Message, Part, Task, TaskState
from peers.peer import Peer
from peers.schema import INPUT_SCHEMA_EXTENSION
from transports.jsonrpc import Handler, InvalidParams, JsonRpcError


class Dialect(NamedTuple):
    name: str  # "1.0" or "0.3"
    kind: bool  # 0.3 tags every object with "kind"; 1.0 tells them apart by their fields
    states: dict[TaskState, str]  # TaskState -> its spelling on this wire
    roles: dict[str, str]  # "user"/"agent" -> its spelling on this wire


def _tag(d: Dialect, kind: str, body: dict[str, Any]) -> dict[str, Any]:
    return {"kind": kind, **body} if d.kind else body


# -- writing ---------------------------------------------------------------------------

def part_to_wire(d: Dialect, part: Part) -> dict[str, Any]:
    if part.text is not None:
        return _tag(d, "text", {"text": part.text})
    body: dict[str, Any] = {"data": part.data}
    if part.media_type and not d.kind:  # 0.3 data parts had no media type
        body["mediaType"] = part.media_type
    return _tag(d, "data", body)


def message_to_wire(d: Dialect, m: Message) -> dict[str, Any]:
    body: dict[str, Any] = {"messageId": m.message_id}
    if m.context_id:
        body["contextId"] = m.context_id
    if m.task_id:
        body["taskId"] = m.task_id
    body["role"] = d.roles[m.role]
    body["parts"] = [part_to_wire(d, p) for p in m.parts]
    if m.metadata:
        body["metadata"] = m.metadata
    return _tag(d, "message", body)


def reply_of(task: Task) -> Message | None:
    """The agent's word on the task's current state, for `status.message`: the result
    text once completed (where seed 000's client reads it), else the peer's note."""
    text = task.status_message
    if text is None and task.state is TaskState.COMPLETED:
        text = "".join(a.text for a in task.artifacts)
    if not text:
        return None
    return Message(f"{task.id}-status-{len(task.lifecycle)}", "agent", (Part(text=text),),
                   task.context_id, task.id)


def task_to_wire(d: Dialect, task: Task, *, history_length: int | None = None) -> dict[str, Any]:
    status: dict[str, Any] = {"state": d.states[task.state]}
    reply = reply_of(task)
    if reply is not None:
        status["message"] = message_to_wire(d, reply)
    if task.timestamp:
        status["timestamp"] = task.timestamp
    body: dict[str, Any] = {"id": task.id, "contextId": task.context_id, "status": status}
    if task.artifacts:
        body["artifacts"] = [{"artifactId": a.artifact_id, **({"name": a.name} if a.name else {}),
                              "parts": [part_to_wire(d, p) for p in a.parts]}
                             for a in task.artifacts]
    history = task.history
    if history_length is not None:  # GetTask's historyLength: the most recent N, 0 for none
        history = history[-history_length:] if history_length > 0 else ()
    if history:
        body["history"] = [message_to_wire(d, m) for m in history]
    return _tag(d, "task", body)


# -- reading -----------------------------------------------------------------------------

def part_from_wire(d: Dialect, value: Any, path: str) -> Part:
    part = obj(value, path)
    media_type = part.get("mediaType") if isinstance(part.get("mediaType"), str) else None
    if "text" in part:
        return Part(text=field(part, "text", str, path + "."), media_type=media_type)
    if "data" in part:
        return Part(data=field(part, "data", dict, path + "."), media_type=media_type)
    if any(k in part for k in ("raw", "url", "file")):
        raise ContentTypeNotSupported(f"{path}: this agent takes text and data parts, not files")
    raise ValueError(f"{path} must have text or data")


def message_from_wire(d: Dialect, value: Any, path: str = "message") -> Message:
    m = obj(value, path)
    roles = {wire: ours for ours, wire in d.roles.items()}
    role = roles.get(m.get("role"))
    if role is None:
        raise ValueError(f"{path}.role must be one of {sorted(roles)}")
    parts = field(m, "parts", list, path + ".")
    if not parts:
        raise ValueError(f"{path}.parts must not be empty")
    metadata = m.get("metadata") if isinstance(m.get("metadata"), dict) else None
    return Message(field(m, "messageId", str, path + "."), role,
                   tuple(part_from_wire(d, p, f"{path}.parts[{i}]") for i, p in enumerate(parts)),
                   field(m, "contextId", str, path + ".", default=None),
                   field(m, "taskId", str, path + ".", default=None), metadata)


def task_from_wire(d: Dialect, value: Any, path: str = "task") -> Task:
    t = obj(value, path)
    status = obj(t.get("status"), path + ".status")
    states = {wire: ours for ours, wire in d.states.items()}
    state = states.get(status.get("state"))
    if state is None:
        raise ValueError(f"{path}.status.state {status.get('state')!r} is not a task state")
    artifacts = tuple(
        Artifact(field(obj(a, f"{path}.artifacts[{i}]"), "artifactId", str, f"{path}.artifacts[{i}]."),
                 tuple(part_from_wire(d, p, f"{path}.artifacts[{i}].parts[{j}]")
                       for j, p in enumerate(field(a, "parts", list, f"{path}.artifacts[{i}]."))),
                 a.get("name") if isinstance(a.get("name"), str) else None)
        for i, a in enumerate(field(t, "artifacts", list, path + ".", default=[])))
    note = None
    if "message" in status and state is not TaskState.COMPLETED:
        note = message_from_wire(d, status["message"], path + ".status.message").text
    return Task(field(t, "id", str, path + "."), (state,), artifacts, note,
                field(t, "contextId", str, path + ".", default=None),
                timestamp=status.get("timestamp") if isinstance(status.get("timestamp"), str) else None)


# -- the skills on a card: spelled alike in both versions (spec: AgentSkill) ---------------

def skills_to_wire(card: AgentCard) -> list[dict[str, Any]]:
    return [{"id": s.id, "name": s.name or s.id, "description": s.description,
             "tags": list(s.tags)} for s in card.skills]


def capabilities_to_wire(card: AgentCard) -> dict[str, Any]:
    caps: dict[str, Any] = {"streaming": card.streaming, "pushNotifications": False}
    schemas = {s.id: s.input_schema for s in card.skills if s.input_schema}
    if schemas:  # AgentSkill has no schema field; an extension on the card carries them
        caps["extensions"] = [{"uri": INPUT_SCHEMA_EXTENSION, "required": False,
                               "description": "JSON Schema of each skill's input, by skill id",
                               "params": schemas}]
    return caps


def skills_from_wire(card: dict[str, Any]) -> tuple[AgentSkill, ...]:
    caps = card.get("capabilities") if isinstance(card.get("capabilities"), dict) else {}
    extensions = caps.get("extensions") if isinstance(caps.get("extensions"), list) else []
    schemas = next((e["params"] for e in extensions if isinstance(e, dict)
                    and e.get("uri") == INPUT_SCHEMA_EXTENSION
                    and isinstance(e.get("params"), dict)), {})
    skills = []
    for i, value in enumerate(field(card, "skills", list)):
        s, where = obj(value, f"skills[{i}]"), f"skills[{i}]."
        tags = strings(field(s, "tags", list, where, default=[]), where + "tags")
        skills.append(AgentSkill(field(s, "id", str, where),
                                 field(s, "description", str, where, default=""),
                                 name=field(s, "name", str, where, default=""), tags=tuple(tags),
                                 input_schema=_dict_or_none(schemas.get(s["id"]))))
    return tuple(skills)


# -- the server side: the operations both versions have -----------------------------------

def operations(d: Dialect, peer: Peer, wrap_send: Callable[[dict[str, Any]], Any]) -> dict[str, Handler]:
    """send / get / cancel for `peer`, keyed by operation; each version names the methods."""
    def send(params: Any, caller: Any) -> Any:
        p = _params(params)
        message = _read(message_from_wire, d, p.get("message"))
        if message.role != "user":
            raise InvalidParams("message.role must be the user's")
        return wrap_send(task_to_wire(d, peer.send_message(message, owner=_owner(caller))))

    def get(params: Any, caller: Any) -> Any:
        p = _params(params)
        length = p.get("historyLength")
        if length is not None and (type(length) is not int or length < 0):
            raise InvalidParams("historyLength must be a whole number")
        task = peer.get_task(_task_id(p), owner=_owner(caller))
        return task_to_wire(d, task, history_length=length)

    def cancel(params: Any, caller: Any) -> Any:
        return task_to_wire(d, peer.cancel_task(_task_id(_params(params)), owner=_owner(caller)))

    return {"send": send, "get": get, "cancel": cancel}


def refusing(error: type[JsonRpcError], why: str) -> Handler:
    """A method this peer knows but does not offer (spec 3.3.4: a capability the card does
    not declare is refused with its own error, not "Method not found")."""
    def refuse(params: Any, caller: Any) -> Any:
        raise error(why)
    return refuse


def _dict_or_none(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def unsupported(streaming: list[str], push: list[str], card: list[str],
                card_error: type[JsonRpcError]) -> dict[str, Handler]:
    """The refusals for streaming, push notifications and the extended card, by name."""
    table: dict[str, Handler] = {}
    for name in streaming:
        table[name] = refusing(UnsupportedOperation,
                               "this agent does not stream (capabilities.streaming is false)")
    for name in push:
        table[name] = refusing(PushNotificationNotSupported,
                               "this agent does not send push notifications")
    for name in card:
        table[name] = refusing(card_error, "this agent has no extended card")
    return table


def _params(params: Any) -> dict[str, Any]:
    if not isinstance(params, dict):
        raise InvalidParams("params must be an object")
    return params


def _task_id(params: dict[str, Any]) -> str:
    if not isinstance(params.get("id"), str):
        raise InvalidParams('"id" must be the task id, a string')
    return params["id"]


def _read(reader: Callable[..., Any], *args: Any) -> Any:
    try:
        return reader(*args)
    except ValueError as exc:
        raise InvalidParams(str(exc)) from None


def _owner(caller: Any) -> str:
    return getattr(caller, "owner", "")  # see peers/store.py: who may see a task


def client_task(d: Dialect, result: Any, *, is_task: Callable[[dict[str, Any]], Any],
                is_message: Callable[[dict[str, Any]], Any]) -> Task:
    """Read a send result on the client side: a Task, or a direct Message (completed)."""
    r = obj(result, "result")
    if (task := is_task(r)) is not None:
        return task_from_wire(d, task)
    if (message := is_message(r)) is not None:
        reply = message_from_wire(d, message, "message")
        return Task(f"(reply {reply.message_id})", (TaskState.COMPLETED,),
                    (Artifact("reply", reply.parts),), context_id=reply.context_id)
    raise ValueError("result is neither a task nor a message")

