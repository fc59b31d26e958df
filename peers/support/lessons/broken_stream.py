"""--scenario broken-stream: the connection drops mid-stream; the task does not stop.

A2A 1.0 section 3.1.6: SubscribeToTask "reconnects to an existing task's stream". A
stream is one long HTTP response, and long responses break: a proxy's idle timeout, a
laptop lid, a peer's restart. What broke is the connection, not the task, so retrying
the message would be wrong (a second refund, or at best a duplicate to untangle).
Billing here streams its refund, and the demo network cuts the connection after three
events (the cut-streams test double, peers/doubles.py; `serve` users get it from a
flag): submitted, working and the refund's artifact arrive, and the connection breaks
just as billing completes the task, so the completion is sent to nobody. The support
agent keeps what it read and subscribes to the same task; a finished task has no more
events to join (1.0 section 3.1.6 refuses it), so it asks for the task (GetTask) and
says what it missed while it was not listening: the task became completed
(peers/support/calling/follow.py). It never sends the message again. The lesson runs as if
--stream were given. On 0.3 the subscription is tasks/resubscribe; the essay's
tasks/send has no stream at all.
"""
from __future__ import annotations

from peers.a2a.model import AgentCard
from peers.support.lessons import Lesson
from peers.support.lessons.turns import open_lesson

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from peers.support.calling.story_steps import Steps
    from peers.support.calling.outcomes import Outcome

ORDER, AMOUNT = "ORD-3300", 180.0


LESSON = Lesson(
    about="billing's stream breaks off as the task completes; the support agent picks the task up again "
          "(SubscribeToTask, then GetTask) and says what it missed: the completion",
    teaches="seed 004: whether retrying is safe, when a stream breaks (A2A 1.0 section 3.1.6)", order=110,
    flags={"--wire": "1.0", "--stream": True},  # this lesson is about streams: as if --stream were given
    peers={"billing-agent": {"slow": 2.0, "cut_streams_after": 3}})  # breaks as the task completes


def run(story: Steps, card_urls: list[str]) -> list[Outcome]:
    """Stream a refund over a connection that drops; pick the task up again."""
    card = open_lesson(story, card_urls, "A broken stream: the connection drops, the task goes on.",
                       lacks="stream (message/stream, SendStreamingMessage)")
    if not isinstance(card, AgentCard):
        return card  # why it cannot go on, said already
    story.say(f"[support] refund {ORDER} for ${AMOUNT:,.2f}, streamed: each event shown as it arrives")
    return [story.delegate(card, "process_refund", {"order_id": ORDER, "amount": AMOUNT})]
