"""Where what a peer sent becomes an object, or the peer's ProtocolViolation.

Essay: Delegation over JSON-RPC, read from the caller's side. The support agent reads a
card and a result in two steps: the bytes as JSON, strictly (transports/codec.py), then
the JSON as a card or a task, by the peer's wire format (peers/a2a/). Whatever shape a
peer sends, a wrong type, a missing field, a state that does not exist, nesting deeper
than any card needs, each step ends either with the object or with a ProtocolViolation
naming what was wrong: never with our traceback. The story calls these two only.
"""
from __future__ import annotations

from typing import Any, Callable

from peers.a2a.fields import WireError, url
from peers.a2a.schema import problems
from peers.support.cards import JSONRPC, FetchedCard, Unspeakable, chosen
from peers.support.contracts import CONTRACTS
from transports.codec import loads_strict
from transports.base import parse_url
from transports.errors import ProtocolViolation


def read_json(body: bytes, what: str) -> Any:
    """A peer's bytes as JSON, within the codec's limits, or a ProtocolViolation."""
    try:
        return loads_strict(body)
    except ValueError as exc:
        raise ProtocolViolation(f"{what} is not usable JSON ({exc})") from None


def check_card(document: Any, spoken: Any) -> None:
    """Every field the card's wire format requires, present and of its type; otherwise a
    ProtocolViolation naming each problem (up to five), so a card's author can fix them all."""
    found = problems(document, spoken.CARD_SCHEMA, "card", most=5)
    if found:
        raise ProtocolViolation(f"the card lacks what A2A {spoken.NAME} requires: " + "; ".join(found))


def read_card(spoken: Any, document: Any, wanted: Any = None, fetched_from: str | None = None,
              binding: str | None = None) -> FetchedCard:
    """The card as an object, with our facts about it (cards.py): where it was fetched
    from, what its signatures cover, and the wire to speak to its agent: the card's own, or
    `wanted` (--wire) if the card offers that too (a 1.0 card may list a 0.3 interface),
    and the binding to carry it: JSON-RPC where offered, else HTTP+JSON, or `binding`
    (--binding); the card's url becomes that interface's. A skill that lists no input modes
    takes the card's defaults (a2a.proto: a skill's modes override them, and proto3 cannot
    tell an empty list from none). A skill we rely on whose card publishes no input
    contract (the essay's card has no place for one) gets our own copy (contracts.py), so
    every payload is checked."""
    card = read(spoken.card_from_wire, document, "the card")
    offered = _interfaces(document, spoken.NAME) or _preferred(document, card.url)
    if wanted is not None and wanted.NAME != spoken.NAME:
        other = read(lambda doc: spoken.interface_url(doc, wanted.NAME), document, "the card")
        if other is None:
            raise ProtocolViolation(f"the card speaks the {spoken.NAME} wire format, not the "
                                    f"{wanted.NAME} that --wire asked for")
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
        skill._replace(input_modes=skill.input_modes or defaults,
                       input_schema=CONTRACTS.get(skill.id) if skill.input_schema is None else skill.input_schema)
        for skill in card.skills))
    return FetchedCard(card, fetched_from, _signed(document), spoken, speaking)


def _interfaces(document: Any, version: str) -> list[tuple[str, str, str | None]]:
    """The (binding, URL, tenant) of each interface a 1.0 card lists for `version`, in its
    order (its preference)."""
    listed = document.get("supportedInterfaces") if isinstance(document, dict) else None
    found = []
    for interface in listed if isinstance(listed, list) else []:
        if not isinstance(interface, dict) or not isinstance(interface.get("protocolBinding"), str) \
                or str(interface.get("protocolVersion", "")).split(".")[:2] != version.split(".")[:2]:
            continue
        where = read(lambda value: url(value, "supportedInterfaces[].url"), interface.get("url"), "the card")
        tenant = interface.get("tenant")
        found.append((interface["protocolBinding"], where, tenant if isinstance(tenant, str) and tenant else None))
    return found


def _preferred(document: Any, where: str) -> list[tuple[str, str, str | None]]:
    """What a card before 1.0 offers: its url, in its preferredTransport (0.3; the essay's
    card names none: JSON-RPC). Our HTTP+JSON is 1.0's, so 0.3's other transports are
    named as 0.3's: a card offering only those is refused as unsupported, saying so."""
    transport = document.get("preferredTransport", JSONRPC) if isinstance(document, dict) else JSONRPC
    return [(JSONRPC if transport == JSONRPC else f"{str(transport)[:40]} (A2A 0.3)", where, None)]


def _modes(value: Any) -> tuple[str, ...]:
    """A card's defaultInputModes, as far as it is a list of strings (the schema checked it)."""
    return tuple(mode for mode in value if isinstance(mode, str)) if isinstance(value, list) else ()


def _signed(document: Any) -> Any:
    """What a signed card's signatures cover (card_signature.py, loaded only for such a card)."""
    if not isinstance(document, dict) or "signatures" not in document:
        return None
    from peers.signing.card_signature import signed_content
    return signed_content(document)


def read(reader: Callable[[Any], Any], value: Any, what: str) -> Any:
    """`value` read by a wire format's reader, or a ProtocolViolation naming the field."""
    try:
        return reader(value)
    except WireError as exc:
        raise ProtocolViolation(f"{what} is malformed: {exc}") from None

