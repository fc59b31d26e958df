"""Signed Agent Cards: who made this card? (A2A 1.0 section 8.4; RFC 7515 JWS; RFC 8785 JCS.)

A card is signed with a detached JWS: each entry of its `signatures` holds a
base64url `protected` header (naming `alg`, `typ: JOSE` and the key's `kid`) and the
base64url `signature` over `protected + "." + base64url(payload)`. The payload is the
card itself: without its `signatures` member and without nulls, empty strings, lists
and objects (dropped recursively, as the official SDK does, so a signature made by either
verifies in the other), in RFC 8785 canonical form (jcs.py).

What a signature proves: that whoever holds the private key made these exact bytes.
Not that the key is billing's: that comes from the allowlist, which pins the key, out
of band. So a header's `jku` or `jwk` (a key the card offers for its own checking) is
never fetched or used, nor is a `kid` looked up: the pinned key alone decides. The pin's
kind (an RSA, EC P-256 or Ed25519 JWK) says the one algorithm checked (RS256, ES256 or
EdDSA: algorithms.py); a signature whose header names another is not tried, which closes
the "alg: none" and algorithm-confusion doors.
"""
from __future__ import annotations

from peers.signing.jcs import canonical
from transports.codec import loads_strict
from transports.records import Record

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

# The algorithms (and hashlib, 10 ms to load) are imported only when a card is signed or checked.
MAX_SIGNATURES = 8  # a card with more is not checked further: nobody signs one card 1,000 times


class SignedContent(Record):
    """What a fetched card's signatures cover, and the signatures as sent."""

    payload: bytes | None  # None: the card has no canonical form (so nothing can verify)
    signatures: tuple[Any, ...]


def payload(document: dict[str, Any]) -> bytes:
    """The bytes a card's signatures sign: the card without `signatures` or empty values, JCS."""
    return canonical(_without_empty({k: v for k, v in document.items() if k != "signatures"}))


def _without_empty(value: Any) -> Any:
    if isinstance(value, dict):
        kept = {k: v for k, v in ((k, _without_empty(v)) for k, v in value.items()) if v is not None}
        return kept or None
    if isinstance(value, list):
        kept_items = [v for v in (_without_empty(item) for item in value) if v is not None]
        return kept_items or None
    return None if value == "" else value


def sign(document: dict[str, Any], key: Any) -> dict[str, Any]:
    """`document` with one more signature, by `key` (a private key of any kind algorithms.py has)."""
    from peers.signing import rs256
    from peers.signing.algorithms import module_of
    header = {"alg": key.ALGORITHM, "kid": key.public.jwk()["kid"], "typ": "JOSE"}
    protected = rs256.b64url(canonical(header))
    signing_input = f"{protected}.{rs256.b64url(payload(document))}".encode("ascii")
    entry = {"protected": protected, "signature": rs256.b64url(module_of(key).sign(key, signing_input))}
    return {**document, "signatures": [*document.get("signatures", []), entry]}


def signed_content(document: Any) -> SignedContent:
    signatures = document.get("signatures") if isinstance(document, dict) else None
    if not isinstance(signatures, list) or not signatures:
        return SignedContent(None, ())
    try:
        return SignedContent(payload(document), tuple(signatures[:MAX_SIGNATURES]))
    except ValueError:  # no canonical form (a lone surrogate, say): no signature can verify
        return SignedContent(None, tuple(signatures[:MAX_SIGNATURES]))


def unproven(signed: SignedContent | None, pinned: Any) -> str | None:
    """Why the card is not shown to be made by the holder of `pinned` (a public key of any
    kind algorithms.py has); None if it is."""
    from peers.signing import rs256
    from peers.signing.algorithms import module_of
    if signed is None or not signed.signatures:
        return "has an unsigned card, but the allowlist pins a key for it"
    algorithm, kids = pinned.ALGORITHM, []  # the pin says the algorithm; a header only agrees with it
    for entry in signed.signatures:
        header = _header(entry)
        if header is None or header.get("alg") != algorithm or "crit" in header or "b64" in header:
            continue  # not a signature we can check (RFC 7515 4.1.11: an unknown `crit` is refused)
        kids.append(header.get("kid"))
        try:
            signature = rs256.from_b64url(entry["signature"])
        except ValueError:
            continue
        if signed.payload is not None and module_of(pinned).verify(
                pinned, f"{entry['protected']}.{rs256.b64url(signed.payload)}".encode("ascii"), signature):
            return None
    if not kids:
        return f"has a card with no {algorithm} signature the pinned key could check"
    if signed.payload is None:
        return "has a card with no canonical form (RFC 8785), so no signature of it can be checked"
    # What was checked is the signature, not who made it: a header's kid is only a label (anyone can write one)
    if pinned.jwk()["kid"] not in kids:
        return (f"has a card whose signature does not verify under the pinned key, and names another key "
                f"(kid {str(kids[0])[:60]!r}), not the one the allowlist pins")
    return ("has a card whose signature does not verify under the pinned key: altered after it was signed, or "
            "signed by another key claiming the pinned key's kid")


def _header(entry: Any) -> dict[str, Any] | None:
    from peers.signing import rs256
    if not isinstance(entry, dict) or not isinstance(entry.get("protected"), str) \
            or not isinstance(entry.get("signature"), str):
        return None
    try:
        header = loads_strict(rs256.from_b64url(entry["protected"]))  # bounded: depth, size
    except ValueError:  # not base64url, not UTF-8, not JSON
        return None
    return header if isinstance(header, dict) else None
