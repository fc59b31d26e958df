"""A2A 1.0 over JSON-RPC: SendMessage, GetTask, CancelTask, ListTasks, and the 1.0 card.

Spec: A2A 1.0 sections 5.3 (methods), 5.5-5.6 (JSON: camelCase, SCREAMING_SNAKE enums,
no `kind`), 8 (the Agent Card: supportedInterfaces, securitySchemes), 9 (JSON-RPC binding,
errors with google.rpc details) and 3.6 (versioning). Every request carries the header
`A2A-Version: 1.0`; a 1.0 method asked for under another version, or none (which means
0.3), is answered with -32009 VersionNotSupported, as the spec and the official SDK do.
Same module interface as wire_essay.py; messages and tasks come from wire_message.py.
"""
from __future__ import annotations

from typing import Any

from peers.errors import UnsupportedOperation, VersionNotSupported, error_details
from peers.fields import field, obj, url
from peers.model import AgentCard, Message, Part, Task, TaskState
from peers.peer import Peer
from peers.wire_message import (Dialect, capabilities_to_wire, client_task, message_to_wire, operations,
                                 skills_from_wire, skills_to_wire, task_to_wire, unsupported)
from transports.jsonrpc import Handler, InvalidParams, JsonRpcError

NAME = "1.0"
SEND_METHOD = "SendMessage"
HEADERS = {"A2A-Version": "1.0"}  # on every request (spec 3.6.1)
DIALECT = Dialect("1.0", kind=False,
                  states={s: "TASK_STATE_" + s.value.upper().replace("-", "_") for s in TaskState},
                  roles={"user": "ROLE_USER", "agent": "ROLE_AGENT"})


def card_to_wire(card: AgentCard) -> dict[str, Any]:
    wire: dict[str, Any] = {
        "name": card.name,
        "description": card.description,
        "version": card.version,
        "supportedInterfaces": [{"url": card.url, "protocolBinding": "JSONRPC",
                                 "protocolVersion": "1.0"}],
        "capabilities": capabilities_to_wire(card),
        "defaultInputModes": ["application/json", "text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": skills_to_wire(card),
    }
    if "bearer" in card.auth_schemes:
        wire["securitySchemes"] = {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}}
        wire["securityRequirements"] = [{"schemes": {"bearer": {"list": []}}}]
    return wire


def card_from_wire(value: Any) -> AgentCard:
    card = obj(value, "card")
    interfaces = field(card, "supportedInterfaces", list)
    endpoint = next((i.get("url") for i in interfaces if isinstance(i, dict)
                     and i.get("protocolBinding") == "JSONRPC"
                     and str(i.get("protocolVersion", "")).split(".")[:2] == ["1", "0"]), None)
    if not isinstance(endpoint, str):
        raise ValueError("supportedInterfaces has no JSONRPC interface for protocol 1.0")
    skills = skills_from_wire(card)
    auth = []
    for name, scheme in obj(card.get("securitySchemes", {}), "securitySchemes").items():
        http = obj(scheme, f"securitySchemes.{name}").get("httpAuthSecurityScheme")
        is_bearer = isinstance(http, dict) and str(http.get("scheme", "")).lower() == "bearer"
        auth.append("bearer" if is_bearer else name)
    caps = obj(card.get("capabilities", {}), "capabilities")
    return AgentCard(field(card, "name", str), field(card, "description", str, default=""),
                     url(endpoint), field(card, "version", str, default=""), skills,
                     streaming=caps.get("streaming") is True, auth_schemes=tuple(auth) or ("none",))


def send_params(skill_id: str, payload: dict[str, Any], message_id: str) -> dict[str, Any]:
    message = Message(message_id, "user", (Part(data=payload, media_type="application/json"),),
                      metadata={"skillId": skill_id})
    return {"message": message_to_wire(DIALECT, message)}


def task_from_result(result: Any) -> Task:
    return client_task(DIALECT, result, is_task=lambda r: r.get("task"),
                       is_message=lambda r: r.get("message"))


def methods(peer: Peer) -> dict[str, Handler]:
    ops = operations(DIALECT, peer, wrap_send=lambda task: {"task": task})
    ops["list"] = lambda params, caller: _list_tasks(peer, params, caller)
    names = {"send": "SendMessage", "get": "GetTask", "cancel": "CancelTask", "list": "ListTasks"}
    table = {names[op]: handler for op, handler in ops.items()}
    table.update(unsupported(["SendStreamingMessage", "SubscribeToTask"],
                             ["CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig",
                              "ListTaskPushNotificationConfigs", "DeleteTaskPushNotificationConfig"],
                             ["GetExtendedAgentCard"], UnsupportedOperation))
    return {name: _version_1_0(handler) for name, handler in table.items()}


def _version_1_0(handler: Handler) -> Handler:
    """Check A2A-Version first; give every A2A error the spec's ErrorInfo details."""
    def checked(params: Any, caller: Any) -> Any:
        version = getattr(caller, "version", None)
        if not version or version.strip().split(".")[:2] != ["1", "0"]:
            raise VersionNotSupported(f"A2A-Version {version or '(none, meaning 0.3)'} asked "
                                      "for a 1.0 method; send 'A2A-Version: 1.0'")
        return handler(params, caller)

    def with_details(params: Any, caller: Any) -> Any:
        try:
            return checked(params, caller)
        except JsonRpcError as exc:
            if exc.data is None:
                exc.data = error_details(exc)
            raise
    return with_details


def _list_tasks(peer: Peer, params: Any, caller: Any) -> dict[str, Any]:
    p = params if isinstance(params, dict) else {}
    if params is not None and not isinstance(params, dict):
        raise InvalidParams("params must be an object")
    states = {wire: ours for ours, wire in DIALECT.states.items()}
    state = states.get(p["status"]) if "status" in p else None
    if "status" in p and state is None:
        raise InvalidParams(f"status must be one of {sorted(states)}")
    size = p.get("pageSize", 50)
    if type(size) is not int or not 1 <= size <= 100:
        raise InvalidParams("pageSize must be an integer from 1 to 100")
    token = p.get("pageToken", "") or "0"
    if not isinstance(token, str) or not token.isdigit():
        raise InvalidParams("pageToken must be a token from an earlier ListTasks")
    length = p.get("historyLength")
    if length is not None and (type(length) is not int or length < 0):
        raise InvalidParams("historyLength must be a whole number")
    context = p.get("contextId") if isinstance(p.get("contextId"), str) else None
    tasks = peer.list_tasks(owner=getattr(caller, "owner", ""), state=state, context_id=context)
    start = int(token)
    page = tasks[start:start + size]
    more = start + size < len(tasks)
    return {"tasks": [task_to_wire(DIALECT, t, history_length=length) for t in page],
            "nextPageToken": str(start + size) if more else "", "pageSize": size,
            "totalSize": len(tasks)}
