"""A wire format: how one version of A2A spells cards, messages and tasks in JSON.

Words, used the same way everywhere: "on the wire" is the JSON that crosses a transport
(`card_to_wire`, `task_from_wire`); a `WireFormat` is one version's spelling of it; a
wire format's NAME ("essay", "0.3", "1.0") is what the --wire flag takes.

Three implement the `WireFormat` interface below, each a module: `wire_essay` (the
essay's `tasks/send` frames), `wire_v03` (A2A 0.3) and `wire_v10` (A2A 1.0). Both sides
use the same module: the support agent writes requests and reads results with it, a
peer reads requests and writes results with it. So a wire module knows the protocol's
spelling and nothing about either side (it never imports a peer or the support agent).

The support agent speaks the wire a peer's card declares: a 1.0 card lists
`supportedInterfaces`, a 0.3 card has a top-level `protocolVersion`, and the essay's card
has neither. Every reader raises `fields.WireError` naming the field it could not read.
"""
from __future__ import annotations


from peers.a2a.model import AgentCard, ListQuery, Message, Task, TaskPage
from transports import imported
from transports.jsonrpc import JsonRpcError
from transports.records import Record

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Protocol
else:  # an interface below is a documented class at run time, and typing's Protocol to a checker
    Protocol = object

MODULES = {"essay": "peers.a2a.wire_essay", "0.3": "peers.a2a.wire_v03", "1.0": "peers.a2a.wire_v10"}
NAMES = tuple(MODULES)  # "essay", "0.3", "1.0": what --wire takes
DEFAULT = "essay"  # the demo peers' card, and a card that declares no version: the essay's frames
CARD_PATH = "/.well-known/agent-card.json"  # where every version serves its card (1.0 section 8.2)


def card_url(url: str) -> str:
    """Where the agent at `url` serves its Agent Card: discovery is fetching it. A URL that
    names a card file (`names_a_card`) is its own; a base URL gets the well-known path on
    its path, before any query (which it keeps); a #fragment is never sent."""
    if names_a_card(url):
        return url
    base, mark, query = url.split("#", 1)[0].partition("?")
    return base.rstrip("/") + CARD_PATH + mark + query


def names_a_card(url: str) -> bool:
    """Whether `url` names a card file (its path ends in .json) rather than an agent's base URL."""
    return url.split("#", 1)[0].split("?", 1)[0].endswith(".json")


class SendMessageRequest(Record):
    """SendMessage's params as a peer reads them, each field once (1.0 SendMessageRequest,
    0.3 MessageSendParams): the message, and what its configuration asks of the answer."""

    message: Message
    history_length: int | None = None  # how much of the task's history the result carries; None: all
    return_immediately: bool = False  # the task at once, not when it ends (1.0 returnImmediately)
    accepted_modes: tuple[str, ...] = ()  # the media types the caller takes (acceptedOutputModes); (): any
    push_config: Any = None  # the webhook registered with the message (a PushConfig), or None


class WireFormat(Protocol):
    NAME: str  # "essay", "0.3" or "1.0"
    HEADERS: dict[str, str]  # extra HTTP headers on every request (1.0: A2A-Version)
    SEND_METHOD: str  # the JSON-RPC method that delegates: tasks/send, message/send, SendMessage
    CARD_SCHEMA: dict[str, Any]  # the card's required fields, as JSON Schema (checked on fetch)
    # Every JSON-RPC method name this version defines -> the operation it asks for:
    # "send", "get", "cancel", "list", or one a peer may not offer ("stream", "subscribe",
    # "push", "extended-card", "authenticated-extended-card"), which it must refuse with
    # the spec's own error (peers/methods.py).
    METHODS: dict[str, str]
    # Ask what a wire can carry, never its NAME: whether its messages carry taskId and
    # contextId (a task continued across turns), and a messageId (a resend known as one),
    # whether its cards carry signatures, and whether it has an error for an extension a
    # card requires and a caller did not activate.
    TURNS: bool
    MESSAGE_IDS: bool
    SIGNED_CARDS: bool
    EXTENSION_ERRORS: bool
    # What a push to a webhook registered in this wire may be: any event of a stream, or only
    # the task (PUSH_EVENTS); and the media types it may be labelled with, its own first.
    PUSH_EVENTS: bool
    PUSH_MEDIA_TYPES: tuple[str, ...]
    # A wire with an extended-card method also names the error a peer without one refuses
    # it with (NO_EXTENDED_CARD: 1.0 UnsupportedOperation, 0.3 its own -32007).

    def card_to_wire(self, card: AgentCard) -> dict[str, Any]: ...

    def card_from_wire(self, document: Any) -> AgentCard: ...

    def send_params(self, message: Message, return_immediately: bool = False,
                    webhook: Any = None) -> dict[str, Any]:
        """Client: the params of SEND_METHOD carrying `message` (asking, if the wire can, for
        the task at once rather than when it ends, and to tell `webhook`, a PushConfig)."""

    def send_request(self, params: Any) -> SendMessageRequest:
        """Peer: what SEND_METHOD's params carry: the message, and what the answer should be
        (how much history, at once or at the end, in which media types, told to which webhook)."""

    def interface_url(self, document: Any, version: str) -> str | None:
        """Client: the URL of the card's JSON-RPC interface for another `version`, if listed."""

    def send_result(self, answer: Task | Message, history_length: int | None = None) -> Any:
        """Peer: SEND_METHOD's result for `answer`: the task, or a direct reply (0.3, 1.0)."""

    def task_from_result(self, result: Any) -> Task:
        """Client: the task in SEND_METHOD's result (a direct reply becomes a completed task)."""

    def task_to_wire(self, task: Task, history_length: int | None = None) -> dict[str, Any]: ...

    def check_version(self, requested: str | None) -> None:
        """Peer: refuse a method of this wire asked for under `requested` (the A2A-Version
        asked for, "Major.Minor"; None for none) unless that version's semantics have it:
        VersionNotSupported, or MethodNotFound where that version has no such name."""

    def error_data(self, error: JsonRpcError) -> Any:
        """Peer: the `data` this version attaches to an error object (None for none)."""


class TaskQueries(Protocol):
    """What the 0.3 and 1.0 formats add for reading tasks back (the essay's has no such
    methods): GetTask / CancelTask params, and 1.0's ListTasks."""

    def task_query(self, params: Any) -> tuple[str, int | None]:
        """The task id, and how much history to send back (None: all of it)."""

    def cancel_query(self, params: Any) -> tuple[str, None]:
        """CancelTask's task id, its metadata checked (1.0's GetTask has none)."""

    def task_to_wire(self, task: Task, history_length: int | None = None) -> dict[str, Any]: ...

    def list_query(self, params: Any) -> ListQuery: ...

    def stream_result(self, event: Any, history_length: int | None = None) -> Any:
        """Peer: one result of a stream (SendStreamingMessage, SubscribeToTask): an SSE event; a
        Task event with at most `history_length` of its history (None: all of it)."""

    def event_from_result(self, result: Any) -> Any:
        """Client: the event (peers/a2a/stream.py) one stream result carries."""

    def task_from_wire(self, value: Any) -> Task:
        """Client: the task GetTask or CancelTask answers."""

    # 1.0 only (0.3 has no ListTasks): `tasks_from_list(result) -> list[Task]`, the client's
    # reading of a ListTasks result. A client asks for it where METHODS has "list".

    def list_result(self, page: TaskPage, query: ListQuery) -> dict[str, Any]: ...


def method_for(spoken: WireFormat, operation: str) -> str | None:
    """The wire's method name for an operation ("get": 1.0 GetTask, 0.3 tasks/get), or
    None where the wire has no such method (the essay's has only tasks/send)."""
    return next((name for name, named in spoken.METHODS.items() if named == operation), None)


def by_name(name: str) -> WireFormat:
    module: Any = imported(MODULES[name])
    return module


def declared_by(card: Any) -> WireFormat:
    """The wire a fetched card speaks, by the fields only that version's cards have: 1.0's
    supportedInterfaces, 0.3's protocolVersion. A card with both is 1.0's if it lists an interface
    at 1.0, else 0.3's (the official SDK serves a 0.3 agent's card so, its one interface at 0.3)."""
    if isinstance(card, dict) and "supportedInterfaces" in card and (
            "protocolVersion" not in card or _lists_1_0(card["supportedInterfaces"])):
        return by_name("1.0")
    if isinstance(card, dict) and "protocolVersion" in card:
        return by_name("0.3")
    return by_name(DEFAULT)


def _lists_1_0(interfaces: Any) -> bool:
    return isinstance(interfaces, list) and any(at_version(each, "1.0") for each in interfaces)


def at_version(interface: Any, version: str) -> bool:
    """Whether a card's interface (a supportedInterfaces entry) is for protocol `version`, by its
    major and minor numbers: "1.0.2" is 1.0's (a patch changes no wire)."""
    return isinstance(interface, dict) and \
        str(interface.get("protocolVersion", "")).split(".")[:2] == version.split(".")[:2]
