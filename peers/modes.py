"""What a skill answers in, against what a caller takes: SendMessage's acceptedOutputModes.

Spec: A2A 1.0 section 3.2.1 (SendMessageConfiguration.acceptedOutputModes: "the media
types the client is prepared to accept"), 3.3.2 (ContentTypeNotSupportedError: a media
type "implied for an artifact" the skill does not support) and a2a.proto's AgentSkill
(a skill's modes override the card's defaults). A skill answers in its own output modes,
which our 0.3 and 1.0 cards publish for each skill (from its card file), or, listing none,
in the card's defaults. A caller that takes none of them is refused before any task
exists, with -32005. Not here: reshaping an answer into another media type (a
skill answers as it does; this only refuses the caller it cannot answer at all).
"""
from __future__ import annotations

from peers.a2a.errors import ContentTypeNotSupported
from peers.a2a.model import DEFAULT_OUTPUT_MODES
from peers.peer import Peer
from peers.skill import within

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any


def refuse_unless_answerable(peer: Peer, message: Any, accepted: tuple[str, ...]) -> None:
    """Raise ContentTypeNotSupported if the skill `message` asks for answers in no media
    type of `accepted`. A message naming no skill the peer has is left to the peer, which
    says which skills it offers."""
    skill = peer.skills.get(message.skill_id or "")
    if skill is None and len(peer.skills) == 1 and message.skill_id is None:
        skill = next(iter(peer.skills.values()))
    if skill is None:
        return
    answers = skill.card.output_modes or DEFAULT_OUTPUT_MODES
    if not any(within(mode, wanted) for mode in answers for wanted in accepted):
        raise ContentTypeNotSupported(f"skill {skill.card.id[:60]!r} answers in {list(answers)}; the "
                                      f"acceptedOutputModes {[mode[:60] for mode in accepted[:10]]} "
                                      "take none of them")
