"""--scenario transfer: what a handoff transfers: who advances the task after it, from what
status, who keeps the customer meanwhile, and the span billing's work is linked to.

Seed 004: "after this transfer, who is responsible for advancing the task? If the answer
is the receiver, it is a handoff and it needs a contract. If the coordinator keeps the
plan and only wants an answer back, that is a tool call wearing a handoff's clothes."
The lesson prints the handoff envelope's contract as a table, field by field (each
field billing's schema reads, whether it is required, and what we send in it). Then a
$6,200.00 refund, three ways. Drafted with the support agent keeping the plan
(`advancedBy: support-agent`), it is not sent as a handoff at all: that would hide where
accountability lives (billing, sent one, refuses it too). Handed over without naming who keeps the customer (`userOwner`),
billing refuses it before any effect: otherwise "both parties assume the other one sent
the delay notice". Handed over whole, billing takes it on: it advances the task, from
the current authoritative status in `status` (which billing requires of a transfer, but
does not check against its own records: --scenario evidence is where facts are
refreshed), while the support agent keeps the customer. A refund this large then waits
at billing for a person's approval, so the support agent, the owner the envelope names,
sends the customer the delay notice. Last, the handoff traced as linked responsibility
spans: the envelope carried our span's id (`span`); the task billing keeps (GetTask)
holds the handoff, so billing's task is linked to our span. The fields are defined in
peers/contracts/transfer.py; billing judges them on arrival.
"""
from __future__ import annotations

import json

from peers.a2a.model import AgentCard, TaskState
from peers.contracts import handoff, transfer
from peers.support.lessons import Lesson
from peers.support.lessons.turns import ask, contact_of, kept_message, open_lesson
from peers.support.output import Kind
from transports.errors import PeerError
from transports.escaping import escape

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any
    from peers.support.calling.outcomes import Contact, Outcome
    from peers.support.calling.story_steps import Steps

US, ORDER, AMOUNT, TICKET = "support-agent", "ORD-4100", 6200.0, "ticket-4100"
TRACE, OUR_SPAN = "trace-ticket-4100", "support-1"
STATUS = transfer.Status("charged $6,200.00; refund asked for by the customer; nothing refunded yet",
                         "orders-db, record ORD-4100", "2026-12-01T09:00:00Z")
MEANINGS = {  # the contract table's last column: one line for each field the schema reads
    "contract": "the contract's version: one the receiver does not speak is refused first",
    "objective": "what to do, and the test for done",
    "decisionOwner": "who decides when the handoff cannot go on",
    "permitted": "the actions allowed, each with its limit",
    "expiresAt": "when that permission ends",
    "hops": "the agents it has passed through, the sender last",
    "maxHops": "the chain's limit, so a bounce ends",
    "evidence": "claims by reference, each classed and dated",
    "advancedBy": "who advances the task after the transfer: the receiver, or it is a tool call",
    "status": "the current authoritative status: its state, its system of record, when",
    "userOwner": "who keeps the customer meanwhile, and so sends the delay notice",
    "span": "the sender's responsibility span, which the receiver's task is linked to",
}

LESSON = Lesson(
    about="the handoff's contract as a table; a tool call in a handoff's clothes is not sent; a transfer "
          "naming no owner of the customer is refused; a whole one is taken on, its delay notice sent by "
          "the owner it names, its spans linked",
    teaches="seed 004: who advances the task after a transfer; its status; who owns the customer; linked spans",
    order=47, flags={"--wire": "1.0"})  # the essay's tasks/send has no metadata to carry an envelope


def envelope(advanced_by: str, user_owner: str | None = US) -> dict[str, Any]:
    return handoff.to_wire(handoff.Envelope(
        objective=f"refund {ORDER} in full; done when billing returns a refund reference",
        permitted=(handoff.Permit("refund", 10_000.0, "USD"),), expires_at="2099-01-01T00:00:00Z",
        decision_owner=f"{US} (the customer's owner)", hops=(US,),
        transfer=transfer.Transfer(advanced_by, STATUS, user_owner, TRACE, OUR_SPAN)))


def run(story: Steps, card_urls: list[str]) -> list[Outcome]:
    card = open_lesson(story, card_urls, "What a handoff transfers: the task, to the one who advances it; "
                       "the customer stays with the owner it names.", lacks="metadata to carry an envelope")
    if not isinstance(card, AgentCard):
        return card  # why it cannot go on, said already
    refund = {"order_id": ORDER, "amount": AMOUNT}
    table(story, envelope(card.name))
    story.say()
    draft = envelope(US)
    story.say(f"[support] after this transfer, who advances the refund? Drafted with {US} keeping the plan, "
              "billing only answering (advancedBy: support-agent)")
    if transfer.refusal(handoff.read(draft).transfer, card.name):  # the blunt question, asked before writing it
        story.say(f"[support] not sent as a handoff: {US} would still advance the task, so it is a tool call "
                  "wearing a handoff's clothes; naming it a handoff would hide who is accountable", Kind.REFUSED)
    story.say()
    story.say(f"[support] handed over to {card.name}, but naming nobody who keeps the customer meanwhile")
    story.delegate(card, "process_refund", refund, TICKET, handoff=envelope(card.name, None))
    story.say()
    story.say(f"[support] handed over whole: {card.name} advances it, from the current status the envelope "
              f"states; {US} keeps the customer")
    sent = envelope(card.name)
    outcome = story.delegate(card, "process_refund", refund, TICKET, handoff=sent)
    contact = contact_of(story, card, outcome)
    if outcome.task is None or contact is None:
        return [outcome]  # refused or failed: the story said why
    owner = handoff.read(sent).transfer.user_owner
    if not outcome.task.state.is_terminal:  # the transfer takes time: the customer hears it from its owner
        if owner == US:
            waits = ("is waiting for a person's approval" if outcome.task.state is TaskState.INPUT_REQUIRED
                     else "is still at work on it")  # what billing's answer says, in the customer's words
            story.say(f"[support] delay notice to the customer, sent by {US} (the envelope's userOwner): "
                      f"\"Your refund of ${AMOUNT:,.2f} for {ORDER} is with our billing team, which now handles "
                      f"it and {waits}; we will write as soon as it is decided.\"", Kind.ESCALATED)
        else:
            story.say(f"[support] the envelope names {escape(str(owner))} as the customer's owner: the delay "
                      "notice is theirs to send")
    spans(story, contact, outcome.task.id, outcome.sent.message_id if outcome.sent else None)
    return [outcome]


def table(story: Steps, sent: dict[str, Any]) -> None:
    """The envelope's contract, field by field: the schema's fields, * where it requires one."""
    required = set(handoff.SCHEMA["required"])
    story.say(f"[support] the handoff contract ({handoff.CONTRACT}), field by field (* required; what we send):")
    for name in handoff.SCHEMA["properties"]:
        value = json.dumps(sent[name]) if name in sent else "(not sent)"
        value = value if len(value) <= 40 else value[:37] + "..."
        story.say(f"  {name + ('*' if name in required else ''):<15}{value:<42}{MEANINGS[name]}")
    story.say("  never in it: the transcript, the receiver's prompt, the sender's credentials (the schema "
              "admits no other field)")


def spans(story: Steps, contact: Contact, task_id: str, message_id: str | None) -> None:
    """The handoff as linked responsibility spans: ours, and billing's task, linked to ours
    by the handoff it keeps (read back with GetTask, as billing has it)."""
    try:
        kept = kept_message(ask(story, contact, "get", {"id": task_id}), message_id)
    except PeerError as failure:
        story.say(f"[support] billing's task could not be read back: {failure}", Kind.WARNING)
        return
    linked = carried_span(kept) == {"traceId": TRACE, "spanId": OUR_SPAN}
    story.say(f"[trace] {TRACE}: the handoff, as linked responsibility spans")
    story.say(f"[trace]   span {OUR_SPAN:<9} {US:<14} keeps the customer ({TICKET}), the delay notice included")
    if linked:
        story.say(f"[trace]   task {escape(task_id):<9} {contact.name:<14} advances the refund, linked to "
                  f"{OUR_SPAN}: the task keeps the handoff that carried it")
    else:
        story.say(f"[trace]   task {escape(task_id):<9} {contact.name:<14} keeps no handoff naming {OUR_SPAN}: "
                  "its work cannot be linked to ours", Kind.WARNING)


def carried_span(message: Any) -> Any:
    """The span the handoff in a kept message names (metadata.handoff.span), or None; a
    peer's reply, so each level may be anything."""
    for key in ("metadata", "handoff", "span"):
        message = message.get(key) if isinstance(message, dict) else None
    return message
