"""What a peer can do: its skills. A skill is the card's description of it, a function
from checked input to a result, and the hooks the peer core (peer.py) asks before it
runs: reading plain text, what makes two requests the same effect, and whether what
came with a request permits it. Seed 000's Handoff Contract is the card's part: a typed
input (checked before any task exists) and explicit result variants. Here too: what a
message asks for, read and checked before any task (`read_request`).
"""

from __future__ import annotations

import json
from functools import partial

from peers.a2a.errors import ContentTypeNotSupported
from peers.a2a.model import DEFAULT_INPUT_MODES, AgentSkill, Artifact, Message, Part
from peers.a2a.schema import check, same_scalar, with_defaults
from peers.pause import Refusal
from peers.store import SORTED_JSON, content_of, refuse_if_too_big
from peers.tenants import in_tenant
from transports.jsonrpc import InvalidParams
from transports.records import Record

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable


class Result(Record):
    """What a skill may answer besides words or parts: its artifact with a name, description,
    metadata and extensions (the peer gives it its id), and its word on the task as a whole
    (Task.metadata). Either may be None: the spec's optional fields are then absent."""

    artifact: Artifact | None
    metadata: dict[str, Any] | None = None


class Skill(Record):
    card: AgentSkill  # what the Agent Card advertises, input schema included
    run: Callable[[Any], str | tuple[Part, ...] | Result]  # checked input -> the result; raises SkillFailed, Paused
    from_text: Callable[[str], Any] | None = None  # a plain-text request -> input, if it can
    # What makes two requests the same effect in the world (billing: the order refunded),
    # so that it happens once however often it is asked for; None: no effect to guard.
    effect_of: Callable[[Any], str] | None = None
    # Seed 004: whether what came with the request permits it (billing: the handoff
    # envelope's grant); a reason (or a Refusal, with data) makes a rejected task before
    # any effect; None admits it.
    admit: Callable[[Any, dict[str, Any]], str | Refusal | None] | None = None
    # The whole message -> input, for a skill whose input is the message itself (the
    # conformance kit's); None: a data part, or text read by `from_text`, as `input_of` does.
    read: Callable[[Message], Any] | None = None
    # The effects a text beside a data part names (billing: a refund of each order id in it),
    # given that part's input, so that one naming another is refused, not dropped; None: what `from_text` reads.
    mentions: Callable[[str, Any], set[str]] | None = None


def produced(result: "str | tuple[Part, ...] | Result", artifact_id: str) -> tuple[tuple[Artifact, ...], Any]:
    """A skill's result as the task's artifacts (no parts: none) and its metadata."""
    if isinstance(result, Result):
        artifact = result.artifact._replace(artifact_id=artifact_id) if result.artifact else None
        return ((artifact,) if artifact and artifact.parts else ()), result.metadata
    parts = (Part(text=result),) if isinstance(result, str) else tuple(result)  # words, or parts
    return ((Artifact(artifact_id, parts),) if parts else ()), None


class Request(Record):
    """What a message asks for, read and checked before any task exists."""

    skill: Skill
    payload: Any  # the skill's checked input
    effect: str | None  # the effect in the world it would have (billing: the order refunded), if any
    claim: str  # the checked input as canonical JSON: the same request, or another, for the ledger (`same_claim`)
    content: str  # the message as text (store.py: a resent copy, or a different message)
    admit: Callable[[], str | Refusal | None]  # the skill's admission check, judged again on a later turn


def canonical(payload: Any) -> str:
    # default=repr: a skill whose input is the whole message (conformance.py) may hold file bytes
    return SORTED_JSON(payload)


def same_claim(kept: str, claim: str) -> bool:
    """Whether a claim the ledger kept is `claim`: spelled alike (nearly always), or the same JSON once
    read, numbers by value: 180 and 180.0 are one JSON number (a JavaScript client re-encoding 180.0
    sends 180), true is no 1. Read only here, where a request meets an effect done: no request pays."""
    if kept == claim:
        return True
    try:
        return _alike(json.loads(kept), json.loads(claim))
    except (ValueError, RecursionError):  # not JSON: a claim of no request this one could be
        return False


def _alike(one: Any, other: Any) -> bool:
    if isinstance(one, dict) and isinstance(other, dict):
        return one.keys() == other.keys() and all(_alike(one[key], other[key]) for key in one)
    if isinstance(one, list) and isinstance(other, list):
        return len(one) == len(other) and all(map(_alike, one, other))
    return same_scalar(one, other)  # as an enum compares: true is not 1, 1 is 1.0


def read_request(skills: dict[str, Skill], message: Message, tenant: str = "") -> Request:
    """What a message asks for, before any task: its skill, its input (bad input fails
    here), the effect it would have (within the `tenant` it is asked under: each tenant's
    effects happen once each; peers/tenants.py), and whether what came with it permits it."""
    skill = skill_for(skills, message)
    refuse_unaccepted(skill, message)
    payload = input_of(skill, message)
    content = content_of(message)
    refuse_if_too_big(content)  # a request that cannot be kept does nothing
    admit = partial(skill.admit, payload, message.metadata or {}) if skill.admit else lambda: None
    return Request(skill, payload, in_tenant(tenant, skill.effect_of(payload)) if skill.effect_of else None,
                   canonical(payload), content, admit)


def skill_for(skills: dict[str, Skill], message: Message) -> Skill:
    """The skill a message names in metadata.skillId, or the only one there is."""
    skill_id = message.skill_id
    if skill_id is None and len(skills) == 1:
        skill_id = next(iter(skills))
    if skill_id is None:
        raise InvalidParams(f"name a skill in message.metadata.skillId: one of {sorted(skills)}")
    if skill_id not in skills:
        raise InvalidParams(f"unknown skill {skill_id[:60]!r}; this agent offers {sorted(skills)}")
    return skills[skill_id]


def input_of(skill: Skill, message: Message) -> Any:
    """The skill's checked input: a data part as it is, or text read by `from_text`."""
    if skill.read is not None:
        return skill.read(message)
    if any(p.raw is not None or p.url is not None for p in message.parts):
        raise ContentTypeNotSupported(f"skill {skill.card.id!r} takes data or text, not files")
    data = [p.data for p in message.parts if p.data is not None]
    if len(data) > 1:  # one request a message: a second would be dropped unseen
        raise InvalidParams(f"skill {skill.card.id!r} takes one data part a message; this one has {len(data)}: "
                            "send each request as a message of its own")
    if data:
        payload = data[0]
    elif skill.from_text is not None:
        payload = skill.from_text(message.text)
    else:
        raise InvalidParams(f"skill {skill.card.id!r} needs a data part")
    problem = check(payload, skill.card.input_schema) if skill.card.input_schema else None
    if problem:
        raise InvalidParams(problem)
    if data:
        _refuse_a_text_asking_otherwise(skill, message, payload)
    # Seed 000's contract, as Zod's .default: the receiver fills in a missing optional field.
    return with_defaults(payload, skill.card.input_schema) if skill.card.input_schema else payload


def _refuse_a_text_asking_otherwise(skill: Skill, message: Message, payload: Any) -> None:
    """A text beside the data part may say what the data is (prose). A text that names another
    effect (`mentions`: billing, another order id, with an amount or not), or else reads as a
    request with another effect (`from_text`), is refused, not dropped: the caller would think
    both were done. The data part is the request."""
    if skill.effect_of is None or not message.text.strip():
        return
    if skill.mentions is not None:  # every one the text names, a complete request or not
        other = sorted(skill.mentions(message.text, payload) - {skill.effect_of(payload)})
        if other:
            raise InvalidParams(f"the text part names the {other[0][:120]}, the data part asks for the "
                                f"{skill.effect_of(payload)[:120]}: send each request as a message of its own")
        return
    if skill.from_text is None:
        return
    try:
        said = skill.from_text(message.text)
    except InvalidParams:
        return
    if skill.card.input_schema and check(said, skill.card.input_schema):
        return  # not a request of this skill's
    if skill.effect_of(said) != skill.effect_of(payload):
        raise InvalidParams(f"the text part asks for the {skill.effect_of(said)[:120]}, the data part for the "
                            f"{skill.effect_of(payload)[:120]}: send each request as a message of its own")


def refuse_unaccepted(skill: Skill, message: Message) -> None:
    """ContentTypeNotSupported (-32005) for "a Media Type provided in the request's message
    parts" the skill does not take (spec 3.1.1): its inputModes, else the agent's defaults,
    `*/*` taking anything. A part that declares no mediaType is left to the skill."""
    modes = skill.card.input_modes or DEFAULT_INPUT_MODES
    for index, part in enumerate(message.parts):
        if part.media_type is not None and not any(within(part.media_type, mode) for mode in modes):
            raise ContentTypeNotSupported(f"message.parts[{index}] is {part.media_type[:60]!r}; skill "
                                          f"{skill.card.id[:60]!r} takes {[mode[:60] for mode in modes[:10]]}")


def within(mode: str, wanted: str) -> bool:
    """Whether media type `mode` is one that `wanted` names: itself, `type/*` or `*/*`
    (parameters such as `; charset=utf-8` aside, case aside)."""
    kind, asked = mode.split(";")[0].strip().lower(), wanted.split(";")[0].strip().lower()
    return asked in (kind, "*/*", kind.split("/")[0] + "/*")
