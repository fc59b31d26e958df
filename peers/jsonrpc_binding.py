"""JSON-RPC 2.0 as an A2A binding (spec section 9): every frame POSTed to the endpoint itself.

The peer side of peers/a2a/bindings.py's JSONRPC row (its SERVED), beside peers/rest.py's
HTTP+JSON: peers/app.py makes the HTTP-level checks both share, then hands the request
here; `transports.jsonrpc.dispatch` answers the frame with the method table of
peers/methods.py, and a handler's stream goes out as Server-Sent Events.
"""
from __future__ import annotations

from peers.a2a.fields import REQUEST_LIMITS
from peers.methods import Caller, MethodTable
from transports import sse
from transports.base import HttpRequest, HttpResponse
from transports.jsonrpc import JsonRpcError, dispatch, encode_error

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Callable

JSON = {"Content-Type": "application/json"}


class JsonRpcBinding:
    """JSON-RPC 2.0 (spec section 9): every frame POSTed to the endpoint itself, answered
    by `transports.jsonrpc.dispatch` with the method table of peers/methods.py."""

    def __init__(self, methods: MethodTable, log: Callable[[str], None], max_body: int) -> None:
        self.methods, self.log, self.max_body = methods, log, max_body

    def verbs(self, route: str) -> tuple[str, ...]:
        return ("POST",)

    def takes(self, media_type: str, body: bytes) -> bool:
        return media_type in ("application/json", "application/a2a+json")

    def answer(self, request: HttpRequest, route: str, caller: Caller, headers: dict[str, str]) -> HttpResponse:
        body = dispatch(request.body, self.methods, caller, log=self.log, max_bytes=self.max_body,
                        limits=REQUEST_LIMITS)
        if body is None:  # a notification: nothing to say
            return HttpResponse(204, {}, b"")
        if not isinstance(body, bytes):  # a stream: one Server-Sent Event per result, as made
            return HttpResponse(200, {"Content-Type": sse.MEDIA_TYPE, "Cache-Control": "no-cache", **headers},
                                (sse.KEEP_ALIVE if frame is None else sse.encode([frame]) for frame in body))
        return HttpResponse(200, {**JSON, **headers}, body)

    def error(self, status: int, error: JsonRpcError, headers: dict[str, str]) -> HttpResponse:
        return HttpResponse(status, {**JSON, **headers}, encode_error(None, error))


SERVED = JsonRpcBinding  # what peers/a2a/bindings.py's JSONRPC row serves with
