"""--scenario duplicate: the same handoff delivered again refunds nothing twice, so a
retry after a lost answer is safe.

Seed 004's failure list ends with duplicate delivery; seed 000 asks whether a retry is
safe. A network can lose an answer after the peer acted: the caller cannot tell "never
arrived" from "done, but the reply was lost". Billing makes the retry safe: it keeps a
ledger of refunds by order. The same message again (same messageId) gets the task it
made; the same order asked under a new messageId (a second agent on the same ticket)
gets that task too; the same order for another amount is a new task, rejected, naming the
task that made the refund. So three answers are the first task itself, the fourth a new
task that did nothing and names the first; one refund was issued.
"""
from __future__ import annotations

from peers.a2a.model import AgentCard, Message, Part
from peers.support.calling.outcomes import Contact
from peers.support.lessons import Lesson
from peers.support.lessons.turns import open_lesson, send_turn
from peers.support.output import Kind
from transports.errors import PeerError
from transports.escaping import escape

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from peers.support.calling.story_steps import Steps
    from peers.support.calling.outcomes import Outcome

ORDER, AMOUNT = "ORD-5100", 75.0


LESSON = Lesson(
    about="the same handoff delivered again (same messageId, a new one, another amount): each answer is "
          "the first task, or a new task rejected naming it, and billing refunds the order once",
    teaches="seed 004's tests: duplicate delivery (seed 000: is a retry safe?)", order=150,
    flags={"--wire": "1.0"})


def run(story: Steps, card_urls: list[str]) -> list[Outcome]:
    """One refund, then the same handoff three more ways; billing does it once."""
    card = open_lesson(story, card_urls, "The same handoff, delivered again: billing refunds an "
                          "order once.")
    if not isinstance(card, AgentCard):
        return card  # why it cannot go on, said already
    contact = story.gate(card)  # the trust gate, where the lesson first hands off
    if not isinstance(contact, Contact):
        return [contact]
    outcome = story.handoff(contact, "process_refund", {"order_id": ORDER, "amount": AMOUNT})
    if outcome.task is None or outcome.sent is None:
        return [outcome]
    first = outcome.sent  # exactly what was sent, messageId included
    carries_message_ids = contact.wire.MESSAGE_IDS  # 0.3's and 1.0's messages do; the essay's tasks/send, none
    retries = [
        ("suppose that answer was lost on the way back: was the refund issued? Sending the "
         + (f"same message again ({first.message_id}) is safe" if carries_message_ids else
            "same refund again (the essay's wire has no messageId: billing knows it by its order) is safe"), first),
        ("a second agent on the same ticket asks for the same refund"
         + (", with its own messageId" if carries_message_ids else ""), _ask(story, AMOUNT)),
        (f"and for ${AMOUNT * 10:,.2f} instead: a different request for the same order",
         _ask(story, AMOUNT * 10)),
    ]
    first_task = outcome.task.id
    named, itself, others = {first_task}, 1, []  # answers that are the first task, and the other tasks
    for why, message in retries:
        story.say()
        story.say(f"[support] {why}")
        try:
            task = send_turn(story, contact, message)
        except PeerError as failure:
            return [story.failed(contact.name, outcome.verdict, f"the retry failed: {failure}")]
        named.add(task.id if task.id == first_task else _named_in(task.status_message, first_task))
        itself += task.id == first_task
        others += [] if task.id == first_task else [f"{escape(task.id)} ({task.state.value})"]
    story.say()
    if named == {first_task}:
        rest = (f"; {' and '.join(others)}: a new task that did nothing, naming task {escape(first_task)} as the "
                "one that refunded" if others else "")
        # what the answers show (billing's ledger is billing's, not read from here); an outcome, so that
        # --quiet, which drops the retries' reasons, keeps it beside the results it counts
        story.say(f"[support] four deliveries: {itself} answers are task {escape(first_task)} itself{rest}; "
                  f"one task refunded {ORDER}, as billing's answers say (its ledger is not read from here)",
                  Kind.TRUSTED)
    else:  # a peer without a ledger: say what it did, do not hide it
        story.say(f"[support] the answers named tasks {sorted(named)}: {ORDER} may have been "
                  "refunded more than once", Kind.WARNING)
    return [outcome]


def _ask(story: Steps, amount: float) -> Message:
    return story.message(Part(data={"order_id": ORDER, "amount": amount}, media_type="application/json"),
                         metadata={"skillId": "process_refund"})


def _named_in(note: str | None, task_id: str) -> str:
    """A rejection names the task that already did the refund; anything else is news."""
    return task_id if note and f"task {task_id} " in note else "(another task)"
