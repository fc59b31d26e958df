"""A2A 0.3 over JSON-RPC: message/send, tasks/get, tasks/cancel, and the 0.3 card.

Spec: A2A v0.3.0 (specification/json/a2a.json and docs/specification.md sections 5, 7, 9):
every object carries a `kind`, states are lowercase kebab-case (`completed`,
`input-required`), roles are `user`/`agent`, and message/send answers a bare Task or
Message. This is the wire seed 000's client and server speak. There is no version header
in 0.3. Implements wire.WireFormat, plus get/cancel; the shared shapes are in wire_message.py.
"""
from __future__ import annotations

from peers.a2a import versions, wire_card as cards
from peers.a2a.errors import ExtendedAgentCardNotConfigured
from peers.a2a import wire_message as shapes
from peers.a2a import wire_push as pushes
from peers.a2a import wire_stream as streamed
from peers.a2a.fields import WireError, field, obj, request_metadata, url
from peers.a2a.model import DEFAULT_INPUT_MODES, DEFAULT_OUTPUT_MODES, AgentCard, Message, PushConfig, Task, TaskState
from peers.a2a.stream import Event, reply_as_task
from peers.a2a.wire_format import SendMessageRequest
from transports.jsonrpc import JsonRpcError

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

NAME = "0.3"
HEADERS: dict[str, str] = {}
SEND_METHOD = "message/send"
METHODS = {"message/send": "send", "tasks/get": "get", "tasks/cancel": "cancel",
           "message/stream": "stream", "tasks/resubscribe": "subscribe",
           **{f"tasks/pushNotificationConfig/{verb}": f"push-{verb}" for verb in ("set", "get", "list", "delete")},
           "agent/getAuthenticatedExtendedCard": "authenticated-extended-card"}
TURNS, SIGNED_CARDS, MESSAGE_IDS = True, True, True  # messages carry taskId, contextId and messageId; cards may be signed
EXTENSION_ERRORS = False  # 0.3 has no error for a required extension
PUSH_EVENTS, PUSH_MEDIA_TYPES = False, ("application/json",)  # a push is the task, as JSON (0.3 section 9.5)
NO_EXTENDED_CARD = ExtendedAgentCardNotConfigured  # how a peer without an extended card refuses
# A 0.3 card's required fields (v0.3.0 specification/json/a2a.json), checked on fetch.
CARD_SCHEMA = cards.card_schema(
    ["name", "description", "url", "version", "protocolVersion", "capabilities", "defaultInputModes",
     "defaultOutputModes", "skills"],
    {"url": {"type": "string"}, "protocolVersion": {"type": "string"}})
DIALECT = shapes.dialect("0.3", kind=True, states={s: s.value for s in TaskState},
                         roles={"user": "user", "agent": "agent"})


def card_to_wire(card: AgentCard) -> dict[str, Any]:
    document: dict[str, Any] = {
        "protocolVersion": "0.3.0",
        "name": card.name,
        "description": card.description,
        "url": card.url,
        "preferredTransport": "JSONRPC",
        "version": card.version,
        "capabilities": cards.capabilities_to_wire(card),
        "defaultInputModes": list(DEFAULT_INPUT_MODES),
        "defaultOutputModes": list(DEFAULT_OUTPUT_MODES),
        "skills": cards.skills_to_wire(card, "0.3"),
        **cards.about_to_wire(card),
    }
    document.update(cards.security_to_wire(card, "0.3"))
    if card.extended_card:
        document["supportsAuthenticatedExtendedCard"] = True
        document["capabilities"].pop("extendedAgentCard", None)  # 1.0's spelling, not 0.3's
    return document


def card_from_wire(document: Any) -> AgentCard:
    card = obj(document, "card")
    version = field(card, "protocolVersion", str)
    if version.split(".")[:2] != ["0", "3"]:
        raise WireError(f"protocolVersion {version[:20]!r} is not 0.3")
    field(card, "preferredTransport", str, default="JSONRPC")  # which one it prefers: the caller's to judge
    capabilities = obj(card.get("capabilities", {}), "capabilities")
    return AgentCard(field(card, "name", str), field(card, "description", str, default=""),
                     url(field(card, "url", str)), field(card, "version", str, default=""),
                     cards.skills_from_wire(card), streaming=capabilities.get("streaming") is True,
                     push_notifications=capabilities.get("pushNotifications") is True,
                     **cards.security_from_wire(card, "0.3"))


def send_params(message: Message, return_immediately: bool = False,
                webhook: PushConfig | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"message": shapes.message_to_wire(DIALECT, message)}
    configuration: dict[str, Any] = {}
    if return_immediately:  # 0.3 says it the other way round: not blocking
        configuration["blocking"] = False
    if webhook is not None:
        configuration["pushNotificationConfig"] = push_to_wire(webhook)["pushNotificationConfig"]
    if configuration:
        params["configuration"] = configuration
    return params


def send_request(params: Any) -> SendMessageRequest:
    """MessageSendParams: the message, then its configuration (blocking: default true,
    wait for the end; pushNotificationConfig, its task id given later)."""
    request = obj(params, "params")
    message = shapes.message_from_wire(DIALECT, request.get("message"))
    configuration = shapes.configuration_of(request)
    inline = configuration.get("pushNotificationConfig")
    where = "params.configuration."
    push = None if inline is None else pushes.config_from_wire(True, {"pushNotificationConfig": inline}, "",
                                                               "params.configuration")
    return SendMessageRequest(message, history_length=history_length(configuration, where),
                              return_immediately=field(configuration, "blocking", bool, where, default=True) is False,
                              accepted_modes=shapes.accepted_modes(configuration), push_config=push)


def send_result(answer: Task | Message, history_length: int | None = None) -> dict[str, Any]:
    if isinstance(answer, Message):  # an agent may answer with a message and make no task
        return shapes.message_to_wire(DIALECT, answer)
    return task_to_wire(answer, history_length)  # 0.3: the bare Task


def task_from_result(result: Any) -> Task:
    answer = obj(result, "result")
    if answer.get("kind") == "task":
        return shapes.task_from_wire(DIALECT, answer, "result")
    if answer.get("kind") == "message":
        return reply_as_task(DIALECT, answer)
    raise WireError("result.kind must be 'task' or 'message'" + streamed.other_spelling(answer, True))


def task_to_wire(task: Task, history_length: int | None = None) -> dict[str, Any]:
    return shapes.task_to_wire(DIALECT, task, history_length=history_length)


def task_from_wire(value: Any) -> Task:
    """Client: the task tasks/get or tasks/cancel answers."""
    return shapes.task_from_wire(DIALECT, value, "result")



def stream_result(event: Event, history_length: int | None = None) -> dict[str, Any]:
    """Peer: one result of a stream (SSE event), for SendStreamingMessage or SubscribeToTask; a Task
    event with the history the send asked for, as a send's answer has."""
    return streamed.event_to_wire(DIALECT, event, history_length)


def event_from_result(result: Any) -> Event:
    """Client: the event one stream result carries."""
    return streamed.event_from_wire(DIALECT, result)



def interface_url(document: Any, version: str) -> None:
    return None  # a 0.3 card's additionalInterfaces are not read here


def push_config(params: Any) -> PushConfig:
    """tasks/pushNotificationConfig/set's config (nested in pushNotificationConfig)."""
    return pushes.config_from_wire(True, params)


def push_query(params: Any) -> tuple[str, str | None]:
    return pushes.query(True, params)


def push_to_wire(config: PushConfig, tenant: str = "") -> dict[str, Any]:
    return pushes.config_to_wire(True, config)  # 0.3 has no tenants: served under 1.0's only


def push_list_query(params: Any) -> tuple[str, int | None, str]:
    """tasks/pushNotificationConfig/list: the task's id; 0.3 lists every config at once."""
    return pushes.list_query(True, params)


def push_list_result(configs: list[PushConfig], tenant: str = "", size: int | None = None,
                     token: str = "") -> list[dict[str, Any]]:
    return [push_to_wire(config) for config in configs]


def task_query(params: Any) -> tuple[str, int | None]:
    """tasks/get / tasks/cancel: the task's id and, for tasks/get, how much history to send; its
    metadata, read nowhere else, an object if given (TaskQueryParams, TaskIdParams)."""
    found = shapes.task_id(params), history_length(params)
    request_metadata(params)
    return found


cancel_query = task_query  # tasks/cancel's TaskIdParams: an id and metadata, as tasks/get's reads them


def history_length(params: dict[str, Any], path: str = "") -> int | None:
    """0.3's historyLength: a JSON integer, 0 or more (its schema's; 1.0's is ProtoJSON's int32)."""
    length = params.get("historyLength")
    if length is not None and (type(length) is not int or length < 0):
        raise WireError(f"{path}historyLength must be a whole number, 0 or more", path + "historyLength")
    return length


def check_version(requested: str | None) -> None:
    versions.before_1_0(requested)  # 0.3 has no version header; an empty one means 0.3


def error_data(error: JsonRpcError) -> Any:
    # 0.3's data is free-form: an error's details (name -> text) where it has any, else none.
    return error.data if error.data is not None else (getattr(error, "details", None) or None)
