"""A2A 1.0 over JSON-RPC: SendMessage, GetTask, CancelTask, ListTasks, and the 1.0 card.

Spec: A2A 1.0 sections 5.3 (methods), 5.5-5.6 (JSON: camelCase, SCREAMING_SNAKE enums,
no `kind`), 8 (the Agent Card: supportedInterfaces, securitySchemes), 9 (JSON-RPC binding,
errors with google.rpc details) and 3.6 (versioning). Every request carries the header
`A2A-Version: 1.0`; a 1.0 method asked for under another version, or none (which means
0.3), is answered with -32009 VersionNotSupported, as the spec and the official SDK do.
Implements wire.WireFormat, plus get/cancel/list; the shared shapes are in wire_message.py.
"""
from __future__ import annotations

from peers.a2a import wire_card as cards
from peers.a2a import wire_message as shapes
from peers.a2a import wire_push as pushes
from peers.a2a import wire_stream as streamed
from peers.a2a.bindings import BINDINGS, JSONRPC
from peers.a2a.errors import UnsupportedOperation, VersionNotSupported, error_details
from peers.a2a.fields import WireError, field, instant, obj, one_of, page_size, proto_json, request_metadata, url
from peers.a2a.model import (DEFAULT_INPUT_MODES, DEFAULT_OUTPUT_MODES, AgentCard, ListQuery, Message, PushConfig, Task,
                             TaskPage, TaskState)
from peers.a2a.stream import Event, reply_as_task
from peers.a2a.wire_format import SendMessageRequest, at_version
from transports.jsonrpc import JsonRpcError

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

NAME = "1.0"
HEADERS = {"A2A-Version": "1.0"}  # on every request (spec 3.6.1)
SEND_METHOD = "SendMessage"
METHODS = {"SendMessage": "send", "GetTask": "get", "CancelTask": "cancel", "ListTasks": "list",
           "SendStreamingMessage": "stream", "SubscribeToTask": "subscribe",
           "CreateTaskPushNotificationConfig": "push-set", "GetTaskPushNotificationConfig": "push-get",
           "ListTaskPushNotificationConfigs": "push-list", "DeleteTaskPushNotificationConfig": "push-delete",
           "GetExtendedAgentCard": "extended-card"}
TURNS, SIGNED_CARDS, MESSAGE_IDS = True, True, True  # messages carry taskId, contextId and messageId; cards may be signed
EXTENSION_ERRORS = True  # -32008 for a required extension not activated
# A push may be any StreamResponse, labelled as section 4.3.3 shows, or as plain JSON
PUSH_EVENTS, PUSH_MEDIA_TYPES = True, ("application/a2a+json", "application/json")
NO_EXTENDED_CARD = UnsupportedOperation  # how a peer without an extended card refuses (not declared)
DIALECT = shapes.dialect("1.0", kind=False,
                         # 1.0 has no unknown state (UNSPECIFIED is only proto's "not set")
                         states={s: "TASK_STATE_" + s.value.upper().replace("-", "_") for s in TaskState
                                 if s is not TaskState.UNKNOWN},
                         roles={"user": "ROLE_USER", "agent": "ROLE_AGENT"})
# ProtoJSON: a parser takes an enum's number as well as its name (the proto's numbers; 0 is unset).
DIALECT = DIALECT._replace(read_roles={**DIALECT.read_roles, 1: "user", 2: "agent"}, read_states={
    **DIALECT.read_states, **{number: DIALECT.read_states[f"TASK_STATE_{name}"] for number, name in enumerate((
        "SUBMITTED", "WORKING", "COMPLETED", "FAILED", "CANCELED", "INPUT_REQUIRED", "REJECTED", "AUTH_REQUIRED"), 1)}})
STATUS_FILTERS = {**DIALECT.read_states, 0: None, "TASK_STATE_UNSPECIFIED": None}  # ListTasks's status: unset, none
# A 1.0 card's required fields (A2A 1.0 section 8, the proto's REQUIRED), checked on fetch.
CARD_SCHEMA = cards.card_schema(
    ["name", "description", "supportedInterfaces", "version", "capabilities", "defaultInputModes",
     "defaultOutputModes", "skills"],
    {"supportedInterfaces": {"type": "array", "minItems": 1, "items": {
        "type": "object", "required": ["url", "protocolBinding", "protocolVersion"],
        "properties": {name: {"type": "string"} for name in ("url", "protocolBinding", "protocolVersion")}}}})
MAX_PAGE_TOKEN = 100  # a cursor is 72 characters (peers/pages.py); a longer one is nobody's


def card_to_wire(card: AgentCard) -> dict[str, Any]:
    document: dict[str, Any] = {
        "name": card.name,
        "description": card.description,
        "version": card.version,
        # A peer serves every binding of the table at its endpoint (peers/app.py), JSON-RPC
        # for both versions' methods (peers/methods.py): say so, in the table's order of
        # preference, once for each tenant it serves (a2a.proto: AgentInterface.tenant).
        "supportedInterfaces": [{"url": card.url, "protocolBinding": row.name, "protocolVersion": version,
                                 **({"tenant": tenant} if tenant else {})}
                                for tenant in card.tenants or ("",) for row in BINDINGS for version in row.listed],
        "capabilities": cards.capabilities_to_wire(card),
        "defaultInputModes": list(DEFAULT_INPUT_MODES),
        "defaultOutputModes": list(DEFAULT_OUTPUT_MODES),
        "skills": cards.skills_to_wire(card, "1.0"),
        **cards.about_to_wire(card),
    }
    document.update(cards.security_to_wire(card, "1.0"))
    return document


def card_from_wire(document: Any) -> AgentCard:
    card = obj(document, "card")
    offered = []  # each 1.0 interface: (binding, URL); a client speaks the binding it picks, at its URL
    for index, interface in enumerate(field(card, "supportedInterfaces", list)):
        where = f"supportedInterfaces[{index}]"
        interface = obj(interface, where)
        if at_version(interface, NAME):
            offered.append((interface.get("protocolBinding"),
                            url(field(interface, "url", str, f"{where}."), f"{where}.url")))
    if not offered:
        raise WireError("supportedInterfaces has no interface for protocol 1.0")
    endpoint = next((where for binding, where in offered if binding == JSONRPC.name), offered[0][1])
    capabilities = obj(card.get("capabilities", {}), "capabilities")
    return AgentCard(field(card, "name", str), field(card, "description", str, default=""),
                     endpoint, field(card, "version", str, default=""), cards.skills_from_wire(card),
                     streaming=capabilities.get("streaming") is True,
                     push_notifications=capabilities.get("pushNotifications") is True,
                     **cards.security_from_wire(card, "1.0"))


def interface_url(document: Any, version: str) -> str | None:
    """The URL of the card's JSON-RPC interface for protocol `version` ("0.3"), if it
    lists one: a 1.0 card may offer older versions beside its own."""
    interfaces = document.get("supportedInterfaces") if isinstance(document, dict) else None
    for interface in interfaces if isinstance(interfaces, list) else []:
        if at_version(interface, version) and interface.get("protocolBinding") == JSONRPC.name \
                and isinstance(interface.get("url"), str):
            return url(interface["url"], "supportedInterfaces[].url")
    return None


def send_params(message: Message, return_immediately: bool = False,
                webhook: PushConfig | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"message": shapes.message_to_wire(DIALECT, message)}
    configuration: dict[str, Any] = {}
    if return_immediately:  # "answer with the task now; I will ask how it went" (spec 3.2.2)
        configuration["returnImmediately"] = True
    if webhook is not None:  # "... or tell this webhook of each change"
        configuration["taskPushNotificationConfig"] = {key: value for key, value in push_to_wire(webhook).items()
                                                       if key != "taskId"}
    if configuration:
        params["configuration"] = configuration
    return params


def send_request(params: Any) -> SendMessageRequest:
    """SendMessageRequest: the message, then its configuration (returnImmediately: default
    false, wait for the end; taskPushNotificationConfig, its task id given later)."""
    request = proto_json(obj(params, "params"))
    message = shapes.message_from_wire(DIALECT, proto_json(request.get("message")))
    if not message.message_id:  # "" is proto3's unset, and the field is required (spec 5.7)
        raise WireError("params.message.messageId must name the message", "params.message.messageId")
    configuration = proto_json(shapes.configuration_of(request))
    inline = configuration.get("taskPushNotificationConfig")
    if inline is None and configuration.get("pushNotificationConfig") is not None:  # 0.3's name: no push would come
        raise WireError("params.configuration.pushNotificationConfig is A2A 0.3's name; "
                        "in 1.0 it is taskPushNotificationConfig")
    where = "params.configuration."
    push = None if inline is None else pushes.config_from_wire(False, inline, "", where + "taskPushNotificationConfig")
    return SendMessageRequest(message, history_length=shapes.history_length(configuration, where),
                              return_immediately=field(configuration, "returnImmediately", bool, where, default=False),
                              accepted_modes=shapes.accepted_modes(configuration), push_config=push)


def send_result(answer: Task | Message, history_length: int | None = None) -> dict[str, Any]:
    if isinstance(answer, Message):  # an agent may answer with a message and make no task
        return {"message": shapes.message_to_wire(DIALECT, answer)}
    return {"task": task_to_wire(answer, history_length)}  # 1.0 wraps it: {"task"} or {"message"}


def task_from_result(result: Any) -> Task:
    answer = obj(result, "result")
    if "task" in answer:
        return shapes.task_from_wire(DIALECT, answer["task"])
    if "message" in answer:
        return reply_as_task(DIALECT, answer["message"])
    raise WireError("result holds neither a task nor a message" + streamed.other_spelling(answer, False))


def task_to_wire(task: Task, history_length: int | None = None) -> dict[str, Any]:
    return shapes.task_to_wire(DIALECT, task, history_length=history_length)


def task_from_wire(value: Any) -> Task:
    """Client: the task GetTask or CancelTask answers (1.0: the bare Task)."""
    return shapes.task_from_wire(DIALECT, value, "result")


def tasks_from_list(result: Any) -> list[Task]:
    """Client: the tasks a ListTasks result holds (this page of them)."""
    return [shapes.task_from_wire(DIALECT, task, f"result.tasks[{n}]")
            for n, task in enumerate(field(obj(result, "result"), "tasks", list, "result."))]


def stream_result(event: Event, history_length: int | None = None) -> dict[str, Any]:
    """Peer: one result of a stream (SSE event), for SendStreamingMessage or SubscribeToTask; a Task
    event with the history the send asked for, as a send's answer has."""
    return streamed.event_to_wire(DIALECT, event, history_length)


def event_from_result(result: Any) -> Event:
    """Client: the event one stream result carries."""
    return streamed.event_from_wire(DIALECT, result)


def push_config(params: Any) -> PushConfig:
    """CreateTaskPushNotificationConfig's config (flattened into the request)."""
    return pushes.config_from_wire(False, params)


def push_query(params: Any) -> tuple[str, str | None]:
    return pushes.query(False, params)


def push_to_wire(config: PushConfig, tenant: str = "") -> dict[str, Any]:
    """A TaskPushNotificationConfig; a peer's answer names the tenant it is kept under, if any."""
    return {**({"tenant": tenant} if tenant else {}), **pushes.config_to_wire(False, config)}


def push_list_query(params: Any) -> tuple[str, int | None, str]:
    """ListTaskPushNotificationConfigs: the task's id, the page size (None: all), the page token."""
    return pushes.list_query(False, params)


def push_list_result(configs: list[PushConfig], tenant: str = "", size: int | None = None,
                     token: str = "") -> dict[str, Any]:
    shown, next_token = pushes.page(configs, size, token)
    return {"configs": [push_to_wire(config, tenant) for config in shown], "nextPageToken": next_token}


def task_query(params: Any) -> tuple[str, int | None]:
    """GetTask / SubscribeToTask: the task's id and, for GetTask, how much history to send."""
    request = proto_json(obj(params, "params"))
    return shapes.task_id(request), shapes.history_length(request)


def cancel_query(params: Any) -> tuple[str, None]:
    """CancelTask: the task's id; its metadata, an object if given (GetTask's request has none: 5.7 ignores it)."""
    request_metadata(params)
    return task_query(params)[0], None


def list_query(params: Any) -> ListQuery:
    request = {} if params is None else proto_json(obj(params, "params"))
    status = request.get("status")  # a name, or its number (ProtoJSON); unset (0): no filter
    state = None if status is None else one_of(status, STATUS_FILTERS, "status")
    size = page_size(request, 50)
    token = "" if request.get("pageToken") is None else request["pageToken"]  # null or "": the first page
    if not (isinstance(token, str) and token.isascii() and len(token) <= MAX_PAGE_TOKEN):
        raise WireError("pageToken must be a token from an earlier ListTasks", "pageToken")
    context = field(request, "contextId", str, default=None) or None  # "": a proto3 string's default, no filter
    after = request.get("statusTimestampAfter")  # null, as in proto JSON, is the default
    if after is not None and instant(after) is None:
        raise WireError("statusTimestampAfter must be an RFC 3339 timestamp, like 2026-11-30T12:00:00Z",
                        "statusTimestampAfter")
    artifacts = request.get("includeArtifacts")
    if artifacts is not None and not isinstance(artifacts, bool):
        raise WireError("includeArtifacts must be true or false", "includeArtifacts")
    return ListQuery(context, state, size, token, shapes.history_length(request), instant(after),
                     artifacts is True)


def list_result(page: TaskPage, query: ListQuery) -> dict[str, Any]:
    shown = page.tasks if query.include_artifacts else [  # no artifacts, still its word on its state
        task._replace(artifacts=(), status_message=shapes.status_text(task)) for task in page.tasks]
    return {"tasks": [task_to_wire(t, query.history_length) for t in shown],
            "nextPageToken": page.next_page_token, "pageSize": query.page_size, "totalSize": page.total_size}


def check_version(requested: str | None) -> None:
    if not requested or requested.strip().split(".")[:2] != ["1", "0"]:
        raise VersionNotSupported(f"A2A-Version {(requested or '(none, meaning 0.3)')[:20]} "
                                  "asked for a 1.0 method; send 'A2A-Version: 1.0'")


def error_data(error: JsonRpcError) -> Any:
    return error.data if error.data is not None else error_details(error)
