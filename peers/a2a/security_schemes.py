"""Each kind of security scheme a card can declare, one row each, for both sides to ask.

Spec: A2A 4.5 (SecurityScheme: the proto's oneof in 1.0, OpenAPI's `type` in 0.3) and
section 7 (authentication). A kind goes by several names: ours (`--auth apikey`, the demo's
hosts), the card's (0.3's `"type": "apiKey"`, 1.0's `apiKeySecurityScheme`), the
credential our store holds for it (`--credentials` `"apiKey"`), the live page's
(`api-key`). A row says them all, and the sentences said of it: what a caller must hold
(our side's refusals and --verbose), how a caller proves it (a served peer's banner),
the page's label. Whoever used to compare a kind's names asks `kind_of` or `SCHEME_KINDS`;
what truly differs by kind (checking a credential: peers/schemes; attaching one:
peers/support/calling/credentials.py; a scheme's own fields on the wire: wire_card.py) stays there.
Not here: secrets, checking or sending a credential, where our store keeps one.
"""
# Annotations stay real, not postponed to strings: the default run loads this table (test_layout).

from __future__ import annotations

from peers.a2a.model import SecurityScheme
from transports.records import Record

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable


class SchemeKind(Record):
    kind: str  # ours: --auth KIND, the demo's schemes_at, a lesson's cases
    type: str  # the card's: 0.3's `type`, and SecurityScheme.type
    http_scheme: str  # for type "http", its `scheme` (RFC 9110's auth-scheme name); "" for the others
    wrapper: str  # 1.0's oneof field that names the type in securitySchemes
    credential: str  # the --credentials entry's key our store holds it under
    needs: Callable[[SecurityScheme], str]  # what a caller must hold for it, in a few words
    calls: Callable[[SecurityScheme], str]  # what a caller sends, as a served peer's banner says it
    page: str = ""  # the name the live page sends for it ("": not entered there)
    label: str = ""  # the page's words for it
    pair: str = ""  # a secret of two parts, as --credentials spells it; "": one part
    in_handshake: bool = False  # proved by a client certificate in the TLS handshake: no secret
    issues_tokens: bool = False  # the peer issues (and signs) the access tokens callers send

    def declared(self, name: str, **fields: Any) -> SecurityScheme:
        """A scheme of this kind as a card declares it, under `name`, with its own fields."""
        return SecurityScheme(name, self.type, self.http_scheme, **fields)

    def new_secret(self, token: str) -> str | None:
        """A demo secret made of a fresh `token`: the API key, or the support agent's pair;
        None for a client certificate, which is files (peers/keys)."""
        return None if self.in_handshake else f"support-agent:{token}" if self.pair else token


BY_TOKEN = "then send 'Authorization: Bearer <token>'"
BEARER = SchemeKind(
    "bearer", "http", "Bearer", "httpAuthSecurityScheme", "bearer", lambda scheme: "a bearer token",
    lambda scheme: "callers send 'Authorization: Bearer <token>'", "bearer", "an HTTP Bearer token")
SCHEME_KINDS = {row.kind: row for row in (
    BEARER,
    SchemeKind("apikey", "apiKey", "", "apiKeySecurityScheme", "apiKey",
               lambda scheme: f"an API key, in the {scheme.key_name[:40]} {scheme.location[:20]}",
               lambda scheme: f"callers send '{scheme.key_name}: <key>'", "api-key", "an API key"),
    SchemeKind("basic", "http", "Basic", "httpAuthSecurityScheme", "basic", lambda scheme: "a Basic user and password",
               lambda scheme: "callers send 'Authorization: Basic base64(USER:PASSWORD)'", "basic",
               "an HTTP Basic user and password", pair="USER:PASSWORD"),
    # OpenID Connect is entered on the page as OAuth2: both are client credentials, traded
    # for a token at the endpoint the card names.
    SchemeKind("oauth2", "oauth2", "", "oauth2SecurityScheme", "oauth2",
               lambda scheme: "an OAuth2 client id and secret, " + (
                   f"for a token from {scheme.token_url[:80]}" if scheme.token_url else
                   "but no client credentials flow"),
               lambda scheme: f"callers get a token at {scheme.token_url} (client credentials), {BY_TOKEN}",
               "oauth2", "OAuth2 client credentials", pair="CLIENT-ID:CLIENT-SECRET", issues_tokens=True),
    SchemeKind("oidc", "openIdConnect", "", "openIdConnectSecurityScheme", "oauth2",
               lambda scheme: "an OAuth2 client id and secret, for a token from the endpoint "
                              f"{scheme.open_id_connect_url[:80]} names",
               lambda scheme: f"callers find the token endpoint at {scheme.open_id_connect_url}, {BY_TOKEN}",
               pair="CLIENT-ID:CLIENT-SECRET", issues_tokens=True),
    SchemeKind("mtls", "mutualTLS", "", "mtlsSecurityScheme", "clientCertificate",
               lambda scheme: "a client certificate",
               lambda scheme: "callers present a client certificate issued by the --client-ca CA "
                              "(default: the DEMO CA; peers/keys/support-agent.DEMO-CLIENT-CERT.pem is one)",
               in_handshake=True),
)}
# 1.0's oneof field -> the type it wraps (both http kinds share one)
WRAPPED = {row.wrapper: row.type for row in SCHEME_KINDS.values()}


def kind_of(scheme: SecurityScheme) -> SchemeKind | None:
    """The row of a scheme a card declares; None for a kind we do not know (an http
    scheme other than Bearer and Basic, a type of a later spec)."""
    return next((row for row in SCHEME_KINDS.values() if row.type == scheme.type and (
        not row.http_scheme or row.http_scheme.lower() == scheme.scheme.lower())), None)
