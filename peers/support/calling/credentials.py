"""The support agent's credentials beyond a bearer token, and which one a card's scheme takes.

Spec 4.5 (SecurityScheme) and section 7 (authentication): a card declares how a caller
must prove who it is; the proof comes from the caller's own store, never from the card.
The store (--credentials, config.py) is keyed by the endpoint a credential was issued
for, as bearer tokens always were: a `Held` per endpoint, with any of a bearer token,
an API key, a Basic user and password, OAuth2 client credentials, a client certificate.
`credential_for(card, store)` takes the card's requirements in its order and uses the
first whose every scheme we hold a credential for, saying why; an OAuth2 or OpenID
Connect scheme gets its access token from the token endpoint, for the scopes that
requirement lists (oauth_tokens.py says why those and no others). A
client certificate is presented in the TLS handshake, by the context `client_tls` makes
for that endpoint's host only. Holding nothing the card asks for is `Unheld`: one line
saying what would be needed. Not here: the essay's bearer token, which the story sends
without loading this module (config.token_for); fetching tokens (oauth_tokens.py).
"""
from __future__ import annotations

from peers.a2a.model import AgentCard, SecurityScheme
from peers.a2a.security_schemes import BEARER, kind_of
from peers.support.calling.files import ConfigError
from peers.support.calling.held import Held, Unheld, held_for
from transports.base import Transport, parse_url
from transports.escaping import escape
from transports.printer import is_secret_header
from transports.records import Record

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

class Attached(Record):
    """What goes with a request to the card's endpoint, and why: headers, and a client
    certificate the transport presents (its files), if the scheme is mutual TLS."""

    schemes: tuple[str, ...]  # the card's names for the schemes used
    headers: dict[str, str]
    certificate: tuple[str, str] | None
    why: str  # one line, for --verbose


def requirements(card: AgentCard) -> list[tuple[SecurityScheme, ...]]:
    """Each way in the card offers, in its order: the schemes a caller presents together.
    A card that declares no scheme objects (the essay's) names bearer, or nothing."""
    declared = {scheme.name: scheme for scheme in card.security_schemes}
    if not declared:  # the essay's card: names only, of which we know bearer
        return [(BEARER.declared(name) if name == BEARER.kind else SecurityScheme(name, "named"),)
                for name in card.auth_schemes if name != "none"]
    listed = card.security_requirements or tuple({name: ()} for name in declared)  # no scope: oauth_tokens.py
    undeclared = SecurityScheme("?", "undeclared")  # a requirement naming an undeclared scheme cannot be met
    return [tuple(declared.get(name, undeclared._replace(name=name)) for name in names) for names in listed]


# Schemes no credential can meet, by what made them: what a refusal says of each. "unknown":
# a card's scheme of no shape we know (the card's reader, card_dialects.py, named it): never
# a credential we lack.
UNMET = {"unknown": lambda scheme: f"an unknown security scheme shape at securitySchemes.{scheme.name[:40]}",
         "undeclared": lambda scheme: "a scheme its card does not declare",
         "named": lambda scheme: f"a {scheme.name[:40]} credential, which we cannot use"}  # the essay's card


def needs(scheme: SecurityScheme) -> str:
    """What a scheme asks a caller to hold, in a few words."""
    row = kind_of(scheme)
    return row.needs(scheme) if row else UNMET.get(scheme.type, lambda scheme: (
        f"a {scheme.type[:40]} credential, which we cannot use"))(scheme)


def _credential(scheme: SecurityScheme) -> str | None:
    """Which of our credentials a scheme takes (a --credentials key); None: none we could hold."""
    row = kind_of(scheme)
    return row.credential if row else None


def _usable(scheme: SecurityScheme, held: Held) -> bool:
    return bool({"bearer": held.bearer, "basic": held.basic,
                 # in a header, and one the printer knows to mask (its name says key, token, auth ...)
                 "apiKey": held.api_key and scheme.location == "header" and is_secret_header(scheme.key_name),
                 # a token endpoint the card names: its tokenUrl, or its OpenID discovery document's
                 "oauth2": held.client and (scheme.token_url or scheme.open_id_connect_url),
                 "clientCertificate": held.certificate}.get(_credential(scheme)))


def _one_request(way: tuple[SecurityScheme, ...]) -> bool:
    """Whether one request can carry every scheme of a way: each in a header of its own. Two that ride
    in Authorization (bearer, Basic, an OAuth2 token) cannot both be sent, nor two API keys of one name."""
    headers = [("authorization" if _credential(s) in ("bearer", "basic", "oauth2") else s.key_name.lower())
               for s in way if _credential(s) not in (None, "clientCertificate")]
    return len(headers) == len(set(headers))


def choose(card: AgentCard, store: dict[str, Any]) -> tuple[SecurityScheme, ...]:
    """The schemes we will present to `card`'s agent: the first of its requirements we hold
    every credential for, and one request can carry; () for a card that requires none. Raises
    Unheld, saying what would be needed, when we hold none of them."""
    ways = requirements(card)
    if not ways:
        return ()
    held = held_for(store, card.url)
    for way in ways:
        if all(_usable(scheme, held) for scheme in way) and _one_request(way):
            return way
    wanted = " or ".join(" and ".join(f"{scheme.name[:40]} ({needs(scheme)})" for scheme in way) for way in ways[:4])
    every = all(not _one_request(way) for way in ways)  # held or not: nothing sent could meet them
    if every or any(all(_usable(s, held) for s in way) for way in ways):  # or one we hold could not: that is why
        raise Unheld(f"its card requires {wanted}: {'each way in' if every else 'the way in we hold credentials for'} "
                     "asks for two credentials in one header (two in Authorization, or two API keys of one name), "
                     "which no one request can carry")
    if all(any(scheme.type in UNMET for scheme in way) for way in ways):  # not a credential we lack
        raise Unheld(f"its card requires {wanted}: no credential can be chosen for that, whatever --credentials holds")
    keys = [s for way in ways for s in way if _credential(s) == "apiKey"]
    hint = " (we send an API key only in a header: a URL ends up in logs)" if any(
        s.location != "header" for s in keys) else " (we send an API key only in a header whose name says it " \
        "is secret, so that printed frames mask it)" if any(not is_secret_header(s.key_name) for s in keys) else ""
    raise Unheld(f"its card requires {wanted}, and the support agent holds none for {card.url[:120]} "
                 f"in --credentials{hint}")


def credential_for(card: AgentCard, store: dict[str, Any], transport: Transport | None = None,
                   cache: dict[Any, Any] | None = None) -> Attached:
    """What proves who we are to `card`'s agent, from `store` (endpoint -> a bearer token or
    a Held): the headers to send and the client certificate to present, and why. An OAuth2
    or OpenID Connect token is fetched through `transport` (its frames are printed like any
    other) and kept in `cache` until it expires. Raises Unheld, or a PeerError of the token
    endpoint's. The web page calls this with a store it keeps in memory."""
    way = choose(card, store)
    held, headers, certificate, said = held_for(store, card.url), {}, None, []
    for scheme in way:
        credential = _credential(scheme)  # choose() took only schemes we hold a credential for
        if credential == "bearer":
            headers["Authorization"] = f"Bearer {held.bearer}"
            said.append("our bearer token, in Authorization: Bearer")
        elif credential == "basic":
            import base64
            pair = f"{held.basic[0]}:{held.basic[1]}".encode()
            headers["Authorization"] = "Basic " + base64.b64encode(pair).decode()
            said.append(f"our user {held.basic[0][:40]!r} and password, in Authorization: Basic")
        elif credential == "apiKey":
            headers[scheme.key_name] = held.api_key
            said.append(f"our API key, in the {scheme.key_name[:40]} header")
        elif credential == "oauth2":
            from peers.support.calling.oauth_tokens import access_token
            if transport is None:
                raise Unheld("an OAuth2 token is fetched from the token endpoint, and no transport was given")
            token, source = access_token(scheme, _scopes(card, way).get(scheme.name, ()), held, card.url,
                                         transport, {} if cache is None else cache)
            headers["Authorization"] = f"Bearer {token}"
            said.append(f"an access token for our client {held.client[0][:40]!r} ({source}), in Authorization: Bearer")
        else:  # a client certificate: the transport presents it in the handshake (client_tls)
            certificate = held.certificate
            said.append(f"our client certificate {held.certificate[0][-60:]}, in the TLS handshake")
    if not way and held.bearer:  # issued for this very endpoint: sent, as the essay's token always was
        headers["Authorization"] = f"Bearer {held.bearer}"
    why = escape(f"[auth] {card.name[:60]!r} requires {' and '.join(s.name[:40] for s in way)} "  # a scheme's name is
                 f"({', '.join(needs(s) for s in way)}): we send " + "; ".join(said)) if way else \
        f"[auth] {card.name[:60]!r} declares no security scheme: we send " + (  # the card's: one line of ours
            "the bearer token our store holds for its endpoint" if held.bearer else "no credential")
    return Attached(tuple(scheme.name for scheme in way), headers, certificate, why)


def _scopes(card: AgentCard, way: tuple[SecurityScheme, ...]) -> dict[str, tuple[str, ...]]:
    """What the card's requirement that `way` came from lists for each of its schemes (the first
    naming just these schemes, as choose() takes them in order). A scheme it lists no scope for
    takes the first scopes another requirement lists for it: a requirement listing none is outside a
    signature (its signed form drops it whole), so one added in transit must not turn a signed scope
    into none, the token endpoint's default (maybe all our client was ever granted). Where none lists
    any, the flow's scopes that are described (a "" description is outside a signature too)."""
    names, required = [scheme.name for scheme in way], card.security_requirements
    chosen = next((each for each in required if list(each) == names), {})
    listed = {}
    for scheme in way:  # the chosen requirement's scopes, else the first another lists, else the flow's described
        found = next((each[scheme.name] for each in (chosen, *required) if each.get(scheme.name)), ())
        listed[scheme.name] = found or tuple(scope for scope, said in scheme.scopes if said)
    return listed


def client_tls(store: dict[str, Any], ca: str | None) -> dict[str, Any]:
    """origin -> the TLS context to reach it with, for each endpoint we hold a client
    certificate for: it trusts `ca` (None: the system's CAs) and presents that certificate
    to that origin only (scheme, host and port: another service on the same host that asks
    for a certificate is not given this one). ConfigError for a file that cannot be used: the
    certificate's files were tried as the store was read, but may have changed since."""
    import ssl
    contexts = {}
    for endpoint, held in store.items():
        if isinstance(held, Held) and held.certificate is not None and parse_url(endpoint) is not None:
            context = trusting(ca)
            try:
                from transports.tls import no_passphrase  # an encrypted key: refused, never a prompt
                context.load_cert_chain(*held.certificate, password=no_passphrase)
            except (OSError, ssl.SSLError) as exc:
                from transports.tls import reason_of
                raise ConfigError(f"the client certificate for {endpoint[:80]}: cannot use {held.certificate[0][:80]} "
                                  f"with {held.certificate[1][:80]}: {reason_of(exc)}") from None
            # TLS 1.2: a server refusing the certificate then says so in the handshake, before any
            # byte of a request; in 1.3 it may hang up after our first request is on its way.
            context.maximum_version = ssl.TLSVersion.TLSv1_2
            contexts[parse_url(endpoint).origin] = context
    return contexts


def trusting(ca: str | None) -> Any:
    """A client TLS context that checks server certificates and names against `ca` (a PEM
    file of one or more CA certificates; None: the system's). ConfigError, one line."""
    import ssl
    from transports.named_files import on_disk
    try:
        if ca is not None:
            on_disk(ca)
        return ssl.create_default_context(cafile=ca)
    except (OSError, ssl.SSLError) as exc:
        from transports.tls import reason_of
        raise ConfigError(f"--ca {str(ca)[:80]}: cannot use it as a CA certificate file: {reason_of(exc)}") from None

