"""A2A objects in the specification's own words: AgentCard, AgentSkill, Task, TaskState,
Message, Artifact, Part. Wire-neutral: how each is spelled in JSON is a wire format's job
(`wire_essay.py` for the essay's frames, `wire_v03.py`, `wire_v10.py`), so the same Task
can be sent in any of them.

Essay: The Agent Card; Delegation over JSON-RPC ("a delegated task moves through states").
Spec: A2A "Data model" (Task, TaskStatus, TaskState, Artifact, Part, AgentCard).
Immutable records (transports/records.py: a NamedTuple's behaviour at a sixth of its cost
to define, which the default run's start-up budget needs): a task's lifecycle grows by
making a new Task, so every state a peer passed through is recorded as it happens, in order.
"""

from __future__ import annotations

import json
from enum import Enum

from peers.a2a.schema import INPUT_SCHEMA_EXTENSION, RESULTS_EXTENSION
from transports.records import Record

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any


class TaskState(Enum):
    SUBMITTED = "submitted"  # the peer accepted the task
    WORKING = "working"  # the peer is doing it
    INPUT_REQUIRED = "input-required"  # paused: the peer needs more from the caller
    AUTH_REQUIRED = "auth-required"  # paused: the peer needs (more) credentials from the caller
    COMPLETED = "completed"  # done; the result is in the artifacts
    FAILED = "failed"  # tried and could not; the status message says why
    CANCELED = "canceled"  # the caller withdrew it
    REJECTED = "rejected"  # the peer would not attempt it
    UNKNOWN = "unknown"  # 0.3: the peer cannot say (1.0 spells it TASK_STATE_UNSPECIFIED); ours never are
    __hash__ = object.__hash__  # a member is one object: hashed as such, not by a Python call (7 a request)

    @property
    def is_terminal(self) -> bool:
        return self in TERMINAL


TERMINAL = {TaskState.COMPLETED, TaskState.FAILED, TaskState.CANCELED, TaskState.REJECTED}
PAUSED = {TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED}


def ends(state: TaskState) -> bool:
    """Where following a task ends: a terminal state, or one where it waits for its caller."""
    return state.is_terminal or state in PAUSED

# Which state may follow which: Task.advance refuses anything else; a terminal state has no successor.
NEXT: dict[TaskState, set[TaskState]] = {
    TaskState.SUBMITTED: {TaskState.WORKING, TaskState.REJECTED, TaskState.CANCELED,
                          TaskState.AUTH_REQUIRED, TaskState.FAILED},
    TaskState.WORKING: {TaskState.COMPLETED, TaskState.FAILED, TaskState.CANCELED} | PAUSED,
    TaskState.INPUT_REQUIRED: {TaskState.WORKING, TaskState.CANCELED, TaskState.FAILED},
    TaskState.AUTH_REQUIRED: {TaskState.WORKING, TaskState.CANCELED, TaskState.FAILED},
}


class Part(Record):
    """One piece of content: text, structured data (any JSON value), or a file, given
    inline (`raw` bytes) or by reference (`url`). Exactly one of the four is set."""

    text: str | None = None
    data: Any = None
    raw: bytes | None = None
    url: str | None = None
    filename: str | None = None
    media_type: str | None = None
    metadata: dict[str, Any] | None = None  # as the sender gave it, kept and returned

    def describe(self) -> str:
        """The part as one line of text: what a support agent can show of it."""
        if self.text is not None:
            return self.text
        if self.raw is not None or self.url is not None:
            size = f"{len(self.raw)} bytes" if self.raw is not None else self.url
            return f"[file {self.filename or '(unnamed)'}, {self.media_type or 'no type'}, {size}]"
        return json.dumps(self.data)


class Artifact(Record):
    """What a task produced. The essay's refund confirmation is one text artifact."""

    artifact_id: str
    parts: tuple[Part, ...]
    name: str | None = None
    description: str | None = None  # these three: only where a skill gives them
    metadata: dict[str, Any] | None = None
    extensions: tuple[str, ...] = ()  # URIs of the extensions that shaped it

    @property
    def text(self) -> str:
        return "".join(p.describe() for p in self.parts)


class Message(Record):
    """One turn of the conversation: the caller's request ("user") or the agent's reply."""

    message_id: str | None  # None only on the essay's wire, which carries no message ids
    role: str  # "user" or "agent"; each wire spells it its own way
    parts: tuple[Part, ...]
    context_id: str | None = None
    task_id: str | None = None
    metadata: dict[str, Any] | None = None
    extensions: tuple[str, ...] = ()  # URIs of the extensions the message uses
    reference_task_ids: tuple[str, ...] = ()  # other tasks it refers to, for context

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.parts if p.text is not None)

    @property
    def skill_id(self) -> str | None:
        """The skill a request names (A2A has no field for it: metadata carries it)."""
        skill = (self.metadata or {}).get("skillId")
        return skill if isinstance(skill, str) else None


class Task(Record):
    id: str
    lifecycle: tuple[TaskState, ...] = (TaskState.SUBMITTED,)
    artifacts: tuple[Artifact, ...] = ()
    status_message: str | None = None  # the peer's word on the current state
    context_id: str | None = None
    history: tuple[Message, ...] = ()  # the messages that made this task
    timestamp: str | None = None  # when it entered its current state (ISO 8601 UTC)
    status_data: dict[str, Any] | None = None  # what a paused task asks for, as data
    metadata: dict[str, Any] | None = None  # the skill's word on the task, if it gives one

    @property
    def state(self) -> TaskState:
        return self.lifecycle[-1]

    def advance(self, state: TaskState, *, message: str | None = None, artifacts: tuple[Artifact, ...] = (),
                timestamp: str | None = None, data: dict[str, Any] | None = None) -> "Task":
        """This task, one state later. Raises ValueError for a move the protocol forbids."""
        if state not in NEXT.get(self.state, ()):
            raise ValueError(f"task {self.id}: {self.state.value} -> {state.value} is not allowed")
        return self._replace(lifecycle=self.lifecycle + (state,), artifacts=self.artifacts + artifacts,
                             status_message=message, timestamp=timestamp, status_data=data)


class ListQuery(Record):
    """Which tasks a ListTasks call asks for (A2A 1.0 ListTasksRequest), one page of them."""

    context_id: str | None = None
    state: TaskState | None = None
    page_size: int = 50
    page_token: str = ""  # "": the first page; else a cursor an earlier page gave (peers/pages.py)
    history_length: int | None = None
    updated_after: str | None = None  # statusTimestampAfter, as `instant` spells it
    include_artifacts: bool = False  # ListTasks leaves artifacts out unless asked (spec 3.1.4)


class TaskPage(Record):
    """A ListTasks answer's page (1.0 ListTasksResponse): its tasks, the next page's token ("" if none), the total."""

    tasks: list[Task]
    next_page_token: str
    total_size: int


class PushConfig(Record):
    """A webhook a caller registered for one task (A2A TaskPushNotificationConfig)."""

    task_id: str
    id: str
    url: str
    token: str | None = None  # sent back in X-A2A-Notification-Token, so forged pushes are told apart
    # (the webhook's schemes, credentials or None): the first and the credentials sent in Authorization
    authentication: tuple[tuple[str, ...], str | None] | None = None


# What a card we serve says every skill takes and answers in (a skill's own modes would override them).
DEFAULT_INPUT_MODES = ("application/json", "text/plain")
DEFAULT_OUTPUT_MODES = ("text/plain",)


class AgentSkill(Record):
    id: str
    description: str
    name: str = ""
    input_modes: tuple[str, ...] = ("application/json",)
    output_modes: tuple[str, ...] = ("application/json",)
    tags: tuple[str, ...] = ()
    input_schema: dict[str, Any] | None = None  # the input it takes, as JSON Schema (schema.py)
    results: dict[str, str] | None = None  # task state it may end in -> what that means (seed 000)
    examples: tuple[str, ...] = ()  # sample requests a caller might send it (spec: AgentSkill.examples)
    # What this skill asks of a caller beyond the card's own requirement: each entry one way
    # in, scheme name -> the scopes it needs (1.0 securityRequirements, 0.3 security).
    security_requirements: tuple[dict[str, tuple[str, ...]], ...] = ()


class AgentProvider(Record):
    """Who runs the agent (spec: AgentProvider): both fields are required when given."""

    organization: str
    url: str


class SecurityScheme(Record):
    """One way a caller proves who it is, as a card declares it (spec 4.5, SecurityScheme): `type` one of "http" (with
    `scheme` Bearer or Basic), "apiKey" (`key_name` the header that carries it), "oauth2" (the client-credentials
    flow: `token_url`, `scopes`), "openIdConnect" (`open_id_connect_url`, the discovery document), "mutualTLS"."""

    name: str  # its key in the card's securitySchemes, and in its securityRequirements
    type: str
    scheme: str = ""
    key_name: str = ""
    token_url: str = ""
    scopes: tuple[tuple[str, str], ...] = ()  # scope -> what it allows, in order
    open_id_connect_url: str = ""
    location: str = "header"  # apiKey: where the key goes ("header"; a card may say "query", "cookie")


class AgentCard(Record):
    """A peer's public self-description, served at /.well-known/agent-card.json."""

    name: str
    description: str
    url: str  # the JSON-RPC endpoint frames are posted to
    version: str
    skills: tuple[AgentSkill, ...]
    streaming: bool = False
    auth_schemes: tuple[str, ...] = ()  # "bearer", or "none"
    extended_card: bool = False  # a fuller card for authenticated callers (GetExtendedAgentCard)
    push_notifications: bool = False  # it tells a caller's webhook of each change (peers/push.py)
    required_extensions: tuple[str, ...] = ()  # extension URIs a caller must activate (A2A-Extensions)
    # `auth_schemes` spelled out, when a server was told how to enforce it (peers/schemes); (): "bearer"
    # in auth_schemes is declared as plain HTTP Bearer. Which of them a caller must present: each entry
    # of security_requirements one way in, as a skill's: scheme name -> the scopes it needs; (): any one.
    security_schemes: tuple[SecurityScheme, ...] = ()
    security_requirements: tuple[dict[str, tuple[str, ...]], ...] = ()
    provider: AgentProvider | None = None
    documentation_url: str = ""
    icon_url: str = ""
    # 1.0: the tenants it serves, each named by interfaces of its own, which a caller echoes
    # in each request (peers/tenants.py); "" among them: untenanted ones too; (): untenanted only.
    tenants: tuple[str, ...] = ()

    @property
    def extensions(self) -> tuple[str, ...]:
        """The extension URIs the card declares: those carrying its skills' contracts, and
        any other it requires of every caller."""
        contracts = tuple(uri for uri, used in ((INPUT_SCHEMA_EXTENSION, any(s.input_schema for s in self.skills)),
                                                (RESULTS_EXTENSION, any(s.results for s in self.skills))) if used)
        return contracts + tuple(uri for uri in self.required_extensions if uri not in contracts)

    @property
    def skill_ids(self) -> list[str]:
        return [s.id for s in self.skills]


def clip(value: Any, limit: int = 120) -> str:
    """A peer's value, as it would be printed, cut to fit in one line of ours."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text) - limit} more characters)"
