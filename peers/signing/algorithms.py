"""The JWS algorithms a card signature may use, one row each, and the JWK kind of key each takes.

A2A 1.0 section 8.4 signs cards with JWS (RFC 7515) and names no one algorithm; its own
example is ES256. Three are checked here, each by a module of the same few functions
(`verify`, `sign`, `public_from_jwk`, `private_from_jwk` where a key file is a JWK):
RS256 (rs256.py, an RSA key), ES256 (es256.py, an EC key on P-256) and EdDSA (ed25519.py,
an OKP key on Ed25519). A pinned key is a JWK of one of these kinds, and its kind names
the one algorithm a signature must use to be checked against it: the header's `alg` only
has to agree (so `none`, HS256 "keyed" with a public key, or an RS256 header over an EC
pin are never tried), and its `kid`, `jku` or `jwk` never chooses the key.
Not here: the card's signed bytes (card_signature.py), other algorithms or curves.
"""
from __future__ import annotations

from types import ModuleType

from peers.signing import ed25519, es256, rs256
from peers.signing.rs256 import BadKey

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

ALGORITHMS: dict[str, ModuleType] = {"RS256": rs256, "ES256": es256, "EdDSA": ed25519}  # JWS alg -> its module
KINDS = {"RSA": "RS256", "EC": "ES256", "OKP": "EdDSA"}  # a JWK's kty -> the one alg a key of it signs with
NAMES = {"RS256": "RSA", "ES256": "EC P-256", "EdDSA": "Ed25519"}  # each kind, as a person names it


def module_of(key: Any) -> ModuleType:
    """The module that checks (and makes) signatures with `key`: the row of the alg it is for."""
    return ALGORITHMS[key.ALGORITHM]


def public_from_jwk(jwk: object) -> Any:
    """The public key a JWK pins, of the kind its `kty` says; BadKey naming what is wrong."""
    kind = jwk.get("kty") if isinstance(jwk, dict) else None
    if not isinstance(kind, str) or kind not in KINDS:  # a list or an object is no kty (and unhashable)
        raise BadKey('a public key is a JWK object with "kty" "RSA", "EC" (crv P-256) or "OKP" (crv Ed25519)')
    if "d" in jwk:  # type: ignore[operator]
        raise BadKey('the JWK holds a private key ("d"): pin only its public half')
    declared = jwk.get("alg")  # type: ignore[union-attr]
    if declared is not None and declared != KINDS[kind]:  # RFC 7517 4.4: the key is for that alg only
        raise BadKey(f'the JWK says "alg": {str(declared)[:20]!r}, but an {kind} key signs with {KINDS[kind]}')
    return ALGORITHMS[KINDS[kind]].public_from_jwk(jwk)


def private_from_jwk(jwk: object) -> Any:
    """The private key in a JWK with `d`: EC P-256 or Ed25519 (an RSA key is a PEM file, rs256.py)."""
    kind = jwk.get("kty") if isinstance(jwk, dict) else None
    if kind not in ("EC", "OKP"):
        raise BadKey('a private key JWK has "kty" "EC" (crv P-256) or "OKP" (crv Ed25519); an RSA key is a PEM file')
    declared = jwk.get("alg")  # type: ignore[union-attr]
    if declared is not None and declared != KINDS[kind]:  # RFC 7517 4.4, as for a pin above
        raise BadKey(f'the JWK says "alg": {str(declared)[:20]!r}, but an {kind} key signs with {KINDS[kind]}')
    return ALGORITHMS[KINDS[kind]].private_from_jwk(jwk)
