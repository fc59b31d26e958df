"""--scenario evidence: claims travel by reference, classed and dated; the receiver
refreshes what is stale before acting, and an inference stays an inference.

Seed 004: a summary that flattens "the customer said", "the billing system returned"
and "the previous agent concluded" "lets a guess get promoted to a fact at every hop".
Our triage hands the support agent three claims about a ticket (peers/contracts/evidence.py):
what the order was charged, observed in our order records two days ago; the number of
damaged items, reported by the customer; and the charge again, inferred by triage from
the customer's words. Each names its record and how to retrieve it, not a copy of it. Billing, which
refunds only what an observed, fresh charge covers, rejects the claims as they came
(the charge is stale) and rejects the inference alone (it is not a fact). The support
agent, as a receiver should, refreshes the stale claim from its record (its own MCP
tool) and hands off again, each claim still in its own class: billing acts. Each
rejection names as data the claim a fresh observation would settle (`needsEvidence`), so
the support agent reads it as "needs evidence", whose handling is to refresh and hand off
again, not to escalate: a person is asked only when observed facts fall short or disagree.
"""
from __future__ import annotations

import time

from peers.contracts import handoff
from peers.contracts.evidence import Claim, utc_second
from peers.a2a.model import AgentCard
from peers.support.lessons import orders_tool
from peers.support.lessons import Lesson
from peers.support.lessons.mcp import lookup_order
from peers.support.lessons.turns import open_lesson
from peers.support.lessons.orders_tool import TOOLS_URL
from transports.errors import PeerError

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any
    from peers.support.calling.story_steps import Steps
    from peers.support.calling.outcomes import Outcome

ORDER, TICKET, LOOKUP = "ORD-3300", "TCK-8812", "MCP tools/call lookup_order"


LESSON = Lesson(
    about="claims by reference, each observed, reported or inferred, and dated: billing rejects a stale fact "
          "and a bare inference; the support agent refreshes, then billing acts",
    teaches="seed 004: evidence by reference, each claim classed and dated", order=80,
    flags={"--wire": "1.0"},
    own_apps={TOOLS_URL: orders_tool.app})  # the stale claim is refreshed from our own tool


def from_triage(now: float) -> tuple[Claim, ...]:
    """What our triage handed over: three claims, three classes, one of them two days old."""
    return (Claim(claim="charged", subject=ORDER, value=180.0, klass="observed", system="orders-tool",
                  record_id=ORDER, retrieve=LOOKUP, retrieved_at=utc_second(now - 2 * 86400)),
            Claim(claim="damaged_items", subject=ORDER, value=1, klass="reported", system="tickets",
                  record_id=TICKET, retrieve=f"tickets.get {TICKET}", retrieved_at=utc_second(now)),
            Claim(claim="charged", subject=ORDER, value=180.0, klass="inferred", system="triage-agent",
                  record_id=TICKET, retrieve=f"triage's reading of {TICKET}", retrieved_at=utc_second(now)))


def grant(claims: tuple[Claim, ...]) -> dict[str, Any]:
    return handoff.to_wire(handoff.Envelope(
        objective=f"refund {ORDER} for ticket {TICKET}", permitted=(handoff.Permit("refund", 500.0, "USD"),),
        expires_at="2099-01-01T00:00:00Z", decision_owner="support-agent (the customer's owner)",
        hops=("triage-agent", "support-agent"), evidence=claims))


def run(story: Steps, card_urls: list[str]) -> list[Outcome]:
    card = open_lesson(story, card_urls, "Evidence by reference: each claim classed and dated, "
                       "refreshed before anyone acts on it.",
                       lacks="metadata to carry evidence")
    if not isinstance(card, AgentCard):
        return card  # why it cannot go on, said already
    now = time.time()
    claims = from_triage(now)
    story.say(f"[support] triage hands over ticket {TICKET} with claims by reference (no copied rows):")
    for claim in claims:
        story.say(f"  {described(claim)}{'' if claim.is_fresh(now) else '  (stale)'}")
    refund = {"order_id": ORDER, "amount": 180.0}
    story.say()
    story.say("[support] as a careless hop would: passing the claims on as they came")
    story.delegate(card, "process_refund", refund, handoff=grant(claims))
    story.say()
    story.say("[support] or with only triage's inference about the charge")
    story.delegate(card, "process_refund", refund, handoff=grant(claims[2:]))
    story.say()
    story.say(f"[support] as a receiver should: the observed charge is stale, so it is refreshed "
              f"from its record ({LOOKUP}) before anyone acts on it")
    try:
        charged = lookup_order(story, ORDER)
    except PeerError as failure:
        return [story.failed("orders-tool", None, f"refreshing the claim failed: {failure}")]
    fresh = claims[0]._replace(value=charged, retrieved_at=utc_second())
    story.say(f"  {described(fresh)}")
    story.say("[support] handing off again: the refreshed fact, the report and the inference, each "
              "in its own class")
    return [story.delegate(card, "process_refund", refund, handoff=grant((fresh,) + claims[1:]))]


def described(claim: Claim) -> str:
    return (f"{claim.klass:<9} {claim.claim} {claim.subject} = {claim.value:g}, from {claim.system} "
            f"record {claim.record_id} ({claim.retrieve}), retrieved {claim.retrieved_at}")
