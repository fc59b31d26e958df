"""Each answer judged by the rules of check's table that apply to one frame, never changing it.

`check` grades an agent by one table of requirements (peers/support/check/requirements.py);
the rows that one answer can prove broken on its own are judged here, each by one small
function, and a broken one is one short line under the frame, naming the row's id, level,
section and title, with what was seen. A new single-frame rule is one row of RULES. A
stream that ends without a final event has no row in check's table yet (check does not
open streams): its row is `STREAM_FINAL` below, in the same form, until check judges it.
Spec: A2A 1.0 sections 3.1.2 (streams), 5.4, 9 and 11. Not here: rules that need two
frames or a question of our own (version negotiation, auth): `check` asks those.
"""
from __future__ import annotations

import re

from peers.a2a.bindings import HTTP_JSON, JSONRPC
from peers.support.check.requirements import BY_ID, Requirement
from transports.codec import is_json, loads_strict
from transports.records import Record

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable

STREAM_FINAL = Requirement("WB-STREAM-FINAL-001", "3.1.2", "MUST", "protocol",
                           "A stream ends with a final event (a Message, or a task terminal or interrupted)",
                           "send the task's last state (completed, failed, input-required ...) before closing")
_ENDS = {"completed", "failed", "canceled", "rejected", "input-required", "auth-required"}  # 0.3's spelling
_ENDS |= {"TASK_STATE_" + state.upper().replace("-", "_") for state in _ENDS}  # and 1.0's


class Answer(Record):
    """One answer as the proxy forwarded it, with the request it answers."""

    binding: str | None  # a binding's name (peers/a2a/bindings.py), or None (a card, any other GET)
    request_body: bytes
    status: int
    content_type: str  # lower case, parameters dropped
    body: bytes = b""  # a stream's: b""
    events: list[bytes] | None = None  # a stream's events' data, in order; None: not a stream
    completed: bool = True  # a stream: whether it ended cleanly (not broken off)
    unended: int = 0  # a stream: bytes of data lines at its end that no blank line ended (so no event)
    asked: Any = None  # the request body as JSON, and the answer's: read once by `notes` for
    document: Any = None  # every rule (None where it is not JSON, or a stream's)
    version: str | None = None  # the A2A-Version the request asked for (peers/a2a/versions.py); None: none
    sent_to: tuple[str, str] | None = None  # the request's verb and path (no query); None: not told, judged as an operation's
    coded: str | None = None  # its Content-Encoding, if the agent gave one


def _json(data: bytes) -> Any:
    try:
        return loads_strict(data)
    except ValueError:
        return None


def _error(answer: Answer) -> dict[str, Any] | None:
    document = answer.document if answer.binding == JSONRPC.name else None
    error = document.get("error") if isinstance(document, dict) else None
    return error if isinstance(error, dict) else None


def _compressed(answer: Answer) -> bool:
    """Whether the agent compressed the body (a client naming no Accept-Encoding takes any, RFC 9110 12.5.3): its
    bytes are not the JSON they carry, so no rule reads them; its status and headers are as any answer's."""
    return answer.coded is not None and answer.coded.strip().lower() not in ("", "identity") and bool(answer.body)


def _not_json(answer: Answer) -> str | None:
    """What a body its JSON media type says is JSON is, when it is not: the header alone proves nothing.
    Asked of every answer holding no error (a strict read of each cost a third more a forwarded request)."""
    if answer.document is not None or _compressed(answer) or is_json(bytes(answer.body)):  # read by `notes`; JSON
        return None
    return f"the body, under {answer.content_type}, is not JSON: {bytes(answer.body[:40])!r}"


def jsonrpc_media_type(answer: Answer) -> str | None:
    if answer.binding == JSONRPC.name and answer.body and answer.events is None:
        return f"Content-Type is {answer.content_type or 'missing'}" if answer.content_type != "application/json" \
            else _not_json(answer)
    return None


# Refused before the frame is read (no credential, too large, not JSON's media type, by status or
# as ContentTypeNotSupportedError -32005, as the JavaScript SDK answers with 200): JSON-RPC's id for
# one the server did not detect is null (2.0 section 5), and reading it would mean parsing what it
# refuses to parse. check reads such an answer the same way (check/probe.py UNREAD).
UNREAD, UNREAD_CODE = (401, 413, 415), -32005


def jsonrpc_error_id(answer: Answer) -> str | None:
    asked, document = answer.asked, answer.document
    if _error(answer) is None or not isinstance(asked, dict) or not isinstance(document, dict):
        return None
    if "result" in document:  # JSON-RPC 2.0 section 5: one or the other
        return "the answer carries both a result and an error"
    if (answer.status in UNREAD or _error(answer).get("code") == UNREAD_CODE) and document.get("id") is None:
        return None
    wanted = asked.get("id")
    if isinstance(wanted, (str, int)) and not isinstance(wanted, bool) and document.get("id") != wanted:
        return f"the error answers id {str(document.get('id'))[:40]}, the request's was {str(wanted)[:40]}"
    return None


def jsonrpc_error_info(answer: Answer) -> str | None:
    if answer.version != "1.0":  # 0.3's error data is free-form (a request naming no version asks for 0.3)
        return None
    error = _error(answer)
    code = error.get("code") if error else None
    if not isinstance(code, int) or not -32099 <= code <= -32001:  # A2A's codes sit in JSON-RPC's server range
        return None
    data = error.get("data")
    if isinstance(data, list) and any(isinstance(item, dict) and str(item.get("@type", "")).endswith(
            "google.rpc.ErrorInfo") for item in data):
        return None
    return f"error {code} has no ErrorInfo in data"


def _operation(answer: Answer) -> bool:
    """Whether an HTTP+JSON request asked for an A2A operation: its path ends in one of section 11.3's
    routes (under any endpoint or tenant). Section 11's rules are for operations' answers; a path
    no operation has (a favicon, a route probed for) may be answered however the server answers it."""
    from peers.a2a.routes import ROUTES, pattern
    if answer.sent_to is None:
        return True
    verb, path = answer.sent_to
    return any(verb in route.verbs and re.search(r"(?:^|/)" + pattern(route).pattern, path) for route in ROUTES)


def _http_json_error(answer: Answer) -> Any:
    if answer.binding != HTTP_JSON.name or answer.status < 400 or answer.events is not None or not _operation(answer) or \
            _compressed(answer) or \
            isinstance(answer.document, dict) and "jsonrpc" in answer.document:  # a JSON-RPC answer to a stray path
        return None
    error = answer.document.get("error") if isinstance(answer.document, dict) else None
    return error if error is not None else False  # False: an error answer with no error object


def http_json_media_type(answer: Answer) -> str | None:
    if answer.binding == HTTP_JSON.name and answer.body and answer.events is None and _operation(answer):
        return f"Content-Type is {answer.content_type or 'missing'}" if answer.content_type not in (
            "application/a2a+json", "application/json") else _not_json(answer)
    return None


def http_json_status_object(answer: Answer) -> str | None:
    error = _http_json_error(answer)
    if error is None or (isinstance(error, dict) and isinstance(error.get("code"), int)
                         and isinstance(error.get("message"), str)):
        return None
    return f"the {answer.status} answer is not {{\"error\": {{\"code\", \"status\", \"message\"}}}}"


def http_json_status_match(answer: Answer) -> str | None:
    error = _http_json_error(answer)
    code = error.get("code") if isinstance(error, dict) else None
    if isinstance(code, int) and not isinstance(code, bool) and code != answer.status:
        return f"HTTP {answer.status}, but the error's code says {code}"
    return None


def stream_final(answer: Answer) -> str | None:
    if answer.events is None:
        return None
    last = _json(answer.events[-1]) if answer.events else None
    if isinstance(last, dict) and answer.binding == JSONRPC.name:
        last = last.get("result") if "error" not in last else {"final": True}  # an error ends a stream too
    if isinstance(last, dict) and _final(last):
        return None
    how = "broke off" if not answer.completed else "closed"
    cut_off = (f"; an event's data lines after them ({answer.unended} bytes) were never ended by a blank line, "
               "so are no event") if answer.unended else ""
    return f"the stream {how} after {len(answer.events)} event(s), none of them final{cut_off}"


def _final(result: dict[str, Any]) -> bool:
    if result.get("final") is True or result.get("kind") == "message" or "message" in result and len(result) == 1:
        return True
    for holder in (result.get("task"), result.get("statusUpdate"), result):
        status = holder.get("status") if isinstance(holder, dict) else None
        if isinstance(status, dict) and isinstance(status.get("state"), str) and status["state"] in _ENDS:  # a list's unhashable
            return True
    return False


RULES: tuple[tuple[Requirement, Callable[[Answer], str | None]], ...] = (
    (BY_ID["JSONRPC-FMT-002"], jsonrpc_media_type),
    (BY_ID["JSONRPC-ERR-001"], jsonrpc_error_id),
    (BY_ID["JSONRPC-ERR-003"], jsonrpc_error_info),
    (BY_ID["HTTP_JSON-SVC-001"], http_json_media_type),
    (BY_ID["HTTP_JSON-ERR-001"], http_json_status_object),
    (BY_ID["HTTP_JSON-STATUS-001"], http_json_status_match),
    (STREAM_FINAL, stream_final),
)


def _may_judge(answer: Answer) -> bool:
    """Whether a rule reads the bodies as JSON: only those of an error answer do (a JSON-RPC
    error object, an HTTP+JSON status of 400 or more). A body without the bytes "error" (nor a
    \\u escape that could spell them) holds no error object: parsing it would find nothing."""
    if answer.events is not None or _compressed(answer):
        return False
    if answer.binding == HTTP_JSON.name:
        return answer.status >= 400
    return answer.binding == JSONRPC.name and (b'"error"' in answer.body or b"\\u" in answer.body)


def notes(answer: Answer) -> list[str]:
    """One line per rule this answer breaks: `! ID LEVEL [section] title: what was seen`. A body the agent
    compressed is read by no rule (`_compressed`), and one line says so; its status and headers are judged."""
    found = [f"    (its body not judged: the agent compressed this answer, Content-Encoding {answer.coded[:40]}, so its "
             "bytes are not the JSON they carry; the proxy asks for identity only for a client that names encodings)"
             ] if _compressed(answer) else []
    if _may_judge(answer):  # each body parsed once, not once per rule, and only when a rule may need it
        answer = answer._replace(asked=_json(answer.request_body), document=_json(answer.body))
    for row, judge in RULES:
        seen = judge(answer)
        if seen:
            found.append(f"    ! {row.id} {row.level} [{row.section}] {row.title}: {seen}")
    return found
