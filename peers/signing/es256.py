"""ES256 (ECDSA on the curve P-256 with SHA-256) with the standard library: keys, signing, checking.

A2A 1.0 section 8.4's own example card signature is ES256. The curve is FIPS 186's P-256
(y^2 = x^3 - 3x + b over the prime p, a base point G of prime order n, cofactor 1); the
signature is FIPS 186 ECDSA, and JWS writes it as the 64 bytes r || s, each 32 bytes
big-endian (RFC 7518 section 3.4: not DER). Checking takes r and s in 1 .. n-1 only, and
a public key only if it is a point on the curve (a point off it, from a hostile JWK,
would put the arithmetic on another, weaker curve). Signing draws k from the key and the
message as RFC 6979 says (deterministic: no random source to fail, and the RFC's own
test vectors pin the result).

Signing here is NOT constant-time: Python's integers take longer for some values than
others, and the scalar's bits choose the branches, so the time a signature takes can
leak the private key to someone who measures many. It signs the demo's published DEMO
keys only; a real signer uses a vetted library. Checking uses only public values.

A public key is a JWK (RFC 7518 section 6.2: kty EC, crv P-256, x and y of 32 bytes),
its `kid` the RFC 7638 thumbprint; a private key is the same JWK with `d`. Not here: other
curves, compressed points, PEM files.
"""
from __future__ import annotations

import hashlib
import hmac

from peers.signing.jcs import canonical
from peers.signing.rs256 import BadKey, b64url, from_b64url, int_bytes
from transports.records import Record

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Iterator

ALGORITHM = "ES256"
# P-256 (FIPS 186-4 D.1.2.3; SEC 2 secp256r1), with a = -3.
PRIME = 0xFFFFFFFF00000001000000000000000000000000FFFFFFFFFFFFFFFFFFFFFFFF
CURVE_B = 0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B
ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
BASE = (0x6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296,
     0x4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5)
SIZE = 32  # bytes in a coordinate, in r and in s


class PublicKey(Record):
    x: int
    y: int
    ALGORITHM = ALGORITHM

    def jwk(self) -> dict[str, str]:
        members = {"crv": "P-256", "kty": "EC", "x": b64url(int_bytes(self.x, SIZE)),
                   "y": b64url(int_bytes(self.y, SIZE))}
        return {**members, "kid": b64url(hashlib.sha256(canonical(members)).digest())}


class PrivateKey(Record):
    d: int  # the secret scalar, 1 .. n-1
    public: PublicKey
    ALGORITHM = ALGORITHM


def on_curve(px: int, py: int) -> bool:
    return 0 <= px < PRIME and 0 <= py < PRIME and (py * py - (px * px * px - 3 * px + CURVE_B)) % PRIME == 0


# -- points, in Jacobian coordinates (X, Y, Z) for x = X/Z^2, y = Y/Z^3: no inversion per step --

INFINITY = (1, 1, 0)  # the group's identity: Z = 0


def _double(point: tuple[int, int, int]) -> tuple[int, int, int]:
    x1, y1, z1 = point
    if z1 == 0 or y1 == 0:
        return INFINITY
    delta, gamma = z1 * z1 % PRIME, y1 * y1 % PRIME
    beta, alpha = x1 * gamma % PRIME, 3 * (x1 - delta) * (x1 + delta) % PRIME  # the slope's numerator, with a = -3
    x3 = (alpha * alpha - 8 * beta) % PRIME
    z3 = ((y1 + z1) ** 2 - gamma - delta) % PRIME
    return x3, (alpha * (4 * beta - x3) - 8 * gamma * gamma) % PRIME, z3


def _add(first: tuple[int, int, int], second: tuple[int, int, int]) -> tuple[int, int, int]:
    if first[2] == 0:
        return second
    if second[2] == 0:
        return first
    (x1, y1, z1), (x2, y2, z2) = first, second
    z1z1, z2z2 = z1 * z1 % PRIME, z2 * z2 % PRIME
    u1, u2 = x1 * z2z2 % PRIME, x2 * z1z1 % PRIME  # both x's over the common denominator
    s1, s2 = y1 * z2 * z2z2 % PRIME, y2 * z1 * z1z1 % PRIME
    if u1 == u2:  # the same x: the same point (double it) or its negative (the sum is the identity)
        return _double(first) if s1 == s2 else INFINITY
    height, rise = (u2 - u1) % PRIME, (s2 - s1) % PRIME
    height2 = height * height % PRIME
    height3, across = height * height2 % PRIME, u1 * height2 % PRIME
    x3 = (rise * rise - height3 - 2 * across) % PRIME
    return x3, (rise * (across - x3) - s1 * height3) % PRIME, height * z1 * z2 % PRIME


def _affine(point: tuple[int, int, int]) -> tuple[int, int] | None:
    if point[2] == 0:
        return None
    inverse = pow(point[2], -1, PRIME)
    return point[0] * inverse * inverse % PRIME, point[1] * inverse ** 3 % PRIME


def _combination(first: int, second: int, other: tuple[int, int]) -> tuple[int, int] | None:
    """first*G + second*other, one pass over the scalars' bits (Shamir's trick); None: the identity."""
    base, point, total = (*BASE, 1), (*other, 1), INFINITY
    for bit in range(max(first.bit_length(), second.bit_length()) - 1, -1, -1):
        total = _double(total)
        if first >> bit & 1:
            total = _add(total, base)
        if second >> bit & 1:
            total = _add(total, point)
    return _affine(total)


# -- ECDSA ----------------------------------------------------------------------------------

def verify(key: PublicKey, data: bytes, signature: bytes) -> bool:
    """Whether `signature` (r || s, 64 bytes) is `key`'s ES256 signature of `data`."""
    if not isinstance(signature, bytes) or len(signature) != 2 * SIZE:
        return False
    r_value, s_value = int.from_bytes(signature[:SIZE], "big"), int.from_bytes(signature[SIZE:], "big")
    if not (0 < r_value < ORDER and 0 < s_value < ORDER):
        return False
    inverse = pow(s_value, -1, ORDER)
    point = _combination(_digest(data) * inverse % ORDER, r_value * inverse % ORDER, (key.x, key.y))
    return point is not None and point[0] % ORDER == r_value


def sign(key: PrivateKey, data: bytes) -> bytes:
    """`key`'s ES256 signature of `data`, k as RFC 6979 section 3.2 draws it. Not constant-time:
    for demo keys only (see above)."""
    digest = _digest(data)
    for nonce in _nonces(key.d, digest):  # RFC 6979's k
        point = _combination(nonce, 0, BASE)
        r_value = point[0] % ORDER if point else 0
        s_value = pow(nonce, -1, ORDER) * (digest + r_value * key.d) % ORDER
        if r_value and s_value:
            return int_bytes(r_value, SIZE) + int_bytes(s_value, SIZE)
    raise RuntimeError("no nonce gave a signature")  # odds below 2**-200: not reached


def _digest(data: bytes) -> int:
    return int.from_bytes(hashlib.sha256(data).digest(), "big")  # 256 bits, as n has: nothing to cut


def _nonces(secret: int, digest: int) -> Iterator[int]:
    """RFC 6979 section 3.2's candidates for k, HMAC-SHA256 over the key and the digest, in order."""
    seed = int_bytes(secret, SIZE) + int_bytes(digest % ORDER, SIZE)
    value, key = b"\x01" * 32, b"\x00" * 32
    for separator in (b"\x00", b"\x01"):
        key = hmac.digest(key, value + separator + seed, "sha256")
        value = hmac.digest(key, value, "sha256")
    for _ in range(64):  # each candidate is out of range with odds of about 2**-32
        value = hmac.digest(key, value, "sha256")
        candidate = int.from_bytes(value, "big")
        if 0 < candidate < ORDER:
            yield candidate
        key = hmac.digest(key, value + b"\x00", "sha256")
        value = hmac.digest(key, value, "sha256")


# -- keys: JWK ------------------------------------------------------------------------------

def public_from_jwk(jwk: object) -> PublicKey:
    """A JWK's P-256 public key (kty EC, crv P-256, x and y of 32 bytes each, a point on the
    curve); BadKey if not."""
    if not isinstance(jwk, dict) or jwk.get("kty") != "EC" or jwk.get("crv") != "P-256":
        raise BadKey('an EC public key is a JWK object with "kty": "EC" and "crv": "P-256"')
    px, py = (_coordinate(jwk, name) for name in ("x", "y"))
    if not on_curve(px, py):
        raise BadKey("the JWK's x and y are not a point on the curve P-256")
    return PublicKey(px, py)


def private_from_jwk(jwk: object) -> PrivateKey:
    """A JWK's P-256 private key (the public members and `d`, 1 .. n-1, whose point they are)."""
    public = public_from_jwk(jwk)
    secret = _coordinate(jwk, "d")  # type: ignore[arg-type]
    if not 0 < secret < ORDER or _combination(secret, 0, BASE) != (public.x, public.y):
        raise BadKey('the JWK\'s "d" is not the private half of its x and y')
    return PrivateKey(secret, public)


def _coordinate(jwk: dict, name: str) -> int:
    try:
        value = from_b64url(jwk.get(name))
    except ValueError:
        value = b""
    if len(value) != SIZE:  # RFC 7518 6.2.1.2: the full 32 bytes, leading zeros kept
        raise BadKey(f'the JWK\'s "{name}" must be {SIZE} bytes, base64url')
    return int.from_bytes(value, "big")
