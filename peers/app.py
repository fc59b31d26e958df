"""A peer as an app: it serves its Agent Card and answers one request, in either binding.

Essay: The Agent Card ("a public description a peer serves at a well-known URL") and
Delegation over JSON-RPC. Like a WSGI app, `PeerApp` is a callable from `HttpRequest` to
`HttpResponse`; the in-process shim and the HTTP server both call it, so the bytes on
the wire are the same whichever transport carries them. HTTP-level refusals (unknown
path, wrong method or Content-Type, oversize body, missing credentials) happen here,
before any operation is read; everything after is the binding's: JSON-RPC frames POSTed to
the endpoint go to peers/jsonrpc_binding.py, requests to the HTTP+JSON routes below it to
peers/rest.py, both onto the operations of `peers/methods.py`. Each binding builds its own
error bodies (`Binding.error`), with the data the A2A-Version asked for attaches (1.0: an
ErrorInfo), a refusal here too; those outside both are built by `_error`.
"""
from __future__ import annotations

import json
import os
import sys
import time
from _thread import allocate_lock  # threading.Lock itself, without loading threading (peers/ledger.py)
from functools import lru_cache

from peers.a2a import versions, wire_format as wire_formats
from peers.a2a.bindings import arriving_at
from peers.a2a.errors import ContentTypeNotSupported, TooManyGuesses, Unauthenticated
from peers.a2a.security_schemes import BEARER
from peers.a2a.wire_format import CARD_PATH, WireFormat
from peers.methods import Caller, MethodTable
from peers.peer import Peer
from peers.tenants import declared
from transports.base import HttpRequest, HttpResponse, parse_url
from transports.codec import MAX_FRAME_BYTES
from transports import digests, imported
from transports.jsonrpc import InvalidRequest, JsonRpcError, encode_error

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:  # peers/schemes loads only when a server is told to use one
    from typing import Any, Callable, Protocol
    from peers.schemes import Scheme
else:  # an interface below is a documented class at run time, and typing's Protocol to a checker
    Protocol = object

JSON = {"Content-Type": "application/json"}
CARD_MAX_AGE = 300  # seconds: a card changes when its agent is redeployed, not per request


_LOG_LOCK = allocate_lock()


def log_to_stderr(line: str) -> None:
    """The one place a peer writes its log; internal error details go here, not on the wire. One
    line at a time: print() writes the line and its newline apart, and workers' lines interleaved."""
    with _LOG_LOCK:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()


@lru_cache(maxsize=64)  # asked on every request, of the few tokens a peer knows; bounded, and a token's own
def owner_of_bearer(token: str) -> str:
    """Who a bearer token's holder is, as the task store keeps it: a digest of the token,
    never the token. An owner is written to the store file and can reach a log; neither
    may hand out the credential that proves it (the API key scheme keeps its owner so too)."""
    return "bearer:" + digests.sha256(b"a2a task owner\x00" + token.encode("utf-8", "replace")).hexdigest()[:32]


class PeerApp:
    def __init__(self, peer: Peer, card_format: WireFormat, *, token: str | None = None,
                 step_ups: dict[str, str] | None = None, log: Callable[[str], None] = log_to_stderr,
                 max_body: int = MAX_FRAME_BYTES, signing_key: Any = None, scheme: Scheme | None = None,
                 other_tokens: tuple[str, ...] = ()) -> None:
        self.peer, self.token, self.max_body = peer, token, max_body
        # More bearer tokens, each another caller's: the owner of tasks of its own (a test of
        # what one caller may see of another's: `check --other-caller`).
        self.other_tokens = other_tokens
        # Any scheme but the essay's static bearer token (peers/schemes): it says who is calling.
        self.scheme = scheme
        # A step-up token -> the scope it grants: issued to the same caller as `token`, so
        # the tasks it sees are the same ones; it only proves more (peers/pause.py).
        self.step_ups = dict(step_ups or {})
        self.name = peer.card.name
        self.log = log
        self.endpoint_path = parse_url(peer.card.url).path.rstrip("/") or "/"
        self.card_paths = {CARD_PATH, self.endpoint_path.rpartition("/")[0] + CARD_PATH}  # and below a base's path
        document = card_format.card_to_wire(peer.card)
        # Every wire format's methods, on one endpoint, for the tenants the served card declares.
        self.methods = MethodTable(peer, card_format, declared(document))
        # The bindings that carry them (peers/a2a/bindings.py), each built when first asked for.
        self.bindings: dict[str, Binding] = {}
        # Served pretty-printed: the card is a document people read, as the essay shows it.
        if signing_key is not None:  # a private key, or a list (a signature each): served signed (1.0 section 8.4)
            from peers.signing.card_signature import sign
            for key in signing_key if isinstance(signing_key, list) else [signing_key]:
                document = sign(document, key)
        self.card_body = json.dumps(document, indent=2).encode() + b"\n"
        # Spec 8.6: a card SHOULD say how long it may be cached, and carry an ETag, so a
        # client can ask "changed?" (If-None-Match) and get 304 and no body if not.
        # Last-Modified: the card is what it was when this app began serving it.
        self.card_cache = {"Cache-Control": f"max-age={CARD_MAX_AGE}",
                           "ETag": f'"{digests.blake2b(self.card_body, digest_size=12).hexdigest()}"',
                           "Last-Modified": time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime())}

    def __call__(self, request: HttpRequest) -> HttpResponse:
        path = parse_url(request.url).path  # a transport hands the app only URLs that parse
        if path in self.card_paths:  # where `serve --url BASE/path` says it is, as a proxy keeping the path sends it
            if request.method != "GET":
                return _error(405, "the Agent Card is read with GET", Allow="GET")
            if _matches(request.header("If-None-Match"), self.card_cache["ETag"]):
                return HttpResponse(304, dict(self.card_cache), b"")
            return HttpResponse(200, {**JSON, **self.card_cache}, self.card_body)
        served = self.scheme.serve(request, path) if self.scheme is not None else None
        if served is not None:  # a token endpoint, OpenID discovery: the scheme's own routes
            return served
        binding, route = self.binding_for(path)
        if binding is None:
            return _error(404, f"nothing at {path[:80]}: the card is at {CARD_PATH}, "
                               f"the JSON-RPC endpoint at {self.endpoint_path}")
        verbs = binding.verbs(route)
        if not verbs:
            return binding.error(404, InvalidRequest(f"nothing at {path[:80]}: no HTTP+JSON route "
                                                     "of A2A 1.0 section 11.3"), {})
        if request.method not in verbs:
            return binding.error(405, InvalidRequest(f"{path[:80]} is asked with {' or '.join(verbs)}"),
                                 {"Allow": ", ".join(verbs)})
        return self._answer(request, binding, route)

    def refused(self, path: str, status: int, error: JsonRpcError) -> HttpResponse | None:
        """The server's own refusal of a request to `path` (its body too large, its head too
        long, too slow to arrive), worded as the binding there words errors; None elsewhere."""
        return binding.error(status, error, {}) if (binding := self.binding_for(path)[0]) is not None else None

    def binding_for(self, path: str) -> tuple[Binding | None, str]:
        """Which binding a path under the endpoint belongs to, and the route it names, as
        the protocol's table says: the endpoint itself is JSON-RPC's ("/a2a/" is "/a2a"); a
        path below it is HTTP+JSON's. Each is loaded the first time one is asked for (its
        module's SERVED), so the essay's run never loads HTTP+JSON."""
        below = self.endpoint_path.rstrip("/") + "/"
        found = (arriving_at(None) if (path.rstrip("/") or "/") == self.endpoint_path else
                 arriving_at(path[len(below):]) if path.startswith(below) else None)
        if found is None:
            return None, ""
        row, route = found
        if row.name not in self.bindings:
            self.bindings[row.name] = imported(row.served_by).SERVED(self.methods, self._log, self.max_body)
        return self.bindings[row.name], route

    def _answer(self, request: HttpRequest, binding: Binding, route: str) -> HttpResponse:
        # A2A-Version, from the header or the request parameter (peers/a2a/versions.py); a
        # method refuses what cannot be served, so JSON-RPC's refusal keeps its request id.
        version = versions.asked(request.header(versions.NAME), request.url)
        media_type = (request.header("Content-Type") or "").split(";")[0].strip().lower()
        if not binding.takes(media_type, request.body):
            # A2A names this failure: ContentTypeNotSupportedError (-32005), in the 415's body.
            return self._refused(binding, version, 415, ContentTypeNotSupported("Content-Type must be application/json"))
        try:
            credential, scopes = self.credential(request)
        except TooManyGuesses as held:  # wrong ones came too often from there: this one was not looked at
            return self._refused(binding, version, 429, held, {"Retry-After": str(held.seconds)})
        if (self.token is not None or self.scheme is not None) and credential is None:
            # No task is created: the request is not even parsed (so its id is not known: null).
            wanted, challenge = (("bearer token", f'Bearer realm="{self.name}"') if self.scheme is None else
                                 (f"{self.scheme.declared.name} credential", self.scheme.challenge()))
            scheme, _, token = (request.header("Authorization") or "").partition(" ")
            if challenge.startswith("Bearer ") and scheme.lower() == "bearer" and token.strip(" \t"):
                challenge += ', error="invalid_token"'  # RFC 6750 3.1: one was presented; none sent is told no error
            return self._refused(binding, version, 401, Unauthenticated(f"a valid {wanted} is required"),
                                 {"WWW-Authenticate": challenge})
        if len(request.body) > self.max_body:
            return self._refused(binding, version, 413, InvalidRequest(f"body larger than {self.max_body} bytes"))
        # A2A-Extensions (0.3: X-A2A-Extensions): the extensions the caller activates. Those
        # this agent declares are echoed back under the same name (a method checks the
        # ones it requires: peers/methods.py). None asked (nearly always): none to look up.
        named = "A2A-Extensions" if request.header("A2A-Extensions") is not None else "X-A2A-Extensions"
        asked = request.header(named)
        activated = () if not asked else tuple(dict.fromkeys(  # each once, in order
            uri for uri in (part.strip() for part in asked.split(",")) if uri and uri in self.peer.card.extensions))
        caller = Caller(credential or "", version.version, scopes, activated, version.refused)
        return binding.answer(request, route, caller, {named: ", ".join(activated)} if activated else {})

    @staticmethod
    def _refused(binding: Binding, version: versions.Asked, status: int, error: JsonRpcError,
                 headers: dict[str, str] | None = None) -> HttpResponse:
        """A refusal before any operation, with the data the version asked for attaches to an error."""
        if version.version is not None:
            error.data = wire_formats.by_name(version.version).error_data(error)
        return binding.error(status, error, headers or {})

    @property
    def owner(self) -> str | None:
        """Who the holder of this peer's bearer token is, as its tasks' owner."""
        return owner_of_bearer(self.token) if self.token is not None else None

    def credential(self, request: HttpRequest) -> tuple[str | None, frozenset[str]]:
        """Who the caller proved to be (the owner of the tasks it makes) and the scopes it
        holds: as its scheme says, or, for the essay's static bearer token, the token if it
        is this peer's, with the scopes a step-up token adds. `Bearer x` and `bearer x`
        are the same caller, and so is its step-up token."""
        if self.scheme is not None:
            return self.scheme.caller(request)
        if self.token is None:
            return None, frozenset()
        scheme, _, token = (request.header("Authorization") or "").partition(" ")
        if scheme.lower() != "bearer":
            return None, frozenset()
        offered = token.strip(" \t").encode()  # spaces and tabs around it (RFC 9110 OWS), no other kind of space
        # compare_digest: the time taken must not reveal how much of a guess was right;
        # every known token is compared, so the time does not say which one nearly matched.
        matches = [(known, digests.compare_digest(offered, known.encode()))
                   for known in (self.token, *self.step_ups, *self.other_tokens)]
        if matches[0][1]:
            return self.owner, frozenset()
        other = next((known for known, matched in matches[1 + len(self.step_ups):] if matched), None)
        if other is not None:
            return owner_of_bearer(other), frozenset()
        matches = matches[:1 + len(self.step_ups)]
        scopes = frozenset(self.step_ups[known] for known, matched in matches[1:] if matched)
        return (self.owner, scopes) if scopes else (None, frozenset())

    def _log(self, line: str) -> None:
        self.log(f"[{self.name}] {line}")


class Binding(Protocol):
    """A protocol binding (A2A 1.0 section 5): how an HTTP request to the agent's endpoint
    carries one operation, and how its answers and errors are spelled. One per row of
    peers/a2a/bindings.py, its module's SERVED(methods, log, max_body): JSON-RPC
    (peers/jsonrpc_binding.py) and HTTP+JSON (peers/rest.py); all reach the operations of
    peers/methods.py, so the app never asks which one it is talking to."""

    def verbs(self, route: str) -> tuple[str, ...]:
        """The HTTP methods `route` (the path below the endpoint; "" the endpoint) answers."""

    def takes(self, media_type: str, body: bytes) -> bool:
        """Whether a request body of this Content-Type may be read at all."""

    def answer(self, request: HttpRequest, route: str, caller: Caller, headers: dict[str, str]) -> HttpResponse:
        """The operation's answer (with `headers` added), or its error, as this binding spells them."""

    def error(self, status: int, error: JsonRpcError, headers: dict[str, str]) -> HttpResponse:
        """A refusal under `status`, in this binding's error body."""


def new_token() -> str:
    return os.urandom(16).hex()  # 128 bits from the OS's random source, as secrets.token_hex


def token_for(card: Any, given: str | None = None) -> str | None:
    """The bearer token a peer requires, as its card declares: `given`, or a fresh one; None
    for a card that declares no bearer auth (the rogue's `none`), which then takes anyone."""
    return (given or new_token()) if BEARER.kind in card.auth_schemes else None


def _matches(if_none_match: str | None, etag: str) -> bool:
    """RFC 9110 13.1.2: any listed tag equal to ours (weakly: W/ ignored), or "*"."""
    tags = [tag.strip().removeprefix("W/") for tag in (if_none_match or "").split(",")]
    return "*" in tags or etag in tags


def _error(status: int, why: str, error: type[JsonRpcError] = InvalidRequest, **headers: str) -> HttpResponse:
    return HttpResponse(status, {**JSON, **headers}, encode_error(None, error(why)))
