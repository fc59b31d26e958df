"""The demo peers' Agent Cards, as JSON files a learner can open and edit: peers/cards/.

Each file is in the essay's card format, the one the default run prints, plus what only
the 0.3 and 1.0 cards carry (A2A 1.0 section 4.4): each skill's `name`, `tags`,
`examples` and `securityRequirements` (1.0's shape; 0.3 says `security`), the card's
`provider` {organization, url}, `documentationUrl`, `iconUrl`, and its interface's
`tenant` (1.0). A skill's `inputModes` and `outputModes` are what it takes and answers on
A2A's wires; the essay's card states its own wire's (wire_essay.py). Editing a file
changes the run: add a skill, change the auth scheme, move the endpoint (the trust gate
then refuses billing: it was vetted at the old one). A mistake in a file is one line
naming the file and each field that is wrong. A peer served somewhere else than the
essay's address (`serve --port`, `--url`) keeps the file's path under its real base URL.
"""
from __future__ import annotations

import os

from peers.a2a import wire_essay
from peers.a2a.fields import WireError, url
from peers.a2a.model import AgentCard, AgentProvider
from peers.a2a.schema import problems
from peers.tenants import refused
from transports.base import parse_url
from transports.json_file import JsonFileError, load_json_file

CARDS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cards")
MAX_CARD_CHARS = 64 * 1024
_LINE, _ADDRESS = {"type": "string", "maxLength": 1000}, {"type": "string", "minLength": 1, "maxLength": 2000}
# What a file may say beyond the essay's format, each field as the 0.3 and 1.0 cards carry it
# (A2A 1.0 section 4.4: AgentProvider, AgentSkill; the interface's tenant): checked here, so a
# wrong type is the file's one line, never a served card that says something else.
EXTRAS_SCHEMA = {"type": "object", "properties": {
    "provider": {"type": "object", "required": ["organization", "url"], "additionalProperties": False,
                 "properties": {"organization": {"type": "string", "minLength": 1, "maxLength": 200},
                                "url": _ADDRESS}},
    "documentationUrl": _ADDRESS, "iconUrl": _ADDRESS,
    "tenant": {"type": "string", "minLength": 1, "maxLength": 200, "pattern": "^[A-Za-z0-9._~-]+$"},
    "skills": {"type": "array", "items": {"type": "object", "properties": {
        "name": _LINE, "tags": {"type": "array", "items": _LINE},
        "examples": {"type": "array", "items": _LINE},
        "securityRequirements": {"type": "array", "items": {
            "type": "object", "required": ["schemes"], "additionalProperties": False,
            "properties": {"schemes": {"type": "object"}}}}}}}}}


class CardFileError(ValueError):
    """A card file cannot be used; the message is one line naming the file."""


def load_card(name: str, base_url: str | None = None) -> AgentCard:
    """peers/cards/NAME.json as an AgentCard; its URL moved under `base_url` if given."""
    path = os.path.join(CARDS, f"{name}.json")
    try:
        document = load_json_file(path, MAX_CARD_CHARS)
    except JsonFileError as exc:  # said as every data file says it: file:line:column: why
        raise CardFileError(str(exc)) from None
    found = problems(document, wire_essay.CARD_SCHEMA, "card") or problems(document, EXTRAS_SCHEMA, "card")
    if found:
        raise CardFileError(f"{path}: " + "; ".join(found))
    try:
        card = wire_essay.card_from_wire(document)
    except WireError as exc:
        raise CardFileError(f"{path}: {exc}") from None
    try:
        named = [skill._replace(name=extra.get("name", ""), tags=tuple(extra.get("tags", ())),
                                examples=tuple(extra.get("examples", ())),
                                security_requirements=_requirements(extra, f"skills[{index}]."))
                 for index, (skill, extra) in enumerate(zip(card.skills, document["skills"]))]
        card = card._replace(skills=tuple(named), **_about(document))
    except WireError as exc:
        raise CardFileError(f"{path}: {exc}") from None
    if base_url is not None:
        card = card._replace(url=base_url.rstrip("/") + parse_url(card.url).path)
    return card


def _about(document: dict) -> dict:
    """The file's provider, documentationUrl, iconUrl and tenant, as AgentCard's fields."""
    provider = document.get("provider")
    about = {"provider": provider and AgentProvider(provider["organization"], url(provider["url"], "provider.url")),
             "tenants": (document["tenant"],) if "tenant" in document else ()}
    why = refused(list(about["tenants"])) if about["tenants"] else None  # served as `serve --tenant` is
    if why:
        raise WireError(f"tenant: {why}")
    for key, name in (("documentationUrl", "documentation_url"), ("iconUrl", "icon_url")):
        about[name] = url(document[key], key) if key in document else ""
    return about


def _requirements(skill: dict, where: str) -> tuple[dict[str, tuple[str, ...]], ...]:
    """A skill's securityRequirements as 1.0 spells them: [{"schemes": {name: {"list": [scope]}}}]."""
    required = []
    for index, each in enumerate(skill.get("securityRequirements", ())):
        at = f"{where}securityRequirements[{index}].schemes"
        if not 1 <= len(each["schemes"]) <= 20:
            raise WireError(f"{at} must name 1 to 20 schemes")
        schemes = {}
        for name, scopes in each["schemes"].items():
            listed = scopes.get("list") if isinstance(scopes, dict) else None
            if not 1 <= len(name) <= 100 or not isinstance(listed, list) or len(listed) > 50 \
                    or not all(isinstance(scope, str) and len(scope) <= 200 for scope in listed):
                raise WireError(f"{at}.{name[:40]} must be {{\"list\": [scope, ...]}} (at most 50 scopes of text)")
            schemes[name] = tuple(listed)
        required.append(schemes)
    return tuple(required)
