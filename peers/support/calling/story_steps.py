"""The story's steps, as values, for the stories told beyond the essay's.

A lesson, the live page's one operation on any agent and a model's run are stories too:
each is handed `Steps`, the story's own steps as functions (find a card, gate it,
delegate, report ...), never the support agent itself, so none of them reads or sets its
state or mints an id from its counters behind its back. A plain class, not a NamedTuple:
its fields are functions, never compared, unpacked or written to the wire, and the story
imports it on every run, where making an 18-field tuple type is a cost at start-up. Not
here: the steps themselves (a2a_delegation.py).
"""
from __future__ import annotations  # the fields' annotations stay unevaluated: read by tools, not run


from peers.a2a.model import AgentCard, Message, Task
from peers.support.calling.outcomes import Contact, Outcome
from transports.base import Transport

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable
    from peers.support.calling.cards import FetchedCard


class Steps:
    """The story's steps, as a story beyond the essay's takes them: values in, values out.
    Made by keyword, every field given; read-only once made."""

    say: Callable[..., None]  # a line of the run (Kind, and facts for the trace, by keyword)
    label: str  # the transport, in one phrase, for a story's [transport] banner
    find: Callable[[str], AgentCard | Outcome]  # 2. a card by its URL, or why it could not be had
    discover: Callable[..., AgentCard]  # 2. (card_url, binding=None): a card, read for `binding`; raises PeerError
    fetched: Callable[[AgentCard], FetchedCard]  # what finding a card found: its wire and binding, before the gate
    gate: Callable[[AgentCard], Contact | Outcome]  # 3. the trust gate: a contact, or the refusal
    lacks: Callable[[AgentCard], str | None]  # why our store holds no credential the card asks for, or None
    delegate: Callable[..., Outcome]  # 3-4. (card, skill, payload, context_id=None, **metadata): the story's turn
    # 4. (contact, skill, payload, context_id=None, **metadata): the story's turn with a peer the gate
    # already let through (its contract checked, no credential smuggled, its task reported); no gate again
    handoff: Callable[..., Outcome]
    send: Callable[..., Task]  # 4. (contact, message, scope=None): one message, its task followed to its end
    call: Callable[..., Any]  # (contact, method, params, scope=None): one operation, its JSON-RPC result
    report: Callable[[Contact, Task], None]  # what a task came back as, said as its variant
    failed: Callable[..., Outcome]  # (peer, verdict, error, failure=None, refused=False): a turn that ended without a task
    message: Callable[..., Message]  # (*parts, context_id=, task_id=, metadata=): ours, with the run's next id
    vetting: Callable[..., Steps]  # (allow entries, credentials): these steps, for an agent vetting those too
    holds: Callable[[], tuple[tuple[Any, ...], dict[str, Any]]]  # copies of (allowlist, credential store) now
    # What every frame crosses beneath our credentials, shown as it goes: a lesson that sends as
    # another caller would, or puts a proxy on the path, does it here; and the run's next request id.
    printer: Transport
    request_id: Callable[[], int]

    def __init__(self, **steps: Any) -> None:
        if set(steps) != set(Steps.__annotations__):
            raise TypeError(f"Steps needs exactly {sorted(Steps.__annotations__)}")
        self.__dict__.update(steps)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("the story's steps are not changed once made: vetting() gives new ones")


class StoppedShort(Exception):
    """A story that cannot be told with this run's files or flags (a lesson about billing's behaviour
    with another peer first, a wire that lacks what it shows), having said why in one line: the run
    ends there, with exit status 2, as for any input that cannot be used (cli/session.py)."""
