"""--scenario contract: the handoff's payload is typed, and checked on both sides.

Seed 000's Handoff Contract: "a typed payload (what's transferred)" and "a typed result
with explicit success and failure variants". Billing's 1.0 card publishes both for its
refund skill, as extensions declared in its capabilities, each with a URI that carries
its version: the input as JSON Schema, and the result variants (the task states the
skill ends in, and what each means). The support agent checks each payload against
the card's contract before sending: a missing field, a wrong type, an amount out of
range each stop it, naming the field path, and no frame leaves. Billing does not rely
on that: a client that skips the check gets -32602 naming the same field path, and no
task. Only the payload that meets the contract is delegated.
"""
from __future__ import annotations

from peers.a2a.model import AgentCard, Part
from peers.a2a.schema import INPUT_SCHEMA_EXTENSION, RESULTS_EXTENSION
from peers.support.calling.contracts import CONTRACTS
from peers.support.lessons import Lesson
from peers.support.calling.outcomes import Contact
from peers.support.lessons.turns import billing_first, send_turn, stop_short
from peers.support.output import Kind
from transports.errors import PeerError, RemoteError
from transports.escaping import escape

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from peers.support.calling.story_steps import Steps
    from peers.support.calling.outcomes import Outcome

BROKEN = [
    ("without an amount", {"order_id": "ORD-3300"}),
    ('with the amount as text, "180"', {"order_id": "ORD-3300", "amount": "180"}),
    ("for -$180.00", {"order_id": "ORD-3300", "amount": -180.0}),
]
VALID = {"order_id": "ORD-3300", "amount": 180.0}


LESSON = Lesson(
    about="billing's card publishes the refund's input schema and result variants; three broken payloads "
          "stop before any frame; billing checks again; the valid one is sent",
    teaches="seed 004: a return schema, and missing fields (seed 000: the Handoff Contract's typed payload)",
    order=60, flags={"--wire": "1.0"})  # the essay's card publishes no contract


def run(story: Steps, card_urls: list[str]) -> list[Outcome]:
    """The contract as the card publishes it, three payloads that break it, one that meets it."""
    # Not open_lesson: each handoff below passes the trust gate itself, as every delegation does
    story.say(f"[transport] {story.label}. The handoff contract: a typed payload, checked before "
              "sending and again on arrival.", Kind.BANNER)
    story.say()
    card = story.find(card_urls[0])
    if not isinstance(card, AgentCard):
        return [card]  # why it could not be had, said already
    billing_first(story, card)
    skill = next((s for s in card.skills if s.id == "process_refund"), None)
    published = skill.input_schema if skill else None
    schema = published if published is not None else CONTRACTS.get(skill.id) if skill else None  # else our copy
    if schema is None:
        stop_short(story.say, "[support] billing's card publishes no contract for process_refund: nothing to "
                   "check a payload against (the 1.0 and 0.3 cards carry it)")
    shape = f"fields {sorted(schema.get('properties', {}))}, required {schema.get('required', [])}"
    if published is None:  # the essay's card has no place for one
        story.say("[support] billing's card publishes no contract for process_refund (the essay's card has no place "
                  f"for one): the support agent checks against its own copy (peers/support/calling/contracts.py): {shape}")
    else:
        story.say(f"[support] billing's card publishes process_refund's input ({INPUT_SCHEMA_EXTENSION}): {shape}")
    whose = "the card's contract" if published is not None else "the support agent's copy of billing's contract"
    if skill.results:
        story.say(f"[support] and its result variants ({RESULTS_EXTENSION}): {', '.join(skill.results)}")
    for why, payload in BROKEN:
        story.say()
        story.say(f"[support] a refund {why}: checked against {whose} first")
        story.delegate(card, "process_refund", payload)  # refused before any frame
    story.say()
    story.say("[support] a client that skips that check, sending the refund without an amount: "
              "billing checks again")
    contact = story.gate(card)
    if not isinstance(contact, Contact):
        return [contact]  # the gate's refusal, said already
    careless = story.message(Part(data=BROKEN[0][1], media_type="application/json"),
                             metadata={"skillId": "process_refund"})
    try:
        send_turn(story, contact, careless)
        story.say("[support] billing accepted a payload that breaks its own contract", Kind.WARNING)
    except RemoteError as refused:
        story.say(f"[support] billing refused it, naming the field: {escape(str(refused))}", Kind.REFUSED)
    except PeerError as failure:
        return [story.failed(card.name, contact.verdict, f"delegation failed: {failure}; "
                             f"{failure.retry_advice()}", failure)]
    story.say()
    story.say("[support] the refund as the contract says: order_id and a positive amount")
    return [story.delegate(card, "process_refund", VALID)]
