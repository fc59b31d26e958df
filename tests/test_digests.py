"""The digests the essay's run takes without OpenSSL (transports/digests.py) are hashlib's and
hmac's own: the same bytes for the same input, the same answer from the comparison."""
import hashlib
import hmac
import random

from conftest import ROOT
from transports import digests


def test_sha256_and_blake2b_give_hashlibs_bytes_for_seeded_inputs():
    rng = random.Random(36)
    for size in [0, 1, 55, 56, 63, 64, 65, 1000, digests.SMALL - 1, digests.SMALL, 70_000]:
        data = rng.randbytes(size)
        assert digests.sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
        assert digests.blake2b(data, digest_size=12).hexdigest() == hashlib.blake2b(data, digest_size=12).hexdigest()
        key = rng.randbytes(32)
        assert (digests.blake2b(data, key=key, digest_size=12).digest()
                == hashlib.blake2b(data, key=key, digest_size=12).digest())


def test_compare_digest_answers_as_hmacs_does_and_refuses_what_it_refuses():
    for left, right in [(b"token", b"token"), (b"token", b"tokem"), (b"", b""), (b"a", b"ab"), ("ascii", "ascii"),
                        ("ascii", "asciI")]:
        assert digests.compare_digest(left, right) == hmac.compare_digest(left, right)
    for left, right in [("é", "é"), ("text", b"text"), (1, 1)]:
        try:
            hmac.compare_digest(left, right)
        except TypeError:
            try:
                digests.compare_digest(left, right)
            except TypeError:
                continue
            raise AssertionError(f"compare_digest took {left!r}, {right!r}: hmac's refuses them")


def test_a_large_input_is_digested_by_openssl_and_a_small_one_without_loading_it():
    """Past SMALL bytes OpenSSL's SHA-256 is up to 5x faster and lets other threads run: a served peer
    digesting a 64 KiB message takes it; the essay's run, whose digests are all small, never loads it."""
    import subprocess
    import sys
    probe = ("import sys; from transports import digests; digests.sha256(b'x' * (digests.SMALL - 1)).hexdigest(); "
             "print('hashlib' in sys.modules, end=' '); digests.sha256(b'x' * digests.SMALL).hexdigest(); "
             "print('hashlib' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert done.stdout.split() == ["False", "True"], done.stderr
