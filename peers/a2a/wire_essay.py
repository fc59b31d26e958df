"""The essay's wire format: `tasks/send` with `{skill, input}`, a task with a `lifecycle`.

Essay: The Agent Card (the card as printed) and Delegation over JSON-RPC (the frames).
This is a teaching simplification of early A2A (0.1 used `tasks/send` too, with a message
instead of `{skill, input}`), kept exactly as the essay prints it. It implements the
`WireFormat` interface of wire_format.py. It has no message ids, no get or cancel, and no
version header: where a lesson needs those, the 0.3 and 1.0 wires show it.
"""
from __future__ import annotations

from peers.a2a import versions
from peers.a2a.fields import WireError, field, obj, one_of, optional_str, strings, url
from peers.a2a.model import AgentCard, AgentSkill, Artifact, Message, Part, Task, TaskState
from peers.a2a.wire_format import SendMessageRequest
from transports.jsonrpc import JsonRpcError

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

NAME = "essay"
HEADERS: dict[str, str] = {}
SEND_METHOD = "tasks/send"
METHODS = {"tasks/send": "send"}
# What the essay's frames can carry: no taskId or contextId (a task cannot be continued, nor
# a conversation kept), no signatures on its card, and no error for a missing extension.
TURNS, SIGNED_CARDS, EXTENSION_ERRORS, MESSAGE_IDS = False, False, False, False
PUSH_EVENTS, PUSH_MEDIA_TYPES = False, ("application/json",)  # no push methods: never asked
STATES = {state.value: state for state in TaskState}
_TEXT, _WORDS = {"type": "string"}, {"type": "array", "items": {"type": "string"}}
# The essay's card, field by field as the essay prints it: every one is required.
CARD_SCHEMA = {"type": "object",
               "required": ["name", "description", "url", "version", "skills", "capabilities",
                            "authentication"],
               "properties": {"name": {"type": "string", "minLength": 1}, "description": _TEXT,
                              "url": _TEXT, "version": _TEXT, "capabilities": {"type": "object"},
                              "authentication": {"type": "object", "properties": {"schemes": _WORDS}},
                              "skills": {"type": "array", "items": {
                                  "type": "object", "required": ["id", "description"],
                                  "properties": {"id": {"type": "string", "minLength": 1},
                                                 "description": _TEXT, "inputModes": _WORDS,
                                                 "outputModes": _WORDS}}}}}  # "completed" -> TaskState.COMPLETED


def card_to_wire(card: AgentCard) -> dict[str, Any]:
    """The card exactly as the essay prints it, in its key order."""
    return {
        "name": card.name,
        "description": card.description,
        "url": card.url,
        "version": card.version,
        "skills": [{"id": s.id, "description": s.description, **essay_modes(s)} for s in card.skills],
        "capabilities": {"streaming": False},  # tasks/send has no streaming twin: never here
        "authentication": {"schemes": list(card.auth_schemes)},
    }


def essay_modes(skill: AgentSkill) -> dict[str, list[str]]:
    """A skill's modes as the essay's wire carries them, whatever its parts are on A2A's:
    tasks/send "takes JSON in and hands JSON back" (the essay), its `input` a JSON value and
    its answer a JSON task, as its capabilities never stream. A skill that takes no JSON
    keeps its own modes, so a caller sees it cannot be sent one on this wire."""
    taken = [mode for mode in skill.input_modes if mode == "application/json"] or list(skill.input_modes)
    return {"inputModes": taken, "outputModes": ["application/json"]}


def card_from_wire(document: Any) -> AgentCard:
    card = obj(document, "card")
    skills = [_skill(s, f"skills[{i}]") for i, s in enumerate(field(card, "skills", list))]
    capabilities = obj(card.get("capabilities", {}), "capabilities")
    auth = obj(card.get("authentication", {}), "authentication")
    schemes = field(auth, "schemes", list, "authentication.", default=[])
    return AgentCard(
        name=field(card, "name", str), description=field(card, "description", str, default=""),
        url=url(field(card, "url", str)), version=field(card, "version", str, default=""),
        skills=tuple(skills), streaming=capabilities.get("streaming") is True,
        auth_schemes=tuple(strings(schemes, "authentication.schemes")))


def send_params(message: Message, return_immediately: bool = False, webhook: Any = None) -> dict[str, Any]:
    """{skill, input}: the skill named in the message's metadata, its data part as input."""
    data = next((p.data for p in message.parts if p.data is not None), None)
    return {"skill": message.skill_id, "input": data}


def send_request(params: Any) -> SendMessageRequest:
    """{skill, input}: a message with the input as its one data part, its skill in the
    metadata. tasks/send says nothing more: no webhook, no modes, no history, and it
    always answers with the finished task."""
    request = obj(params, "params")
    skill = field(request, "skill", str)
    if request.get("input") is None:
        raise WireError("input is missing: the skill's input, such as {\"order_id\": ..., \"amount\": ...}")
    return SendMessageRequest(Message(None, "user", (Part(data=request["input"]),), metadata={"skillId": skill}))


def interface_url(document: Any, version: str) -> None:
    return None  # the essay's card lists no other interfaces


def send_result(task: Task, history_length: int | None = None) -> dict[str, Any]:
    return task_to_wire(task)


def task_to_wire(task: Task, history_length: int | None = None) -> dict[str, Any]:
    status: dict[str, Any] = {"state": task.state.value}
    if task.status_message:
        status["message"] = task.status_message
    return {"id": task.id, "lifecycle": [s.value for s in task.lifecycle], "status": status,
            "artifacts": [{"type": "text", "text": a.text} for a in task.artifacts]}


def task_from_result(result: Any) -> Task:
    task = obj(result, "result")
    lifecycle = tuple(one_of(s, STATES, f"lifecycle[{i}]")
                      for i, s in enumerate(field(task, "lifecycle", list)))
    status = obj(task.get("status"), "status")
    state = one_of(status.get("state"), STATES, "status.state")
    if not lifecycle or lifecycle[-1] is not state:
        raise WireError(f"status.state {state.value!r} is not the last lifecycle state")
    artifacts = []
    for index, artifact in enumerate(field(task, "artifacts", list, default=[])):
        where = f"artifacts[{index}]"
        text = field(obj(artifact, where), "text", str, f"{where}.")
        artifacts.append(Artifact(f"artifact-{index + 1}", (Part(text=text),)))
    return Task(field(task, "id", str), lifecycle, tuple(artifacts), optional_str(status, "message"))


def check_version(requested: str | None) -> None:
    versions.before_1_0(requested)  # the essay's frames carry no version; under 1.0 it has no such method


def error_data(error: JsonRpcError) -> Any:
    return error.data


def _skill(value: Any, path: str) -> AgentSkill:
    skill = obj(value, path)
    modes = {k: tuple(strings(field(skill, k, list, path + ".", default=[]), f"{path}.{k}"))
             for k in ("inputModes", "outputModes")}
    return AgentSkill(field(skill, "id", str, path + "."),
                      field(skill, "description", str, path + ".", default=""),
                      input_modes=modes["inputModes"], output_modes=modes["outputModes"])
