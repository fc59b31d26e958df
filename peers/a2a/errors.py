"""A2A's own JSON-RPC errors (-32001 ... -32009), one exception class per code, and the
workbench's own server errors (-32041, -32043, -32050).

Spec: A2A 1.0 section 5.4 (error codes) and 9.5 (JSON-RPC error objects). They subclass
the JSON-RPC layer's `JsonRpcError`, so `transports.jsonrpc.dispatch` turns them into
error objects like any other; the JSON-RPC layer itself never learns A2A's names.
A2A 1.0 adds `data`: a list of google.rpc detail objects, at least an ErrorInfo with an
UPPER_SNAKE `reason` in the "a2a-protocol.org" domain. `error_details` builds it; the
1.0 wire attaches it, while 0.3 leaves `data` out.
"""
from __future__ import annotations

from enum import IntEnum

from transports.errors import BUSY_CODE, PERMISSION_DENIED_CODE, REFUSING_CODES, UNAUTHENTICATED_CODE
from transports.jsonrpc import ErrorCode, InvalidParams, JsonRpcError

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any


class A2AErrorCode(IntEnum):
    TASK_NOT_FOUND = -32001  # no such task (or not one this caller may see)
    TASK_NOT_CANCELABLE = -32002  # the task already ended
    PUSH_NOTIFICATION_NOT_SUPPORTED = -32003
    UNSUPPORTED_OPERATION = -32004  # e.g. streaming on a peer that does not stream
    CONTENT_TYPE_NOT_SUPPORTED = -32005  # a part's media type the skill cannot take
    INVALID_AGENT_RESPONSE = -32006  # the agent produced something the protocol forbids
    EXTENDED_AGENT_CARD_NOT_CONFIGURED = -32007
    EXTENSION_SUPPORT_REQUIRED = -32008  # the client must support an extension first
    VERSION_NOT_SUPPORTED = -32009  # the A2A-Version asked for is not spoken here


class A2AError(JsonRpcError):
    """An A2A error: its code, the spec's title, and the ErrorInfo reason 1.0 sends."""

    reason = "INTERNAL_ERROR"


class TaskNotFound(A2AError):
    code = A2AErrorCode.TASK_NOT_FOUND
    title, reason = "Task not found", code.name


class TaskNotCancelable(A2AError):
    code = A2AErrorCode.TASK_NOT_CANCELABLE
    title, reason = "Task cannot be canceled", code.name


class PushNotificationNotSupported(A2AError):
    code = A2AErrorCode.PUSH_NOTIFICATION_NOT_SUPPORTED
    title, reason = "Push notifications are not supported", code.name


class UnsupportedOperation(A2AError):
    code = A2AErrorCode.UNSUPPORTED_OPERATION
    title, reason = "This operation is not supported", code.name


class ContentTypeNotSupported(A2AError):
    code = A2AErrorCode.CONTENT_TYPE_NOT_SUPPORTED
    title, reason = "Incompatible content types", code.name


class TooManyStreams(JsonRpcError):
    """The workbench's own server error (JSON-RPC leaves -32000 to -32099 to servers): every
    stream slot of this agent is in use. Refused before any work, so the same request may
    be sent again later; a task can be asked about (GetTask) meanwhile."""

    code, title = BUSY_CODE, "Too many open streams"


# A credential refused. A2A 1.0 has no JSON-RPC code for it (section 3.3.2: HTTP 401 / 403,
# gRPC UNAUTHENTICATED / PERMISSION_DENIED, "JSON-RPC custom error"), and -32600 Invalid
# Request would say the frame was not a Request object, which it may well have been. So
# two server errors of our own (JSON-RPC leaves -32000 to -32099 to servers), each with
# the ErrorInfo reason google.rpc gives it, the same reason the HTTP+JSON binding sends.
class Unauthenticated(JsonRpcError):
    """No credential, or one this agent does not know, for the scheme its card declares:
    refused before the request is read (peers/app.py), under HTTP 401 and its challenge."""

    code, title, reason = UNAUTHENTICATED_CODE, "Unauthenticated", "UNAUTHENTICATED"

    def __init__(self, detail: str | None = None) -> None:
        super().__init__(detail)  # no wire has read the request yet: 1.0's ErrorInfo for all
        self.data = error_details(self)


class TooManyGuesses(Unauthenticated):
    """Wrong credentials came too often from the caller's address (peers/schemes/guesses.py): refused
    under HTTP 429 and Retry-After, the credential not looked at, so a guess now tests nothing. Still
    -32041, and its ErrorInfo UNAUTHENTICATED, as any credential not taken: the cause is the caller's
    credentials, not a load; HTTP+JSON's `status` (RESOURCE_EXHAUSTED, 429's) and Retry-After say to wait."""

    def __init__(self, seconds: int) -> None:
        super().__init__(f"too many wrong credentials from this address: try again in {seconds} s")
        self.seconds = seconds


class PermissionDenied(JsonRpcError):
    """A caller this agent knows, whose credential lacks what the request needs (a
    step-up's scope: peers/pause.py). Nothing was done."""

    code, title, reason = PERMISSION_DENIED_CODE, "Permission denied", "PERMISSION_DENIED"

    def __init__(self, detail: str | None = None, scope: str = "") -> None:
        super().__init__(detail)
        self.scope = scope  # the bearer scope lacking, named by HTTP+JSON's 403 challenge (RFC 6750 3.1)


class InvalidAgentResponse(A2AError):
    code = A2AErrorCode.INVALID_AGENT_RESPONSE
    title, reason = "Invalid agent response", code.name


class ExtendedAgentCardNotConfigured(A2AError):
    code = A2AErrorCode.EXTENDED_AGENT_CARD_NOT_CONFIGURED
    title, reason = "Extended agent card is not configured", code.name


class ExtensionSupportRequired(A2AError):
    code = A2AErrorCode.EXTENSION_SUPPORT_REQUIRED
    title, reason = "Extension support is required", code.name


class VersionNotSupported(A2AError):
    code = A2AErrorCode.VERSION_NOT_SUPPORTED
    title, reason = "Protocol version is not supported", code.name


# Each A2A code but -32006 says the agent refused before acting (a task it cannot find or
# cancel, an operation, media type, extension or version it does not take): a caller told
# so knows nothing was done. -32006 is the agent's own failure, after it may have acted.
REFUSING_CODES.update(code for code in A2AErrorCode if code is not A2AErrorCode.INVALID_AGENT_RESPONSE)

_STANDARD_REASONS = {ErrorCode.INVALID_PARAMS: "INVALID_PARAMS",
                     ErrorCode.INVALID_REQUEST: "INVALID_REQUEST",
                     ErrorCode.INTERNAL_ERROR: "INTERNAL_ERROR"}


class InvalidField(InvalidParams):
    """-32602 for what a wire could not read (a fields.WireError): the field it names, if one, and
    why, as error_details' BadRequest says them."""

    def __init__(self, wrong: ValueError) -> None:
        super().__init__(str(wrong))
        self.field: str = getattr(wrong, "field", "")
        self.description = str(wrong).removeprefix("params.")


def error_details(error: JsonRpcError) -> list[dict[str, Any]] | None:
    """The A2A 1.0 `data` for an error: [ErrorInfo]; None where the spec's peers send none
    (-32700 and -32601)."""
    reason = getattr(error, "reason", None) or _STANDARD_REASONS.get(error.code)
    if reason is None:
        return None
    details = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason,
                "domain": "a2a-protocol.org", "metadata": dict(getattr(error, "details", {}))}]
    if isinstance(error, InvalidField) and error.field:  # the field it could not read: spec 9.5's BadRequest,
        details.append({"@type": "type.googleapis.com/google.rpc.BadRequest",  # named within params on JSON-RPC,
                        "fieldViolations": [{"field": error.field.removeprefix("params."),  # the body on HTTP+JSON
                                             "description": error.description}]})
    return details
