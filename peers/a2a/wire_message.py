"""What A2A 0.3 and 1.0 share: messages made of parts, tasks with a status, artifacts and
history. They differ only in spelling, so each version is a `Dialect` (wire_v03.py,
wire_v10.py) and this module writes and reads both from the same code.

Spec: A2A 1.0 "Data model" (Message, Part, Task, TaskStatus, Artifact) and 0.3's JSON
schema (the `kind` discriminators, kebab-case states, lowercase roles, `file` parts).
Reading raises `WireError` naming the field; what a WireError means is the reader's
side's business (a peer answers -32602, the support agent reports a protocol violation).
"""

from __future__ import annotations

import base64
import binascii

from peers.a2a.fields import (WireError, count, field, obj, one_of, optional, optional_str, optional_strings,
                              request_metadata, strings)
from peers.a2a.model import Artifact, Message, Part, Task, TaskState
from transports.records import Record

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

CONTENTS = {False: ("text", "raw", "url", "data"), True: ("text", "file", "data")}  # a Part's, one of them: 1.0, 0.3
MAX_ID = 256  # characters of a message's ids: a UUID is 36, and each is kept, and said again, with its task


class Dialect(Record):
    name: str  # "1.0" or "0.3"
    kind: bool  # 0.3 tags every object with "kind"; 1.0 tells them apart by their fields
    states: dict[TaskState, str]  # TaskState -> its spelling on this wire
    roles: dict[str, str]  # "user"/"agent" -> its spelling on this wire
    read_states: dict[str | int, TaskState]  # the same two tables read back: spelling (1.0: or number) -> ours
    read_roles: dict[str | int, str]


def dialect(name: str, kind: bool, states: dict[TaskState, str], roles: dict[str, str]) -> Dialect:
    """A version's spellings, and the same read back (made once: every message read uses them)."""
    return Dialect(name, kind, states, roles, {wire: ours for ours, wire in states.items()},
                   {wire: ours for ours, wire in roles.items()})


def _tag(dialect: Dialect, kind: str, body: dict[str, Any]) -> dict[str, Any]:
    return {"kind": kind, **body} if dialect.kind else body


# -- writing ---------------------------------------------------------------------------
def part_to_wire(dialect: Dialect, part: Part) -> dict[str, Any]:
    if part.text is not None:
        kind, body = "text", {"text": part.text}
    elif part.raw is not None or part.url is not None:
        kind, body = "file", _file_to_wire(dialect, part)  # its media type and name as each version puts them
    else:
        kind, body = "data", {"data": part.data}
    if kind != "file" and dialect.kind:  # 0.3: tagged; its text and data parts had no media type
        body = {"kind": kind, **body}
    elif kind != "file" and part.media_type:
        body["mediaType"] = part.media_type
    if part.metadata is not None:  # both versions: on every kind of part
        body["metadata"] = part.metadata
    return body


def _file_to_wire(dialect: Dialect, part: Part) -> dict[str, Any]:
    content = {"raw": base64.b64encode(part.raw).decode()} if part.raw is not None else {"url": part.url}
    if dialect.kind:  # 0.3: {"kind": "file", "file": {"bytes" | "uri", "name", "mimeType"}}
        file = {"bytes" if "raw" in content else "uri": next(iter(content.values()))}
        file.update({"name": part.filename} if part.filename else {})
        file.update({"mimeType": part.media_type} if part.media_type else {})
        return {"kind": "file", "file": file}
    content.update({"filename": part.filename} if part.filename else {})
    content.update({"mediaType": part.media_type} if part.media_type else {})
    return content


def message_to_wire(dialect: Dialect, message: Message) -> dict[str, Any]:
    body: dict[str, Any] = {"messageId": message.message_id}
    if message.context_id:
        body["contextId"] = message.context_id
    if message.task_id:
        body["taskId"] = message.task_id
    body["role"] = dialect.roles[message.role]
    body["parts"] = [part_to_wire(dialect, p) for p in message.parts]
    if message.metadata:
        body["metadata"] = message.metadata
    if message.extensions:
        body["extensions"] = list(message.extensions)
    if message.reference_task_ids:
        body["referenceTaskIds"] = list(message.reference_task_ids)
    return _tag(dialect, "message", body)


def artifact_to_wire(dialect: Dialect, artifact: Artifact) -> dict[str, Any]:
    body: dict[str, Any] = {"artifactId": artifact.artifact_id}
    body.update({"name": artifact.name} if artifact.name else {})
    body.update({"description": artifact.description} if artifact.description else {})
    body["parts"] = [part_to_wire(dialect, p) for p in artifact.parts]
    body.update({"metadata": artifact.metadata} if artifact.metadata is not None else {})
    body.update({"extensions": list(artifact.extensions)} if artifact.extensions else {})
    return body


def status_text(task: Task) -> str | None:
    """The agent's word on the task's state: once completed, its result (seed 000's client reads it there)."""
    if task.status_message is None and task.state is TaskState.COMPLETED:
        return "".join(a.text for a in task.artifacts)
    return task.status_message


def reply_of(task: Task) -> Message | None:
    """`status.message`: the agent's word on the task's current state (`status_text`)."""
    text = status_text(task)
    if not text:
        return None
    asked = (Part(data=task.status_data),) if task.status_data else ()  # machine-readable too
    return Message(f"{task.id}-status-{len(task.lifecycle)}", "agent", (Part(text=text),) + asked,
                   task.context_id, task.id)


def task_to_wire(dialect: Dialect, task: Task, *, history_length: int | None = None) -> dict[str, Any]:
    status: dict[str, Any] = {"state": dialect.states[task.state]}
    reply = reply_of(task)
    if reply is not None:
        status["message"] = message_to_wire(dialect, reply)
    if task.timestamp:
        status["timestamp"] = task.timestamp
    body: dict[str, Any] = {"id": task.id, "contextId": task.context_id, "status": status}
    if task.artifacts:
        body["artifacts"] = [artifact_to_wire(dialect, a) for a in task.artifacts]
    history = task.history
    if history_length is not None:  # historyLength: the most recent N, 0 for none
        history = history[-history_length:] if history_length > 0 else ()
    if history:
        body["history"] = [message_to_wire(dialect, m) for m in history]
    if task.metadata is not None:
        body["metadata"] = task.metadata
    return _tag(dialect, "task", body)


# -- reading -----------------------------------------------------------------------------
def part_from_wire(dialect: Dialect, value: Any, path: str) -> Part:
    """A part: its content (text, data or a file), then its metadata, each checked, made at once."""
    part = obj(value, path)
    media_type = None if dialect.kind else optional(part, "mediaType", str, path + ".")  # 0.3: on files only
    if len(part) > 1 and len(given := [key for key in CONTENTS[dialect.kind] if key in part]) > 1:  # none dropped
        raise WireError(f"{path} must have one of {', '.join(CONTENTS[dialect.kind])}, not {', '.join(given)}")
    if "text" in part:
        content = {"text": field(part, "text", str, path + "."), "media_type": media_type}
    elif "data" in part:
        content = {"data": part["data"] if not dialect.kind else field(part, "data", dict, path + "."),
                   "media_type": media_type}
    elif dialect.kind and "file" in part:  # 0.3
        file = obj(part["file"], path + ".file")
        if "bytes" in file and "uri" in file:  # FileWithBytes or FileWithUri, never both
            raise WireError(f"{path}.file must have bytes or uri, not both")
        raw = _base64(file["bytes"], path + ".file.bytes") if "bytes" in file else None
        link = None if raw is not None else field(file, "uri", str, path + ".file.")
        content = {"raw": raw, "url": link, "filename": optional_str(file, "name"),
                   "media_type": optional(file, "mimeType", str, path + ".file.")}
    elif "raw" in part or "url" in part:  # 1.0
        raw = _base64(part["raw"], path + ".raw") if "raw" in part else None
        link = None if raw is not None else field(part, "url", str, path + ".")
        content = {"raw": raw, "url": link, "filename": optional_str(part, "filename"), "media_type": media_type}
    else:
        raise WireError(f"{path} must have text, data or a file")
    if dialect.kind and "kind" in part:  # 0.3's tag, where given, says what the part holds
        held = "text" if "text" in content else "data" if "data" in content else "file"
        _tagged(part, held, f"a part with {held}", path)
    return Part(**content, metadata=optional(part, "metadata", dict, path + "."))


def _tagged(source: dict[str, Any], kind: str, what: str, path: str) -> None:
    if source["kind"] != kind:
        raise WireError(f"{path}.kind is {str(source['kind'])[:40]!r}; {what} has kind {kind!r}")


_URL_SAFE = str.maketrans("-_", "+/")


def _base64(value: Any, path: str) -> bytes:
    if not isinstance(value, str):
        raise WireError(f"{path} must be base64 text", path)
    try:  # standard or URL-safe, padded or not, as ProtoJSON reads bytes
        return base64.b64decode(value.translate(_URL_SAFE) + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        raise WireError(f"{path} is not valid base64", path) from None


def message_from_wire(dialect: Dialect, value: Any, path: str = "message") -> Message:
    source = obj(value, path)
    if dialect.kind and "kind" in source:
        _tagged(source, "message", "a message", path)
    role = one_of(source.get("role"), dialect.read_roles, path + ".role")
    parts = field(source, "parts", list, path + ".")
    if not parts:
        raise WireError(f"{path}.parts must not be empty", f"{path}.parts")
    message_id, context_id, task_id = field(source, "messageId", str, path + "."), \
        field(source, "contextId", str, path + ".", default=None), field(source, "taskId", str, path + ".", default=None)
    if max(len(message_id), len(context_id or ""), len(task_id or "")) > MAX_ID:  # kept with the task, in every answer
        raise WireError(f"{path}'s messageId, contextId and taskId must be at most {MAX_ID} characters each")
    return Message(message_id, role, tuple(part_from_wire(dialect, p, f"{path}.parts[{i}]") for i, p in enumerate(parts)),
                   context_id or None, task_id or None,  # "": a proto3 string's default, none given
                   optional(source, "metadata", dict, path + "."), optional_strings(source, "extensions", path + "."),
                   optional_strings(source, "referenceTaskIds", path + "."))


def task_from_wire(dialect: Dialect, value: Any, path: str = "task") -> Task:
    source = obj(value, path)
    status = obj(source.get("status"), path + ".status")
    state = one_of(status.get("state"), dialect.read_states, path + ".status.state")
    artifacts, ids = [], set()
    for index, item in enumerate(field(source, "artifacts", list, path + ".", default=[])):
        where = f"{path}.artifacts[{index}]"
        artifact = obj(item, where)
        parts = field(artifact, "parts", list, where + ".")
        artifacts.append(Artifact(field(artifact, "artifactId", str, where + "."),
                                  tuple(part_from_wire(dialect, p, f"{where}.parts[{j}]")
                                        for j, p in enumerate(parts)),
                                  optional_str(artifact, "name"), optional(artifact, "description", str, where + "."),
                                  optional(artifact, "metadata", dict, where + "."),
                                  optional_strings(artifact, "extensions", where + ".")))
        if (made := artifacts[-1].artifact_id) in ids:  # two of one id: an update to "it" would name neither
            raise WireError(f"{where}.artifactId {made[:80]!r} is an earlier artifact's: an artifactId is unique "
                            "within its task", where + ".artifactId")
        ids.add(made)
    note = asked = None
    if "message" in status and state is not TaskState.COMPLETED:
        said = message_from_wire(dialect, status["message"], path + ".status.message")
        note = said.text
        asked = next((p.data for p in said.parts if isinstance(p.data, dict)), None)
    return Task(field(source, "id", str, path + "."), (state,), tuple(artifacts), note,
                field(source, "contextId", str, path + ".", default=None),
                timestamp=optional_str(status, "timestamp"), status_data=asked,
                metadata=optional(source, "metadata", dict, path + "."))


# -- what a request's params say: read alike in both versions ------------------------------
def history_length(params: dict[str, Any], path: str = "") -> int | None:  # 1.0's, an int32 (0.3: wire_v03.py)
    return None if params.get("historyLength") is None else count(params, "historyLength", 0, 2 ** 31 - 1, path)


def configuration_of(request: dict[str, Any]) -> dict[str, Any]:
    """SendMessage's configuration ({} where absent or null); the request's metadata, read nowhere else, too."""
    request_metadata(request)
    return {} if request.get("configuration") is None else obj(request["configuration"], "params.configuration")


def accepted_modes(configuration: dict[str, Any]) -> tuple[str, ...]:
    modes = field(configuration, "acceptedOutputModes", list, "params.configuration.", default=[])
    return tuple(strings(modes, "params.configuration.acceptedOutputModes"))


def task_id(params: Any) -> str:
    found = field(obj(params, "params"), "id", str)
    if not found:  # proto3's default: no id given
        raise WireError("params.id must name a task", "params.id")
    return found
