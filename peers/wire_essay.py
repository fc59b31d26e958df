"""The essay's wire format: `tasks/send` with `{skill, input}`, a task with a `lifecycle`.

Essay: The Agent Card (the card as printed) and Delegation over JSON-RPC (the frames).
This is a teaching simplification of early A2A (0.1 used `tasks/send` too, with a message
instead of `{skill, input}`), kept exactly as the essay prints it. A wire format is a
replaceable part: a module with these names, used by both the support agent (client)
and the peer apps (server):

    NAME, SEND_METHOD, HEADERS, card_to_wire, card_from_wire, send_params,
    task_from_result, methods(peer)

`*_from_wire` functions read what a peer we do not own sent: they raise ValueError
naming the offending field, and ignore fields they do not use.
"""
from __future__ import annotations

from typing import Any

from peers.model import AgentCard, AgentSkill, Artifact, Part, Task, TaskState
from peers.fields import field as _field, obj as _object, strings as _strings, url as _url
from peers.peer import Peer
from transports.jsonrpc import Handler, InvalidParams

NAME = "essay"
SEND_METHOD = "tasks/send"
HEADERS: dict[str, str] = {}  # extra HTTP headers on every request: none for the essay


def card_to_wire(card: AgentCard) -> dict[str, Any]:
    """The card exactly as the essay prints it, in its key order."""
    return {
        "name": card.name,
        "description": card.description,
        "url": card.url,
        "version": card.version,
        "skills": [{"id": s.id, "description": s.description,
                    "inputModes": list(s.input_modes), "outputModes": list(s.output_modes)}
                   for s in card.skills],
        "capabilities": {"streaming": card.streaming},
        "authentication": {"schemes": list(card.auth_schemes)},
    }


def card_from_wire(obj: Any) -> AgentCard:
    card = _object(obj, "card")
    skills = [_skill(s, f"skills[{i}]") for i, s in enumerate(_field(card, "skills", list))]
    caps = _object(card.get("capabilities", {}), "capabilities")
    auth = _object(card.get("authentication", {}), "authentication")
    schemes = _field(auth, "schemes", list, "authentication.", default=[])
    return AgentCard(
        name=_field(card, "name", str), description=_field(card, "description", str, default=""),
        url=_url(_field(card, "url", str)), version=_field(card, "version", str, default=""),
        skills=tuple(skills), streaming=caps.get("streaming") is True,
        auth_schemes=tuple(_strings(schemes, "authentication.schemes")))


def send_params(skill_id: str, payload: dict[str, Any], message_id: str) -> dict[str, Any]:
    return {"skill": skill_id, "input": payload}  # the essay's frames carry no message id


def task_to_wire(task: Task) -> dict[str, Any]:
    status: dict[str, Any] = {"state": task.state.value}
    if task.status_message:
        status["message"] = task.status_message
    return {"id": task.id, "lifecycle": [s.value for s in task.lifecycle], "status": status,
            "artifacts": [{"type": "text", "text": a.text} for a in task.artifacts]}


def task_from_result(result: Any) -> Task:
    task = _object(result, "result")
    lifecycle = tuple(_state(s, f"lifecycle[{i}]")
                      for i, s in enumerate(_field(task, "lifecycle", list)))
    status = _object(task.get("status"), "status")
    state = _state(status.get("state"), "status.state")
    if not lifecycle or lifecycle[-1] != state:
        raise ValueError(f"status.state {state.value!r} is not the last lifecycle state")
    artifacts = []
    for i, a in enumerate(_field(task, "artifacts", list, default=[])):
        text = _field(_object(a, f"artifacts[{i}]"), "text", str, f"artifacts[{i}].")
        artifacts.append(Artifact(f"artifact-{i + 1}", (Part(text=text),)))
    message = status.get("message")
    return Task(_field(task, "id", str), lifecycle, tuple(artifacts),
                message if isinstance(message, str) else None)


def methods(peer: Peer) -> dict[str, Handler]:
    """The server side: the JSON-RPC methods this wire format answers for `peer`."""
    def tasks_send(params: Any, context: Any) -> dict[str, Any]:
        if not isinstance(params, dict):
            raise InvalidParams('params must be an object {"skill": ..., "input": {...}}')
        if not isinstance(params.get("skill"), str):
            raise InvalidParams('"skill" must be a string')
        owner = getattr(context, "owner", "")  # who may read the task back (store.py)
        return task_to_wire(peer.send(params["skill"], params.get("input"), owner=owner))
    return {SEND_METHOD: tasks_send}


def _skill(obj: Any, path: str) -> AgentSkill:
    skill = _object(obj, path)
    modes = {k: tuple(_strings(_field(skill, k, list, path + ".", default=[]), f"{path}.{k}"))
             for k in ("inputModes", "outputModes")}
    return AgentSkill(_field(skill, "id", str, path + "."),
                      _field(skill, "description", str, path + ".", default=""),
                      input_modes=modes["inputModes"], output_modes=modes["outputModes"])


def _state(value: Any, path: str) -> TaskState:
    try:
        return TaskState(value)
    except ValueError:
        raise ValueError(f"{path} {value!r} is not a task state") from None
