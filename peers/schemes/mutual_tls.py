"""Mutual TLS (spec 4.5 MutualTLSSecurityScheme): the caller is the client certificate.

The proof happens in the TLS handshake (transports/tls.py, with the CA `--client-ca`
names): a client presenting a certificate another CA issued never gets as far as HTTP.
A request carries who the verified certificate names (`HttpRequest.client_certificate`:
its subject, escaped as RFC 4514 writes it, and its SHA-256 fingerprint), and that is
who owns the tasks the caller makes: two certificates are one caller only if they are
one certificate. A request with none (no certificate: it may still read the card, which
says what to present) is refused with 401 like any missing credential. Not here: the TLS
settings, revocation lists, pinning one certificate rather than a CA.
"""
from __future__ import annotations

from peers.a2a.security_schemes import SCHEME_KINDS
from transports.base import HttpRequest, HttpResponse


class MutualTls:
    def __init__(self, realm: str) -> None:
        self.realm = realm
        self.declared = SCHEME_KINDS["mtls"].declared("mtls")

    def caller(self, request: HttpRequest) -> tuple[str | None, frozenset[str]]:
        subject = request.client_certificate
        return ("mtls:" + subject, frozenset()) if subject else (None, frozenset())

    def challenge(self) -> str:
        # No HTTP challenge names mutual TLS; this one says what to present.
        return f'MutualTLS realm="{self.realm}"'

    def serve(self, request: HttpRequest, path: str) -> HttpResponse | None:
        return None
