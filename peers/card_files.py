"""The demo peers' Agent Cards, as JSON files a learner can open and edit: peers/cards/.

Each file is in the essay's card format, the one the default run prints, plus each
skill's `name` and `tags`, which the 0.3 and 1.0 cards also carry. Editing a file
changes the run: add a skill, change the auth scheme, move the endpoint (the trust gate
then refuses billing: it was vetted at the old one). A mistake in a file is one line
naming the file and each field that is wrong. A peer served somewhere else than the
essay's address (`serve --port`, `--url`) keeps the file's path under its real base URL.
"""
from __future__ import annotations

import os

from peers.a2a import wire_essay
from peers.a2a.fields import WireError
from peers.a2a.model import AgentCard
from peers.a2a.schema import problems
from transports.base import parse_url
from transports.json_file import JsonFileError, load_json_file

CARDS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cards")
MAX_CARD_CHARS = 64 * 1024


class CardFileError(ValueError):
    """A card file cannot be used; the message is one line naming the file."""


def load_card(name: str, base_url: str | None = None) -> AgentCard:
    """peers/cards/NAME.json as an AgentCard; its URL moved under `base_url` if given."""
    path = os.path.join(CARDS, f"{name}.json")
    try:
        document = load_json_file(path, MAX_CARD_CHARS)
    except JsonFileError as exc:  # said as every data file says it: file:line:column: why
        raise CardFileError(str(exc)) from None
    found = problems(document, wire_essay.CARD_SCHEMA, "card")
    if found:
        raise CardFileError(f"{path}: " + "; ".join(found))
    try:
        card = wire_essay.card_from_wire(document)
    except WireError as exc:
        raise CardFileError(f"{path}: {exc}") from None
    named = [skill._replace(name=extra.get("name", ""), tags=tuple(extra.get("tags", ())))
             for skill, extra in zip(card.skills, document["skills"])]
    card = card._replace(skills=tuple(named))
    if base_url is not None:
        card = card._replace(url=base_url.rstrip("/") + parse_url(card.url).path)
    return card
