"""Cards in the wild: the security a 1.0 card declares, as SDKs really write it, read into
A2A 1.0's own form before the card is read.

Spec: A2A 1.0 section 4.5 and a2a.proto. A SecurityScheme is a oneof, so its JSON is one
wrapper key naming the kind (`{"httpAuthSecurityScheme": {"scheme": "Bearer"}}`); a
SecurityRequirement is `{"schemes": {name: {"list": [scope, ...]}}}`, in the card's
`securityRequirements`. Agents built with the official SDKs publish other spellings, each
a known dialect (`DIALECTS`, one row each: its name, what it is about, how it is
recognised, how it is rewritten). A dialect is read as 1.0 spells it, with one warning
line for the card naming each field and its dialect, and the run goes on; `--strict-cards`
refuses such a card instead (`Dialectal`, one line naming the first). A scheme of no shape
we know is named as such ("an unknown security scheme shape at securitySchemes.X") and read
as a scheme of no kind we know, which no credential of ours meets (credentials.py says so,
never that a credential is missing): another way in the card offers may still be taken.
Every value here is a peer's, so each is checked with isinstance before it is used.
Not here: reading the card (card_reading.py, wire_card.py); a 0.3 card, whose own form
is OpenAPI's.
"""

from __future__ import annotations

from peers.a2a.fields import WireError
from peers.a2a.security_schemes import WRAPPED
from peers.a2a.wire_card import security_from_wire
from peers.support.calling.cards import Unspeakable
from transports.escaping import escape
from transports.records import Record

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable

BY_TYPE = {kind: wrapper for wrapper, kind in WRAPPED.items()}  # OpenAPI's `type` -> 1.0's oneof field
SHOWN = 3  # fields a warning names; the rest are counted


class Dialectal(Unspeakable):
    """A card whose security is not in A2A 1.0's form (a dialect, or a shape we do not know),
    refused because --strict-cards asked for 1.0's own form: nothing was sent."""

    def retry_advice(self) -> str:
        return "nothing was sent; without --strict-cards the card is read as A2A 1.0 spells it"


class Dialect(Record):
    name: str  # as the warning names it: whose spelling, and where it is reported
    about: str  # "scheme": one entry of securitySchemes; "requirement": one of securityRequirements; "card"
    recognised: Callable[[Any], bool]
    rewritten: Callable[[Any], Any]  # the entry (for "card": its securityRequirements) as 1.0 spells it


def _inner(fields: dict[str, Any]) -> dict[str, Any]:
    """A scheme's own fields as 1.0 names them: OpenAPI's `in` is 1.0's `location`; a null is
    proto3 JSON's unset, so it is left out (a2a-java writes `"description": null`)."""
    return {("location" if key == "in" else key): value for key, value in fields.items()
            if value is not None and key != "type"}


def _oneof(value: Any) -> bool:  # {"scheme": {"$case": "httpAuthSecurityScheme", "value": {...}}}
    case = value.get("scheme") if isinstance(value, dict) and set(value) == {"scheme"} else None
    return isinstance(case, dict) and isinstance(case.get("$case"), str) and case["$case"] in WRAPPED \
        and isinstance(case.get("value"), dict)


def _typed(value: Any) -> bool:  # {"type": "http", "scheme": "bearer"}
    return isinstance(value, dict) and isinstance(value.get("type"), str) and value["type"] in BY_TYPE


def _unwrapped_kind(value: Any) -> str | None:
    """The one kind whose own fields an unwrapped scheme holds; None for none, or more than one."""
    if not isinstance(value, dict) or "type" in value:
        return None
    kinds = [wrapper for wrapper, fields in (
        ("openIdConnectSecurityScheme", isinstance(value.get("openIdConnectUrl"), str)),
        ("oauth2SecurityScheme", isinstance(value.get("flows"), dict)),
        ("httpAuthSecurityScheme", isinstance(value.get("scheme"), str)),
        ("apiKeySecurityScheme", isinstance(value.get("name"), str)
         and isinstance(value.get("location", value.get("in")), str))) if fields]
    return kinds[0] if len(kinds) == 1 else None


def _scopes(value: Any) -> dict[str, Any]:
    """A requirement's scheme -> scopes, each as 1.0's StringList ({"list": [...]})."""
    return {name: scopes if isinstance(scopes, dict) else {"list": scopes} for name, scopes in value.items()}


def _bare_lists(value: Any) -> bool:  # {"schemes": {"bearerAuth": []}}
    schemes = value.get("schemes") if isinstance(value, dict) and set(value) == {"schemes"} else None
    return isinstance(schemes, dict) and any(isinstance(scopes, list) for scopes in schemes.values()) \
        and all(isinstance(scopes, (list, dict)) for scopes in schemes.values())


def _unwrapped_requirement(value: Any) -> bool:  # {"oauth2": ["profile"]}: 0.3's shape, in 1.0's field
    return isinstance(value, dict) and bool(value) and not isinstance(value.get("schemes"), dict) \
        and all(isinstance(scopes, list) for scopes in value.values())


def _security_list(card: Any) -> bool:  # 0.3's `security`, where a 1.0 card says nothing of its own
    return isinstance(card.get("security"), list) and bool(card["security"]) and not card.get("securityRequirements")


DIALECTS = (
    Dialect("the JavaScript SDK's oneof form ({\"scheme\": {\"$case\", \"value\"}}, @a2a-js/sdk 1.3)", "scheme",
            _oneof, lambda value: {value["scheme"]["$case"]: _inner(value["scheme"]["value"])}),
    Dialect("OpenAPI's form ({\"type\": ...}, as 0.3 and a2a-java #1161 write it)", "scheme",
            _typed, lambda value: {BY_TYPE[value["type"]]: _inner(value)}),
    Dialect("a scheme without its oneof key (a2a-java #590)", "scheme",
            lambda value: _unwrapped_kind(value) is not None, lambda value: {_unwrapped_kind(value): _inner(value)}),
    Dialect("scopes as a bare list, not {\"list\": [...]} (a2a-java #1161)", "requirement",
            _bare_lists, lambda value: {"schemes": _scopes(value["schemes"])}),
    Dialect("a requirement without \"schemes\" (0.3's shape; a2a-java #667)", "requirement",
            _unwrapped_requirement, lambda value: {"schemes": _scopes(value)}),
    Dialect("0.3's `security` on a 1.0 card (the spec's own sample before A2A #2044)", "card",
            _security_list, lambda card: [{"schemes": _scopes(each)} if isinstance(each, dict) else each
                                          for each in card["security"]]),
)


def _spec_scheme(value: Any) -> bool:
    return isinstance(value, dict) and any(isinstance(value.get(wrapper), dict) for wrapper in WRAPPED)


def _spec_requirement(value: Any) -> bool:
    schemes = value.get("schemes", {}) if isinstance(value, dict) and set(value) <= {"schemes"} else None
    return isinstance(schemes, dict) and all(isinstance(scopes, dict) for scopes in schemes.values())


def _readable(scheme: Any) -> bool:
    """Whether a scheme rewritten from a dialect has what its kind needs (a Bearer scheme
    its `scheme`, an API key its `name` ...): else it is a shape we do not know, never read
    as a field the card does not have."""
    try:
        security_from_wire({"securitySchemes": {"scheme": scheme}}, "1.0")
    except WireError:
        return False
    return True


def _read(value: Any, about: str, spec: Callable[[Any], bool], where: str, found: list[tuple[str, str]]) -> Any:
    """One entry as 1.0 spells it; what was found in it goes in `found`: what it is, and what we did."""
    if spec(value):
        return value
    dialect = next((row for row in DIALECTS if row.about == about and row.recognised(value)), None)
    rewritten = dialect.rewritten(value) if dialect is not None else None
    if dialect is not None and (about != "scheme" or _readable(rewritten)):
        found.append((f"{where} in {dialect.name}", "read as 1.0's"))
        return rewritten
    if about == "scheme":  # read as a scheme of no kind we know: no credential of ours is chosen for it
        near = f" ({dialect.name}, but lacking what its kind needs)" if dialect is not None else ""
        found.append((f"an unknown security scheme shape at {where}{near}", "which no credential of ours meets"))
        return {}
    found.append((f"an unknown security requirement shape at {where}", "left as it is"))
    return value  # the reader's to judge, naming the field


def in_spec_form(document: Any, strict: bool = False, warn: Callable[[str], Any] | None = None) -> Any:
    """A 1.0 card with its securitySchemes and securityRequirements as A2A 1.0 spells them: the
    same object when they already are; else a copy, with one line to `warn` naming each field
    and its dialect. `strict`: raises Dialectal instead, naming the first."""
    if not isinstance(document, dict):
        return document
    found: list[tuple[str, str]] = []
    card = dict(document)
    dialect = next(row for row in DIALECTS if row.about == "card")
    if dialect.recognised(card):
        found.append((f"security in {dialect.name}", "read as securityRequirements"))
        card["securityRequirements"] = dialect.rewritten(card)
    if isinstance(card.get("securitySchemes"), dict):
        card["securitySchemes"] = {name: _read(value, "scheme", _spec_scheme, f"securitySchemes.{name[:40]}", found)
                                   for name, value in card["securitySchemes"].items()}
    if isinstance(card.get("securityRequirements"), list):
        card["securityRequirements"] = [
            _read(value, "requirement", _spec_requirement, f"securityRequirements[{index}]", found)
            for index, value in enumerate(card["securityRequirements"])]
    if not found:
        return document
    name = document.get("name") if isinstance(document.get("name"), str) else "?"
    if strict:
        raise Dialectal(escape(f"its card is not in A2A 1.0's form: {found[0][0]}; --strict-cards refuses such a card"))
    listed = "; ".join(f"{said}, {done}" for said, done in found[:SHOWN])
    more = f"; and {len(found) - SHOWN} more" if len(found) > SHOWN else ""
    if warn is not None:
        warn(escape(f"[support] the card of {name[:60]!r} is not in A2A 1.0's form: {listed}{more} "
                    "(--strict-cards refuses such a card)"))
    return card
