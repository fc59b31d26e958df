"""An OAuth2 access token for our client: fetched with client credentials, kept until it expires.

RFC 6749 section 4.4 (the client credentials grant; the client authenticated by HTTP
Basic, its id and secret each form-urlencoded first, 2.3.1) and 5.1 and 5.2 (the token endpoint's answer and errors); OpenID Connect
Discovery 1.0 section 4 (the document whose `token_endpoint` we use). Spec 4.5
(OAuth2SecurityScheme, OpenIdConnectSecurityScheme). The requests go through the
transport the story speaks through, so they are printed (masked) like every frame.

What the token endpoint answers is hostile until checked: a status other than 200, a
body that is not JSON or over MAX_ANSWER bytes, no `access_token`, a `token_type` other
than Bearer, an `expires_in` that is not a positive whole number: one line each
(`TokenRefused`, or the transport's TransportError for one that is slow or endless). The
client secret goes only to the token endpoint our store names for it, if it names one,
else to one at the agent's own origin; never to the agent's endpoint itself, and never
from https down to http. A token is kept per token endpoint and client until shortly before it expires,
then fetched once more; a kept token the agent answers with 401 (revoked, or signed with
a key the agent has since replaced) is dropped by `forget_kept`, so the next request
fetches a new one, once. Not here: refresh tokens, other grants, checking the token
(that is the agent's to do).

The scopes asked are those the card's security requirement lists for the scheme (1.0's
securityRequirements `list`, 0.3's security), never every scope its flow declares: the
flow's map is what the server offers, the requirement what calling the agent needs
(least privilege). And a signature does not cover a scope the map describes by "" (a
signed card's canonical form drops empty values, as the SDK's does: card_signature.py),
so asking the map would let an unsigned edit widen the token the agent is handed. A
requirement listing no scope for the scheme takes those another requirement lists for it
(one listing none is unsigned too: credentials.py's `_scopes`); where none lists any, and
where a card lists no requirement (one signed form: an empty list is dropped too), the
flow's scopes that carry a description, which a signature covers (a token endpoint may
refuse a request naming no scope, or grant all our client holds); none described: no `scope`
parameter, the token endpoint's default for our client (RFC 6749 3.3).
"""
from __future__ import annotations

import base64
import time
from urllib.parse import quote_plus, urlencode

from peers.a2a.model import SecurityScheme
from peers.support.calling.config import same_endpoint
from peers.support.calling.held import MAX_SECRET, Held, Unheld
from peers.support.calling.replies import read_json
from transports.base import Transport, parse_url
from transports.errors import PeerError, retry_after
from transports.escaping import escape

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable

MAX_ANSWER = 16 * 1024  # bytes: a token answer, or a discovery document, is a few hundred
MARGIN = 5.0  # seconds before expiry a kept token is renewed: it must not expire on its way
LONGEST = 24 * 3600  # seconds a token is kept at most, whatever expires_in says


class TokenRefused(PeerError):
    """The token endpoint (or the discovery document) gave us no usable token: nothing was
    sent to the agent."""

    def retry_advice(self) -> str:
        return "nothing was sent to the agent, so a retry is safe once the token endpoint gives a usable token"


def access_token(scheme: SecurityScheme, scopes: tuple[str, ...], held: Held, endpoint: str, transport: Transport,
                 cache: dict[Any, Any], clock: Callable[[], float] = time.monotonic) -> tuple[str, str]:
    """A bearer token for `held`'s client at the agent `endpoint`, with the `scopes` the card's
    requirement lists for `scheme`, as `scheme` says where to get it, and where it came from
    (for --verbose): kept in `cache` until it expires."""
    token_url = _token_endpoint(scheme, held, endpoint, transport, cache)
    # A "" listed is no scope (nor signed: the signed form drops it); none listed: no scope parameter, the default
    scope = " ".join(dict.fromkeys(scope for scope in scopes if scope))
    # A token is kept for the agent it was fetched for, with the scopes asked: one client id
    # at one token endpoint may serve several agents, and none may be handed another's token.
    agent = parse_url(endpoint)
    key = ("token", token_url, held.client[0], agent.origin if agent else endpoint, scope)
    kept = cache.get(key)
    if kept is not None and clock() < kept[1]:
        cache[("sent", endpoint)] = key, True  # a 401 to it may mean it was revoked: forget_kept
        return kept[0], f"kept since it was fetched from {token_url}"
    form = {"grant_type": "client_credentials"}
    if scope:
        form["scope"] = scope
    # RFC 6749 2.3.1: id and secret form-urlencoded, then Basic (the way every server must
    # take), so a colon in the id, or a '%', '+' or non-ASCII letter in either, arrives as sent.
    pair = base64.b64encode(f"{quote_plus(held.client[0])}:{quote_plus(held.client[1])}".encode()).decode()
    response = transport.post(token_url, urlencode(form).encode(), {
        "Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json",
        "Authorization": f"Basic {pair}"})
    answer = _answer(response, "the token endpoint", token_url)
    token, kind, lifetime = answer.get("access_token"), answer.get("token_type"), answer.get("expires_in")
    if not isinstance(token, str) or not 0 < len(token) <= MAX_SECRET or not token.isascii() \
            or not token.isprintable() or " " in token:
        raise TokenRefused(f"the token endpoint {token_url} answered no usable access_token")
    if not isinstance(kind, str) or kind.lower() != "bearer":
        raise TokenRefused(f"the token endpoint {token_url} issued a {escape(str(kind)[:20])!r} token, not Bearer")
    if isinstance(lifetime, str) and lifetime.isascii() and lifetime.isdigit() and len(lifetime) <= 9:  # some providers send "3600"
        lifetime = int(lifetime)
    if lifetime is not None and (not isinstance(lifetime, int) or isinstance(lifetime, bool) or lifetime <= 0):
        raise TokenRefused(f"the token endpoint {token_url} gave expires_in {escape(str(lifetime)[:20])}, "
                           "not a positive number of seconds")
    lifetime = min(lifetime or 0, LONGEST)  # none said: used for this request only
    cache[key] = (token, clock() + max(lifetime - MARGIN, lifetime / 2))
    cache[("sent", endpoint)] = key, False  # fetched for this request: a 401 to it is not cured by another
    return token, f"fetched from {token_url}, for {lifetime} s" if lifetime else f"fetched from {token_url}"


def forget_kept(cache: dict[Any, Any], endpoint: str) -> str | None:
    """After `endpoint` answered 401: if what it refused was a token kept from before
    (revoked, or signed with a key the agent has since replaced), drop it, so the next
    request fetches a new one, and say so; else None. A token fetched for that very request
    is not fetched again: the agent would refuse the next one for the same reason."""
    key, kept = cache.pop(("sent", endpoint), (None, False))
    if not kept:
        return None
    cache.pop(key, None)
    return (f"[auth] {escape(endpoint[:120])} refused the access token we kept: fetching a new one, and sending "
            "once more (a 401 is answered before anything is done)")


def _token_endpoint(scheme: SecurityScheme, held: Held, endpoint: str, transport: Transport,
                    cache: dict[Any, Any]) -> str:
    """Where the client secret goes: the tokenUrl our store names for this client, and
    nowhere else, if it names one (a card, even at the agent's own origin, must not take
    a secret meant for a shared provider); else the card's tokenUrl, or the token_endpoint
    of its OpenID discovery document (read once a run), if it may go there at all."""
    if held.token_url:
        return _may_go(held.token_url, held, endpoint, "the tokenUrl --credentials names", said_by="")
    if scheme.type == "oauth2":
        return _may_go(scheme.token_url, held, endpoint, "its tokenUrl")
    discovery = _may_go(scheme.open_id_connect_url, held, endpoint, "its OpenID discovery document")
    if ("discovery", discovery) not in cache:
        document = _answer(transport.get(discovery, {"Accept": "application/json"}), "the discovery document",
                           discovery)
        named = document.get("token_endpoint")
        if not isinstance(named, str) or parse_url(named) is None:
            raise TokenRefused(f"the discovery document at {discovery} names no token_endpoint URL")
        cache[("discovery", discovery)] = named
    return _may_go(cache[("discovery", discovery)], held, endpoint, "the token_endpoint its discovery names")


def _may_go(url: str, held: Held, endpoint: str, what: str, said_by: str = "the card names ") -> str:
    """`url`, if our client's secret may be sent there (or asked there, for discovery);
    else Unheld, saying why, before anything is sent."""
    where, agent = parse_url(url), parse_url(endpoint)
    if where is None or agent is None:
        raise Unheld(f"{said_by}{what} as {escape(url[:80])!r}, not an http(s) URL")
    if same_endpoint(url, endpoint):
        raise Unheld(f"{said_by}{what} as the agent's own endpoint: the client secret never goes there")
    if agent.scheme == "https" and where.scheme != "https":
        raise Unheld(f"{said_by}{what} over http for an https agent: the client secret is not sent "
                     "in the clear")
    if not held.token_url and where.origin != agent.origin:
        raise Unheld(f"{said_by}{what} at {where.origin[:80]}, not at the agent's origin {agent.origin}: "
                     "name that token endpoint as tokenUrl in --credentials to trust it")
    return url


def _answer(response: Any, what: str, url: str) -> dict[str, Any]:
    """A token endpoint's (or discovery document's) JSON object, or TokenRefused in one line."""
    body = response.body if isinstance(response.body, bytes) else b""
    if len(body) > MAX_ANSWER:
        raise TokenRefused(f"{what} at {url} answered {len(body)} bytes, over the {MAX_ANSWER}-byte limit")
    if response.status != 200:  # RFC 6749 5.2: {"error": "invalid_client", ...}, if anything readable
        try:
            error = read_json(body, what).get("error")
        except (PeerError, AttributeError):
            error = None
        said = f": {escape(error[:40])}" if isinstance(error, str) else ""
        asked = retry_after(response.status, response.header("Retry-After"))  # a 429's or 503's wait, if it says one
        later = f"; {asked} before asking again" if asked else ""
        raise TokenRefused(f"{what} at {url} refused us: HTTP {response.status}{said}{later}")
    document = read_json(body, f"what {what} at {url} answered")
    if not isinstance(document, dict):
        raise TokenRefused(f"{what} at {url} answered JSON that is not an object")
    return document
