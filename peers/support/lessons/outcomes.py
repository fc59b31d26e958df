"""--scenario outcomes: every way a delegation can end is a named variant, never prose.

Seed 000's Handoff Contract asks for "a typed result with explicit success and failure
variants". The support agent hands billing four refunds, each ending differently: one
completes; one names an order billing has no record of, and fails, saying as data that
a retry is safe and that no effect landed; one asks for more than the order was charged,
and is rejected before anything happens; one is above billing's limit and waits for a
person, and the support agent withdraws it (CancelTask), so it ends canceled. Each
answer is mapped to its variant in one place (peers/support/calling/outcomes.py), and the
support agent says what it does with it. The lesson ends with the legend: every
variant, by A2A's class: terminal, interrupted, active, or no task; and why seed 004,
which counts input required, approval required and timed out as terminal for a
handoff, and A2A, which calls them interrupted or active, are both right. Billing here checks each refund against its
order book (peers/billing.py ORDER_BOOK), as the essay's run does not.
"""
from __future__ import annotations

from peers.a2a.model import AgentCard
from peers.a2a.wire_format import method_for
from peers.support.lessons import Lesson
from peers.support.lessons.turns import contact_of, look_up, open_lesson, turn_failed
from peers.support.calling.outcomes import Variant, legend
from peers.support.output import Kind
from transports.errors import PeerError
from transports.escaping import escape

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from peers.support.calling.story_steps import Steps
    from peers.support.calling.outcomes import Outcome

# Seed 004 and A2A class three of these endings differently; both are right, each about its own thing.
TWO_VOCABULARIES = [
    "[support] seed 004 counts input required, approval required and timed out as terminal states of a "
    "handoff; A2A calls the first two interrupted and the third active. Both are right:",
    "  seed 004 speaks for the workflow that handed the work off: this attempt is over, and it must branch "
    "on how it ended (ask a person, look for the task) rather than wait or say 'done';",
    "  A2A speaks for the task at the peer: it has not ended (the same task goes on once its caller answers; "
    "a task our deadline gave up on may still be working), so it is not terminal there.",
]

REFUNDS = [
    ("ORD-3300, for the $180.00 it was charged", "ORD-3300", 180.0),
    ("ORD-9999, an order billing has no record of", "ORD-9999", 20.0),
    ("$420.00 on ORD-42, which was charged $42.00", "ORD-42", 420.0),
    ("$6,200.00 on ORD-4100, above billing's limit for automatic refunds", "ORD-4100", 6200.0),
]


LESSON = Lesson(
    about="every way a delegation can end, each a named variant with its handling: completed, failed, "
          "rejected, approval required, canceled; then the legend",
    teaches="seed 004: terminal states enumerated and structured (seed 000: explicit success and failure "
            "variants)", order=90, flags={"--wire": "1.0"},
    peers={"billing-agent": {"check_orders": True}})  # an unknown order, an over-refund


def run(story: Steps, card_urls: list[str]) -> list[Outcome]:
    """Four refunds, four endings, then a withdrawal and the legend."""
    card = open_lesson(story, card_urls, "Every ending is a named variant: four refunds, "
                          "handed to billing.")
    if not isinstance(card, AgentCard):
        return card  # why it cannot go on, said already
    outcomes = []
    for why, order, amount in REFUNDS:
        story.say()
        story.say(f"[support] refund {why}")
        # each refund passes the trust gate again, as every delegation of the story does
        outcomes.append(story.delegate(card, "process_refund", {"order_id": order, "amount": amount}))
    paused = outcomes[-1]
    if paused.variant is Variant.APPROVAL_REQUIRED:  # on the essay's wire it is "input-required"
        story.say()
        story.say(f"[support] the customer withdrew the request: canceling task {escape(paused.task.id)}, "
                  "which nothing has been done for yet")
        contact = contact_of(story, card, paused)  # the gate let it through: a task came back
        try:
            canceled = look_up(story, contact, "cancel", paused.task.id)
        except PeerError as failure:
            return [turn_failed(story, contact, paused, failure)]
        story.report(contact, canceled)
    elif paused.task is not None and method_for(story.fetched(card).wire, "cancel") is None:  # the essay's wire
        story.say()
        story.say("[support] the essay's tasks/send has no method beside it to cancel a task with: the canceled "
                  "ending needs --wire 1.0 or --wire 0.3", Kind.WARNING)
    story.say()
    story.say("[support] every variant, and what the support agent does with it:", Kind.BANNER)
    for line in legend(story.fetched(card).wire):
        story.say(line, Kind.BANNER)
    story.say()
    for line in TWO_VOCABULARIES:
        story.say(line)
    return outcomes[:1]  # the other endings were the lesson; the first is the run's outcome
