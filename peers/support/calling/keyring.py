"""Which of our credentials goes with a request, and when a refused one can be replaced.

Spec section 7 (authentication) and 4.5 (SecurityScheme); essay: "the token travels in
the HTTP Authorization header, never inside the JSON-RPC payload". Every request the
support agent sends to a peer goes through a transport that adds a credential
(transports/credentialed.py: it knows HTTP, not A2A); this keyring is what it asks. For
the agent at an endpoint it gives the headers that prove who we are, from our own
store, never from a card: the essay's bearer token issued for that endpoint (for a
scope, when a peer asks a step-up), or what the card found there asks for
(credentials.py: an API key, Basic, an OAuth2 token ...). After a 401, if the credential
refused was an OAuth2 token we kept, it is forgotten, and the transport sends once more
with a new one. A card's GET carries nothing: a card is public (the story fetches it from
the printer itself). Not here: which credential a scheme takes (credentials.py); whether
we may send to a peer at all (the trust gate).
"""

from __future__ import annotations

from peers.support.calling.cards import FetchedCard, only_bearer
from peers.support.calling.config import token_for
from peers.support.output import Kind
from transports.base import Transport
from transports.credentialed import Credentialed

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable


class Keyring:
    """Our credential store, and what each endpoint's card asks of it."""

    def __init__(self, inner: Transport, store: dict[str, Any], fetched: dict[str, FetchedCard],
                 say: Callable[..., None], *, verbose: bool = False) -> None:
        self.inner, self.store, self.fetched, self.say = inner, store, fetched, say  # endpoint -> its card
        self.verbose = verbose  # --verbose: say once, for each endpoint, which credential its scheme took
        # OAuth2 access tokens fetched for our clients, until they expire; the endpoints already explained
        self.issued: dict[Any, Any] = {}
        self.said_why: set[str] = set()

    def toward(self, endpoint: str, scope: str | None = None) -> Credentialed:
        """A transport for requests to the agent at `endpoint` (HTTP+JSON adds a path to it:
        /message:send, /tasks/ID), sending the token issued for `scope` if a peer asked a step-up."""
        return Credentialed(self.inner, lambda url: self.credential(endpoint, scope),
                            lambda url: self.renewed(endpoint))

    def credential(self, endpoint: str, scope: str | None = None) -> dict[str, str]:
        """The headers that prove who we are to `endpoint`: the essay's bearer token issued
        for it, or what its card's scheme asks for (credentials.py, loaded only for such a card)."""
        found = self.fetched.get(endpoint)
        card = found.card if found is not None else None
        if scope is not None or card is None or (only_bearer(card) and not self.verbose):
            token = token_for(self.store, endpoint, scope)  # only ever the one issued for `endpoint`
            return {"Authorization": f"Bearer {token}"} if token else {}
        from peers.support.calling.credentials import credential_for
        attached = credential_for(card, self.store, self.inner, self.issued)
        if self.verbose and endpoint not in self.said_why:
            self.said_why.add(endpoint)
            self.say(attached.why)
        return attached.headers

    def renewed(self, endpoint: str) -> bool:
        """After `endpoint` answered 401: whether the credential it refused was an OAuth2 token
        we kept, now forgotten (said), so that sending once more fetches a new one."""
        if not self.issued:
            return False
        from peers.support.calling.oauth_tokens import forget_kept
        dropped = forget_kept(self.issued, endpoint)
        if dropped is not None:
            self.say(dropped, Kind.WARNING)
        return dropped is not None
