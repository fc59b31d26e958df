"""Our credential on every request we send: a transport around the frame printer's.

Spec section 7 (authentication) and 4.5 (SecurityScheme); essay: "the token travels in
the HTTP Authorization header, never inside the JSON-RPC payload". Like the printer, it
wraps a transport and is one (`get`, `post`, `stream`), so the story, a lesson or the
follow loop sends a frame the same way whether a credential goes with it or not, and
the printer inside shows each header as it left (masked). For each request it adds the
headers that prove who we are to that URL, from our own store, never from a card: the
essay's bearer token issued for that endpoint (for a scope, when a peer asks a step-up:
`scoped`), or what the card found there asks for (credentials.py: an API key, Basic, an
OAuth2 token ...). A 401 is answered before anything is done, so when the credential
refused was an OAuth2 token we kept, it is forgotten and the request sent once more with
a new one. A card's GET carries nothing: a card is public. Not here: which credential a
scheme takes (credentials.py); whether we may send to a peer at all (the trust gate).
"""
from __future__ import annotations

from typing import Any, Callable

from peers.support.calling.cards import FetchedCard, only_bearer
from peers.support.calling.config import token_for
from peers.support.output import Kind
from transports.base import HttpResponse, Transport


class Credentialed:
    """`inner` (the printer), with our credential added to each request: a Transport."""

    def __init__(self, inner: Transport, store: dict[str, Any], fetched: dict[str, FetchedCard],
                 say: Callable[..., None], *, verbose: bool = False, endpoint: str | None = None,
                 scope: str | None = None, kept: tuple[dict[Any, Any], set[str]] | None = None) -> None:
        self.inner, self.store, self.fetched, self.say = inner, store, fetched, say  # endpoint -> its card
        # endpoint: the interface every request goes to (a binding may add a path to it); scope: a step-up
        self.verbose, self.endpoint, self.scope, self.label = verbose, endpoint, scope, inner.label
        # OAuth2 access tokens fetched for our clients, until they expire; the endpoints whose
        # scheme --verbose has explained: shared by every scoped view of this store
        self.issued, self.said_why = kept or ({}, set())
        self.attached = False  # whether the last request carried a credential of ours (a 401 says which)

    def toward(self, endpoint: str, scope: str | None = None) -> Credentialed:
        """The same store, for requests to the agent at `endpoint` (HTTP+JSON adds a path to it:
        /message:send, /tasks/ID), sending the token issued for `scope` if a peer asked a step-up."""
        return Credentialed(self.inner, self.store, self.fetched, self.say, verbose=self.verbose,
                            endpoint=endpoint, scope=scope, kept=(self.issued, self.said_why))

    def get(self, url: str, headers: dict[str, str], **how: Any) -> HttpResponse:
        if self.endpoint is None:  # a card, fetched by its URL: public, so nothing of ours goes with it
            return self.inner.get(url, headers, **how)
        return self._sent(self.inner.get, url, headers, how)

    def post(self, url: str, body: bytes, headers: dict[str, str], **how: Any) -> HttpResponse:
        return self._sent(self.inner.post, url, headers, how, body)

    def stream(self, url: str, body: bytes, headers: dict[str, str], **how: Any) -> HttpResponse:
        return self._sent(self.inner.stream, url, headers, how, body)

    def _sent(self, send: Callable[..., HttpResponse], url: str, headers: dict[str, str], how: dict[str, Any],
              *body: bytes) -> HttpResponse:
        """`send` (the inner transport's get, post or stream) with our credential added; once
        more after a 401 that refused an OAuth2 token we kept (a second 401 stands)."""
        for attempt in ("first", "again"):
            ours = self.credential(url)
            self.attached = bool(ours)  # a 401's line says whether a credential went with the request
            response = send(url, *body, {**headers, **ours}, **how)
            if response.status != 401 or not self.issued or attempt == "again":
                return response
            from peers.support.calling.oauth_tokens import forget_kept  # was it an OAuth2 token we kept?
            dropped = forget_kept(self.issued, self.endpoint or url)  # then credential() fetches a new one
            if dropped is None:
                return response
            self.say(dropped, Kind.WARNING)
        return response

    def credential(self, url: str) -> dict[str, str]:
        """The headers that prove who we are to the endpoint we were pointed `toward` (else
        `url`): the essay's bearer token issued for it, or what its card's scheme asks for
        (credentials.py, loaded only for such a card)."""
        url = self.endpoint or url
        found = self.fetched.get(url)
        card = found.card if found is not None else None
        if self.scope is not None or card is None or (only_bearer(card) and not self.verbose):
            token = token_for(self.store, url, self.scope)  # only ever the one issued for `url`
            return {"Authorization": f"Bearer {token}"} if token else {}
        from peers.support.calling.credentials import credential_for
        attached = credential_for(card, self.store, self.inner, self.issued)
        if self.verbose and url not in self.said_why:
            self.said_why.add(url)
            self.say(attached.why)
        return attached.headers
