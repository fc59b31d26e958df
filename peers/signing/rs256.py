"""RS256 (RSASSA-PKCS1-v1_5 with SHA-256) with the standard library: keys, signing, checking.

A2A 1.0 section 8.4 signs Agent Cards with JWS; RS256 is the algorithm every JOSE
library has. RFC 8017 says all there is to it: a signature is the number
EM ** d mod n, where EM is 0x00 0x01, padding of 0xFF, 0x00, and the SHA-256 digest in
its ASN.1 DigestInfo; checking raises the signature to e and compares EM byte for byte
(never parsing it, which is how Bleichenbacher-style forgeries get in). Keys are read
from PEM files in both usual layouts, PKCS#8 (`BEGIN PRIVATE KEY`) and PKCS#1
(`BEGIN RSA PRIVATE KEY`), by a strict DER reader of the few types they use; a public
key is a JWK (RFC 7517), its `kid` the RFC 7638 thumbprint. Not here: making keys
(new_key.py), other algorithms (algorithms.py has them), encrypted key files, certificates.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets

from peers.signing.jcs import canonical
from transports.records import Record

RSA_OID = bytes.fromhex("2a864886f70d010101")  # 1.2.840.113549.1.1.1, rsaEncryption
SHA256_DIGEST_INFO = bytes.fromhex("3031300d060960864801650304020105000420")
MIN_BITS, MAX_BITS = 2048, 8192


class BadKey(ValueError):
    """A key file or JWK that is not a usable RSA key; the text says why."""


class PublicKey(Record):
    n: int
    e: int
    ALGORITHM = "RS256"  # the one JWS alg this kind of key signs with (algorithms.py)

    @property
    def size(self) -> int:  # bytes in a signature
        return (self.n.bit_length() + 7) // 8

    def jwk(self) -> dict[str, str]:
        members = {"e": b64url(int_bytes(self.e)), "kty": "RSA", "n": b64url(int_bytes(self.n))}
        return {**members, "kid": b64url(hashlib.sha256(canonical(members)).digest())}


class PrivateKey(Record):
    n: int
    e: int
    d: int
    primes: tuple[int, int] = (0, 0)  # p and q, as a key file keeps them
    ALGORITHM = "RS256"

    @property
    def public(self) -> PublicKey:
        return PublicKey(self.n, self.e)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def from_b64url(text: str) -> bytes:
    """Base64url without padding, strictly (RFC 7515 section 2), in its one spelling (no
    stray bits in the last character, so a signature cannot be respelled and still
    verify): ValueError otherwise."""
    if not isinstance(text, str) or not re.fullmatch(r"[A-Za-z0-9_-]*", text) or len(text) % 4 == 1:
        raise ValueError("not base64url text")
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if b64url(data) != text:
        raise ValueError("not base64url text in its one spelling")
    return data


def sign(key: PrivateKey, data: bytes) -> bytes:
    """`data`'s RS256 signature by `key`, blinded (the result is the same): pow's time depends on the number it
    raises, so a server signing what a caller influences (a token) raises a random multiple of it, then divides
    the random factor out; what it takes shows nothing of `d` (Kocher's timing attack; RFC 8017 5.1.2's note)."""
    blind = secrets.randbelow(key.n - 2) + 2
    raised = pow(int.from_bytes(_encoded(data, key.public.size), "big") * pow(blind, key.e, key.n), key.d, key.n)
    return int_bytes(raised * pow(blind, -1, key.n) % key.n, key.public.size)


def verify(key: PublicKey, data: bytes, signature: bytes) -> bool:
    """Whether `signature` is `key`'s RS256 signature of `data`."""
    if len(signature) != key.size or int.from_bytes(signature, "big") >= key.n:
        return False
    recovered = int_bytes(pow(int.from_bytes(signature, "big"), key.e, key.n), key.size)
    return hmac.compare_digest(recovered, _encoded(data, key.size))


def _encoded(data: bytes, size: int) -> bytes:
    """EMSA-PKCS1-v1_5 (RFC 8017 section 9.2) for SHA-256."""
    digest = SHA256_DIGEST_INFO + hashlib.sha256(data).digest()
    return b"\x00\x01" + b"\xff" * (size - len(digest) - 3) + b"\x00" + digest


def int_bytes(number: int, size: int | None = None) -> bytes:
    return number.to_bytes(size or max(1, (number.bit_length() + 7) // 8), "big")


# -- keys: JWK, PEM, DER -------------------------------------------------------------------

def public_from_jwk(jwk: object) -> PublicKey:
    """A JWK's RSA public key (kty RSA, n, e), of MIN_BITS to MAX_BITS; BadKey if not."""
    if not isinstance(jwk, dict) or jwk.get("kty") != "RSA":
        raise BadKey('a public key is a JWK object with "kty": "RSA"')
    try:
        modulus, exponent = (int.from_bytes(from_b64url(jwk.get(name)), "big") for name in ("n", "e"))
    except ValueError:
        raise BadKey('the JWK\'s "n" and "e" must be base64url numbers') from None
    return _checked(PublicKey(modulus, exponent))


def _checked(key: PublicKey) -> PublicKey:
    # An exponent beyond 2**32 is no stronger, only slower: a pinned key with a huge one
    # would make every forged signature cost a second to check (OpenSSL caps it too).
    if not MIN_BITS <= key.n.bit_length() <= MAX_BITS or not 3 <= key.e < 2**32 or key.e % 2 == 0:
        raise BadKey(f"not an RSA key of {MIN_BITS} to {MAX_BITS} bits with an odd exponent below 2**32")
    return key


def private_from_pem(text: str) -> PrivateKey:
    """The key in a PEM file: PKCS#8 or PKCS#1, unencrypted. BadKey naming the problem."""
    if not isinstance(text, str) or text.count("-----BEGIN ") > 1:
        raise BadKey("a key file holds one PEM block of text")
    found = re.search(r"-----BEGIN ((?:RSA )?)PRIVATE KEY-----([A-Za-z0-9+/=\s]+)-----END \1PRIVATE KEY-----", text)
    if found is None:
        raise BadKey("no unencrypted 'BEGIN PRIVATE KEY' or 'BEGIN RSA PRIVATE KEY' block")
    try:
        der = base64.b64decode("".join(found.group(2).split()), validate=True)
        if not found.group(1):  # PKCS#8: version, the algorithm, then the PKCS#1 key inside
            version, algorithm, inner = _sequence(der, 3)
            if _der(algorithm, 0x30)[0:1] != b"\x06" or _sequence(algorithm, None)[0] != RSA_OID:
                raise BadKey("the PKCS#8 key is not an RSA key")
            der = _der(inner, 0x04)
        fields = [_integer(_der(item, 0x02)) for item in _sequence(der, 9)]
    except (ValueError, IndexError) as exc:
        raise BadKey(f"the key is not well-formed DER ({exc})") from None
    version, modulus, exponent, private_exponent, *primes = fields[:6]
    key = PrivateKey(modulus, exponent, private_exponent, (primes[0], primes[1]))
    _checked(key.public)
    # Parts that do not belong together would sign cards that no key verifies, and the
    # peer's callers would be told its card was altered: refuse the file instead.
    if version != 0 or primes[0] * primes[1] != modulus or not verify(key.public, b"check", sign(key, b"check")):
        raise BadKey("the key's parts do not belong together (n is not p*q, or d does not undo e)")
    return key


def _integer(contents: bytes) -> int:
    """A DER INTEGER's value: here only non-negative, in its fewest bytes."""
    if not contents or contents[0] & 0x80 or (len(contents) > 1 and contents[0] == 0 and not contents[1] & 0x80):
        raise ValueError("an integer that is empty, negative or not in its fewest bytes")
    return int.from_bytes(contents, "big")


def _der(element: bytes, tag: int) -> bytes:
    """The contents of one DER element with `tag`, which must be all of `element`."""
    contents, rest = _element(element, tag)
    if rest:
        raise ValueError("bytes after the element")
    return contents


def _element(data: bytes, tag: int | None) -> tuple[bytes, bytes]:
    if len(data) < 2 or (tag is not None and data[0] != tag):
        raise ValueError(f"expected tag {tag:#x}" if tag is not None else "truncated")
    length, offset = data[1], 2
    if length & 0x80:  # long form: the next (length & 0x7f) bytes are the length
        count = length & 0x7F
        if not 1 <= count <= 4:
            raise ValueError("a length of more than 4 bytes")
        length, offset = int.from_bytes(data[2:2 + count], "big"), 2 + count
        if length < 0x80 or length.bit_length() <= 8 * (count - 1):
            raise ValueError("a length not in its fewest bytes")
    if offset + length > len(data):
        raise ValueError("truncated")
    return data[offset:offset + length], data[offset + length:]


def _sequence(der: bytes, count: int | None) -> list[bytes]:
    """A SEQUENCE's elements, each whole (tag and length included); `count` of them, if given."""
    contents, items = _der(der, 0x30), []
    while contents:
        body, rest = _element(contents, None)
        items.append(contents[:len(contents) - len(rest)])
        contents = rest
        if len(items) > 16:
            raise ValueError("too many elements")
    if count is not None and len(items) != count:
        raise ValueError(f"{len(items)} elements where {count} belong")
    return [_der(item, item[0]) if count is None else item for item in items]
