"""A masked secret's fingerprint is remembered for the few short credentials a session shows,
never for whatever a peer puts in a secret field: an agent's answer may say "token": followed
by up to a MiB of its own text (four times that once its bad UTF-8 is shown escaped), a new
one each answer, and a proxy printing them must not keep them all (transports/masking.py).
"""
import gc
import hashlib
import random
import tracemalloc

from transports.masking import mask_body, masked


def test_large_secret_values_a_peer_sends_are_not_kept_once_shown():
    rng = random.Random(3)
    body = b'{"jsonrpc": "2.0", "id": 1, "result": {"token": "%d%s"}}' % (rng.randrange(10**9), b"\xff" * (1 << 18))
    text = body.decode("utf-8", "backslashreplace")  # as the printer shows it: 1 MiB of "\xff"
    secret = text.split('"token": "')[1][:-3]
    assert mask_body(text) == '{"jsonrpc": "2.0", "id": 1, "result": {"token": "%s"}}' % masked(secret)
    tracemalloc.start()
    try:
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(48):  # what 48 such answers ask of masked(), each its own secret
            assert masked("%d%s" % (rng.randrange(10**9), secret)).startswith("****#")
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept < 8 << 20, f"{kept >> 20} MiB kept after masking 48 secrets of 1 MiB each"


def test_a_long_secret_is_masked_as_a_short_one_is():
    long = "k" * 100_000
    assert masked(long) == masked(long) == "****#" + hashlib.sha256(long.encode()).hexdigest()[:4]
    assert masked("s3cret") == masked("s3cret") == "****#" + hashlib.sha256(b"s3cret").hexdigest()[:4]
    assert masked("") == "****"
