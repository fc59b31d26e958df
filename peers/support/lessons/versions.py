"""--scenario versions: a contract version the receiver does not speak is refused, naming
the versions it does, and the sender chooses one both speak.

Seed 004's tests include "unsupported schema version". Contracts change: the support
agent here speaks refund-handoff/2 (which adds the customer's own words) and still
speaks refund-handoff/1. It hands off in the newest first. Billing speaks only
refund-handoff/1, so it refuses before reading any other field (a newer sender's
fields may mean something else) with -32602, naming the versions it supports in words
and as data (1.0: the error's ErrorInfo metadata; 0.3: the error's data). The support
agent reads that list, picks the newest version both speak, and hands off again in
it. Had they shared none, it would escalate: it never guesses a shape.
"""
from __future__ import annotations

from peers.a2a.model import AgentCard
from peers.contracts import handoff
from peers.a2a.schema import check
from peers.support.lessons import Lesson
from peers.support.lessons.turns import open_lesson
from peers.support.output import Kind
from transports.errors import RemoteError

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any
    from peers.support.calling.story_steps import Steps
    from peers.support.calling.outcomes import Outcome

ORDER, AMOUNT = "ORD-7300", 120.0
V1 = handoff.to_wire(handoff.Envelope(
    objective=f"refund {ORDER} in full; done when billing returns a refund reference",
    permitted=(handoff.Permit("refund", 500.0, "USD"),), expires_at="2099-01-01T00:00:00Z",
    decision_owner="support-agent (the customer's owner)", hops=("support-agent",)))
SPEAKS = {"refund-handoff/2": {**V1, "contract": "refund-handoff/2",
                               "customerReason": "the parcel arrived crushed"},
          "refund-handoff/1": V1}  # newest first
SUPPORTED = {"type": "string", "pattern": "^[A-Za-z0-9/._-]{1,40}( [A-Za-z0-9/._-]{1,40}){0,9}$"}


LESSON = Lesson(
    about="the support agent hands off in refund-handoff/2; billing refuses, naming the versions it speaks "
          "as data; the support agent hands off again in refund-handoff/1",
    teaches="seed 004's tests: unsupported schema version", order=140, flags={"--wire": "1.0"})


def run(story: Steps, card_urls: list[str]) -> list[Outcome]:
    """Hand off in the newest contract; on refusal, in the newest one billing names."""
    card = open_lesson(story, card_urls, "Contract versions: refused with the versions "
                          "billing speaks; handed off again in one both speak.",
                          lacks="metadata to carry a contract version")
    if not isinstance(card, AgentCard):
        return card  # why it cannot go on, said already
    newest = next(iter(SPEAKS))
    story.say(f"[support] handing off in {newest}, the newest contract the support agent speaks")
    outcome = story.delegate(card, "process_refund", {"order_id": ORDER, "amount": AMOUNT},
                             handoff=SPEAKS[newest])
    if not isinstance(outcome.failure, RemoteError) or outcome.failure.code != -32602:
        return [outcome]
    theirs = supported_by(outcome.failure.data)
    if theirs is None:
        story.say("[support] billing refused it, naming no versions as data: escalating to a human "
                  "rather than guessing a shape", Kind.ESCALATED)
        return [outcome]
    both = [version for version in SPEAKS if version in theirs]
    story.say(f"[support] billing speaks {', '.join(theirs)} (the error's data); we speak "
              f"{', '.join(SPEAKS)}")
    if not both:
        story.say("[support] no version in common: escalating to a human", Kind.ESCALATED)
        return [outcome]
    story.say(f"[support] handing off again in {both[0]}, the newest both speak "
              "(it has no field for the customer's own words, so they stay with us)")
    return [story.delegate(card, "process_refund", {"order_id": ORDER, "amount": AMOUNT},
                           handoff=SPEAKS[both[0]])]


def supported_by(data: Any) -> list[str] | None:
    """The versions a refusal names as data: 1.0's [ErrorInfo] metadata, or 0.3's data;
    None if it names none we can read. A peer's data is checked like any reply."""
    details = data[0].get("metadata") if isinstance(data, list) and data and isinstance(data[0], dict) else data
    named = details.get("supportedContracts") if isinstance(details, dict) else None
    return None if check(named, SUPPORTED, "supportedContracts") else named.split()
