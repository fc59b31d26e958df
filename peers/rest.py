"""A2A's HTTP+JSON binding: each operation at its own URL and HTTP verb, on the same handlers.

Spec: A2A 1.0 section 11 (HTTP+JSON/REST: routes 11.3, query parameters 11.5, errors 11.6,
streaming 11.7) and 5.4 (which HTTP status each A2A error maps to). Where JSON-RPC names
an operation in the frame (`"method": "GetTask"`), this binding names it by the route
(`GET /tasks/{id}`); both reach the same handler of peers/methods.py OPERATIONS, so the
task a client gets is the same whichever binding carried it; the routes themselves are
peers/a2a/routes.py's, which the support agent's client reads too. The request is what the
JSON-RPC `params` would be, gathered from the body, the query and the path; a result is
the same JSON with no envelope; an error is a google.rpc.Status with an ErrorInfo, under
the HTTP status section 5.4 gives it. Routes sit under the agent's endpoint (the card's
URL), optionally after a tenant (`/{tenant}/tasks/...`): the request's `tenant` field, as
a body or query may also give it (peers/tenants.py serves it or refuses it). Always 1.0:
a request must ask for it, as on JSON-RPC (`A2A-Version: 1.0`, or `?A2A-Version=1.0`:
peers/a2a/versions.py).
Not here: the HTTP-level checks every binding shares (credentials, size: peers/app.py),
and A2A 0.3's REST routes (`/v1/...`), which this binding does not answer.
"""
from __future__ import annotations

from functools import lru_cache
from types import MappingProxyType
from urllib.parse import parse_qsl, unquote, urlsplit

from peers.a2a import versions, wire_v10
from peers.a2a.errors import A2AErrorCode, InvalidField
from peers.a2a.fields import REQUEST_LIMITS
from peers.a2a.routes import PLACEHOLDER, QUERY_BOOLEANS, ROUTES, Route, in_query, pattern
from peers.methods import Caller, MethodTable
from transports import sse
from transports.base import MOST_CACHED, HttpRequest, HttpResponse, hang_up
from transports.codec import NotText, dumps, loads_strict
from transports.errors import BUSY_CODE, PERMISSION_DENIED_CODE, UNAUTHENTICATED_CODE, let_quit
from transports.jsonrpc import ErrorCode, InternalError, InvalidParams, InvalidRequest, JsonRpcError, Stream

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable, Iterator, Mapping

# Section 11.1 said application/json in A2A 1.0.0 and prefers application/a2a+json since
# 1.0.1: a result goes out in the one the client used (its Content-Type, or for a GET its
# Accept), so clients of either text get theirs. Errors go out as application/json, as the
# official SDK sends them and the conformance kit requires.
MEDIA_TYPES = ("application/json", "application/a2a+json")
MAX_QUERY_FIELDS = 20  # ListTasks has seven; more is not a request we need to read
# A caller's tasks, webhooks (their tokens) and extended card: no cache may keep an answer for another. An API
# key travels in X-API-Key, so RFC 9111 3.5 (no answer to Authorization reused) does not cover it, and a GET's
# answer with no Cache-Control is heuristically cacheable (4.2.2). A stream keeps its no-cache.
NOT_STORED = {"Cache-Control": "no-store"}


# Section 5.4 (1.0.1): each error's HTTP status, and the google.rpc code its Status names.
# A2A 1.0.0 said 409, 415 and 502 for three of them; 1.0.1 moved them to google.rpc's own
# mapping, which the official SDK follows too.
STATUS: dict[int, tuple[int, str]] = {
    A2AErrorCode.TASK_NOT_FOUND: (404, "NOT_FOUND"),
    A2AErrorCode.TASK_NOT_CANCELABLE: (400, "FAILED_PRECONDITION"),
    A2AErrorCode.PUSH_NOTIFICATION_NOT_SUPPORTED: (400, "FAILED_PRECONDITION"),
    A2AErrorCode.UNSUPPORTED_OPERATION: (400, "FAILED_PRECONDITION"),
    A2AErrorCode.CONTENT_TYPE_NOT_SUPPORTED: (400, "INVALID_ARGUMENT"),
    A2AErrorCode.INVALID_AGENT_RESPONSE: (500, "INTERNAL"),
    A2AErrorCode.EXTENDED_AGENT_CARD_NOT_CONFIGURED: (400, "FAILED_PRECONDITION"),
    A2AErrorCode.EXTENSION_SUPPORT_REQUIRED: (400, "FAILED_PRECONDITION"),
    A2AErrorCode.VERSION_NOT_SUPPORTED: (400, "FAILED_PRECONDITION"),
    ErrorCode.INVALID_REQUEST: (400, "INVALID_ARGUMENT"),
    ErrorCode.INVALID_PARAMS: (400, "INVALID_ARGUMENT"),
    ErrorCode.METHOD_NOT_FOUND: (404, "NOT_FOUND"),
    ErrorCode.INTERNAL_ERROR: (500, "INTERNAL"),
    BUSY_CODE: (503, "UNAVAILABLE"),  # every stream slot in use: ask again later
    UNAUTHENTICATED_CODE: (401, "UNAUTHENTICATED"), PERMISSION_DENIED_CODE: (403, "PERMISSION_DENIED"),
}
# A refusal made before any operation (peers/app.py): the google.rpc code of its status.
HTTP_CODES = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
              405: "UNIMPLEMENTED", 408: "DEADLINE_EXCEEDED", 411: "INVALID_ARGUMENT", 413: "INVALID_ARGUMENT",
              414: "INVALID_ARGUMENT", 415: "INVALID_ARGUMENT", 417: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED",
              431: "INVALID_ARGUMENT", 500: "INTERNAL", 501: "UNIMPLEMENTED", 503: "UNAVAILABLE",
              505: "UNIMPLEMENTED"}  # the HTTP status of the server's own refusals (google.rpc's mapping)


PATTERNS = [(route, pattern(route)) for route in ROUTES]
# Each route's fixed text, in order: a path lacking any of it is not that route's, found
# without the regex, whose scans back through a long {name} value for a verb cost milliseconds
# at 8 KiB (a hostile path: 5.7 ms a request, 1.8 with this check, measured here).
FIXED = [PLACEHOLDER.split(route.path)[::2] for route in ROUTES]


def could_be(path: str, fixed: list[str]) -> bool:
    return path.startswith(fixed[0]) and path.endswith(fixed[-1]) and all(part in path for part in fixed[1:-1])


def routes_for(path: str) -> tuple[tuple[Route, Mapping[str, str]], ...]:
    """Every route `path` (under the endpoint, no leading '/') names, with the request
    fields its {names} fill, percent-decoded; first without a tenant, then with one. The
    whole path picks one pattern (routes.pattern: `tasks/t-1:cancel` is CancelTask's path,
    not GetTask's); the routes found are the rows sharing it, one per verb. Read only."""
    # Kept for paths no longer than a URL parse_url keeps: what the cache holds stays small,
    # whatever paths (up to a server's 8 KiB target each) a client asks.
    return _routes(path) if len(path) <= MOST_CACHED else _match(path)


def _match(path: str) -> tuple[tuple[Route, Mapping[str, str]], ...]:
    tenant, _, below = path.partition("/")  # an empty segment ("/a2a//tasks") names no tenant: not a route
    for candidate, fields in ((path, {}), *([(below, {"tenant": unquote(tenant)})] if tenant else [])):
        # Read only: a route found is kept and handed to every request for that path.
        found = tuple((route, MappingProxyType({**fields, **{name: unquote(value)
                                                             for name, value in matched.groupdict().items()}}))
                      for (route, matcher), fixed in zip(PATTERNS, FIXED)
                      if could_be(candidate, fixed) and (matched := matcher.fullmatch(candidate)))
        if found:
            return found
    return ()


_routes = lru_cache(maxsize=256)(_match)  # asked twice a request (its verbs, then its answer); paths repeat


class RestBinding:
    """The HTTP+JSON binding for one peer's app: section 11.3's routes, onto its method table."""

    def __init__(self, methods: MethodTable, log: Callable[[str], None], max_body: int = 0) -> None:
        self.methods, self.log = methods, log  # max_body: peers/app.py checks a body's size for every binding
        self.handlers: dict[str, Any] = {}  # each operation's handler, made once, as MethodTable's are

    def verbs(self, route: str) -> tuple[str, ...]:
        """The HTTP verbs `route` answers; () where it is no route at all."""
        return tuple(dict.fromkeys(verb for found, _ in routes_for(route) for verb in found.verbs))

    def takes(self, media_type: str, body: bytes) -> bool:
        """A body is JSON (application/json, or the a2a+json section 11.1 prefers); a GET
        or a bodiless POST (a cancel) may say nothing of its type."""
        return not body or media_type in MEDIA_TYPES

    def answer(self, request: HttpRequest, route: str, caller: Caller, headers: dict[str, str]) -> HttpResponse:
        found, fields = next((match for match in routes_for(route) if request.method in match[0].verbs))
        try:
            where = "query" if in_query(request.method) else "body"
            asked = _query(request.url) if where == "query" else _body(request.body)
            params = {**asked, **_agreeing(fields, asked, where)}  # the path's fields name the resource
            if where == "body" and "?" in request.url:  # a POST's query carries no field, yet names none otherwise
                _query_agreeing({name: value for name in ("tenant", *found.in_path)  # not a string: the wire refuses it
                                 if isinstance(value := params.get(name) or "", str)}, request.url)
            if found.operation not in self.handlers:
                self.handlers[found.operation] = self.methods.operation(wire_v10, found.operation)
            result = self.handlers[found.operation](params, caller)
        except JsonRpcError as exc:  # a token too small says which scope it lacks (RFC 6750 3: MUST challenge)
            lacking = getattr(exc, "scope", "")
            return self.error(STATUS.get(exc.code, (500, "INTERNAL"))[0], exc, {
                "WWW-Authenticate": f'Bearer error="insufficient_scope", scope="{lacking}"'} if lacking else {})
        except Exception as exc:  # a bug, not the caller's fault: the detail stays in the log
            let_quit(exc)
            self.log(f"internal error in {request.method} /{route[:80]}: {exc!r}")
            return self.error(500, InternalError(), {})
        if isinstance(result, Stream):  # Server-Sent Events, each data the bare StreamResponse (11.7)
            return HttpResponse(200, {"Content-Type": sse.MEDIA_TYPE, "Cache-Control": "no-cache", **headers},
                                _events(result.results))
        # DeleteTaskPushNotificationConfig answers google.protobuf.Empty: {} in JSON.
        answer = {"Content-Type": _media_type(request), **NOT_STORED, **headers}
        return HttpResponse(200, answer, dumps({} if result is None else result))

    def error(self, status: int, error: JsonRpcError, headers: dict[str, str]) -> HttpResponse:
        """A google.rpc.Status under `status` (section 11.6): its code, the google.rpc code's
        name, the message, and the ErrorInfo an A2A error carries (its `data` in 1.0)."""
        mapped = STATUS.get(error.code)
        code = mapped[1] if mapped and mapped[0] == status else HTTP_CODES.get(status, "UNKNOWN")
        details = error.data if isinstance(error.data, list) else wire_v10.error_data(error)
        message = error.message  # the field a wire's reader names within JSON-RPC's params: here, in the body or query
        body = {"code": status, "status": code, "message": message.replace(": params.", ": ", 1)
                if isinstance(error, InvalidField) else message, **({"details": details} if details else {})}
        return HttpResponse(status, {"Content-Type": "application/json", **NOT_STORED, **headers}, dumps({"error": body}))


SERVED = RestBinding  # what peers/a2a/bindings.py's HTTP+JSON row serves with


def _events(results: Any) -> Iterator[bytes]:
    try:
        for result in results:
            yield sse.KEEP_ALIVE if result is None else sse.encode([dumps(result)])
    finally:
        hang_up(results)  # the stream's slot is given back however the client left


def _media_type(request: HttpRequest) -> str:
    """application/a2a+json for a client that sent it or asks for it; else application/json."""
    sent = (request.header("Content-Type") or "").split(";")[0].strip().lower()
    asked = [kind.split(";")[0].strip().lower() for kind in (request.header("Accept") or "").split(",")]
    return MEDIA_TYPES[1] if sent == MEDIA_TYPES[1] or (not sent and MEDIA_TYPES[1] in asked) else MEDIA_TYPES[0]


def _body(body: bytes) -> dict[str, Any]:
    """A POST's body: a JSON object (a SendMessageRequest, a push config, ...), or nothing."""
    if not body.strip():
        return {}
    try:
        value = loads_strict(body, REQUEST_LIMITS)
    except NotText as exc:  # JSON, holding a string that is no text
        raise InvalidRequest(f"the body is JSON, but {exc}") from None
    except ValueError as exc:  # not JSON, or more than the codec's limits: the SDK's INVALID_REQUEST too
        raise InvalidRequest(f"the body is not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise InvalidRequest("the body must be a JSON object")
    return value


# Each path field's proto name, where it differs from its JSON name (routes.py's {names} are JSON names).
_PROTO_NAMES = {name: "".join(f"_{c.lower()}" if c.isupper() else c for c in name)
                for route in ROUTES for name in route.in_path if name != name.lower()}


def _agreeing(fields: Mapping[str, str], asked: dict[str, Any], where: str) -> Mapping[str, str]:
    """The path's fields, if the body or query gives none of them otherwise: a request
    naming two tenants (or tasks), one in its path and another in its body, is refused
    rather than one silently chosen; so is a POST's query (section 11.5: never read) naming
    a tenant or task its path and body do not, which whatever routed it may have gone by.
    Given empty, a field is unset (proto3), not another. Either spelling counts: ProtoJSON
    reads the proto name (`task_id`) as the JSON name (`taskId`)."""
    for name, value in fields.items():
        if any(asked.get(spelled) not in (None, "", value) for spelled in (name, _PROTO_NAMES.get(name))):
            raise InvalidParams(f"the path names {name} {value[:80]!r}, and the {where} another" if value else
                                f"the {where} names a {name} the path and body do not")
    return fields


def _query_agreeing(fields: dict[str, str], url: str) -> None:
    """A POST's query (its other parameters unread, as section 11.5 has it): each time it names
    one of `fields` (the tenant and task the path and body name, or "" for none), the same one."""
    spellings = {spelled: name for name in fields for spelled in (name, _PROTO_NAMES.get(name)) if spelled}
    for name, value in parse_qsl(urlsplit(url).query, keep_blank_values=True):  # within the 8 KiB a target is
        if name in spellings:
            _agreeing({spellings[name]: fields[spellings[name]]}, {spellings[name]: value}, "query")


def _query(url: str) -> dict[str, Any]:
    """Section 11.5: the query's camelCase fields, booleans read as such; a field given twice is
    refused rather than one of them silently chosen. A number stays its digits: the wire reads
    an int32 from digits as ProtoJSON does (fields.count), so a query means what JSON-RPC's
    params mean (spec 5.1)."""
    try:
        pairs = parse_qsl(urlsplit(url).query, keep_blank_values=True, max_num_fields=MAX_QUERY_FIELDS)
    except ValueError:
        raise InvalidParams(f"more than {MAX_QUERY_FIELDS} query parameters") from None
    fields: dict[str, Any] = {}
    for name, value in pairs:
        if name.lower() == versions.NAME.lower():  # a service parameter (any case), not a request field: app.py read it
            continue
        if name in fields:
            raise InvalidParams(f"query parameter {name[:40]!r} is given more than once")
        if name in QUERY_BOOLEANS and value in ("true", "false"):
            fields[name] = value == "true"
        else:
            fields[name] = value  # the wire's reader names what is wrong with it
    return fields
