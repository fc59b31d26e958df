"""SHA-256, BLAKE2b and a constant-time comparison, without loading OpenSSL for small inputs.

Why this module exists: `import hashlib` (or `hmac`) loads the OpenSSL library and starts
it, about 10 million instructions, a sixth of what the essay's whole run costs at start-up
(`bench/startup.py --instructions`). That run needs four digests of a few hundred bytes (a
masked secret's fingerprint, a bearer token's owner, a card's ETag, a message's content)
and one comparison. The interpreter carries its own SHA-256 and BLAKE2 (the modules
`hashlib` itself falls back to when built without OpenSSL, and where its `blake2b` always
comes from) and the comparison `hmac` falls back to: the same bytes out, the same
constant-time guarantee. Past SMALL bytes OpenSSL's SHA-256 is up to 5x faster, and lets
other threads run while it hashes: a served peer digesting a 64 KiB message loads it then.

What it does not do: HMAC, other algorithms, or anything on a key (peers/signing,
peers/pages.py and the schemes use `hashlib` and `hmac`, loaded when a run uses them).
"""
from __future__ import annotations

from typing import Any

try:
    from _sha256 import sha256 as _built_in_sha256  # Python 3.10 and 3.11
except ImportError:
    try:
        from _sha2 import sha256 as _built_in_sha256  # 3.12 on
    except ImportError:
        from hashlib import sha256 as _built_in_sha256
from _blake2 import blake2b
from _operator import _compare_digest as compare_digest  # what hmac.compare_digest is without OpenSSL

__all__ = ["sha256", "blake2b", "compare_digest"]

SMALL = 2048  # bytes: below it the two are as fast; from it, hashlib lets go of the interpreter's lock while it hashes


def sha256(data: bytes) -> Any:
    """`data`'s SHA-256, as hashlib's (`digest()`, `hexdigest()`)."""
    if len(data) < SMALL:
        return _built_in_sha256(data)
    import hashlib  # loads OpenSSL the first time: only a run that digests something large pays for it
    return hashlib.sha256(data)
