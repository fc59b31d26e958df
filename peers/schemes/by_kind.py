"""The scheme a kind names, made: what a served peer is given to tell who is calling.

Spec 4.5 (SecurityScheme). One branch per kind (the table's rows: peers/a2a/security_schemes.py),
each loading only its own module, so a peer serving Basic never loads OAuth2's token signing.
Not here: the schemes themselves (one module each, beside this one).
"""
from __future__ import annotations

from peers.a2a.security_schemes import SCHEME_KINDS
from peers.schemes import Scheme

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

KINDS = tuple(SCHEME_KINDS)  # bearer, apikey, basic, oauth2, oidc, mtls


def make_scheme(kind: str, secret: str, base_url: str, endpoint: str, realm: str, *,
                signing_key: Any = None, clock: Any = None) -> Scheme:
    """The scheme `kind` (one of KINDS but bearer, which peers/app.py keeps), with `secret`:
    the API key, "user:password", or "client-id:client-secret"; mtls takes none (ValueError
    if given one, as for a secret its scheme cannot use).
    `signing_key` (an rs256.PrivateKey) signs oauth2's and oidc's access tokens: a key of
    their own, no card's (peers/serving.py scheme_for makes one)."""
    if kind == "apikey":
        from peers.schemes.api_key import ApiKey
        return ApiKey(secret, realm)
    if kind == "basic":
        from peers.schemes.http_basic import Basic
        return Basic(secret, realm)
    if kind in ("oauth2", "oidc"):
        from peers.schemes.oauth2 import ClientCredentials
        return ClientCredentials(secret, base_url, endpoint, realm, signing_key, discovery=kind == "oidc",
                                 clock=clock)
    if kind == "mtls":
        if secret:  # never ignored in silence: its holder would believe it protects something
            raise ValueError("mtls takes no secret (--token or $A2A_SERVE_TOKEN): the client certificate "
                             "is the credential")
        from peers.schemes.mutual_tls import MutualTls
        return MutualTls(realm)
    raise ValueError(f"no scheme {kind!r}: one of {', '.join(KINDS)}")
