"""A fetched card, read: checked against its version, then our facts about it gathered.

Essay: The Agent Card. Spec: A2A 1.0 section 8 (the card), 5 (its interfaces). A card
is a peer's reply like any other (replies.py reads its bytes as JSON); here its fields
are checked against what its version requires, every problem named, and it becomes a
`FetchedCard` (cards.py): the card, where it came from, what its signatures cover, the
wire and the binding we will speak to its agent. Not here: whether we trust it (the
trust gate, in the story).
"""
from __future__ import annotations

from peers.a2a.fields import WireError, url
from peers.a2a.schema import problems
from peers.a2a.wire_format import at_version
from peers.support.calling.cards import JSONRPC, FetchedCard, Unspeakable, chosen
from peers.support.calling.replies import read
from transports.base import is_http_url, parse_url
from transports.errors import ProtocolViolation
from transports.escaping import escape

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable

MAX_INTERFACES = 16  # a 0.3 card's additionalInterfaces read, a 1.0 card's left out said: a card lists a few
LEFT_OUT = {"url": "", "protocolBinding": "", "protocolVersion": ""}  # usable's stand-in: of no version, read by none
MAX_TENANT = 256  # characters: a routing name, not a payload (a2a.proto gives it no format or bound)


def check_card(document: Any, spoken: Any) -> None:
    """Every field the card's wire format requires, present and of its type; otherwise a
    ProtocolViolation naming each problem (up to five), so a card's author can fix them all.
    An interface `usable` leaves out is not one of them: read_card says it in one line."""
    found = problems(usable(document, spoken.NAME), spoken.CARD_SCHEMA, "card", most=5)
    if found:
        raise ProtocolViolation(f"the card lacks what A2A {spoken.NAME} requires: " + "; ".join(found))


def read_card(spoken: Any, document: Any, wanted: Any = None, fetched_from: str | None = None,
              binding: str | None = None, *, strict: bool = False, warn: Callable[[str], Any] | None = None
              ) -> FetchedCard:
    """The card as an object, with our facts about it (cards.py): where it was fetched
    from, what its signatures cover, and the wire to speak to its agent: the card's own, or
    `wanted` (--wire) if the card offers that too (a 1.0 card may list a 0.3 interface),
    and the binding to carry it: JSON-RPC where offered, else HTTP+JSON, or `binding`
    (--binding); the card's url becomes that interface's. A skill that lists no input modes
    takes the card's defaults (a2a.proto: a skill's modes override them, and proto3 cannot
    tell an empty list from none). The card's input schema stays as published, none where it
    has none (a payload is checked against our own copy then: cards.refusal). A 1.0 card whose security is in a dialect an SDK writes is read
    as 1.0 spells it, one line to `warn` saying so, or refused if `strict` (--strict-cards:
    card_dialects.py); its signatures are checked on the card as it was served."""
    served = document
    signed, document = _signed(document), usable(document, spoken.NAME, warn)  # signed: as it was served
    card = read(spoken.card_from_wire, _in_spec_form(spoken, document, strict, warn), "the card")
    offered = _interfaces(document, spoken.NAME) or _preferred(document, card.url, warn)
    if wanted is not None and wanted.NAME != spoken.NAME:
        other = read(lambda doc: spoken.interface_url(doc, wanted.NAME), document, "the card")
        if other is None and (others := [name for name, _, _ in _interfaces(document, wanted.NAME)]):
            # It does speak that version, by a binding we speak only in 1.0's (0.3's REST paths are not 1.0's)
            raise Unspeakable(f"the card is not supported: it offers A2A {wanted.NAME} only over "
                              f"{', '.join(dict.fromkeys(others))[:120]}, and the support agent speaks "
                              f"{wanted.NAME} over {JSONRPC} alone")
        if other is None:  # a card listing that version only unusably is told so: its author has a fix to make
            unusable = _unusable(served, wanted.NAME)
            raise ProtocolViolation(f"the card speaks the {spoken.NAME} wire format, not the {wanted.NAME} that "
                                    "--wire asked for" + (f": the {wanted.NAME} interfaces it lists are unusable "
                                                          f"({unusable})" if unusable else ""))
        offered, spoken = [(JSONRPC, other, None)], wanted
    speaking, endpoint = chosen(offered, binding)
    fetched_over, sent_over = (parse_url(where) for where in (fetched_from, endpoint))
    if fetched_over is not None and sent_over is not None and fetched_over.scheme != sent_over.scheme:
        # Spec 7.1: a card read in the clear could have been altered on its way; frames sent in
        # the clear after a card read over TLS lose what TLS was for. Either way: nothing is sent.
        raise Unspeakable(f"the card was fetched over {fetched_over.scheme} but sends frames over "
                          f"{sent_over.scheme} ({endpoint[:80]}): a downgrade, refused")
    defaults = _modes(document.get("defaultInputModes"))
    card = card._replace(url=endpoint, skills=tuple(
        skill._replace(input_modes=skill.input_modes or defaults) for skill in card.skills))
    return FetchedCard(card, fetched_from, signed, spoken, speaking)


def _in_spec_form(spoken: Any, document: Any, strict: bool, warn: Callable[[str], Any] | None) -> Any:
    """A 1.0 card's security as 1.0 spells it (card_dialects.py, loaded only for a 1.0 card)."""
    if spoken.NAME != "1.0":
        return document
    from peers.support.calling.card_dialects import in_spec_form
    return in_spec_form(document, strict, warn)


def usable(document: Any, version: str, warn: Callable[[str], Any] | None = None) -> Any:
    """A 1.0 card with each supportedInterfaces entry that is no object or whose url is no
    http(s) URL (or no string, or none) left out, a stand-in in its place, each said in one line to `warn`, as _preferred leaves out such a 0.3
    additionalInterfaces entry: one interface is one choice among the card's, not the card.
    So only while an interface at `version` (the card's own) remains usable: else the card is
    as served, and refused as before, naming its first unusable url. check's CARD-PROTO-002
    still fails such a card: a MUST is broken, though we can speak to what remains."""
    listed = document.get("supportedInterfaces") if isinstance(document, dict) else None
    if not isinstance(listed, list):
        return document
    bad = [index for index, each in enumerate(listed) if not isinstance(each, dict) or not is_http_url(each.get("url"))]
    left_out = set(bad)
    if not bad or not any(at_version(each, version) for index, each in enumerate(listed) if index not in left_out):
        return document
    for index in bad[:MAX_INTERFACES] if warn is not None else ():  # a card may list thousands: a few lines
        _left_out(listed[index], f"supportedInterfaces[{index}]", warn)
    if warn is not None and len(bad) > MAX_INTERFACES:
        warn(f"[support] and {len(bad) - MAX_INTERFACES} more of the card's supportedInterfaces that are no object "
             "or have no http(s) url: each left out, not the card")
    # Each left out stands in its place as an interface of no version, which every reader passes over:
    # a refusal for another entry then names its index in the card as served, where its author looks
    return {**document, "supportedInterfaces": [dict(LEFT_OUT) if index in left_out else each
                                                for index, each in enumerate(listed)]}


def _unusable(served: Any, version: str) -> str:
    """Why each supportedInterfaces entry of the card as served at `version` cannot be spoken to, the
    first four said and the rest counted: "" if it lists none at that version."""
    listed = served.get("supportedInterfaces") if isinstance(served, dict) else None
    why = []
    for index, interface in enumerate(listed if isinstance(listed, list) else []):
        if at_version(interface, version):
            try:
                url(interface.get("url"), f"supportedInterfaces[{index}].url")
                why.append(f"supportedInterfaces[{index}].protocolBinding must be a string")  # the one other need
            except WireError as exc:
                why.append(str(exc))
    return escape("; ".join(why[:4]) + (f"; and {len(why) - 4} more" if len(why) > 4 else ""))


def _left_out(interface: Any, path: str, warn: Callable[[str], Any], transport: bool = False) -> None:
    """One line saying why the interface at `path` is left out: it is no object, names no `transport`
    (where one is asked for: 0.3's), or its url is no http(s) URL."""
    try:
        if not isinstance(interface, dict):
            raise WireError(f"{path} is not an object")
        if transport and not _named(interface):
            raise WireError(f"{path} names no transport (a non-empty string)")
        url(interface.get("url"), f"{path}.url")
    except WireError as exc:
        warn(escape(f"[support] the card's {exc}: that one interface is left out, not the card"))


def _interfaces(document: Any, version: str) -> list[tuple[str, str, str | None]]:
    """The (binding, URL, tenant) of each interface a 1.0 card lists for `version`, in its
    order (its preference)."""
    listed = document.get("supportedInterfaces") if isinstance(document, dict) else None
    found = []
    for index, interface in enumerate(listed if isinstance(listed, list) else []):
        if not at_version(interface, version) or not isinstance(interface.get("protocolBinding"), str):
            continue
        where = read(lambda value: url(value, "supportedInterfaces[].url"), interface.get("url"), "the card")
        tenant = read(lambda value: _tenant(value, f"supportedInterfaces[{index}].tenant"),
                      interface.get("tenant"), "the card")
        found.append((interface["protocolBinding"], where, tenant))
    return found


def _tenant(value: Any, path: str) -> str | None:
    """An interface's tenant (spec 8.3.2: opaque, ours to repeat in every request), or None
    where it names none (absent, null or empty: proto3's unset). It rides in every frame, in
    a path or in params, so a wrong type, a control character, a lone surrogate (no UTF-8
    spells it) or more than MAX_TENANT characters refuses the card, naming the field."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise WireError(f"{path} must be a string")
    if len(value) > MAX_TENANT:
        raise WireError(f"{path} is longer than {MAX_TENANT} characters")
    if any(ord(char) < 0x20 or 0x7F <= ord(char) < 0xA0 or 0xD800 <= ord(char) < 0xE000 for char in value):
        raise WireError(f"{path} holds a control character or a lone surrogate")
    return value


def _preferred(document: Any, where: str, warn: Callable[[str], Any] | None) -> list[tuple[str, str, str | None]]:
    """What a card before 1.0 offers: its url, in its preferredTransport (0.3; the essay's
    card names none: JSON-RPC), then each of its additionalInterfaces (0.3 section 5.6: a
    client may choose any of them; the SDKs list JSON-RPC there beside a preferred REST or
    gRPC). Our HTTP+JSON is 1.0's, so 0.3's other transports are named as 0.3's: a card
    offering only those is refused as unsupported, saying so. Only a JSON-RPC interface's
    url is read, as the card's own url is (http or https): we never send to the others. One
    whose url is none, or that is no object, is left out, said in one line to `warn`: it is one
    choice beside the card's url, not the card (check's CARD-PROTO-002 names it too); so is one
    that names no transport. Past the first MAX_INTERFACES none is read: one line says so."""
    transport = document.get("preferredTransport", JSONRPC) if isinstance(document, dict) else JSONRPC
    offered = [(_as_03(transport), where, None)]
    listed = document.get("additionalInterfaces") if isinstance(document, dict) else None
    listed = listed if isinstance(listed, list) else []
    for index, interface in enumerate(listed[:MAX_INTERFACES]):
        if not _named(interface) or (interface["transport"] == JSONRPC and not is_http_url(interface.get("url"))):
            if warn is not None:
                _left_out(interface, f"additionalInterfaces[{index}]", warn, transport=True)
        elif interface["transport"] == JSONRPC:
            offered.append((JSONRPC, url(interface.get("url"), f"additionalInterfaces[{index}].url"), None))
        else:
            offered.append((_as_03(interface["transport"]), "", None))
    if warn is not None and len(listed) > MAX_INTERFACES:  # a card may list thousands: one line for the rest
        warn(f"[support] the card's additionalInterfaces past its first {MAX_INTERFACES} ({len(listed) - MAX_INTERFACES} "
             "more) are not read: a card lists a few; the card is read without them")
    return offered


def _named(interface: Any) -> bool:
    """Whether a 0.3 additionalInterfaces entry is an object naming its transport (0.3 section 5.6: {url, transport})."""
    return isinstance(interface, dict) and isinstance(interface.get("transport"), str) and bool(interface["transport"])


def _as_03(transport: Any) -> str:
    return JSONRPC if transport == JSONRPC else f"{str(transport)[:40]} (A2A 0.3)"


def _modes(value: Any) -> tuple[str, ...]:
    """A card's defaultInputModes, as far as it is a list of strings (the schema checked it)."""
    return tuple(mode for mode in value if isinstance(mode, str)) if isinstance(value, list) else ()


def _signed(document: Any) -> Any:
    """What a signed card's signatures cover (card_signature.py, loaded only for such a card)."""
    if not isinstance(document, dict) or "signatures" not in document:
        return None
    from peers.signing.card_signature import signed_content
    return signed_content(document)
