"""OAuth 2.0 client credentials and OpenID Connect discovery, served by the peer itself.

Spec 4.5 (OAuth2SecurityScheme with a clientCredentials flow; OpenIdConnectSecurityScheme)
and RFC 6749 section 4.4: a client POSTs `grant_type=client_credentials` to the token
endpoint the card names (`tokenUrl`), authenticated by HTTP Basic (id and secret each
form-urlencoded first, RFC 6749 2.3.1, so decoded here) or by `client_id` and
`client_secret` form fields (not both: RFC 6749 2.3), and gets a short-lived access
token (tokens.py) for this peer's endpoint, which it then sends as `Authorization:
Bearer`. With `discovery` (oidc) the card names `/.well-known/openid-configuration`
instead, which names the same token endpoint and a JWKS with the public key tokens are
signed with. The token endpoint's answers and errors are RFC 6749 5.1 and 5.2's, and
429 for our client's id at an address its wrong secrets came from too often (guesses.py). Not
here: other grants, refresh tokens, ID tokens, more than one client.
"""
from __future__ import annotations

import hmac
import json
import time
from urllib.parse import parse_qsl, unquote_plus, urlsplit

from peers.a2a.security_schemes import SCHEME_KINDS
from peers.schemes import MAX_CREDENTIAL, tokens
from peers.schemes.guesses import Guesses
from peers.schemes.http_basic import user_and_password
from peers.signing import rs256
from transports.base import HttpRequest, HttpResponse

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable

TOKEN_PATH = "/oauth2/token"
DISCOVERY_PATH = "/.well-known/openid-configuration"
JWKS_PATH = "/.well-known/jwks.json"
SCOPE = "a2a"  # the one scope a caller needs: to send this agent tasks and read them back
NO_STORE = {"Content-Type": "application/json", "Cache-Control": "no-store"}


class ClientCredentials:
    def __init__(self, pair: str, base_url: str, endpoint: str, realm: str, key: rs256.PrivateKey, *,
                 discovery: bool = False, clock: Callable[[], float] | None = None,
                 guesses: Guesses | None = None) -> None:
        client_id, colon, secret = pair.partition(":")
        if not colon or not client_id or not secret:
            raise ValueError("oauth2 and oidc need --token CLIENT-ID:CLIENT-SECRET")
        self.client_id, self.secret = client_id.encode(), secret.encode()
        self.issuer, self.audience, self.realm, self.key = base_url, endpoint, realm, key
        self.clock = clock or time.time
        self.discovery = discovery
        self.guesses = guesses or Guesses()  # wrong secrets heard, and where from (RFC 6749 2.3.1)
        # Served at the paths of the URLs declared, as the endpoint is: under `serve --url BASE`
        # with a path (a proxy that keeps it) the card named BASE/oauth2/token, answered 404.
        below = urlsplit(base_url).path.rstrip("/")
        self.token_path, self.discovery_path, self.jwks_path = (below + path for path in (TOKEN_PATH, DISCOVERY_PATH,
                                                                                         JWKS_PATH))
        self.declared = (SCHEME_KINDS["oidc"].declared("oidc", open_id_connect_url=base_url + DISCOVERY_PATH)
                         if discovery else
                         SCHEME_KINDS["oauth2"].declared("oauth2", token_url=base_url + TOKEN_PATH,
                                                         scopes=((SCOPE, "send this agent tasks and read them back"),)))

    def caller(self, request: HttpRequest) -> tuple[str | None, frozenset[str]]:
        name, _, token = (request.header("Authorization") or "").partition(" ")
        if name.lower() != "bearer":
            return None, frozenset()
        try:
            claims = tokens.check(token.strip(" \t"), self.key.public, self.audience, SCOPE, self.clock)  # OWS only
        except tokens.BadToken:  # why stays here: the caller learns only that it was refused
            return None, frozenset()
        return "client:" + claims["sub"], frozenset()

    def challenge(self) -> str:
        # RFC 6750 3: the scope a token needs, and (RFC 9728's idea) where to get one.
        return f'Bearer realm="{self.realm}", scope="{SCOPE}"'

    def serve(self, request: HttpRequest, path: str) -> HttpResponse | None:
        if path == self.token_path:
            return self.token(request) if request.method == "POST" else _oauth_error(
                405, "invalid_request", "the token endpoint takes POST", Allow="POST")
        if self.discovery and path in (self.discovery_path, self.jwks_path):
            if request.method != "GET":
                return _oauth_error(405, "invalid_request", "read with GET", Allow="GET")
            document = self.configuration() if path == self.discovery_path else \
                {"keys": [{**self.key.public.jwk(), "use": "sig", "alg": "RS256"}]}
            # The discovery document names no key, only where to read it: kept a while. The JWKS holds a
            # key made as this process started (no file holds it), so no one can say how long it lasts:
            # kept for any time, a restart's new key would be unknown to the cache and its tokens refused.
            kept = "max-age=300" if path == self.discovery_path else "no-cache"
            return HttpResponse(200, {"Content-Type": "application/json", "Cache-Control": kept},
                                json.dumps(document, indent=2).encode() + b"\n")
        return None

    def configuration(self) -> dict[str, Any]:
        """OpenID Connect Discovery 1.0 section 3, for a server that only issues access tokens."""
        return {"issuer": self.issuer, "token_endpoint": self.issuer + TOKEN_PATH,
                "jwks_uri": self.issuer + JWKS_PATH, "grant_types_supported": ["client_credentials"],
                "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
                "scopes_supported": [SCOPE], "response_types_supported": ["token"],
                "subject_types_supported": ["public"], "id_token_signing_alg_values_supported": ["RS256"]}

    def token(self, request: HttpRequest) -> HttpResponse:
        """RFC 6749 4.4.2 and 5: an access token for the one client, or the error."""
        media_type = (request.header("Content-Type") or "").split(";")[0].strip().lower()
        if media_type != "application/x-www-form-urlencoded" or len(request.body) > MAX_CREDENTIAL:
            return _oauth_error(400, "invalid_request", "a form (application/x-www-form-urlencoded) of at "
                                f"most {MAX_CREDENTIAL} bytes")
        try:
            pairs = parse_qsl(request.body.decode("utf-8"), strict_parsing=True, max_num_fields=10)
        except (UnicodeDecodeError, ValueError):
            return _oauth_error(400, "invalid_request", "the form does not parse")
        form = dict(pairs)
        if len(form) != len(pairs):  # RFC 6749 3.2: parameters MUST NOT be included more than once
            return _oauth_error(400, "invalid_request", "a parameter is repeated")
        if not form.get("grant_type"):  # RFC 6749 5.2: a required parameter missing (an empty one too)
            return _oauth_error(400, "invalid_request", "grant_type is required: grant_type=client_credentials")
        if form.get("grant_type") != "client_credentials":
            return _oauth_error(400, "unsupported_grant_type", "only grant_type=client_credentials")
        in_header = request.header("Authorization") is not None
        if in_header and ("client_secret" in form or "client_id" in form):
            return _oauth_error(400, "invalid_request", "the client authenticates one way, not two")
        offered = _form_decoded(user_and_password(request.header("Authorization"))) if in_header else \
            (form.get("client_id", "").encode(), form.get("client_secret", "").encode())
        id_ok = offered is not None and hmac.compare_digest(offered[0], self.client_id)

        def right() -> bool:
            return offered is not None and hmac.compare_digest(offered[1], self.secret)
        # Under another id no secret could succeed: compared all the same (the time does not say the id
        # was wrong), never counted. Under ours, counted by the address it came from (guesses.py).
        held, secret_ok = self.guesses.heard(request.client_address, right) if id_ok else (0, right())
        if held:  # before the secret is looked at: a guess now tests nothing. RFC 6749 names no
            # error for this at the token endpoint; temporarily_unavailable is its nearest (4.1.2.1)
            return _oauth_error(429, "temporarily_unavailable", f"too many wrong client secrets: try again in "
                                f"{held} s", **{"Retry-After": str(held)})
        if not (id_ok and secret_ok):
            return _oauth_error(401, "invalid_client", "unknown client or wrong secret",
                                **{"WWW-Authenticate": f'Basic realm="{self.realm}"'})
        asked = form.get("scope", SCOPE).split()
        if any(scope != SCOPE for scope in asked):
            return _oauth_error(400, "invalid_scope", f"the one scope here is {SCOPE}")
        token = tokens.issue(self.key, self.issuer, self.audience, self.client_id.decode(), SCOPE, self.clock())
        return HttpResponse(200, dict(NO_STORE), json.dumps(
            {"access_token": token, "token_type": "Bearer", "expires_in": tokens.LIFETIME, "scope": SCOPE}).encode())


def _form_decoded(pair: tuple[bytes, bytes] | None) -> tuple[bytes, bytes] | None:
    """RFC 6749 2.3.1: a client's id and secret are form-urlencoded before they go into
    Basic ("a%3Ab" is the id "a:b"); user_and_password has checked both are UTF-8."""
    if pair is None:
        return None
    return unquote_plus(pair[0].decode()).encode(), unquote_plus(pair[1].decode()).encode()


def _oauth_error(status: int, error: str, description: str, **headers: str) -> HttpResponse:
    return HttpResponse(status, {**NO_STORE, **headers},
                        json.dumps({"error": error, "error_description": description}).encode())
