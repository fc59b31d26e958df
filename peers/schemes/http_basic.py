"""HTTP Basic authentication (RFC 7617; spec 4.5 HTTPAuthSecurityScheme, scheme "Basic").

`Authorization: Basic base64(user:password)`, checked against the one pair the server
was given. Everything about the header is hostile until checked: its size, the base64
(strictly, no stray characters), UTF-8 (the charset RFC 7617 names), and the colon
that separates user and password; any failure is a 401, never a traceback. User and
password are both compared in constant time, and both always (the time does not say
which one was wrong). Wrong passwords are counted per address (guesses.py): too many, and that
address is refused with 429 before its password is looked at; a guess under another user name
tests nothing, yet counts there too (else the 429 would say which name is right), though never
toward the user's count from all addresses. The caller it proves is the user. Not here: more than one user.
"""
from __future__ import annotations

import base64
import binascii
import hmac

from peers.a2a.errors import TooManyGuesses
from peers.a2a.security_schemes import SCHEME_KINDS
from peers.schemes import MAX_CREDENTIAL
from peers.schemes.guesses import Guesses
from transports.base import HttpRequest, HttpResponse


def user_and_password(authorization: str | None, scheme: str = "basic") -> tuple[bytes, bytes] | None:
    """The (user, password) an Authorization header (or a token request's) carries, as
    UTF-8 bytes, or None when it is not a well-formed Basic credential."""
    name, _, encoded = (authorization or "").partition(" ")
    if name.lower() != scheme or not encoded or len(encoded) > MAX_CREDENTIAL:
        return None
    try:
        decoded = base64.b64decode(encoded.strip(" \t"), validate=True)  # OWS only: a no-break space is sent
        decoded.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    user, colon, password = decoded.partition(b":")
    return (user, password) if colon else None


class Basic:
    def __init__(self, pair: str, realm: str) -> None:
        user, colon, password = pair.partition(":")
        if not colon or not user:
            raise ValueError("basic needs --token USER:PASSWORD")
        self.user, self.password, self.realm = user.encode(), password.encode(), realm
        self.declared = SCHEME_KINDS["basic"].declared("basic")
        self.guesses = Guesses()  # wrong passwords for the user, by address (OWASP: protect a login from brute force)

    def caller(self, request: HttpRequest) -> tuple[str | None, frozenset[str]]:
        """TooManyGuesses for an address that gave the user's password wrong too often."""
        offered = user_and_password(request.header("Authorization"))
        if offered is None:
            return None, frozenset()
        user_ok = hmac.compare_digest(offered[0], self.user)

        def right() -> bool:  # both compared, always: the time does not say which was wrong
            return hmac.compare_digest(offered[1], self.password) & user_ok
        # Under another user no password could succeed, yet it counts at its address all the same: a 429 that
        # came only under the right name would say that name was right. Not toward the user's count in all.
        held, proved = self.guesses.heard(request.client_address, right, named=user_ok)
        if held:
            raise TooManyGuesses(held)
        return ("basic:" + self.user.decode(), frozenset()) if proved else (None, frozenset())

    def challenge(self) -> str:
        return f'Basic realm="{self.realm}", charset="UTF-8"'

    def serve(self, request: HttpRequest, path: str) -> HttpResponse | None:
        return None
