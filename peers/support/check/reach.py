"""Where `check` sends its requests: each binding the card declares, at its interface, in
the card's wire, with the credential our store holds for it (if any).

Spec: A2A 1.0 sections 5 (bindings) and 8.3 (supportedInterfaces); 7 (credentials come
from the caller's own store, never from the card). Built from our calling side, not beside
it: the binding that speaks an interface and its URL (`cards.chosen`, with its tenant), the
card read into its object (`card_reading.read_card`, dialects and all) and the credential
its scheme takes (`credentials.credential_for`). A binding we do not speak (gRPC, a custom
URI; HTTP+JSON at 0.3) is a Reach with no binding: reported "not measured". Not here: the checks.
"""

from __future__ import annotations

import ipaddress
import time

from peers.a2a.bindings import HTTP_JSON
from peers.a2a.wire_format import WireFormat, at_version, declared_by
from transports import lookups
from transports.addresses import is_public
from transports.base import parse_url
from transports.errors import PeerError
from transports.records import Record

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any


class Reach(Record):
    name: str  # the card's protocolBinding: "JSONRPC", "HTTP+JSON", "GRPC" ...
    binding: Any  # cards.Binding as it speaks to that interface; None: not one we speak
    endpoint: str  # where its requests go (an HTTP+JSON tenant already in the path)
    wire: WireFormat  # the card's version: how its requests are spelled
    credential: dict[str, str] | None  # the headers proving who we are; None: none held (or none needed)
    why: str = ""  # why no credential is attached, when the card asks for one
    schemes: tuple[Any, ...] = ()  # the SecuritySchemes the card declares, read as 1.0 spells them
    not_asked: str = ""  # why an interface we could speak is not asked at all (`inward`)


UNREADABLE = "the card cannot be read"
NOT_SPOKEN = "this checker speaks HTTP+JSON as A2A 1.0 routes it, not a 0.3 card's HTTP+JSON (its /v1/ routes)"
LOOKUP_SECONDS = 5.0  # for a host name, and no longer than the run's budget: a resolver that says nothing


def offered(document: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    """(binding, url, tenant) of each interface the card offers in its own version, in its order
    (before 1.0: its url in its preferredTransport, then 0.3's additionalInterfaces, {url, transport});
    one whose url is no http(s) URL is left out (CARD-PROTO-002 names it)."""
    spoken = declared_by(document)
    if spoken.NAME != "1.0":
        more = document.get("additionalInterfaces")
        listed = [(document.get("preferredTransport", "JSONRPC"), document.get("url"))] + [
            (each.get("transport"), each.get("url")) for each in (more if isinstance(more, list) else [])
            if isinstance(each, dict) and isinstance(each.get("transport"), str)]
        return [(str(transport)[:40], url, None) for transport, url in listed if parse_url(url) is not None]
    listed = document.get("supportedInterfaces")
    return [(each["protocolBinding"][:40], each["url"], each.get("tenant") if isinstance(each.get("tenant"), str) else None)
            for each in (listed if isinstance(listed, list) else []) if at_version(each, "1.0")
            and isinstance(each.get("protocolBinding"), str) and parse_url(each.get("url")) is not None]


def reaches(document: dict[str, Any], card_url: str, store: dict[str, Any], transport: Any,
            forced: str | None = None, pinned: dict[str, tuple[str, int]] | None = None,
            deadline: float | None = None) -> list[Reach]:
    """One Reach per binding the card declares (the first interface of each), or only `forced`'s;
    an interface's host judged by `inward` (its lookup over by `deadline`, the run's) is pinned in
    `pinned` (the transport's) to the address judged."""
    from peers.support.calling.cards import chosen
    spoken = declared_by(document)
    found, seen, judged = [], set(), {}
    for name, url, tenant in offered(document):
        if name in seen or (forced is not None and name.upper() != forced.upper()):
            continue
        seen.add(name)
        if name == HTTP_JSON.name and spoken.NAME != "1.0":  # 0.3's own routes (/v1/...): see routes.py
            found.append(Reach(name, None, url, spoken, None, not_asked=f"not measured: {NOT_SPOKEN}"))
            continue
        try:
            binding, endpoint = chosen([(name, url, tenant)], name)
        except PeerError:  # a binding our calling side does not speak
            found.append(Reach(name, None, url, spoken, None))
            continue
        refused = inward(card_url, url, pinned, judged, deadline)
        if refused:  # not asked, and said: "not measured" with the reason
            found.append(Reach(name, None, url, spoken, None, not_asked=refused))
            continue
        credential, why, schemes = _credential(document, spoken, card_url, name, endpoint, store, transport)
        found.append(Reach(name, binding, endpoint, spoken, credential, why, schemes))
    return found


def _credential(document: dict[str, Any], spoken: WireFormat, card_url: str, binding: str, endpoint: str,
                store: dict[str, Any], transport: Any) -> tuple[dict[str, str] | None, str, tuple[Any, ...]]:
    """The headers our store's credential for this interface (at `endpoint`, where its requests
    go) takes, or None and why not; and the schemes the card declares."""
    from peers.support.calling.card_reading import read_card
    from peers.support.calling.credentials import credential_for
    try:
        card = read_card(spoken, document, None, card_url, binding).card
    except PeerError as exc:
        return None, f"{UNREADABLE}: {str(exc)[:200]}", ()
    if card.url != endpoint:  # the card read names another interface of this binding (a 0.3 card's
        # supportedInterfaces at 0.3): the credential is the one held for where the requests go, never that one's
        if parse_url(endpoint).scheme != parse_url(card_url).scheme:  # as read_card refuses a downgrade (7.1)
            return None, f"{UNREADABLE}: fetched over {parse_url(card_url).scheme}, asked over " \
                f"{parse_url(endpoint).scheme} ({endpoint[:80]}): a downgrade, refused", ()
        card = card._replace(url=endpoint)
    schemes = tuple(card.security_schemes)
    if not schemes and not [kind for kind in card.auth_schemes if kind != "none"]:
        return None, "the card declares no security scheme", ()
    try:
        attached = credential_for(card, store, transport)
    except PeerError as exc:
        return None, str(exc)[:200], schemes
    return (attached.headers or None), ("" if attached.headers else "no credential held for it in --credentials"), schemes


def inward(card_url: str, url: str, pinned: dict[str, tuple[str, int]] | None, judged: dict[str, str],
           deadline: float | None = None) -> str:
    """Why an interface is not asked ("" when it may be): at another host than the card, at an
    address that is not public (transports/addresses.py: private, loopback, link-local: a cloud's
    metadata service), unless both are this machine's loopback. A card may name any URL, and check
    runs where its user does: a card must not turn it inward. An interface's host name is looked
    up once, for LOOKUP_SECONDS at most, and not past `deadline` (the resolver takes none), and pinned to the
    address judged, so that no second answer can move the requests elsewhere (DNS rebinding);
    the card's host is judged by its own pinned address (pin_card_host)."""
    card, there = parse_url(card_url), parse_url(url)
    if card is None or there is None or there.host == card.host or (pinned and there.host in pinned):
        return ""
    if there.host not in judged:
        judged[there.host] = _judged(card.host, there.host, there.port, pinned, deadline)
    return judged[there.host]


def _judged(card_host: str, host: str, port: int, pinned: dict[str, tuple[str, int]] | None,
            deadline: float | None) -> str:
    try:
        at_there = _addresses(host, deadline)
    except lookups.Busy:  # not asked of the resolver at all: no slowness of its to look for
        return (f"not asked: its host {host[:60]} was not looked up, as {lookups.MOST_WAITING} lookups were "
                "already waiting on the resolver")
    if at_there is None:
        return f"not asked: its host {host[:60]} did not resolve within {LOOKUP_SECONDS:g} s, or the run's time budget"
    if not at_there:  # not found now: a second lookup must not find it somewhere inward
        return f"not asked: its host {host[:60]} is not found"
    try:
        at_card = [ipaddress.ip_address(pinned[card_host][0])] if pinned and card_host in pinned \
            else _addresses(card_host, deadline)
    except lookups.Busy:  # the card's host unknown: this interface is not judged local
        at_card = None
    local = bool(at_card) and all(map(_here, (*at_there, *at_card)))  # found, and all this machine
    if not local and not all(map(is_public, at_there)):
        return (f"not asked: the card, at {card_host[:60]}, names another host, {host[:60]}, at a private, "
                "loopback, link-local or unspecified address (check asks such an interface only at the card's "
                "own host, or on this machine when the card is there too)")
    if not local and pinned is not None and _named(host):
        pinned[host] = (str(at_there[0]), port)  # every request there goes where judged (a client's first try;
        # this machine's names are its hosts file's, and a server may listen on one of their addresses alone)
    return ""


def pin_card_host(card_url: str, pinned: dict[str, tuple[str, int]], deadline: float | None = None) -> None:
    """The card's host name, looked up once (within LOOKUP_SECONDS and `deadline`) and pinned to its first address:
    the card and every request at that host then go to the one address, not to whatever a later
    lookup says (DNS rebinding). The host is the user's choice: any address it names is asked."""
    card = parse_url(card_url)
    if card is None or not _named(card.host):
        return
    try:
        found = _addresses(card.host, deadline)
    except lookups.Busy:  # not looked up: not pinned, as a name the resolver did not answer for
        return
    if found and not all(address.is_loopback for address in found):  # this machine's own names (localhost) are
        pinned[card.host] = (str(found[0]), card.port)  # its hosts file's, and a server may listen on one address alone


def _named(host: str) -> bool:
    """Whether a URL's host is a name (looked up, so pinned), not an address written out."""
    return not host.startswith("[") and not host.replace(".", "").isdigit()


def _here(address: Any) -> bool:
    """This machine: loopback, or the unspecified address (a card naming 0.0.0.0, where its server listens)."""
    return address.is_loopback or address.is_unspecified


def origin_of(url: str) -> str:
    parsed = parse_url(url)
    return f"{parsed.scheme}://{parsed.host}:{parsed.port}" if parsed is not None else url[:80]


def _addresses(host: str, deadline: float | None = None) -> list[Any] | None:
    """The addresses `host` is found at, in the resolver's order ([]: none); None if it said nothing in
    LOOKUP_SECONDS, or before `deadline` (time.monotonic's); lookups.Busy if it was not asked."""
    until = time.monotonic() + LOOKUP_SECONDS
    found = lookups.addresses(host, until if deadline is None else min(until, deadline))
    if found is None:
        return None
    return list(dict.fromkeys(ipaddress.ip_address(address.split("%")[0]) for address in found))
