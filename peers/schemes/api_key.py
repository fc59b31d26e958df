"""An API key in a named request header (spec 4.5 APIKeySecurityScheme, location "header").

The key travels only in the header the card names (`X-API-Key`); a key in the query
string, another header or `Authorization` is not looked at: URLs end up in logs,
so a card that says "header" is held to it. The key is compared in constant time. The
caller it proves is the key's holder, named by a digest of the key (never the key
itself, which would then sit in the task store). Every key offered is a guess at it (a key names
no one): counted per address (guesses.py), too many wrong and that address is refused with 429
before its key is looked at. Not here: query or cookie keys.
"""
from __future__ import annotations

import hashlib
import hmac

from peers.a2a.errors import TooManyGuesses
from peers.a2a.security_schemes import SCHEME_KINDS
from peers.schemes import MAX_CREDENTIAL
from peers.schemes.guesses import Guesses
from transports.base import HttpRequest, HttpResponse

HEADER = "X-API-Key"


class ApiKey:
    def __init__(self, key: str, realm: str) -> None:
        self.key, self.realm = key.encode(), realm
        self.declared = SCHEME_KINDS["apikey"].declared("apiKey", key_name=HEADER)
        self.owner = "apikey:" + hashlib.sha256(self.key).hexdigest()[:16]
        # Wrong keys by address, and no count in all: any stranger could then lock out the key's holder.
        self.guesses = Guesses(in_all=None)

    def caller(self, request: HttpRequest) -> tuple[str | None, frozenset[str]]:
        """TooManyGuesses for an address that gave wrong keys too often."""
        offered = request.header(HEADER) or ""
        if not offered or len(offered) > MAX_CREDENTIAL:
            return None, frozenset()

        def right() -> bool:  # compare_digest: the time taken must not say how much of a guess was right
            return hmac.compare_digest(offered.strip(" \t").encode("utf-8", "replace"), self.key)  # OWS only
        held, proved = self.guesses.heard(request.client_address, right)
        if held:
            raise TooManyGuesses(held)
        return (self.owner, frozenset()) if proved else (None, frozenset())

    def challenge(self) -> str:
        # No registered challenge names API keys; this one says which header to send.
        return f'APIKey realm="{self.realm}", header="{HEADER}"'

    def serve(self, request: HttpRequest, path: str) -> HttpResponse | None:
        return None
