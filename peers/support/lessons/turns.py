"""One more turn with a peer the trust gate already let through: send a message, read
the task it answers, and report it as the story reports every task. The lessons that
take more than one turn (approval.py, duplicate.py, authority.py) share it."""
from __future__ import annotations

from typing import Any

from peers.a2a.model import AgentCard, Message, Task
from peers.support.output import Kind
from peers.support.replies import read


def open_lesson(agent: Any, card_urls: list[str], about: str) -> Any:
    """A lesson's first lines: what it shows, then billing's card (first in the registry),
    or the outcome saying why the card could not be had."""
    agent.say(f"[transport] {agent.transport.label}. {about}", Kind.BANNER)
    agent.say()
    return agent.find(card_urls[0])


def send_turn(agent: Any, turn: tuple[Any, AgentCard], message: Message) -> Task:
    """Send `message` to the card's endpoint in the wire its card speaks; `turn` is the
    gate's verdict and the card. Raises PeerError, as the story's own delegate does."""
    verdict, card = turn
    spoken = agent.format_of[card.url]
    result = agent.call(card.url, spoken.SEND_METHOD, spoken.send_params(message), spoken.HEADERS)
    task = read(spoken.task_from_result, result, "the result")
    agent.report(card, verdict, task)
    return task


def ask(agent: Any, card: AgentCard, operation: str, params: dict[str, Any]) -> Any:
    """GetTask, CancelTask or ListTasks ("get", "cancel", "list") in the wire the card
    speaks: the JSON-RPC result. Raises PeerError, and KeyError if the wire lacks it."""
    spoken = agent.format_of[card.url]
    method = next(name for name, op in spoken.METHODS.items() if op == operation)
    return agent.call(card.url, method, params, spoken.HEADERS)


def look_up(agent: Any, card: AgentCard, operation: str, task_id: str) -> Task:
    """GetTask or CancelTask ("get", "cancel") on one task: the task as the peer has it now."""
    result = ask(agent, card, operation, {"id": task_id})
    return read(agent.format_of[card.url].task_from_wire, result, "the task")
