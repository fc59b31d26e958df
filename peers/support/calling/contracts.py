"""The support agent's own copy of the contracts it relies on (seed 000's typed payload).

Billing publishes its refund contract on its 1.0 and 0.3 cards (a JSON Schema, through a
card extension), and the support agent checks every payload against the card's schema
before sending it. The essay's card has no place for a schema, so for it the support
agent uses this copy, written from billing's published documentation: another team's
code is never imported. tests/test_contracts.py checks that the copy still agrees with
what billing's 1.0 card publishes.
"""
from __future__ import annotations

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

REFUND_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "order_id": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"},
        "amount": {"type": "number", "exclusiveMinimum": 0, "maximum": 1_000_000, "multipleOf": 0.01},
    },
    "required": ["order_id", "amount"],
    "additionalProperties": False,
}

CONTRACTS = {"process_refund": REFUND_INPUT}  # skill id -> the input it takes
