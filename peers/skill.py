"""What a peer can do: its skills. A skill is the card's description of it, a function
from checked input to a result, and the hooks the peer core (peer.py) asks before it
runs: reading plain text, what makes two requests the same effect, and whether what
came with a request permits it. Seed 000's Handoff Contract is the card's part: a typed
input (checked before any task exists) and explicit result variants.
"""
from __future__ import annotations

import json
from typing import Any, Callable, NamedTuple

from peers.a2a.model import AgentSkill, Part
from peers.pause import Refusal


class Skill(NamedTuple):
    card: AgentSkill  # what the Agent Card advertises, input schema included
    run: Callable[[Any], str | tuple[Part, ...]]  # checked input -> the result; raises SkillFailed, Paused
    from_text: Callable[[str], Any] | None = None  # a plain-text request -> input, if it can
    # What makes two requests the same effect in the world (billing: the order refunded),
    # so that it happens once however often it is asked for; None: no effect to guard.
    effect_of: Callable[[Any], str] | None = None
    # Seed 004: whether what came with the request permits it (billing: the handoff
    # envelope's grant); a reason (or a Refusal, with data) makes a rejected task before
    # any effect; None admits it.
    admit: Callable[[Any, dict[str, Any]], str | Refusal | None] | None = None


def canonical(payload: Any) -> str:
    return json.dumps(payload, sort_keys=True)
