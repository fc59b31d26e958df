"""--scenario spoof: three copies of billing's card, served by hosts that are not billing.

A card is a public document: anyone can copy it, byte for byte, and serve it from a
host of their own (here look-alike domains a registry entry or a search result might
point at). Each copy is refused before any frame, by a different rule, and the output
says why the rule exists:
(a) the copy sends frames to the copier's endpoint: the allowlist pins billing's
    endpoint, not just its name, because names are free to copy;
(b) the copy keeps billing's endpoint but is altered (it promises that refunds of any
    size need no approval): a card is believed only from its own endpoint's origin,
    because only billing's host speaks for billing;
(c) billing's own signed card, replayed from another host: its signature is valid, yet
    it is refused by the same origin rule, because a signature proves who wrote a card,
    not who serves it or when (a replayed card may be one billing has since replaced).
The allowlist pins billing's key, as in --scenario signed-card.
"""
from __future__ import annotations

from typing import Any

from peers.a2a.model import AgentCard
from peers.a2a.wire_format import card_url
from peers.support.lessons.signed_card import REFUND, open_pinned
from peers.support.output import Kind

CASES = (
    ("https://billing-acme.example", "(a) a copy of billing's card that sends frames to its copier",
     "why the rule exists: names are free to copy, so the allowlist pins where frames go"),
    ("https://billing.acme-payments.example", "(b) a copy that keeps billing's endpoint, altered, served elsewhere",
     "why the rule exists: only billing's own host speaks for billing; anyone can serve words in its "
     "name from anywhere else"),
    ("https://acme-billing.example", "(c) billing's own signed card, replayed byte for byte from another host",
     "why the rule exists: a signature proves who wrote a card, not who serves it or when: a replayed "
     "card may be one billing has since replaced"),
)


def run(agent: Any, card_urls: list[str]) -> list[Any]:
    """Each copy, discovered and gated; none gets a frame."""
    card = open_pinned(agent, card_urls, "Spoofed cards: billing's card, served by hosts that are not billing.")
    if not isinstance(card, AgentCard):
        return card  # why it cannot go on, said already
    outcomes = []
    for host, about, why in CASES:
        agent.say()
        agent.say(f"[support] {about}, found at {host}:")
        found = agent.find(card_url(host))
        if isinstance(found, AgentCard):
            outcomes.append(agent.gate_then_delegate(found, "process_refund", REFUND))
            agent.say(f"[support] {why}", Kind.BANNER)
        else:
            outcomes.append(found)
    return outcomes
