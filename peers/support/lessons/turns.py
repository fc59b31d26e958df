"""What the lessons share: opening a lesson, saying when the essay's wire cannot carry it,
one more turn with a peer the trust gate already let through (send a message, read the
task it answers, report it as the story reports every task), and reading tasks back
(GetTask, CancelTask, ListTasks) in the wire the peer's card speaks. Each takes the
story's SupportAgent where it sends through it, and only values where it does not."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from peers.a2a.model import AgentCard, Message, Task
from peers.a2a.wire_format import WireFormat, method_for
from peers.support.output import Kind
from peers.support.replies import read
from transports.errors import PeerError, RemoteError
from transports.printer import escape

if TYPE_CHECKING:
    from a2a_delegation import Outcome, SupportAgent, Verdict
    Turn = tuple[Verdict | None, AgentCard]  # the trust gate's verdict on a card, and the card


def open_lesson(agent: SupportAgent, card_urls: list[str], about: str,
                lacks: str | None = None) -> AgentCard | list[Outcome]:
    """A lesson's first lines: what it shows, then billing's card (first in the registry).
    Instead of the card, the outcomes the lesson ends with: [why the card could not be
    had], or, if it speaks the essay's wire and that `lacks` what the lesson needs, []."""
    agent.say(f"[transport] {agent.transport.label}. {about}", Kind.BANNER)
    agent.say()
    card = agent.find(card_urls[0])
    if not isinstance(card, AgentCard):
        return [card]
    if lacks is not None and essay_cannot(agent.format_of[card.url], lacks, agent.say):
        return []
    return card


def essay_cannot(spoken: WireFormat, lacks: str, say: Callable[..., None]) -> bool:
    """Whether the wire a card speaks is the essay's, which lacks what the lesson needs (a
    taskId, a contextId, metadata): then say so, and how to run it."""
    if spoken.TURNS:
        return False
    say(f"[support] the essay's tasks/send has no {lacks}: run with --wire 1.0 or --wire 0.3", Kind.WARNING)
    return True


def send_turn(agent: SupportAgent, turn: Turn, message: Message, scope: str | None = None) -> Task:
    """Send `message` to the card's endpoint in the wire its card speaks, with the token our
    store holds for it (for `scope`, if a step-up is asked for); `turn` is the gate's
    verdict and the card. Raises PeerError, as the story's own delegate does."""
    verdict, card = turn
    spoken = agent.format_of[card.url]
    result = agent.call(card.url, spoken.SEND_METHOD, spoken.send_params(message), spoken.HEADERS, scope)
    task = read(spoken.task_from_result, result, "the result")
    agent.report(card, verdict, task)
    return task


def attempt(agent: SupportAgent, turn: Turn, message: Message,
            scope: str | None = None) -> Task | RemoteError:
    """One turn: the task the peer answers, or its refusal (a JSON-RPC error) as a value."""
    try:
        return send_turn(agent, turn, message, scope)
    except RemoteError as refused:
        return refused


def said(say: Callable[..., None], answer: Task | RemoteError, after: str = "the task is still paused") -> None:
    """A refusal, said as one (a task needs no words here: send_turn reported it)."""
    if isinstance(answer, RemoteError):
        say(f"[support] billing refused it ({escape(str(answer))})" + (f"; {after}" if after else ""),
                  Kind.REFUSED)


def turn_failed(agent: SupportAgent, card: AgentCard, outcome: Outcome, failure: PeerError) -> Outcome:
    """A later turn broke the exchange (not a refusal): said as an error, and the outcome
    keeps the task it already has, so its variant is still what that task is."""
    error = agent.failed(card.name, outcome.verdict, f"a follow-up failed: {failure}; {failure.retry_advice()}",
                         failure).error
    return outcome._replace(error=error, failure=failure)


def ask(agent: SupportAgent, card: AgentCard, operation: str, params: dict[str, Any]) -> Any:
    """GetTask, CancelTask or ListTasks ("get", "cancel", "list") in the wire the card
    speaks: the JSON-RPC result. Raises PeerError, and StopIteration if the wire lacks it."""
    spoken = agent.format_of[card.url]
    method = method_for(spoken, operation)
    if method is None:
        raise StopIteration(f"the {spoken.NAME} wire has no {operation!r} method")
    return agent.call(card.url, method, params, spoken.HEADERS)


def look_up(agent: SupportAgent, card: AgentCard, operation: str, task_id: str) -> Task:
    """GetTask or CancelTask ("get", "cancel") on one task: the task as the peer has it now."""
    result = ask(agent, card, operation, {"id": task_id})
    return read(agent.format_of[card.url].task_from_wire, result, "the task")


def kept_message(task: Any, message_id: str | None) -> dict[str, Any] | None:
    """Our message `message_id` as a peer keeps it in a task's history (`task`: the task as
    a GetTask result carries it, 1.0 or 0.3, which spell a messageId alike), or None. A
    peer's reply: each level's type is checked before it is read."""
    history = task.get("history") if isinstance(task, dict) else None
    for message in history if isinstance(history, list) else []:
        if isinstance(message, dict) and message_id is not None and message.get("messageId") == message_id:
            return message
    return None
