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
from typing import Any, Callable, NamedTuple

from peers.model import AgentCard, AgentSkill
from peers.peer import Peer, Skill, require_fields
from transports.jsonrpc import InvalidParams

BASE_URL = "https://billing.acme.example"
ORDER_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
MAX_REFUND = 1_000_000.0  # no order is worth more; anything above is a typo or an attack


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


def process_refund(refund: RefundRequest) -> str:
    """Issue the refund. The reference is derived from the order, so a retry is recognisable."""
    return (f"refund of ${refund.amount:,.2f} issued for {refund.order_id} "
            f"(ref BILL-{refund.order_id})")


def billing_agent(base_url: str = BASE_URL, *,
                  new_task_id: Callable[[], str] | None = None) -> Peer:
    card = AgentCard(
        name="billing-agent",
        description="Issues refunds and credits for orders.",
        url=f"{base_url}/a2a",
        version="1.0.0",
        skills=(AgentSkill("process_refund", "Issue a refund for an order",
                           name="Process refund", tags=("billing", "refunds")),),
        streaming=False,
        auth_schemes=("bearer",),
    )
    skill = Skill(card.skills[0], RefundRequest.from_input, process_refund)
    return Peer(card, [skill], new_task_id=new_task_id)
