"""What the lessons share: opening a lesson, saying when the essay's wire cannot carry it,
one more turn with a peer the trust gate already let through (send a message, read the
task it answers, report it as the story reports every task), and reading tasks back
(GetTask, CancelTask, ListTasks) in the wire the peer's card speaks. Each takes the
story's steps (peers/support/calling/story_steps.py) and a contact, never the support agent."""
from __future__ import annotations

from peers.a2a.model import AgentCard, Message, Task
from peers.a2a.wire_format import WireFormat
from peers.support.calling.cards import BINDING as JSON_RPC
from peers.support.calling.outcomes import Contact, Verdict
from peers.support.calling.story_steps import StoppedShort
from peers.support.output import Kind
from peers.support.calling.replies import read
from transports.errors import PeerError, RemoteError
from transports.escaping import escape

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable, NoReturn
    from peers.support.calling.story_steps import Steps
    from peers.support.calling.outcomes import Outcome


def open_lesson(story: Steps, card_urls: list[str], about: str, lacks: str | None = None,
                run_with: str = "--wire 1.0 or --wire 0.3") -> AgentCard | list[Outcome]:
    """A lesson's first lines: what it shows, then billing's card (first in the registry),
    not yet gated: the trust gate speaks where the lesson first delegates (or gates it,
    `story.gate`, for a contact). Instead of the card, the outcomes the lesson ends with:
    [why the card could not be had]. StoppedShort, said why, for another first card than billing's,
    or a card speaking the essay's wire if that `lacks` what the lesson needs (with the wires that have
    it: `run_with`)."""
    story.say(f"[transport] {story.label}. {about}", Kind.BANNER)
    story.say()
    card = story.find(card_urls[0])
    if not isinstance(card, AgentCard):
        return [card]
    billing_first(story, card)
    if lacks is not None:
        carries(story.fetched(card).wire, lacks, story.say, run_with)
    return card


BILLING = "billing-agent"  # the peer every lesson shows, first in the registry


def billing_first(story: Steps, card: AgentCard) -> None:
    """StoppedShort if the registry's first card is another peer's than billing's, said in one line: the
    lesson's sentences are about billing's behaviour, untrue of another peer."""
    if card.name == BILLING:
        return
    stop_short(story.say, f"[support] this lesson shows {BILLING}, the registry's first card; the first card now is "
                          f"'{escape(card.name)[:60]}': put billing's card first in the registry to see it")


def contact_of(story: Steps, card: AgentCard, outcome: Outcome) -> Contact | None:
    """The contact a delegation to `card` went to, for the lesson's later turns; None if
    the gate refused it (a refused peer has no contact)."""
    if outcome.verdict is None or outcome.verdict is Verdict.REFUSED:
        return None
    found = story.fetched(card)
    return Contact(card, outcome.verdict, found.wire, found.binding or JSON_RPC)


def carries(spoken: WireFormat, lacks: str, say: Callable[..., None], run_with: str = "--wire 1.0 or --wire 0.3") -> None:
    """StoppedShort if the wire a card speaks is the essay's, which lacks what the lesson needs (a
    taskId, a contextId, metadata), said with how to run it."""
    if not spoken.TURNS:
        stop_short(say, f"[support] the essay's tasks/send has no {lacks}: run with {run_with}")


def stop_short(say: Callable[..., None], why: str) -> NoReturn:
    """Say why this run's files or flags cannot show the lesson, and stop it there (exit status 2)."""
    say(why, Kind.WARNING)
    raise StoppedShort(why)


def send_turn(story: Steps, contact: Contact, message: Message, scope: str | None = None) -> Task:
    """Send `message` to the contact, with the token our store holds for it (for `scope`, if
    a step-up is asked for), its task followed as every delegation's is, then reported.
    Raises PeerError, as the story's own delegate does."""
    task = story.send(contact, message, scope)
    story.report(contact, task)
    return task


def attempt(story: Steps, contact: Contact, message: Message,
            scope: str | None = None) -> Task | RemoteError:
    """One turn: the task the peer answers, or its refusal (a JSON-RPC error) as a value."""
    try:
        return send_turn(story, contact, message, scope)
    except RemoteError as refused:
        return refused


def said(say: Callable[..., None], answer: Task | RemoteError, after: str = "the task is still paused") -> None:
    """A refusal, said as one (a task needs no words here: send_turn reported it)."""
    if isinstance(answer, RemoteError):
        say(f"[support] billing refused it ({escape(str(answer))})" + (f"; {after}" if after else ""),
            Kind.REFUSED)


def turn_failed(story: Steps, contact: Contact, outcome: Outcome, failure: PeerError) -> Outcome:
    """A later turn broke the exchange (not a refusal): said as an error, and the outcome
    keeps the task it already has, so its variant is still what that task is."""
    error = story.failed(contact.name, outcome.verdict, f"a follow-up failed: {failure}; "
                                                       f"{failure.retry_advice()}", failure).error
    return outcome._replace(error=error, failure=failure)


def ask(story: Steps, contact: Contact, operation: str, params: dict[str, Any]) -> Any:
    """GetTask, CancelTask or ListTasks ("get", "cancel", "list") in the wire the card
    speaks: the JSON-RPC result. Raises PeerError, and StopIteration if the wire lacks it."""
    method = contact.method(operation)
    if method is None:
        raise StopIteration(f"the {contact.wire.NAME} wire has no {operation!r} method")
    return story.call(contact, method, params)


def look_up(story: Steps, contact: Contact, operation: str, task_id: str) -> Task:
    """GetTask or CancelTask ("get", "cancel") on one task: the task as the peer has it now."""
    result = ask(story, contact, operation, {"id": task_id})
    return read(contact.wire.task_from_wire, result, "the task")


def kept_message(task: Any, message_id: str | None) -> dict[str, Any] | None:
    """Our message `message_id` as a peer keeps it in a task's history (`task`: the task as
    a GetTask result carries it, 1.0 or 0.3, which spell a messageId alike), or None. A
    peer's reply: each level's type is checked before it is read."""
    history = task.get("history") if isinstance(task, dict) else None
    for message in history if isinstance(history, list) else []:
        if isinstance(message, dict) and message_id is not None and message.get("messageId") == message_id:
            return message
    return None
