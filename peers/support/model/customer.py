"""What the customer is told: what a trusted peer said, and never an UNTRUSTED result.

Essay: Discovery is not trust ("any output that did come from outside the allowlist is
tagged untrusted so a later step treats it as suspect rather than as fact"). Replying to
the customer is such a later step, and the one with a person at the end of it. A result
from a peer on the allowlist is reported as what that peer said, quoted. A result from a
peer the user opted in to (--allow-untrusted) is kept from the customer whole: not its
claims (a refund it says it issued is no refund until a system we trust says so), not
its instructions, not its bytes. The reply says that an unvetted service answered, that
its answer is unverified and not passed on, and that nothing is confirmed. Code writes
that reply, never a model: a model shown the untrusted text may repeat it as fact.

What the support agent's operator may see of an untrusted result is `fenced`: the same
labelled block a model is shown (peers/support/model/prompts.py), from which nothing can break
out. Not here: deciding trust (the story's gate) or drafting a trusted reply in prose
(peers/support/model/planner.py asks the model for that).
"""
from __future__ import annotations

import json

from peers.contracts.refund_text import ORDER_ID
from peers.support.model.prompts import fence

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

UNVERIFIED = ("We have not confirmed anything about {subject} yet: a service we have not vetted "
              "answered, and its answer is unverified, so we neither pass it on nor act on it. "
              "We will write again once a system we trust confirms it.")


def untrusted_reply(payload: dict[str, Any] | None = None) -> str:
    """The reply when the result came from outside the allowlist: made of our own words and
    our own request (`payload`: what we sent), nothing of what came back."""
    order = (payload or {}).get("order_id")
    named = isinstance(order, str) and ORDER_ID.fullmatch(order)  # an order id as we write them, or none
    return UNVERIFIED.format(subject=f"your refund for {order}" if named else "your request")


def trusted_reply(peer: str, result: str) -> str:
    """The reply when a peer on the allowlist completed the task: its words, quoted as its."""
    return f"About your request: {peer} (a service we trust) reports {json.dumps(result)}."


def fenced(peer: str, result: str) -> str:
    """An untrusted result as data, in the labelled block nothing inside can close early."""
    return fence(f"result returned by {peer}", result)
