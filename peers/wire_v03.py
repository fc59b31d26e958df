"""A2A 0.3 over JSON-RPC: message/send, tasks/get, tasks/cancel, and the 0.3 card.

Spec: A2A v0.3.0 (specification/json/a2a.json and docs/specification.md sections 5, 7, 9):
every object carries a `kind`, states are lowercase kebab-case (`completed`,
`input-required`), roles are `user`/`agent`, and message/send answers a bare Task or
Message. This is the wire seed 000's client and server speak. There is no version header
in 0.3. Same module interface as wire_essay.py; the shared shapes are in wire_message.py.
"""
from __future__ import annotations

from typing import Any

from peers.errors import ExtendedAgentCardNotConfigured
from peers.fields import field, obj, url
from peers.model import AgentCard, Message, Part, Task, TaskState
from peers.peer import Peer
from peers.wire_message import (Dialect, capabilities_to_wire, client_task, message_to_wire, operations,
                                 skills_from_wire, skills_to_wire, unsupported)
from transports.jsonrpc import Handler

NAME = "0.3"
SEND_METHOD = "message/send"
HEADERS: dict[str, str] = {}
DIALECT = Dialect("0.3", kind=True, states={s: s.value for s in TaskState},
                  roles={"user": "user", "agent": "agent"})


def card_to_wire(card: AgentCard) -> dict[str, Any]:
    wire: dict[str, Any] = {
        "protocolVersion": "0.3.0",
        "name": card.name,
        "description": card.description,
        "url": card.url,
        "preferredTransport": "JSONRPC",
        "version": card.version,
        "capabilities": capabilities_to_wire(card),
        "defaultInputModes": ["application/json", "text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": skills_to_wire(card),
    }
    if "bearer" in card.auth_schemes:
        wire["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
        wire["security"] = [{"bearer": []}]
    return wire


def card_from_wire(value: Any) -> AgentCard:
    card = obj(value, "card")
    if str(card.get("protocolVersion", "")).split(".")[:2] != ["0", "3"]:
        raise ValueError(f"protocolVersion {card.get('protocolVersion')!r} is not 0.3")
    if card.get("preferredTransport", "JSONRPC") != "JSONRPC":
        raise ValueError("preferredTransport is not JSONRPC")
    skills = skills_from_wire(card)
    auth = []
    for name, scheme in obj(card.get("securitySchemes", {}), "securitySchemes").items():
        scheme = obj(scheme, f"securitySchemes.{name}")
        is_bearer = scheme.get("type") == "http" and str(scheme.get("scheme", "")).lower() == "bearer"
        auth.append("bearer" if is_bearer else name)
    caps = obj(card.get("capabilities", {}), "capabilities")
    return AgentCard(field(card, "name", str), field(card, "description", str, default=""),
                     url(field(card, "url", str)), field(card, "version", str, default=""),
                     skills, streaming=caps.get("streaming") is True,
                     auth_schemes=tuple(auth) or ("none",))


def send_params(skill_id: str, payload: dict[str, Any], message_id: str) -> dict[str, Any]:
    message = Message(message_id, "user", (Part(data=payload),), metadata={"skillId": skill_id})
    return {"message": message_to_wire(DIALECT, message)}


def task_from_result(result: Any) -> Task:
    return client_task(DIALECT, result,
                       is_task=lambda r: r if r.get("kind") == "task" else None,
                       is_message=lambda r: r if r.get("kind") == "message" else None)


def methods(peer: Peer) -> dict[str, Handler]:
    ops = operations(DIALECT, peer, wrap_send=lambda task: task)  # 0.3: the bare Task
    table = {"message/send": ops["send"], "tasks/get": ops["get"], "tasks/cancel": ops["cancel"]}
    table.update(unsupported(["message/stream", "tasks/resubscribe"],
                             [f"tasks/pushNotificationConfig/{verb}"
                              for verb in ("set", "get", "list", "delete")],
                             ["agent/getAuthenticatedExtendedCard"], ExtendedAgentCardNotConfigured))
    return table
