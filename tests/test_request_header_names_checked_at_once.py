"""A request's header names, checked all at once, are refused exactly when one by one they
would be: each a token (RFC 9110 5.6.2), none a framing header we write ourselves.

transports/network.py joins the names with ":" and matches them in one step, which is only
the same check if the join cannot hide a bad name: an empty one, or one holding a ":" that
splits into two tokens ("Authorization:Bearer" would go out as an Authorization header).
Seeded sets of names, good and bad, are checked both ways; nothing is sent.
"""
import random

import pytest

from transports.errors import TransportError
from transports.http11 import TOKEN
from transports.network import _request_head

PIECES = ["X-A", "a", "Authorization", "Host", "Content-Length", ":", "", " ", "\t", "\xe9", "\u212a", "0", "~"]


def allowed_one_by_one(headers):
    return all(TOKEN.fullmatch(name) and name.lower() not in ("host", "content-length", "transfer-encoding")
               for name in headers)


def sent(headers):
    try:
        _request_head("POST", "http://127.0.0.1:9/", b"x", headers)
    except TransportError as exc:
        assert exc.sent is False
        return False
    return True


@pytest.mark.parametrize("headers", [{"": "x"}, {"X-A:B": "1"}, {"Authorization:Bearer": "token"},
                                     {"X-A": "1", "B:C": "2"}])
def test_a_name_the_join_would_hide_is_refused(headers):
    with pytest.raises(TransportError, match="is not allowed"):
        _request_head("POST", "http://127.0.0.1:9/", b"x", headers)


@pytest.mark.parametrize("seed", range(20))
def test_names_are_refused_at_once_as_one_by_one(seed):
    rng = random.Random(seed)
    for _ in range(300):
        headers = {"".join(rng.choice(PIECES) for _ in range(rng.randrange(3))): "v" for _ in range(rng.randrange(4))}
        assert sent(headers) == allowed_one_by_one(headers), headers
