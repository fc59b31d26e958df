"""A2A's HTTP+JSON binding, as the support agent speaks it: each operation a verb and a path.

Essay: Delegation over JSON-RPC, told again without the envelope. Spec: A2A 1.0 section
11 (HTTP+JSON/REST) and 5.3 (the operations in each binding). The objects are the same
proto JSON as JSON-RPC's params and results (peers/a2a/wire_v10.py writes and reads both);
what changes is the envelope: JSON-RPC posts every operation to one endpoint and names
it in the frame, HTTP+JSON names it by the request's verb and path, puts a GET's
parameters in the query, answers with the result as the whole body, an error with an
HTTP status and a google.rpc.Status body (`{"error": {code, status, message, details}}`,
its ErrorInfo's `reason` saying which A2A error it is), and streams bare StreamResponses.

The routes are peers/a2a/routes.py's, the table the served side (peers/rest.py) reads
too: an operation (as wire_v10.METHODS names them) -> its verb, its path, and the params
that fill the path. Loaded only for a card that offers HTTP+JSON and no JSON-RPC, or with --binding http+json (peers/support/calling/cards.py chooses).
Not here: DeleteTaskPushNotificationConfig (our transports send GET and POST only, and
the support agent deletes nothing), gRPC, and A2A 0.3's REST paths (/v1/...).
"""
from __future__ import annotations

from urllib.parse import quote, urlencode

from peers.a2a import wire_v10
from peers.a2a.errors import A2AErrorCode
from peers.a2a.routes import PLACEHOLDER, ROUTES, in_query, pattern
from peers.support.calling.cards import HTTP_JSON, refused
from transports import sse
from transports.base import ClientRequest, HttpResponse
from transports.codec import MAX_FRAME_BYTES, LimitExceeded, dumps, loads_strict
from transports.errors import (PERMISSION_DENIED_CODE, UNAUTHENTICATED_CODE, ProtocolViolation, RemoteError,
                               TransportError)
from transports.escaping import cut
from transports.jsonrpc import ErrorCode

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable

MEDIA_TYPE = "application/a2a+json"  # A2A 1.0.1 section 11.1: HTTP+JSON's own (plain JSON is accepted)
ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"


# The route our client sends for each operation: its first verb. The support agent sends
# GET and POST alone; a DELETE (`check`'s DeleteTaskPushNotificationConfig) needs a transport
# that speaks every verb (transports/base.py `send`: the network's).
SENT = {route.operation: route for route in ROUTES}
# An error's ErrorInfo reason -> the code JSON-RPC would have answered with: the same refusal.
# A scope the credential lacks is an answer too (403, PERMISSION_DENIED): JSON-RPC's -32043; and credentials
# held back (429, UNAUTHENTICATED: a guess limit's), -32041. A 401 is the refusal it is, its body never read so.
CODES = {**{code.name: int(code) for code in A2AErrorCode}, **{code.name: int(code) for code in ErrorCode},
         "PERMISSION_DENIED": PERMISSION_DENIED_CODE, "UNAUTHENTICATED": UNAUTHENTICATED_CODE}


def request_for(method: str, params: Any) -> tuple[str, str, bytes]:
    """The verb, path (with its query) and body that spell `method(params)` in HTTP+JSON."""
    route = SENT.get(wire_v10.METHODS.get(method, ""))
    if route is None:
        raise TransportError(f"the support agent's HTTP+JSON binding has no route for {method[:60]}")
    params, verb, filled = dict(params) if isinstance(params, dict) else {}, route.verbs[0], route.in_path
    if any(not isinstance(params.get(name), str) for name in filled):
        raise TransportError(f"{method} needs {', '.join(filled)} for its path")
    try:  # a peer's id may hold a lone surrogate, which no URL can spell: refused, not a traceback
        path = "/" + PLACEHOLDER.sub(lambda match: quote(params[match.group(1)], safe=""), route.path)
        if not in_query(verb):  # the whole request as its body, as the official SDK's client sends it
            return verb, path, dumps(params)
        query = {name: _query_value(value) for name, value in params.items() if name not in filled}
        return verb, path + ("?" + urlencode(query) if query else ""), b""
    except UnicodeEncodeError:
        raise TransportError(f"{method}: a value for its URL is not text UTF-8 can spell (a lone surrogate)") from None


def method_of(verb: str, path: str) -> str | None:
    """The wire_v10 method a request line spells (for traces and diagrams), by the end of its
    path: whatever base and tenant come before it."""
    return next((route.method for route, end in _ENDS if route.verbs[0] == verb and end.search(path)), None)


_ENDS = [(route, pattern(route._replace(path="/" + route.path))) for route in SENT.values()]


class HttpJson:
    """The HTTP+JSON binding (cards.Binding): one request per operation, to the interface's
    URL joined with the operation's path."""

    NAME = HTTP_JSON
    ENVELOPE = ("no envelope: the operation named by the request line (POST <interface URL>/message:send), "
                "its answer by a status")

    def at(self, url: str, tenant: str | None) -> "tuple[HttpJson, str]":
        """1.0 section 11: a tenant is the first segment of every path, after the interface's URL."""
        return self, (url.rstrip("/") + "/" + quote(tenant, safe="") if tenant else url)

    def request(self, url: str, method: str, params: Any, headers: dict[str, str],
                request_id: int) -> "tuple[ClientRequest, Callable[[HttpResponse, bool], Any]]":
        verb, path, body = request_for(method, params)
        streamed = path.split("?")[0].endswith((":stream", ":subscribe"))  # answered with events: asked for so
        headers = {"Accept": sse.MEDIA_TYPE if streamed else MEDIA_TYPE,
                   **({"Content-Type": MEDIA_TYPE} if verb == "POST" else {}), **headers}
        sent = ClientRequest(verb, url.rstrip("/") + path, headers, body, self.NAME)

        def read(response: HttpResponse, attached: bool = False) -> Any:
            if not 200 <= response.status < 300:
                raise error_of(response.status, response.body, headers, url, attached, response.header("Retry-After"))
            if sse.is_stream(response.header("Content-Type")):
                return sse.events(response.body, event_of)
            return _json(response.body, "the answer")
        return sent, read


BINDING = HttpJson()


def error_of(status: int, body: Any, headers: dict[str, str], url: str, attached: bool = False,
             wait: str | None = None) -> Exception:
    """An HTTP error status as what it says: the A2A error its ErrorInfo names (RemoteError,
    with the code JSON-RPC would have used and the details as 1.0's `data`), or, for an
    answer without one (or a credential refused: any 401), the HTTP refusal it is. A 403 that
    names PERMISSION_DENIED is the peer's answer to a caller it knows, as JSON-RPC's -32043 is; a 429
    naming UNAUTHENTICATED, its guess limit's (-32041). Either named under another status is refused as
    that status (a 500 "unauthenticated" must not be advised as nothing done, credentials to fix)."""
    if status == 401 or not isinstance(body, bytes):
        return refused(status, headers, url, attached, wait, body)
    try:
        error = loads_strict(body).get("error") if len(body) <= MAX_FRAME_BYTES else None
    except (ValueError, AttributeError):
        error = None
    details = error.get("details") if isinstance(error, dict) else None
    info = next((detail for detail in details if isinstance(detail, dict) and detail.get("@type") == ERROR_INFO),
                None) if isinstance(details, list) else None
    code = CODES.get(info.get("reason")) if info is not None and isinstance(info.get("reason"), str) else None
    if code is None or (status == 403) != (code == PERMISSION_DENIED_CODE) or \
            (status == 429) != (code == UNAUTHENTICATED_CODE):  # each said of its own status alone
        return refused(status, headers, url, attached, wait, body)
    message = error.get("message") if isinstance(error.get("message"), str) else "(no message)"
    return RemoteError(code, f"HTTP {status}: {cut(message, 200)}", details)  # (whole words: our token, masked)


def event_of(data: bytes) -> Any:
    """One event of an HTTP+JSON stream: a bare StreamResponse, or the error that ends it."""
    event = _json(data, "a stream event")
    if isinstance(event, dict) and isinstance(event.get("error"), dict):
        failure = error_of(500, data, {"Authorization": ""}, "")
        if isinstance(failure, RemoteError):
            raise failure
        raise ProtocolViolation("a stream event is an error naming no A2A error")
    return event


def _json(body: bytes, what: str) -> Any:
    if len(body) > MAX_FRAME_BYTES:
        raise ProtocolViolation(f"{what} is larger than {MAX_FRAME_BYTES} bytes")
    try:
        return loads_strict(body)
    except LimitExceeded as exc:  # JSON, but more of it than a client reads
        raise ProtocolViolation(f"{what} is over this client's limits ({exc})") from None
    except ValueError as exc:
        raise ProtocolViolation(f"{what} is not JSON ({exc})") from None


def _query_value(value: Any) -> str:
    """A query parameter as proto JSON spells a scalar: true/false, a number, a string."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else str(value)
