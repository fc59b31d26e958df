"""--scenario broken-stream: the connection drops mid-stream; the task does not stop.

A2A 1.0 section 3.1.6: SubscribeToTask "reconnects to an existing task's stream". A
stream is one long HTTP response, and long responses break: a proxy's idle timeout, a
laptop lid, a peer's restart. What broke is the connection, not the task, so retrying
the message would be wrong (a second refund, or at best a duplicate to untangle).
Billing here streams its refund, and the demo network cuts the connection after two
events (PeerApp's cut_streams_after; `serve` users get the same test double from a
flag). The support agent keeps what it read, subscribes to the same task, and says
what it missed while it was not listening (peers/support/follow.py). On 0.3 the
subscription is tasks/resubscribe; the essay's tasks/send has no stream at all.
"""
from __future__ import annotations

from typing import Any

from peers.a2a.model import AgentCard
from peers.support.lessons.turns import open_lesson

ORDER, AMOUNT = "ORD-3300", 180.0


def run(agent: Any, card_urls: list[str]) -> list[Any]:
    """Stream a refund over a connection that drops; pick the task up again."""
    card = open_lesson(agent, card_urls, "A broken stream: the connection drops, the task goes on.",
                       lacks="stream (message/stream, SendStreamingMessage)")
    if not isinstance(card, AgentCard):
        return card  # why it cannot go on, said already
    agent.stream = True  # this lesson is about streams: as if --stream were given
    agent.say(f"[support] refund {ORDER} for ${AMOUNT:,.2f}, streamed: each event shown as it arrives")
    return [agent.gate_then_delegate(card, "process_refund", {"order_id": ORDER, "amount": AMOUNT})]
