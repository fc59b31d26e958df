"""--scenario authority: the handoff envelope's permission, checked before any effect.

Seed 004: what must cross the boundary is "a task the receiver can accept or reject, and
a bounded set of actions it is permitted to take", with limits and an expiry; the tests
are "missing fields, expired authority, unsupported schema version ... and a handoff
chain that bounces". The support agent tries the same refund six times, each with a
different envelope (peers/contracts/handoff.py) in the message's metadata, and sends five.
Billing judges each it gets before anything happens: a grant too small, a grant expired, a
contract version it does not speak, a chain at its hop limit are all refused, and only a
grant that covers the refund lets it happen. The fifth, an envelope that also carries a
bearer token in the payload (a stand-in, "t0k", known for a credential by its member's
name), never leaves: the support agent refuses before sending, because "a bearer token
sitting in a handoff payload is a permission escalation with extra steps" (seed 004); our
real token goes only in HTTP Authorization, on every frame to billing. Billing refuses such an envelope too,
should another sender smuggle one in, naming the same reason (tests/test_handoff.py sends
it one).
"""
from __future__ import annotations

from peers.a2a.model import AgentCard
from peers.contracts import handoff
from peers.support.lessons import Lesson
from peers.support.lessons.turns import open_lesson

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from peers.support.calling.story_steps import Steps
    from peers.support.calling.outcomes import Outcome

ORDER, AMOUNT = "ORD-6200", 180.0
LATER, EXPIRED = "2099-01-01T00:00:00Z", "2026-01-01T00:00:00Z"


LESSON = Lesson(
    about="the same refund under six handoff envelopes (too small, expired, unknown version, bounced, a "
          "smuggled token, valid): no token is ever sent in an envelope; billing admits only the last",
    teaches="seed 004: permitted actions, with limits and an expiry; no credentials in the envelope",
    order=50, flags={"--wire": "1.0"})  # the essay's tasks/send has no metadata to carry an envelope


def grant(max_amount: float, expires_at: str = LATER, hops: tuple[str, ...] = ("support-agent",)) -> dict:
    return handoff.to_wire(handoff.Envelope(
        objective=f"refund {ORDER} in full; done when billing returns a refund reference",
        permitted=(handoff.Permit("refund", max_amount, "USD"),), expires_at=expires_at,
        decision_owner="support-agent (the customer's owner)", hops=hops))


ATTEMPTS = [
    ("a grant for refunds up to $100.00: less than the refund", grant(100.0)),
    (f"a grant for up to $500.00 that expired at {EXPIRED}", grant(500.0, EXPIRED)),
    ("an envelope in contract version refund-handoff/2, which billing does not speak",
     {**grant(500.0), "contract": "refund-handoff/2"}),
    ("a handoff that already went support-agent -> billing-agent -> support-agent",
     grant(500.0, hops=("support-agent", "billing-agent", "support-agent"))),
    ("an envelope that also carries a bearer token in the payload", {**grant(500.0), "token": "t0k"}),
    (f"a grant for refunds up to $500.00 until {LATER}", grant(500.0)),
]


def run(story: Steps, card_urls: list[str]) -> list[Outcome]:
    """The same refund, under each envelope in turn; billing decides each before acting."""
    card = open_lesson(story, card_urls, "The handoff envelope: permission with limits and an "
                          "expiry, checked before any effect.",
                          lacks="metadata to carry an envelope")
    if not isinstance(card, AgentCard):
        return card  # why it cannot go on, said already
    outcomes = []
    for why, envelope in ATTEMPTS:
        story.say()
        story.say(f"[support] handing off the refund with {why}")
        # each handoff passes the trust gate again, as every delegation of the story does
        outcomes.append(story.delegate(card, "process_refund", {"order_id": ORDER, "amount": AMOUNT},
                                       handoff=envelope))
        if "token" in envelope:  # refused before sending: say what the other side would have done
            story.say("[support] no frame left; billing refuses such an envelope too, from any sender that "
                      "smuggles one in, naming the same reason")
    return outcomes[-1:]  # the refusals above were the lesson; the last handoff is the outcome
