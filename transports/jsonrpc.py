"""JSON-RPC 2.0, sans-IO: bytes in, bytes out; no sockets, printing, clocks or randomness.

Essay: Delegation over JSON-RPC (the same `"jsonrpc": "2.0"` envelope Part 12 used for
tools). Spec: https://www.jsonrpc.org/specification, sections 4-6.

The server side is one function, `dispatch()`, and it is the only place where an
exception becomes an error object on the wire. The client side is `encode_request()`
and `decode_response()`, which raise the client's own errors (`transports.errors`).
Frames are decoded by the strict, bounded codec (`transports/codec.py`), because a peer
we do not own may send anything; bool or float ids and batches are refused here.
This module knows nothing about A2A; A2A errors subclass `JsonRpcError`.
"""

from __future__ import annotations

import re
from enum import IntEnum

from transports.codec import LIMITS, MAX_FRAME_BYTES, LimitExceeded, Limits, NotText, dumps, loads_strict
from transports.errors import ProtocolViolation, RemoteError, let_quit
from transports.records import Record

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable, Iterator, Protocol
else:  # an interface below is a documented class at run time, and typing's Protocol to a checker
    Protocol = object

class ErrorCode(IntEnum):
    PARSE_ERROR = -32700  # the bytes are not JSON
    INVALID_REQUEST = -32600  # JSON, but not a Request object
    METHOD_NOT_FOUND = -32601  # no such method here
    INVALID_PARAMS = -32602  # the method exists; its params are wrong
    INTERNAL_ERROR = -32603  # the server failed; details stay in its log


class JsonRpcError(Exception):
    """An error a server sends on purpose. One subclass per code; `message` goes on the wire."""

    code: int = ErrorCode.INTERNAL_ERROR
    title: str = "Internal error"

    def __init__(self, detail: str | None = None, data: Any = None) -> None:
        self.message = f"{self.title}: {detail}" if detail else self.title
        self.data = data
        super().__init__(self.message)

    def to_wire(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": int(self.code), "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class ParseError(JsonRpcError):
    code, title = ErrorCode.PARSE_ERROR, "Parse error"


class InvalidRequest(JsonRpcError):
    code, title = ErrorCode.INVALID_REQUEST, "Invalid Request"


class MethodNotFound(JsonRpcError):
    code, title = ErrorCode.METHOD_NOT_FOUND, "Method not found"


class InvalidParams(JsonRpcError):
    code, title = ErrorCode.INVALID_PARAMS, "Invalid params"


class InternalError(JsonRpcError):
    code, title = ErrorCode.INTERNAL_ERROR, "Internal error"


def is_valid_id(value: Any) -> bool:
    # bool is an int in Python, and a float id is ambiguous (spec 4: "SHOULD NOT contain
    # fractional parts"); both are refused so an id always echoes back exactly.
    return value is None or isinstance(value, str) or (type(value) is int)


# -- the server side ------------------------------------------------------------------

class Request(Record):
    method: str
    params: dict[str, Any] | list[Any] | None
    id: str | int | None
    is_notification: bool

    @classmethod
    def from_wire(cls, obj: Any) -> "Request":
        if isinstance(obj, list):
            raise InvalidRequest("batch requests are not supported; send one request per frame")
        if not isinstance(obj, dict):
            raise InvalidRequest("a request must be a JSON object")
        if obj.get("jsonrpc") != "2.0":
            raise InvalidRequest('"jsonrpc" must be exactly "2.0"')
        if not isinstance(obj.get("method"), str):
            raise InvalidRequest('"method" must be a string')
        if "id" in obj and not is_valid_id(obj["id"]):
            raise InvalidRequest('"id" must be a string, an integer or null')
        params = obj.get("params")
        if "params" in obj and not isinstance(params, (dict, list)):
            raise InvalidRequest('"params" must be an object or an array')
        return cls(obj["method"], params, obj.get("id"), "id" not in obj)


class Handler(Protocol):
    """One JSON-RPC method: its params and the caller's context in, its result out.
    Raises a JsonRpcError subclass to answer with that error."""

    def __call__(self, params: Any, context: Any) -> Any: ...


class Methods(Protocol):
    """Where dispatch() finds a method's handler: a plain dict will do."""

    def get(self, method: str) -> Handler | None: ...


class Stream(Record):
    """A handler's answer that is several results for one request: `dispatch` answers it
    with one response frame per result, all with the request's id, for the caller to
    send as a stream (Server-Sent Events: transports/sse.py), as A2A and MCP do."""

    results: Iterable[Any]  # a tuple, or an iterator whose results come as they happen; None: no
    # result yet, only a sign of life (the stream's writer sends a comment, and so learns if it is read)


def dispatch(frame: bytes, methods: Methods, context: Any = None, *,
             log: Callable[[str], None] | None = None, max_bytes: int = MAX_FRAME_BYTES,
             limits: Limits = LIMITS) -> bytes | Iterator[bytes] | None:
    """Answer one request frame with one response frame (None for a notification), or,
    for a handler that answers with a `Stream`, with an iterator of frames (each made
    when the handler's next result is; an error after the first is the stream's end).

    The single place where exceptions become wire errors. A `JsonRpcError` goes out as
    itself; anything else is a bug in the handler, so it goes out as a bare -32603 and
    its detail goes only to `log`, never into the frame.
    """
    request_id: Any = None
    request: Request | None = None
    try:
        if len(frame) > max_bytes:
            raise InvalidRequest(f"frame larger than {max_bytes} bytes")  # before decoding it
        try:
            obj = loads_strict(frame, limits)
        except NotText as exc:  # JSON, so its id is known (echoed unless it is the string that is no text)
            if isinstance(exc.document, dict) and "id" not in exc.document and "method" in exc.document:
                return None  # a notification: never answered (spec 4.1), whatever it holds
            given = exc.document.get("id") if isinstance(exc.document, dict) else None
            request_id = given if is_valid_id(given) and not re.search("[\ud800-\udfff]", str(given)) else None
            raise InvalidRequest(str(exc)) from None
        except ValueError as exc:  # not JSON, or more than our limits let us parse
            raise ParseError(str(exc)) from None
        if isinstance(obj, dict) and is_valid_id(obj.get("id")):
            request_id = obj.get("id")  # echo it even if the rest is invalid (spec 5)
        request = Request.from_wire(obj)
        handler = methods.get(request.method)
        if handler is None:
            raise MethodNotFound()
        result = handler(request.params, context)
        if isinstance(result, Stream):  # a notification gets no stream either
            return None if request.is_notification else \
                (None if each is None else dumps({"jsonrpc": "2.0", "id": request_id, "result": each})
                 for each in result.results)
        response = {"jsonrpc": "2.0", "id": request_id, "result": result}
        body = dumps(response)
    except JsonRpcError as exc:
        body = encode_error(request_id, exc)
    except Exception as exc:  # a bug, not the caller's fault: hide the detail
        let_quit(exc)
        if log is not None:
            log(f"internal error in {request.method if request else 'dispatch'}: {exc!r}")
        body = encode_error(request_id, InternalError())
    if request is not None and request.is_notification:
        return None  # spec 4.1: the server MUST NOT reply to a notification
    return body


def encode_error(request_id: Any, error: JsonRpcError) -> bytes:
    return dumps({"jsonrpc": "2.0", "id": request_id, "error": error.to_wire()})


# -- the client side ------------------------------------------------------------------

def encode_request(request_id: int | str, method: str, params: Any) -> bytes:
    """A request frame, keys in the essay's order: jsonrpc, id, method, params."""
    if not is_valid_id(request_id) or request_id is None:
        raise ValueError(f"not a usable request id: {request_id!r}")
    return dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})


def encode_notification(method: str, params: Any = None) -> bytes:
    """A notification: a request without an id, which the server must not answer (spec 4.1)."""
    return dumps({"jsonrpc": "2.0", "method": method, **({} if params is None else {"params": params})})


def decode_response(frame: bytes, request_id: int | str, *,
                    max_bytes: int = MAX_FRAME_BYTES) -> Any:
    """The `result` of a response to `request_id`. Raises RemoteError or ProtocolViolation."""
    if len(frame) > max_bytes:
        raise ProtocolViolation(f"response larger than {max_bytes} bytes")
    try:
        obj = loads_strict(frame)
    except LimitExceeded as exc:  # JSON, but more of it than a client reads
        raise ProtocolViolation(f"response is over this client's limits ({exc})") from None
    except ValueError as exc:
        raise ProtocolViolation(f"response is not JSON ({exc})") from None
    if not isinstance(obj, dict) or obj.get("jsonrpc") != "2.0":
        raise ProtocolViolation('response is not a JSON-RPC 2.0 object')
    if ("result" in obj) == ("error" in obj):
        raise ProtocolViolation('response must carry exactly one of "result" and "error"')
    if "error" in obj:
        error = obj["error"]
        if (not isinstance(error, dict) or type(error.get("code")) is not int
                or not isinstance(error.get("message"), str)):
            raise ProtocolViolation("error object must have an integer code and a string message")
        if obj.get("id") not in (request_id, None):
            raise ProtocolViolation(f"error answers id {_short(obj.get('id'))}, not {request_id!r}")
        raise RemoteError(error["code"], _short(error["message"], quoted=False), error.get("data"))
    if type(obj.get("id")) is not type(request_id) or obj.get("id") != request_id:
        raise ProtocolViolation(f"response answers id {_short(obj.get('id'))}, not {request_id!r}")
    return obj["result"]


def _short(value: Any, *, quoted: bool = True, limit: int = 200) -> str:
    """A peer's value in one of our messages: cut to a line, whatever it sent."""
    text = repr(value) if quoted else str(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text) - limit} more characters)"
