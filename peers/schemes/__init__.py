"""How a served peer tells who is calling, for each security scheme an A2A card can declare.

Spec 4.5 (SecurityScheme) and section 7 (authentication and authorization): a card
declares how a caller must prove who it is, and the server refuses anything else with
401 and a WWW-Authenticate challenge before any task is made. Each scheme is one part
with the interface `Scheme` below: what the card declares (`declared`), who a request
proves to be (`caller`: the owner of the tasks it makes, or None), the challenge a
refusal carries, and the routes it serves itself (an OAuth2 token endpoint, OpenID
discovery and its JWKS); `by_kind.make_scheme` makes the one a kind names. `http_basic` (Basic), `api_key` (a key in a named header),
`oauth2` (client credentials; with OpenID discovery for oidc), `guesses` (the wrong
secrets heard from an address before a 429), `tokens` (the RS256
access tokens oauth2 issues and checks) and `mutual_tls` (the client certificate). The
essay's static Bearer token stays in peers/app.py, so the default run loads none of
this. Not here: TLS itself (transports/tls.py), the support agent's side (its
credential store, picking a scheme).

May import: `peers.a2a`, `peers.signing` and `transports`.
Must not import: a module directly in `peers/`, nor `peers.support`.
"""
from __future__ import annotations

from peers.a2a.model import SecurityScheme
from transports.base import HttpRequest, HttpResponse

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Protocol
else:  # an interface below is a documented class at run time, and typing's Protocol to a checker
    Protocol = object

MAX_CREDENTIAL = 4096  # characters: no credential of ours needs more; a longer one is refused unread


class Scheme(Protocol):
    declared: SecurityScheme  # what the card says, spelled out (peers/a2a/wire_card.py writes it)

    def caller(self, request: HttpRequest) -> tuple[str | None, frozenset[str]]:
        """Who proved who they are (the owner of the tasks they make) and the scopes they
        hold; (None, frozenset()) for anyone else."""

    def challenge(self) -> str:
        """The WWW-Authenticate value a 401 carries (RFC 9110 11.6.1)."""

    def serve(self, request: HttpRequest, path: str) -> HttpResponse | None:
        """The answer at a path this scheme serves itself (a token endpoint), else None."""
