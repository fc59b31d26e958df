"""--scenario spoof: three copies of billing's card, served by hosts that are not billing.

A card is a public document: anyone can copy it, byte for byte, and serve it from a
host of their own (here look-alike domains a registry entry or a search result might
point at). Each copy is refused before any frame of the delegation (only the card is
fetched), by a different rule, and the output says why the rule exists:
(a) the copy sends frames to the copier's endpoint: the allowlist pins billing's
    endpoint, not just its name, because names are free to copy;
(b) the copy keeps billing's endpoint but is altered (it promises that refunds of any
    size need no approval): a card is believed only from its own endpoint's origin,
    because only billing's host speaks for billing;
(c) billing's own signed card, replayed from another host: its signature is valid, yet
    it is refused by the same origin rule, because a signature proves who wrote a card,
    not who serves it or when (a replayed card may be one billing has since replaced).
The allowlist pins billing's key, as in --scenario signed-card. The lesson needs the
registry to list billing's card first, and the allowlist to vet billing at its own
endpoint; without them it says so and stops. Where this run's allowlist (or
--allow-untrusted) lets a copy through, or refuses it by another rule, it says so
instead of why the rule exists.
"""
from __future__ import annotations

from peers.a2a.model import AgentCard
from peers.a2a.wire_format import card_url
from peers.support.calling.config import same_endpoint
from peers.support.lessons import Lesson
from peers.support.lessons.signed_card import READS_WIRE, REFUND, open_pinned
from peers.support.output import Kind

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from peers.support.calling.story_steps import Steps
    from peers.support.calling.outcomes import Outcome

# Where the rogue serves each copy (trick 7), what the copy is, and why the rule that refuses it exists.
CASES = (
    ("https://billing-acme.example", "redirected", "(a) a copy of billing's card that sends frames to its copier",
     "why the rule exists: names are free to copy, so the allowlist pins where frames go"),
    ("https://billing.acme-payments.example", "altered", "(b) a copy that keeps billing's endpoint, altered, served elsewhere",
     "why the rule exists: only billing's own host speaks for billing; anyone can serve words in its "
     "name from anywhere else"),
    ("https://acme-billing.example", "replayed", "(c) billing's own signed card, replayed byte for byte from another host",
     "why the rule exists: a signature proves who wrote a card, not who serves it or when: a replayed "
     "card may be one billing has since replaced"),
)
LESSON = Lesson(
    about="billing's card copied to look-alike hosts: sending frames elsewhere, altered but naming "
          "billing's endpoint, and billing's own signed card replayed; each refused, saying why",
    teaches="essay: Discovery is not trust (a card is a public document: anyone can serve a copy)", order=20,
    flags={"--wire": "1.0"}, reads={"--wire": READS_WIRE},
    peers={"billing-agent": {"sign_card": True, "copied_to": {host: kind for host, kind, _, _ in CASES}}})


def run(story: Steps, card_urls: list[str], wire: str = "1.0") -> list[Outcome]:
    """Each copy, discovered and gated; none gets a frame."""
    opened = open_pinned(story, card_urls, "Spoofed cards: billing's card, served by hosts that are not billing. "
                         "A card is a public document: anyone can serve a copy.", wire)
    if isinstance(opened, list):
        return opened  # why it cannot go on, said already
    story, _ = opened
    outcomes = []
    for host, kind, about, why in CASES:
        story.say()
        story.say(f"[support] {about}, found at {host}:")
        found = story.find(card_url(host))
        if isinstance(found, AgentCard):
            outcomes.append(story.delegate(found, "process_refund", REFUND))
            if fired(story, found, outcomes[-1], kind):
                story.say(f"[support] {why}", Kind.BANNER)
            else:  # the learner's allowlist, or --allow-untrusted, decided it otherwise
                story.say("[support] this copy was not refused by the rule it is here to show: the [trust] line "
                          "above says what decided it", Kind.WARNING)
        else:
            outcomes.append(found)
    return outcomes


def fired(story: Steps, found: AgentCard, outcome: Outcome, kind: str) -> bool:
    """Whether the rule the copy is here to show refused it. A copy served elsewhere is always
    refused by the origin rule; a redirected one by where frames go only if the allowlist,
    which vets billing at its own endpoint (open_pinned), vets it at the copier's in no line."""
    allowlist, _ = story.holds()
    elsewhere = any(entry.name == found.name and same_endpoint(entry.endpoint, found.url) for entry in allowlist)
    return outcome.refused and (kind != "redirected" or not elsewhere)
