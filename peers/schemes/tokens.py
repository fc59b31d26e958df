"""The access tokens oauth2 and oidc issue and check: short-lived RS256 JWTs (RFC 9068).

A token is `header.claims.signature`, each base64url: the header says RS256 and the
peer's key id; the claims say who it was issued to (`sub`, `client_id`), for which
endpoint (`aud`), by whom (`iss`), when (`iat`, `nbf`, `exp`) and what it allows
(`scope`). Checking trusts nothing a token says about itself: the algorithm must be
RS256 exactly (no `none`, no HS256 "keyed" with our public key), the signature is
checked with the one key this peer holds, never a key the header names (`kid`, `jku`,
`jwk` are not followed), then audience, time window and scope. Every failure is one
line for the log; the caller sees only the 401. Not here: the token endpoint (oauth2.py),
refresh tokens, other algorithms.
"""
from __future__ import annotations

import json
import time

from peers.schemes import MAX_CREDENTIAL
from peers.signing import rs256

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable

LIFETIME = 300  # seconds: long enough for a delegation, short enough that a leaked token soon dies
LEEWAY = 5  # seconds of clock difference forgiven on exp and nbf


class BadToken(ValueError):
    """A token this peer does not accept; the text says why (for the log, not the wire)."""


def issue(key: rs256.PrivateKey, issuer: str, audience: str, subject: str, scope: str,
          now: float) -> str:
    header = {"alg": "RS256", "typ": "at+jwt", "kid": key.public.jwk()["kid"]}
    claims = {"iss": issuer, "sub": subject, "client_id": subject, "aud": audience, "scope": scope,
              "iat": int(now), "nbf": int(now), "exp": int(now) + LIFETIME, "jti": rs256.b64url(_random())}
    signing_input = f"{_part(header)}.{_part(claims)}"
    return signing_input + "." + rs256.b64url(rs256.sign(key, signing_input.encode()))


def check(token: str, key: rs256.PublicKey, audience: str, required: str,
          clock: Callable[[], float] = time.time) -> dict[str, Any]:
    """The claims of `token`, if this peer issued it for `audience` and it is valid now
    and grants `required`; else BadToken."""
    if len(token) > MAX_CREDENTIAL or token.count(".") != 2:
        raise BadToken("not a JWT of three parts within the size limit")
    header_part, claims_part, signature_part = token.split(".")
    header, claims = _decoded(header_part, "header"), _decoded(claims_part, "claims")
    if header.get("alg") != "RS256":  # alg is the attacker's choice until refused here
        raise BadToken(f"alg {str(header.get('alg'))[:20]!r} is not RS256")
    try:
        signature = rs256.from_b64url(signature_part)
    except ValueError:
        raise BadToken("the signature is not base64url") from None
    # Our own key, whatever kid, jku or jwk the header names.
    if not rs256.verify(key, f"{header_part}.{claims_part}".encode(), signature):
        raise BadToken("the signature is not this peer's")
    if claims.get("aud") != audience and not (isinstance(claims.get("aud"), list) and audience in claims["aud"]):
        raise BadToken("issued for another audience")
    now = clock()
    expires, not_before = claims.get("exp"), claims.get("nbf", claims.get("iat"))
    if not isinstance(expires, int) or isinstance(expires, bool) or now > expires + LEEWAY:
        raise BadToken("expired, or no expiry")
    if not isinstance(not_before, int) or isinstance(not_before, bool) or now + LEEWAY < not_before:
        raise BadToken("not valid yet")
    scopes = claims.get("scope")
    if not isinstance(scopes, str) or required not in scopes.split():
        raise BadToken(f"the scope does not include {required}")
    if not isinstance(claims.get("sub"), str) or not claims["sub"]:
        raise BadToken("no subject")
    return claims


def _decoded(part: str, what: str) -> dict[str, Any]:
    try:
        value = json.loads(rs256.from_b64url(part), object_pairs_hook=_no_duplicates)
    except (ValueError, RecursionError):
        raise BadToken(f"the {what} is not base64url JSON") from None
    if not isinstance(value, dict):
        raise BadToken(f"the {what} is not a JSON object")
    return value


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    names = [name for name, _ in pairs]
    if len(set(names)) != len(names):  # two "aud"s: which one was checked?
        raise ValueError("duplicate member")
    return dict(pairs)


def _part(value: dict[str, Any]) -> str:
    return rs256.b64url(json.dumps(value, separators=(",", ":")).encode())


def _random() -> bytes:
    import os
    return os.urandom(12)
