"""EdDSA with Ed25519 (RFC 8032) in the standard library: keys, signing, checking.

JWS names it `alg: EdDSA` (RFC 8037). The curve is the twisted Edwards curve
-x^2 + y^2 = 1 + d x^2 y^2 over p = 2^255 - 19, its base point B of prime order L (the
whole group is 8 times larger: the cofactor). A point is written as 32 bytes: y, little-endian,
with x's low bit in the top bit. A signature is R (a point) || S (a number below L), 64
bytes; it holds if [S]B = R + [k]A, where A is the public key and k = SHA-512(R || A || M)
read as a number (RFC 8032 section 5.1.7, the equation without the cofactor, as OpenSSL
checks it).

Checking is strict where a lax check lets forgeries in: S must be below L (else one
signature has many spellings), A and R must be in their one canonical encoding (y below p),
and neither may be a point of small order (a pinned key of small order, the identity
say, would verify a made-up signature of anything; a small-order R is refused as
libsodium refuses it). R is compared as the bytes [S]B - [k]A encodes to.

Signing here is NOT constant-time: Python's integers and the scalar's bits choosing the
branches let the time a signature takes leak the key to someone who measures many. It
signs the demo's published DEMO keys only; a real signer uses a vetted library. Checking
uses only public values.

A public key is a JWK (RFC 8037: kty OKP, crv Ed25519, x: the 32-byte point), its `kid`
the RFC 7638 thumbprint; a private key is the same JWK with `d` (the 32-byte seed).
Not here: Ed448, the prehashed or context variants, PEM files.
"""
from __future__ import annotations

import hashlib

from peers.signing.jcs import canonical
from peers.signing.rs256 import BadKey, b64url, from_b64url
from transports.records import Record

ALGORITHM = "EdDSA"
PRIME = 2**255 - 19
ORDER = 2**252 + 27742317777372353535851937790883648493  # the base point's order
CURVE_D = -121665 * pow(121666, -1, PRIME) % PRIME
SQRT_MINUS_ONE = pow(2, (PRIME - 1) // 4, PRIME)
SIZE = 32  # bytes in a point, in S, in a seed

Point = tuple[int, int, int, int]  # extended coordinates (X, Y, Z, T): x = X/Z, y = Y/Z, x*y = T/Z
IDENTITY: Point = (0, 1, 1, 0)


class PublicKey(Record):
    encoded: bytes  # the point A, as 32 bytes
    ALGORITHM = ALGORITHM

    def jwk(self) -> dict[str, str]:
        members = {"crv": "Ed25519", "kty": "OKP", "x": b64url(self.encoded)}
        return {**members, "kid": b64url(hashlib.sha256(canonical(members)).digest())}


class PrivateKey(Record):
    seed: bytes  # the 32 secret bytes RFC 8032 calls the private key
    public: PublicKey
    ALGORITHM = ALGORITHM


def _add(first: Point, second: Point) -> Point:
    """The sum of two points (RFC 8032 5.1.4's formulas: complete, so they double a point too)."""
    x1, y1, z1, t1 = first
    x2, y2, z2, t2 = second
    minus, plus = (y1 - x1) * (y2 - x2) % PRIME, (y1 + x1) * (y2 + x2) % PRIME
    cross, zz = 2 * CURVE_D * t1 * t2 % PRIME, 2 * z1 * z2 % PRIME
    ee, ff, gg, hh = plus - minus, zz - cross, zz + cross, plus + minus  # the RFC's E, F, G, H
    return ee * ff % PRIME, gg * hh % PRIME, ff * gg % PRIME, ee * hh % PRIME


def _combination(first: int, first_point: Point, second: int = 0, second_point: Point = IDENTITY) -> Point:
    """first*first_point + second*second_point, one pass over the scalars' bits (Shamir's trick)."""
    total = IDENTITY
    for bit in range(max(first.bit_length(), second.bit_length()) - 1, -1, -1):
        total = _add(total, total)
        if first >> bit & 1:
            total = _add(total, first_point)
        if second >> bit & 1:
            total = _add(total, second_point)
    return total


def _times(scalar: int, point: Point) -> Point:
    return _combination(scalar, point)


def _encode(point: Point) -> bytes:
    inverse = pow(point[2], -1, PRIME)
    px, py = point[0] * inverse % PRIME, point[1] * inverse % PRIME
    return (py | (px & 1) << 255).to_bytes(SIZE, "little")


def _decode(data: bytes) -> Point | None:
    """The point 32 bytes encode (RFC 8032 5.1.3), or None: y not below p, or no x for it."""
    if len(data) != SIZE:
        return None
    number = int.from_bytes(data, "little")
    py, sign = number & ((1 << 255) - 1), number >> 255
    if py >= PRIME:
        return None  # a second spelling of y - p: refused, so each point has one encoding
    x_squared = (py * py - 1) * pow(CURVE_D * py * py + 1, -1, PRIME) % PRIME
    px = pow(x_squared, (PRIME + 3) // 8, PRIME)  # a square root, if there is one (p = 5 mod 8) ...
    if px * px % PRIME != x_squared:
        px = px * SQRT_MINUS_ONE % PRIME  # ... or this one
    if px * px % PRIME != x_squared or (px == 0 and sign):
        return None
    if px & 1 != sign:
        px = PRIME - px
    return px, py, 1, px * py % PRIME


# The base point B: y = 4/5, x the even root.
BASE: Point = _decode((4 * pow(5, -1, PRIME) % PRIME).to_bytes(SIZE, "little"))  # type: ignore[assignment]


def _small_order(point: Point) -> bool:
    """Whether 8 * point is the identity (one of the 8 points of small order)."""
    for _ in range(3):
        point = _add(point, point)
    return point[0] % PRIME == 0 and (point[1] - point[2]) % PRIME == 0


def _key_point(data: bytes) -> Point | None:
    """A public key or an R: canonically encoded, on the curve, of no small order; or None."""
    point = _decode(data)
    return None if point is None or _small_order(point) else point


def _challenge(encoded_r: bytes, encoded_a: bytes, data: bytes) -> int:
    return int.from_bytes(hashlib.sha512(encoded_r + encoded_a + data).digest(), "little") % ORDER


def verify(key: PublicKey, data: bytes, signature: bytes) -> bool:
    """Whether `signature` (R || S, 64 bytes) is `key`'s Ed25519 signature of `data`."""
    if not isinstance(signature, bytes) or len(signature) != 2 * SIZE:
        return False
    encoded_r, s_value = signature[:SIZE], int.from_bytes(signature[SIZE:], "little")
    public = _key_point(key.encoded)
    if s_value >= ORDER or public is None or _key_point(encoded_r) is None:
        return False
    ax, ay, az, at = public
    minus_public = (PRIME - ax, ay, az, PRIME - at)  # -A: x negated
    challenge = _challenge(encoded_r, key.encoded, data)
    return _encode(_combination(s_value, BASE, challenge, minus_public)) == encoded_r  # [S]B - [k]A, spelled as R


def sign(key: PrivateKey, data: bytes) -> bytes:
    """`key`'s Ed25519 signature of `data` (RFC 8032 5.1.6). Not constant-time: for demo keys only."""
    secret, prefix = _expanded(key.seed)
    nonce = int.from_bytes(hashlib.sha512(prefix + data).digest(), "little") % ORDER  # the RFC's r
    encoded_r = _encode(_times(nonce, BASE))
    s_value = (nonce + _challenge(encoded_r, key.public.encoded, data) * secret) % ORDER
    return encoded_r + s_value.to_bytes(SIZE, "little")


def _expanded(seed: bytes) -> tuple[int, bytes]:
    """The secret scalar (the hash's first half, its bits set as RFC 8032 5.1.5 says) and the prefix."""
    digest = hashlib.sha512(seed).digest()
    scalar = int.from_bytes(digest[:SIZE], "little") & ~7 & ((1 << 254) - 1) | (1 << 254)
    return scalar, digest[SIZE:]


def private_from_seed(seed: bytes) -> PrivateKey:
    return PrivateKey(seed, PublicKey(_encode(_times(_expanded(seed)[0], BASE))))


# -- keys: JWK ------------------------------------------------------------------------------

def public_from_jwk(jwk: object) -> PublicKey:
    """A JWK's Ed25519 public key (kty OKP, crv Ed25519, x: a point of 32 bytes, of no small
    order); BadKey if not."""
    if not isinstance(jwk, dict) or jwk.get("kty") != "OKP" or jwk.get("crv") != "Ed25519":
        raise BadKey('an Ed25519 public key is a JWK object with "kty": "OKP" and "crv": "Ed25519"')
    encoded = _member(jwk, "x")
    if _key_point(encoded) is None:
        raise BadKey('the JWK\'s "x" is not a point of the curve Ed25519 in its one encoding, or is of small order')
    return PublicKey(encoded)


def private_from_jwk(jwk: object) -> PrivateKey:
    """A JWK's Ed25519 private key: its public members and `d`, the seed whose key `x` is."""
    public = public_from_jwk(jwk)
    key = private_from_seed(_member(jwk, "d"))  # type: ignore[arg-type]
    if key.public != public:
        raise BadKey('the JWK\'s "d" is not the private half of its "x"')
    return key


def _member(jwk: dict, name: str) -> bytes:
    try:
        value = from_b64url(jwk.get(name))
    except ValueError:
        value = b""
    if len(value) != SIZE:
        raise BadKey(f'the JWK\'s "{name}" must be {SIZE} bytes, base64url')
    return value
