"""A lesson's frames in brief (--frames summary): a fetched card as one line, a changed card as a diff.

A card is most of a lesson's output when printed whole (a 1.0 card is about a hundred
lines), and a learner at a lesson's point needs the decision, not the card. So in a lesson
the printer shows a fetched Agent Card as one line: its name, its own description (what a
model reads), where its frames go (each interface's binding and version), its skills, the
auth it declares, and whether it carries a signature; whether that signature holds, and
whether the endpoint is the allowlisted one, is the trust gate's to say on the lines after.
A card that claims to be one fetched earlier in the run (the same name and the same
endpoint) but differs from it, as a card altered on its way to us does, is shown with the
fields that changed, each `path: before -> after`; the same bytes fetched from somewhere
else are said to be the same. Any other JSON document fetched (an OpenID configuration)
is its first few top-level fields.

This makes the text of a frame line, never prints one: it is the printer's `summarize` hook
(transports/printer.py, still the only code that prints frames). The essay's run, `--frames
full` and `--verbose` show every frame whole, and `--trace` records every frame whole
whatever is shown. All it reads came from a peer: it is decoded within the strict codec's
limits, every value is shown as JSON (a newline in a card is `\\n`, never a line of ours)
and clipped, and secrets were masked before the text reached it.
"""
from __future__ import annotations

import base64
import json

from transports.codec import loads_strict
from transports.escaping import escape
from transports.printer import Frame

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

WHOLE = "(--frames full shows it whole)"
CLIP = 100  # characters of one value shown
MAX_CHANGES = 8  # changed fields listed; past these, a count
MAX_LISTED = 5  # skills, schemes, endpoints, signatures named in a summary; past these, a count


class Summaries:
    """The printer's `summarize` hook for one run; it remembers each card it summarised,
    by name and endpoint, to show a later card claiming the same as what changed."""

    def __init__(self) -> None:
        self.seen: dict[tuple[str, str], tuple[str, str, dict[str, Any]]] = {}  # -> (url, text, card)

    def __call__(self, frame: Frame, text: str) -> str | None:
        """The line(s) shown for a fetched document (its text masked already), or None to show it whole."""
        try:
            document = loads_strict(text)
        except ValueError:
            return None  # not JSON we can read: shown as it came, which is the point then
        if not isinstance(document, dict):
            return None
        if not is_card(document):
            return document_line(document)
        line = f"card {card_line(document)} {WHOLE}"
        url, earlier_text, earlier = self.seen.setdefault((str(document["name"]), endpoint(document)),
                                                         (frame.url, text, document))
        if earlier_text == text:
            return line if url == frame.url else f"{line}\n    the same bytes as the card fetched from {_word(url, 200)}"
        return "\n".join([line, f"    changed from the card of that name and endpoint fetched earlier from {_word(url, 200)}:",
                          *changes(earlier, document)])


def is_card(document: dict[str, Any]) -> bool:
    """Whether a document reads as an Agent Card: a name and a list of skills."""
    return isinstance(document.get("name"), str) and isinstance(document.get("skills"), list)


def card_line(card: dict[str, Any]) -> str:
    """One line: name, description, endpoints with their bindings, skills, auth, signature."""
    endpoints = [f"{_word(url, 200)}{f' ({spoken})' if spoken else ''}" for url, spoken in interfaces(card).items()]
    skills, auth = [_word(skill.get("id")) for skill in card["skills"] if isinstance(skill, dict)], declared_auth(card)
    parts = [_value(card["name"]), _value(card.get("description", ""), 240),  # what a model reads of it
             f"at {_some(endpoints, '; ')}", f"skills [{_some(skills)}]",  # none declared: not `auth []` beside auth=['none']
             f"auth [{_some([_word(name) for name in auth])}]" if auth else "no auth declared", signature_state(card)]
    return ", ".join(parts)


def _some(items: list[str], joiner: str = ", ") -> str:
    """The first few of a list a peer made as long as it liked, and how many more."""
    more = f"{joiner}and {len(items) - MAX_LISTED} more" if len(items) > MAX_LISTED else ""
    return joiner.join(items[:MAX_LISTED]) + more


def interfaces(card: dict[str, Any]) -> dict[str, str]:
    """URL -> the bindings and versions offered there: a 1.0 card's supportedInterfaces, or an
    older card's url (with its preferredTransport and protocolVersion) and additionalInterfaces."""
    listed = card.get("supportedInterfaces")
    if not isinstance(listed, list):
        listed = [{"url": card.get("url"), "protocolBinding": card.get("preferredTransport"),
                   "protocolVersion": card.get("protocolVersion")}]
        extra = card.get("additionalInterfaces")
        listed += [{"url": entry.get("url"), "protocolBinding": entry.get("transport")}
                   for entry in (extra if isinstance(extra, list) else []) if isinstance(entry, dict)]
    offered: dict[str, list[str]] = {}
    for entry in listed:
        if isinstance(entry, dict):
            spoken = " ".join(_word(entry[key]) for key in ("protocolBinding", "protocolVersion") if entry.get(key))
            offered.setdefault(str(entry.get("url")), []).extend([spoken] if spoken else [])
    return {url: ", ".join(dict.fromkeys(spoken)) for url, spoken in offered.items()}


def endpoint(card: dict[str, Any]) -> str:
    """Where a card sends frames first: the key a card is remembered by, with its name."""
    return next(iter(interfaces(card)), "")


def declared_auth(card: dict[str, Any]) -> list[Any]:
    """The security schemes a card declares, by name (0.3 and 1.0), or the essay's `authentication.schemes`."""
    schemes = card.get("securitySchemes")
    if isinstance(schemes, dict):
        return list(schemes)
    essay = card.get("authentication")
    named = essay.get("schemes") if isinstance(essay, dict) else None
    return named if isinstance(named, list) else []


def signature_state(card: dict[str, Any]) -> str:
    """Whether a card carries signatures, and by which key id each says it was made (its
    protected header's kid): what it claims, not whether it holds."""
    signatures = card.get("signatures")
    if not isinstance(signatures, list) or not signatures:
        return "no signature"
    kids = [_kid(entry.get("protected")) if isinstance(entry, dict) else "?" for entry in signatures]
    return f"{'a signature' if len(kids) == 1 else f'{len(kids)} signatures'} naming kid {_some(kids)}"


def _kid(protected: Any) -> str:
    header = _header(protected)
    kid = header.get("kid") if isinstance(header, dict) else None
    return _word(kid, 12) if kid else "none"


def _header(protected: Any) -> Any:
    """A JWS protected header, decoded (a signature's kid is in it); what it was if it is not one."""
    try:
        return loads_strict(base64.urlsafe_b64decode(str(protected) + "=" * (-len(str(protected)) % 4)))
    except ValueError:  # binascii.Error is one
        return protected


def changes(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """The fields that differ between two documents, one indented line each, by JSON path:
    a field added or removed whole is one line, however much it holds."""
    lines = [f"    {line}" for line in _differences(_readable(before), _readable(after), "")]
    if len(lines) > MAX_CHANGES:
        lines[MAX_CHANGES:] = [f"    and {len(lines) - MAX_CHANGES} more changed fields {WHOLE}"]
    return lines


def _differences(old: Any, new: Any, path: str) -> list[str]:
    if isinstance(old, dict) and isinstance(new, dict):
        found = []
        for key in dict.fromkeys([*old, *new]):
            inner = f"{path}.{_word(key, 60)}" if path else _word(key, 60)
            if key not in new:
                found.append(f"{inner}: removed (was {_value(old[key])})")
            elif key not in old:
                found.append(f"{inner}: added {_value(new[key])}")
            else:
                found += _differences(old[key], new[key], inner)
        return found
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [line for index, pair in enumerate(zip(old, new)) for line in _differences(*pair, f"{path}[{index}]")]
    same = old == new and type(old) is type(new)
    return [] if same else [f"{path or '(the document)'}: {_value(old)} -> {_value(new)}"]


def _readable(card: dict[str, Any]) -> dict[str, Any]:
    """A card as its changes are best read: each signature's protected header decoded (the kid
    it names is in it) and its signature's opaque bytes shortened."""
    signatures = card.get("signatures")
    if not isinstance(signatures, list):
        return card
    return {**card, "signatures": [
        {**entry, "protected": _header(entry.get("protected")), "signature": _word(entry.get("signature"), 16)}
        if isinstance(entry, dict) else entry for entry in signatures]}


def document_line(document: dict[str, Any]) -> str:
    """Another JSON document fetched (an OpenID configuration): its first scalar fields."""
    shown = [f"{_word(key, 60)} {_value(value)}" for key, value in document.items()
             if isinstance(value, (str, int, float, bool))][:3]
    more = len(document) - len(shown)
    return f"a JSON document: {', '.join(shown) or 'no plain fields'}{f', and {more} more fields' if more else ''} {WHOLE}"


def _value(value: Any, limit: int = CLIP) -> str:
    """A peer's value as JSON on one line (a newline in it stays `\\n`), clipped."""
    text = json.dumps(value, ensure_ascii=False)
    return escape(text if len(text) <= limit else text[:limit] + "...")


def _word(value: Any, limit: int = 40) -> str:
    """A peer's name or URL as it reads, every invisible character made visible, clipped."""
    text = escape(str(value))
    return text if len(text) <= limit else text[:limit] + "..."
