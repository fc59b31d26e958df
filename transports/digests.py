"""SHA-256, BLAKE2b and a constant-time comparison, without loading OpenSSL for small inputs.

Why this module exists: `import hashlib` (or `hmac`) loads the OpenSSL library and starts
it: 11M instructions, a twelfth of what the essay's run executes beyond `import json`
(`bench/startup.py --instructions`), for two SHA-256 digests of under 50 bytes, a card's
ETag and one comparison. The interpreter carries its
own SHA-256 and BLAKE2 (the modules `hashlib` itself falls back to when built without
OpenSSL, and where its `blake2b` always comes from) and the comparison `hmac` falls back
to: the same bytes out, the same constant-time guarantee. From SMALL bytes on, OpenSSL's
SHA-256 is 4-5x faster (and from 2 KiB lets other threads run while it hashes): a served
peer digesting a large message loads it then, once.

What it does not do: HMAC or other algorithms (peers/signing, peers/pages.py and the
schemes use `hashlib` and `hmac`, loaded when a run uses them).
"""
from __future__ import annotations

try:
    from _sha256 import sha256 as _built_in_sha256  # Python 3.10 and 3.11
except ImportError:
    try:
        from _sha2 import sha256 as _built_in_sha256  # 3.12 on
    except ImportError:
        from hashlib import sha256 as _built_in_sha256
from _blake2 import blake2b
from _operator import _compare_digest as compare_digest  # what hmac.compare_digest is without OpenSSL

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["sha256", "blake2b", "compare_digest"]

SMALL = 1024  # bytes: below it the built-in costs under 3 us more a digest (measured: 3.3 against 0.8 at 1 KiB)


def sha256(data: bytes) -> Any:
    """`data`'s SHA-256, as hashlib's (`digest()`, `hexdigest()`)."""
    if len(data) < SMALL:
        return _built_in_sha256(data)
    import hashlib  # loads OpenSSL the first time: only a run that digests something large pays for it
    return hashlib.sha256(data)
