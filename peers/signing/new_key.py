"""Making an RSA key pair for signing cards: `python3 -m peers.signing.new_key FILE`.

Two random primes of 1,024 bits from `secrets`, e = 65537: a candidate with a prime factor
below 2,000 is ruled out by one gcd, then Miller-Rabin decides in 5 rounds (FIPS 186-5,
Table B.1: the least for primes of that size chosen at random, error under 2**-112); the key is
written as a PKCS#1 PEM file that rs256.py, OpenSSL and the official SDK's JOSE library
all read; the public half is printed as the JWK an allowlist entry pins. Never over an
existing file. Not here: reading keys, signing, checking (rs256.py).
"""
from __future__ import annotations

import base64
import json
import math
import os
import secrets

from peers.signing.rs256 import MIN_BITS, PrivateKey, int_bytes

PUBLIC_EXPONENT = 65537
# The odd primes below 2,000, multiplied: a candidate sharing a factor with it is composite.
# Six in seven odd numbers do, so most candidates cost one gcd instead of a modular power.
SMALL_PRIMES = math.prod(n for n in range(3, 2000, 2) if all(n % d for d in range(3, math.isqrt(n) + 1, 2)))


def new_private_key(bits: int = MIN_BITS) -> PrivateKey:
    """A fresh RSA key (e = 65537) from two random primes of bits/2 each."""
    while True:
        first, second = _prime(bits // 2), _prime(bits // 2)
        modulus, totient = first * second, (first - 1) * (second - 1)
        if first != second and modulus.bit_length() == bits and totient % PUBLIC_EXPONENT:
            return PrivateKey(modulus, PUBLIC_EXPONENT, pow(PUBLIC_EXPONENT, -1, totient), (first, second))


def _prime(bits: int) -> int:
    for _ in range(100_000):  # about bits*ln(2)/2 candidates are tried on average
        candidate = secrets.randbits(bits) | (3 << (bits - 2)) | 1  # top two bits: n has all its bits
        if _probably_prime(candidate):
            return candidate
    raise RuntimeError("no prime found")  # not reached in practice


def _probably_prime(candidate: int, rounds: int = 5) -> bool:
    """Miller-Rabin: a composite survives one round with probability at most 1/4."""
    if math.gcd(candidate, SMALL_PRIMES) != 1:
        return False
    odd, twos = candidate - 1, 0  # candidate - 1 = odd * 2**twos
    while odd % 2 == 0:
        odd, twos = odd // 2, twos + 1
    for _ in range(rounds):
        witness = pow(secrets.randbelow(candidate - 3) + 2, odd, candidate)
        if witness in (1, candidate - 1):
            continue
        for _ in range(twos - 1):
            witness = pow(witness, 2, candidate)
            if witness == candidate - 1:
                break
        else:
            return False
    return True


def to_pem(key: PrivateKey) -> str:
    """The key as a PKCS#1 PEM file (RFC 8017 A.1.2, its CRT values included)."""
    first, second = key.primes
    values = [0, key.n, key.e, key.d, first, second, key.d % (first - 1), key.d % (second - 1),
              pow(second, -1, first)]
    der = _encode(0x30, b"".join(_encode(0x02, _signed_bytes(value)) for value in values))
    body = base64.b64encode(der).decode("ascii")
    lines = "\n".join(body[start:start + 64] for start in range(0, len(body), 64))
    return f"-----BEGIN RSA PRIVATE KEY-----\n{lines}\n-----END RSA PRIVATE KEY-----\n"


def _signed_bytes(value: int) -> bytes:
    data = int_bytes(value)
    return b"\x00" + data if data[0] & 0x80 else data


def _encode(tag: int, contents: bytes) -> bytes:
    size = len(contents)
    length = bytes([size]) if size < 0x80 else bytes([0x80 | ((size.bit_length() + 7) // 8)]) + int_bytes(size)
    return bytes([tag]) + length + contents


USAGE = """usage: python3 -m peers.signing.new_key FILE           write a new RSA private key to FILE
       python3 -m peers.signing.new_key --public FILE  print the public key of FILE again
The public key is printed as the JWK an allowlist entry pins ("publicKey")."""


def main(argv: list[str]) -> int:
    """`python3 -m peers.signing.new_key FILE`: a new key pair; the private key to FILE (never over
    an existing file), the public key printed as the JWK an allowlist entry pins. `--public
    FILE` prints that JWK again for a key file made before."""
    if argv in (["-h"], ["--help"]):
        print(USAGE)
        return 0
    if len(argv) == 2 and argv[0] == "--public":
        return _print_public(argv[1])
    if len(argv) != 1 or argv[0].startswith("-"):
        print(USAGE)
        return 2
    key = new_private_key()
    try:  # never over an existing file; readable by its owner only, as ssh-keygen's keys are
        with os.fdopen(os.open(argv[0], os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600), "w", encoding="ascii") as file:
            file.write(to_pem(key))
    except OSError as exc:
        print(f"error: {argv[0]}: {exc.strerror or exc}")
        return 2
    print(f"wrote a new {MIN_BITS}-bit RSA private key to {argv[0]}: keep it secret. Its public key, "
          'to pin as "publicKey" in allowlist.json:')
    print(json.dumps(key.public.jwk()))
    return 0


def _print_public(path: str) -> int:
    from peers.signing.rs256 import BadKey, private_from_pem
    try:
        with open(path, encoding="ascii") as file:
            key = private_from_pem(file.read(64 * 1024))
    except (OSError, UnicodeDecodeError) as exc:
        print(f"error: {path}: cannot read it ({getattr(exc, 'strerror', None) or exc})")
        return 2
    except BadKey as exc:
        print(f"error: {path}: {exc}")
        return 2
    print(json.dumps(key.public.jwk()))
    return 0


if __name__ == "__main__":
    import sys
    try:
        sys.exit(main(sys.argv[1:]))
    except BrokenPipeError:  # `... | head` stopped reading: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(141)
