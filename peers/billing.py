"""billing-agent: the peer the support agent trusts. It issues refunds for orders.

Essay: The Agent Card (its card, printed field by field) and Delegation over JSON-RPC
(`process_refund` on ORD-3300 for 180.0). Owned, in the story, by another team: the
support agent cannot import this module, only fetch its card and send it frames.
The payload is typed (seed 000's Handoff Contract): `REFUND_INPUT` says a refund names
exactly an order id and a positive amount in whole cents; the peer core checks it before
any task exists and answers -32602 naming the field. 1.0 and 0.3 cards publish it.
"""
from __future__ import annotations

import json
import time

from peers.card_files import load_card
from peers.pause import NeedsApproval, NeedsCredential, Refusal, SkillFailed
from peers.peer import Peer, Skill
from peers.stamps import utc_now
from transports.codec import loads_strict
from transports.jsonrpc import InvalidParams

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable

BASE_URL = "https://billing.acme.example"
APPROVAL_LIMIT = 5_000.0  # above this, a refund is a person's decision, not an agent's
EXTENDED_NOTE = (f" For authenticated callers: a refund above ${APPROVAL_LIMIT:,.0f} waits for a "
                 "person's approval; a refund's reference is BILL-<order>; an order is refunded once.")
STEP_UP_SCOPE = "refunds:large"  # what a step-up token grants (billing_agent(step_up_above=...))
# Billing's own record of what each order was charged, for the runs that ask for it
# (`billing_agent(orders=ORDER_BOOK)`); the essay's run and a served peer take any order.
ORDER_BOOK = {"ORD-3300": 180.0, "ORD-4100": 6200.0, "ORD-4200": 2400.0, "ORD-5100": 75.0,
              "ORD-6200": 180.0, "ORD-42": 42.0, "ORD-77": 6000.0}

REFUND_INPUT = {
    "type": "object",
    "properties": {
        "order_id": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"},
        # No order is worth more than a million; anything above is a typo or an attack.
        "amount": {"type": "number", "exclusiveMinimum": 0, "maximum": 1_000_000, "multipleOf": 0.01},
    },
    "required": ["order_id", "amount"],
    "additionalProperties": False,
}


# Seed 000: "a typed result with explicit success and failure variants", published on the
# card (peers/a2a/wire_card.py) so a caller knows every ending before it sends anything.
REFUND_RESULTS = {
    "completed": "the refund was issued; the artifact names its reference (BILL-<order>)",
    "failed": "nothing was refunded (an unknown order); the status data says retrySafe and effectsLanded",
    "rejected": "refused before any effect: more than the order was charged, or outside the handoff's grant; "
                "the status data's needsEvidence names a claim to observe again, when a fresh one would settle it",
    "input-required": "above the approval limit: the status data names the exact proposal a person approves",
    "auth-required": "above the step-up limit: the status data names the bearer scope to continue with",
    "canceled": "withdrawn by its caller while it waited; nothing was refunded",
}


def refund_from_text(text: str) -> dict[str, Any]:
    """A refund from plain text, for clients that send only text parts. A text that is a
    JSON object is read as the data part it stands for ({"order_id": ..., "amount": ...},
    checked against REFUND_INPUT like one), as the official Python SDK's server reads it:
    a client that passes its caller's input on as one text part (seed 000's RemoteA2AAgent)
    sends the order that way. The codec is the strict, bounded one every frame passes."""
    if text.lstrip().startswith("{"):
        try:
            value = loads_strict(text.encode())
        except ValueError as exc:
            raise InvalidParams(f"the text part starts as a JSON object but is not one ({exc})") from None
        if isinstance(value, dict):
            return value
    from peers.contracts.refund_text import read_refund  # here: the essay's run sends data, never prose
    refund = read_refund(text)
    if len(refund) != 2:
        raise InvalidParams("say exactly one order id (like ORD-3300) and one amount "
                            "(like $180.00), or send {order_id, amount} as a data part or JSON text")
    return refund


# Written as an order id is (letters, a dash, digits), but a standard's name: in prose, no order.
STANDARDS = frozenset({"UTF", "ISO", "RFC", "SHA", "HTTP", "TLS", "SSL", "UTC", "GMT", "IEEE", "ECMA", "CVE", "PEP"})


def orders_named(text: str, refund: dict[str, Any]) -> set[str]:
    """The refunds a text beside a data part names: one for each order id in it (INV-7 beside
    ORD-1 too: any may be an order), but a standard's name (UTF-8, ISO-8601) unless the data's
    own orders are spelled so."""
    from peers.contracts.refund_text import ORDER_ID  # here: only a text beside data asks
    own = str(refund["order_id"]).partition("-")[0]
    return {refunded_order({"order_id": order}) for order in ORDER_ID.findall(text)
            if order.partition("-")[0] not in STANDARDS or order.partition("-")[0] == own}


def refunded_order(refund: dict[str, Any]) -> str:
    """What makes two refund requests the same refund: the order. An order is refunded
    once, however often, by whichever wire, under whatever messageId it is asked for."""
    return f"refund of {refund['order_id']}"


def within_handoff(refund: dict[str, Any], metadata: dict[str, Any],
                   receiver: str = "billing-agent") -> str | Refusal | None:
    """Seed 004: "permitted actions, with limits and an expiry", checked before any effect,
    and, for a transfer, that it is one `receiver` (this peer's name) may take on.
    A message with no envelope is the essay's plain delegation: the token alone admits it."""
    if "handoff" not in metadata:
        return None
    from peers.contracts import handoff, transfer  # here: the essay's run carries no envelope, and starts faster
    envelope = handoff.read(metadata["handoff"])  # an unsupported version or a bad field: -32602
    outside = (handoff.refusal(envelope, "refund", float(refund["amount"]), "USD", utc_now())
               or transfer.refusal(envelope.transfer, receiver))  # a tool call in a handoff's clothes ...
    if outside:  # the grant: hops, expiry, action, amount
        return outside
    return unbacked(envelope.evidence, refund["order_id"], float(refund["amount"]))  # the facts


def unbacked(claims: tuple[Any, ...], order: str, amount: float) -> str | Refusal | None:
    """Seed 004: act on facts, refreshed; "a guess" is never "promoted to a fact". A handoff
    with evidence is acted on only if an observed claim of what the order was charged,
    retrieved within evidence.MAX_AGE_SECONDS, covers the refund. (No evidence: the token decides.)
    `claims`: evidence.Claim, as the envelope carries them. Where a fresh observation would
    settle it, the refusal says so as data (`needsEvidence`: the claim to observe again), so
    the caller can refresh it and hand off again; where observed facts disagree or fall
    short, it does not: that is for a person."""
    from peers.contracts import evidence
    if not claims:
        return None
    about = [claim for claim in claims if claim.claim == "charged" and claim.subject == order]
    observed = [claim for claim in about if claim.klass == "observed"]
    fresh = [claim for claim in observed if claim.is_fresh()]
    needed = {"needsEvidence": {"claim": "charged", "subject": order, "klass": "observed",
                                "maxAgeSeconds": evidence.MAX_AGE_SECONDS}}
    if not about:
        return Refusal(f"the handoff's evidence says nothing of what {order} was charged; nothing was done", needed)
    if not observed:
        classes = " and ".join(sorted({claim.klass for claim in about}))
        return Refusal(f"what {order} was charged is only {classes} in the handoff's evidence; billing "
                       "refunds on observed facts, never on an inference; nothing was done", needed)
    if not fresh:
        return Refusal(f"the observed charge of {order} was retrieved at {max(c.retrieved_at for c in observed)}, "
                       f"not within the last {evidence.MAX_AGE_SECONDS // 60} minutes (or in the future): refresh "
                       "it, then hand off again; nothing was done", needed)
    charges = sorted({claim.value for claim in fresh})
    if len(charges) > 1:  # two systems of record disagree: not billing's to pick one
        amounts = ", ".join(f"${charge:,.2f}" for charge in charges)
        return f"the observed claims of what {order} was charged disagree ({amounts}); nothing was done"
    if amount > charges[0]:
        return f"the observed charge of {order} is ${charges[0]:,.2f}, less than ${amount:,.2f}; nothing was done"
    return None


def refunds(orders: dict[str, float] | None, slow: float = 0.0,
            step_up_above: float | None = None, approver: Any = None) -> Callable[[dict[str, Any]], str]:
    """The refund skill, over billing's own record of what each order was charged (None:
    no record, so any order is refunded: the peer as a test double); `slow`: seconds
    each refund takes; `step_up_above`: above this, a refund also needs a step-up token;
    `approver`: the public key whose signature an approval must carry, and the endpoint it
    must be addressed to (None: the bare proposal, sent back, approves it, and the reason a
    task pauses with says so)."""
    def process_refund(refund: dict[str, Any]) -> str:
        """Issue the refund; the reference is derived from the order, so a retry is
        recognisable. Above the approval limit nothing is issued: a person must approve."""
        order, amount = refund["order_id"], float(refund["amount"])
        if slow:
            time.sleep(slow)
        if orders is not None and order not in orders:  # looked up before anything is done
            raise SkillFailed(f"billing has no order {order}; nothing was refunded", retry_safe=True)
        def issue() -> str:
            return f"refund of ${amount:,.2f} issued for {order} (ref BILL-{order})"

        def proven() -> str:  # above the step-up limit, more proof first (not a person)
            if step_up_above is None or amount <= step_up_above:
                return issue()
            raise NeedsCredential(f"a refund of ${amount:,.2f} is above ${step_up_above:,.2f}: send "
                                  f"the next turn of this task with a bearer token for scope "
                                  f"{STEP_UP_SCOPE!r}; nothing was issued", STEP_UP_SCOPE, then=issue)
        if amount > APPROVAL_LIMIT:  # the exact effect a person is asked to approve; then the proof
            proposal = {"order_id": order, "amount": amount, "currency": "USD"}
            signed = (", signed by the approver key billing pins (an RS256 JWS over {approval, audience, taskId} "
                      'as \"signature\")') if approver is not None else ""
            raise NeedsApproval(f"approval required: a refund of ${amount:,.2f} for {order} is "
                                f"above the ${APPROVAL_LIMIT:,.2f} limit for automatic refunds; "
                                "nothing was issued. To approve, continue this task with the data "
                                f"part {json.dumps({'approval': proposal})}{signed}", proposal, then=proven,
                                approver=approver)
        return proven()
    return process_refund


if TYPE_CHECKING:
    Admit = Callable[[dict[str, Any], dict[str, Any]], str | Refusal | None]  # Skill.admit's shape


def admission(orders: dict[str, float] | None, disputed: dict[str, str] | None = None,
              receiver: str = "billing-agent") -> Admit:
    """Why a refund is not billing's to make, before any effect: outside the handoff's grant
    (first, so a chain at its hop limit stops here), more than the order was charged, or
    an order under dispute (`disputed`: order -> the agent that decides it), referred there."""
    def admit(refund: dict[str, Any], metadata: dict[str, Any]) -> str | Refusal | None:
        order, amount = refund["order_id"], float(refund["amount"])
        outside = within_handoff(refund, metadata, receiver)
        if outside:
            return outside
        charged = (orders or {}).get(order)
        if charged is not None and amount > charged:
            return (f"{order} was charged ${charged:,.2f}; a refund of ${amount:,.2f} is more than that; "
                    "nothing was done")
        desk = (disputed or {}).get(order)
        if desk is not None:
            return Refusal(f"{order} has an open dispute: {desk} decides it before any refund; "
                           "nothing was done", {"referTo": desk})
        return None
    return admit


def billing_agent(base_url: str | None = None, *, orders: dict[str, float] | None = None,
                  slow: float = 0.0, step_up_above: float | None = None,
                  disputed: dict[str, str] | None = None, approver: Any = None, **options: Any) -> Peer:
    """billing-agent with the card in peers/cards/billing-agent.json (moved under `base_url`
    if given). `options` go to Peer: task ids, clock, store size. It runs the skills it
    knows that its card offers; it checks a refund's input against REFUND_INPUT, and,
    given `orders` (order id -> what it was charged), each refund against its order;
    given `approver` (an rs256.PublicKey it pins), an approval must carry its signature."""
    card = load_card("billing-agent", base_url)
    # Billing streams its tasks on 0.3 and 1.0 (the essay's wire cannot: its card says false).
    card = card._replace(streaming=True, skills=tuple(skill._replace(input_schema=REFUND_INPUT, results=REFUND_RESULTS)
                                      if skill.id == "process_refund" else skill for skill in card.skills))
    pinned = None if approver is None else (approver, card.url)  # an approval names the agent it is for
    skills = [Skill(skill, refunds(orders, slow, step_up_above, pinned), refund_from_text, effect_of=refunded_order,
                    admit=admission(orders, disputed, card.name), mentions=orders_named)
              for skill in card.skills if skill.id == "process_refund"]
    card = card._replace(extended_card=True, push_notifications=True)
    # What billing tells a caller who proved who it is (its token), and nobody else.
    extended = card._replace(description=card.description + EXTENDED_NOTE)
    return Peer(card, skills, extended_card=extended, **options)
