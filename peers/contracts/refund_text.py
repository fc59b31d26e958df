"""Reading a refund out of a customer's words: "Please refund $180 on order ORD-3300".

Not part of A2A. It is the demo's one rule for it, needed on both sides of the boundary:
billing reads text parts with it (clients that send only text, as seed 000's does, are
understood), and the support agent's offline stand-in model reads the customer's request
with it. It lives in the shared package so the rule exists once.
"""
from __future__ import annotations

import re

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

# [0-9], not \d: \d also matches other scripts' digits, which float() would then read. Each is
# read whole or not at all: ORD-3300-B is not ORD-3300, "$1 800" not $1, "$180k" not $180.
ORDER_ID = re.compile(r"(?<![\w-])[A-Z]{2,10}-[0-9]{1,20}(?![\w-])")  # ORD-3300
AMOUNT = re.compile(r"\$ ?([0-9]{1,7}(?:,[0-9]{3})*(?:\.[0-9]{1,2})?)(?![0-9]|,[0-9]|\.[0-9]|\s?[0-9]|\w)")  # $180, $6,000.50
FIELDS = ("order_id", "amount")  # what read_refund reads: what the customer names, which nobody else may change


def read_refund(text: str) -> dict[str, Any]:
    """{"order_id", "amount"} for what the text names exactly once; a field the text does
    not name, or names twice, is left out (so a schema check then says which is missing)."""
    refund: dict[str, Any] = {}
    orders, amounts = ORDER_ID.findall(text), AMOUNT.findall(text)
    if len(orders) == 1:
        refund["order_id"] = orders[0]
    if len(amounts) == 1:
        refund["amount"] = float(amounts[0].replace(",", ""))
    return refund
