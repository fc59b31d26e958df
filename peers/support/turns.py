"""One more turn with a peer the trust gate already let through: send a message, read
the task it answers, and report it as the story reports every task. The lessons that
take more than one turn (approval.py, duplicate.py) share it."""
from __future__ import annotations

from typing import Any

from peers.a2a.model import AgentCard, Message, Task
from peers.support.replies import read


def send_turn(agent: Any, turn: tuple[Any, AgentCard], message: Message) -> Task:
    """Send `message` to the card's endpoint in the wire its card speaks; `turn` is the
    gate's verdict and the card. Raises PeerError, as the story's own delegate does."""
    verdict, card = turn
    spoken = agent.format_of[card.url]
    result = agent.call(card.url, spoken.SEND_METHOD, spoken.send_params(message), spoken.HEADERS)
    task = read(spoken.task_from_result, result, "the result")
    agent.report(card, verdict, task)
    return task
