"""A peer as an app: it serves its Agent Card and answers one JSON-RPC frame.

Essay: The Agent Card ("a public description a peer serves at a well-known URL") and
Delegation over JSON-RPC. Like a WSGI app, `PeerApp` is a callable from `HttpRequest` to
`HttpResponse`; the in-process shim and the HTTP server both call it, so the bytes on
the wire are the same whichever transport carries them. HTTP-level refusals (unknown
path, wrong method or Content-Type, oversize body, missing credentials) happen here,
before the JSON-RPC layer; everything after is `transports.jsonrpc.dispatch`.
"""
from __future__ import annotations

import json
import sys
from types import ModuleType
from typing import NamedTuple
from urllib.parse import urlsplit

from peers.peer import Peer
from peers.wires import AllMethods
from transports.base import HttpRequest, HttpResponse
from transports.jsonrpc import MAX_FRAME_BYTES, InvalidRequest, JsonRpcError, dispatch, encode_error

try:  # constant-time comparison, without loading OpenSSL as `import hmac` does (start-up
    from _operator import _compare_digest as compare_digest  # budget); hmac falls back to it
except ImportError:  # pragma: no cover - other Python implementations
    from hmac import compare_digest

CARD_PATH = "/.well-known/agent-card.json"
JSON = {"Content-Type": "application/json"}


class Caller(NamedTuple):
    """What a method handler may know of who is calling: the context dispatch() passes."""

    owner: str  # whose tasks it may see: its credentials, or "" where none are checked
    version: str | None  # the A2A-Version header, if any (1.0 methods require "1.0")


def log_to_stderr(line: str) -> None:
    """The one place a peer writes its log; internal error details go here, not on the wire."""
    sys.stderr.write(line + "\n")  # one write: print() would make two system calls a line
    sys.stderr.flush()


class PeerApp:
    def __init__(self, peer: Peer, wire: ModuleType, *, token: str | None = None,
                 log=log_to_stderr, max_body: int = MAX_FRAME_BYTES) -> None:
        self.peer, self.wire, self.token, self.max_body = peer, wire, token, max_body
        self.log = lambda line: log(f"[{peer.card.name}] {line}")
        self.endpoint_path = urlsplit(peer.card.url).path or "/"
        self.methods = AllMethods(peer)  # every wire's method names, on one endpoint
        # Served pretty-printed: the card is a document people read, as the essay shows it.
        self.card_body = json.dumps(wire.card_to_wire(peer.card), indent=2).encode() + b"\n"

    def __call__(self, request: HttpRequest) -> HttpResponse:
        path = urlsplit(request.url).path or "/"
        if path == CARD_PATH:
            if request.method != "GET":
                return _error(405, InvalidRequest("the Agent Card is read with GET"), Allow="GET")
            return HttpResponse(200, dict(JSON), self.card_body)
        if path == self.endpoint_path:
            if request.method != "POST":
                return _error(405, InvalidRequest("JSON-RPC frames are sent with POST"),
                              Allow="POST")
            return self._post(request)
        return _error(404, InvalidRequest(f"nothing at {path}; the endpoint is "
                                          f"{self.endpoint_path}"))

    def _post(self, request: HttpRequest) -> HttpResponse:
        media_type = (request.header("Content-Type") or "").split(";")[0].strip().lower()
        if media_type not in ("application/json", "application/a2a+json"):
            return _error(415, InvalidRequest("Content-Type must be application/json"))
        if self.token is not None and not self._authorized(request):
            # No task is created: the frame is not even parsed.
            return _error(401, InvalidRequest("a valid bearer token is required"),
                          **{"WWW-Authenticate": f'Bearer realm="{self.peer.card.name}"'})
        if len(request.body) > self.max_body:
            return _error(413, InvalidRequest(f"body larger than {self.max_body} bytes"))
        caller = Caller(self._owner(request), request.header("A2A-Version"))
        body = dispatch(request.body, self.methods, caller, log=self.log, max_bytes=self.max_body)
        if body is None:  # a notification: nothing to say
            return HttpResponse(204, {}, b"")
        return HttpResponse(200, dict(JSON), body)

    def _owner(self, request: HttpRequest) -> str:
        # The credentials a caller proved: with them it sees its own tasks and no others.
        return (request.header("Authorization") or "") if self.token is not None else ""

    def _authorized(self, request: HttpRequest) -> bool:
        scheme, _, token = (request.header("Authorization") or "").partition(" ")
        # compare_digest: the time taken must not reveal how much of a guess was right.
        return scheme.lower() == "bearer" and compare_digest(token.encode(), self.token.encode())


def _error(status: int, error: JsonRpcError, **headers: str) -> HttpResponse:
    return HttpResponse(status, {**JSON, **headers}, encode_error(None, error))
