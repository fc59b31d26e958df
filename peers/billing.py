"""billing-agent: the peer the support agent trusts. It issues refunds for orders.

Essay: The Agent Card (its card, printed field by field) and Delegation over JSON-RPC
(`process_refund` on ORD-3300 for 180.0). Owned, in the story, by another team: the
support agent cannot import this module, only fetch its card and send it frames.
The payload is typed (seed 000's Handoff Contract): a refund names exactly an order id
and a positive amount in dollars and cents, or it is refused with -32602 before any task
exists.
"""
from __future__ import annotations

import math
import re
from typing import Any, NamedTuple

from peers.model import AgentCard, AgentSkill
from peers.peer import NeedsApproval, Peer, Skill, require_fields
from peers.schema import REFUND_INPUT
from transports.jsonrpc import InvalidParams

BASE_URL = "https://billing.acme.example"
ORDER_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
MAX_REFUND = 1_000_000.0  # no order is worth more; anything above is a typo or an attack
APPROVAL_LIMIT = 5_000.0  # above this, a refund is a person's decision, not an agent's


class RefundRequest(NamedTuple):
    order_id: str
    amount: float

    @classmethod
    def from_input(cls, payload: Any) -> "RefundRequest":
        require_fields(payload, {"order_id": str, "amount": (int, float)})
        order_id, amount = payload["order_id"], float(payload["amount"])
        if not ORDER_ID.fullmatch(order_id):
            raise InvalidParams("field 'order_id' must be 1-64 letters, digits, '-' or '_'")
        if not 0 < amount <= MAX_REFUND:
            raise InvalidParams(f"field 'amount' must be more than 0 and at most {MAX_REFUND:,.0f}")
        if not math.isclose(amount * 100, round(amount * 100), abs_tol=1e-6):
            raise InvalidParams("field 'amount' must be whole cents")
        return cls(order_id, amount)


TEXT_ORDER = re.compile(r"\b([A-Z]{2,10}-\d{1,20})\b")
TEXT_AMOUNT = re.compile(r"\$\s?(\d{1,7}(?:,\d{3})*(?:\.\d{1,2})?)")


def refund_from_text(text: str) -> dict[str, Any]:
    """Read a refund from plain text ("Please refund $180 on order ORD-3300"), for clients
    that send only text parts, as seed 000's does. Exactly one order id and one amount."""
    orders, amounts = TEXT_ORDER.findall(text), TEXT_AMOUNT.findall(text)
    if len(orders) != 1 or len(amounts) != 1:
        raise InvalidParams("say exactly one order id (like ORD-3300) and one amount "
                            "(like $180.00), or send a data part {order_id, amount}")
    return {"order_id": orders[0], "amount": float(amounts[0].replace(",", ""))}


def process_refund(refund: RefundRequest) -> str:
    """Issue the refund. The reference is derived from the order, so a retry is recognisable.
    Above the approval limit nothing is issued: the task asks for a person's approval."""
    if refund.amount > APPROVAL_LIMIT:
        raise NeedsApproval(f"approval required: a refund of ${refund.amount:,.2f} for "
                            f"{refund.order_id} is above the ${APPROVAL_LIMIT:,.2f} limit "
                            "for automatic refunds; nothing was issued")
    return (f"refund of ${refund.amount:,.2f} issued for {refund.order_id} "
            f"(ref BILL-{refund.order_id})")


def billing_agent(base_url: str = BASE_URL, **options: Any) -> Peer:
    """billing-agent at `base_url`; `options` go to Peer (task ids, clock, store size)."""
    card = AgentCard(
        name="billing-agent",
        description="Issues refunds and credits for orders.",
        url=f"{base_url}/a2a",
        version="1.0.0",
        skills=(AgentSkill("process_refund", "Issue a refund for an order",
                           name="Process refund", tags=("billing", "refunds"),
                           input_schema=REFUND_INPUT),),
        streaming=False,
        auth_schemes=("bearer",),
    )
    skill = Skill(card.skills[0], RefundRequest.from_input, process_refund, refund_from_text)
    return Peer(card, [skill], **options)
