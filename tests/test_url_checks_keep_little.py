"""The one URL check keeps its recent answers, and nothing a client could make large: a URL
longer than any a peer serves from is checked afresh each time, so a client sending many
long URLs (a push config's, a card's) cannot grow what a served peer holds."""
import random

from conftest import bytes_kept
from transports.base import MOST_CACHED, parse_url


def test_many_long_urls_are_checked_alike_and_not_kept():
    rng = random.Random(7)
    path = "".join(rng.choice("abc/") for _ in range(64 * 1024))  # each URL its own copy of it

    def check_each():
        for n in range(300):  # 300 distinct URLs of 64 KiB: 19 MiB if each were kept
            url = f"https://agent{n}.example/a2a/" + path
            parsed = parse_url(url)
            assert parsed is not None and parsed.host == f"agent{n}.example"
            assert parsed.target == url[len(f"https://agent{n}.example"):]
    assert bytes_kept(check_each) < 1 << 20


def test_a_url_at_the_cache_limit_and_past_it_read_the_same():
    for length in (MOST_CACHED - 1, MOST_CACHED, MOST_CACHED + 1):
        url = "http://127.0.0.1:8000/" + "x" * (length - len("http://127.0.0.1:8000/"))
        assert len(url) == length and parse_url(url).target == url[len("http://127.0.0.1:8000"):]
    assert parse_url("http://127.0.0.1:8000/" + "\n" * MOST_CACHED) is None
    assert parse_url(["http://a.example/"]) is None  # not a string: never a cache key
