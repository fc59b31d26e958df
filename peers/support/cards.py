"""What our side knows of a card that the card itself does not say.

Essay: "Discovering it, though, is not the same as trusting it." An AgentCard
(peers/a2a/model.py) is the peer's own words, the same object on both sides. Where we
fetched it, what its signatures cover, and the wire we will speak to its agent are our
facts about it (`FetchedCard`); whether we may send it a payload is our decision
(`refusal`). Neither belongs in the shared protocol: a peer never has them.
Not here: the allowlist's verdict (config.py, and the trust gate in the story).
"""
from __future__ import annotations

from typing import Any, NamedTuple

from peers.a2a.model import AgentCard, clip
from peers.a2a.schema import check
from peers.a2a.wire_format import WireFormat


class FetchedCard(NamedTuple):
    """A card as our side found it: the card, and our own facts about it."""

    card: AgentCard
    fetched_from: str | None  # the URL we fetched it from (the trust gate compares origins)
    signed: Any  # what its signatures cover, and them (peers/signing/card_signature.py); None: unsigned
    wire: WireFormat  # how we speak to its agent: the card's version, or --wire where it offers that too


def refusal(card: AgentCard, skill_id: str, payload: Any, *, holds_credential: bool,
            media_type: str = "application/json") -> str | None:
    """Why, by its own card, this agent cannot be sent `payload` for `skill_id`; None if it
    can. Essay: the card is "everything a caller needs to know to decide whether and how to
    talk to this agent": the skill, the modes, the input contract, the auth."""
    skill = next((s for s in card.skills if s.id == skill_id), None)
    if skill is None:
        return f"its card offers no {skill_id!r} skill (it offers {clip(card.skill_ids)})"
    if media_type not in skill.input_modes and "*/*" not in skill.input_modes:
        return f"its {skill_id!r} skill takes {clip(list(skill.input_modes))}, not {media_type}"
    problem = check(payload, skill.input_schema, "payload") if skill.input_schema else None
    if problem:  # seed 000: a payload that breaks the contract never leaves
        return f"the payload breaks its {skill_id!r} skill's input contract: {problem}"
    required = [scheme for scheme in card.auth_schemes if scheme != "none"]
    if required and not ("bearer" in required and holds_credential):
        return f"its card requires {clip(required)} and the support agent holds no credential for it"
    return None
