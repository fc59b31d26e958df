"""The protocol family, without --deep: version negotiation and the error table, on every
binding the card declares, each with requests that can cause no effect.

Spec: A2A 1.0 sections 3.6 (versions), 3.3.2 and 5.4 (errors), 9.5 (JSON-RPC errors),
11.6 (HTTP+JSON errors). Every request names a task id no agent holds (GetTask, CancelTask,
a push config of it), a method no agent defines, or is malformed: an agent that follows the
spec refuses each before it acts, and one that does not can still do nothing with an id
it has never made. The requests are spelled by our own calling side's bindings
(cards.py, http_json.py). A gRPC interface is "not measured". Not here: anything that
needs a task (--deep), authentication (auth_checks.py).
"""
from __future__ import annotations

from peers.a2a.wire_format import method_for
from peers.support.check.probe import NOT_MEASURED, SKIP, Answer, Probe, Verdict, error_info, verdict
from peers.support.check.reach import Reach
from transports.base import ClientRequest
from transports.printer import Frame

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

UNKNOWN = "wb-check-no-such-task"  # an id no agent made: every request naming it can only fail
TASK_NOT_FOUND, VERSION_NOT_SUPPORTED, PUSH_NOT_SUPPORTED = -32001, -32009, -32003
REST_STATUS = {TASK_NOT_FOUND: 404, VERSION_NOT_SUPPORTED: 400}  # section 5.4's HTTP column


class Asker:
    """One binding's requests, each with the version header and credential it should carry."""

    def __init__(self, probe: Probe, reach: Reach) -> None:
        self.probe, self.reach = probe, reach
        self.answers: list[tuple[Answer, tuple[Frame, ...]]] = []  # every answer to an operation on this binding

    def ask(self, operation: str, params: Any, version: str | None = "wire", query: str = "",
            **changes: Any) -> tuple[Answer, tuple[Frame, ...]]:
        method = method_for(self.reach.wire, operation) or operation
        headers = {**(self.reach.wire.HEADERS if version == "wire" else {"A2A-Version": version} if version else {}),
                   **(self.reach.credential or {})}
        request, _ = self.reach.binding.request(self.reach.endpoint, method, params, headers, self.probe.next_id())
        request = request._replace(url=request.url + query, **changes)
        return self.sent(request)

    def sent(self, request: ClientRequest) -> tuple[Answer, tuple[Frame, ...]]:
        answer, frames = self.probe.send(request)
        self.answers.append((answer, frames))
        return answer, frames


def checks(probe: Probe, reaches: list[Reach], push_declared: bool) -> list[Verdict]:
    found: list[Verdict] = []
    for reach in reaches:
        if reach.binding is None:
            found.append(Verdict("WB-BIND-MEASURED-001", NOT_MEASURED,
                                 f"the card declares {reach.name} at {reach.endpoint[:80]}: "
                                 f"{reach.not_asked or 'not measured'}", (), reach.name))
            continue
        found += _binding(Asker(probe, reach), push_declared)
    if reaches and all(reach.binding is not None for reach in reaches):
        found.append(Verdict("WB-BIND-MEASURED-001", "pass", f"every binding asked is spoken here: "
                             f"{', '.join(reach.name for reach in reaches)}"))
    return found


def _binding(asker: Asker, push_declared: bool) -> list[Verdict]:
    reach, rest, name = asker.reach, asker.reach.name == "HTTP+JSON", asker.reach.name
    v10 = reach.wire.NAME == "1.0"
    if method_for(reach.wire, "get") is None:
        return [Verdict("CORE-GET-002", SKIP, f"the {reach.wire.NAME} wire has no GetTask", (), name)]

    def judged(id: str, answer: Answer, frames: tuple[Frame, ...], passed: bool, said: str = "") -> Verdict:  # noqa: A002
        return unauthenticated(id, answer, frames, reach) or verdict(id, passed, said or answer.said(), frames, name,
                                                                     answer)

    found = []
    got, frames = asker.ask("get", {"id": UNKNOWN})
    found.append(judged("CORE-GET-002", got, frames, got.code == TASK_NOT_FOUND))
    found += _error_shapes(got, frames, rest, v10, name, judged)
    if v10:
        found.append(judged("VER-SERVER-001", got, frames, got.code == TASK_NOT_FOUND,
                            f"A2A-Version: 1.0 and GetTask: {got.said()}"))
        answer, more = asker.ask("get", {"id": UNKNOWN}, version="99.0")
        found.append(judged("VER-SERVER-002", answer, more, answer.code == VERSION_NOT_SUPPORTED
                            and (not rest or answer.status == 400), f"A2A-Version: 99.0: {answer.said()}"))
        answer, more = asker.ask("get", {"id": UNKNOWN}, version="1.0.7")
        found.append(judged("VER-CLIENT-002", answer, more, answer.code == TASK_NOT_FOUND,
                            f"A2A-Version: 1.0.7: {answer.said()}"))
        low, more = asker.ask("get", {"id": UNKNOWN}, version=None, query="?A2A-Version=99.0")
        high, again = asker.ask("get", {"id": UNKNOWN}, version=None, query="?A2A-Version=1.0")
        found.append(judged("WB-VER-PARAM-001", high, more + again, low.code == VERSION_NOT_SUPPORTED and
                            high.code == TASK_NOT_FOUND, f"?A2A-Version=99.0: {low.said()}; ?A2A-Version=1.0: {high.said()}"))
        if not rest:  # 0.3's HTTP+JSON paths are its own (/v1/...): judged on JSON-RPC only
            bare, more = asker.ask("get", {"id": UNKNOWN}, version=None)
            found.append(judged("VER-SERVER-003", bare, more, bare.code in (VERSION_NOT_SUPPORTED, -32601),
                                f"GetTask with no A2A-Version (0.3 has no GetTask): {bare.said()}"))
    else:
        found += [Verdict(id, SKIP, f"the {reach.wire.NAME} card: A2A-Version came with 1.0", (), name) for id in
                  ("VER-SERVER-001", "VER-SERVER-002", "VER-CLIENT-002", "WB-VER-PARAM-001", "VER-SERVER-003")]
    answer, more = asker.ask("cancel", {"id": UNKNOWN})
    found.append(judged("CORE-CANCEL-003", answer, more, answer.code == TASK_NOT_FOUND))
    push = {"taskId": UNKNOWN, "id": "wb-check-config"} if v10 else {"id": UNKNOWN, "pushNotificationConfigId": "x"}
    answer, more = asker.ask("push-get", push)
    allowed = (TASK_NOT_FOUND,) if push_declared else (TASK_NOT_FOUND, PUSH_NOT_SUPPORTED)
    found.append(judged("PUSH-GET-002", answer, more, answer.code in allowed))
    found += (_rest_errors if rest else _jsonrpc_errors)(asker, judged)
    found.append(_media_types(asker.answers, rest, name))
    return found


def unauthenticated(id: str, answer: Answer, frames: tuple[Frame, ...], reach: Reach) -> Verdict | None:  # noqa: A002
    """A 401 judges nothing but the credential: without one, it is a skip saying which to give;
    with ours, a skip pointing at WB-AUTH-RIGHT-001 (None: not a 401)."""
    if answer.status != 401:
        return None
    return Verdict(id, SKIP, f"refused without a credential (HTTP 401): give --credentials one for "
                   f"{reach.endpoint[:80]}" if reach.credential is None else
                   "refused our credential (HTTP 401): WB-AUTH-RIGHT-001 says more", frames, reach.name)


def _error_shapes(got: Answer, frames: tuple[Frame, ...], rest: bool, v10: bool, name: str, judged: Any) -> list[Verdict]:
    error = got.document.get("error") if isinstance(got.document, dict) else None
    error = error if isinstance(error, dict) else {}
    if rest:
        shaped = all(isinstance(error.get(key), kind) for key, kind in (("code", int), ("status", str), ("message", str)))
        info = error_info(error.get("details"))
        return [judged("HTTP_JSON-ERR-001", got, frames, shaped, f"{got.said()}: error {sorted(error)[:6]}"),
                judged("HTTP_JSON-ERR-002", got, frames, info is not None and isinstance(info.get("reason"), str),
                       f"{got.said()}: ErrorInfo {'reason ' + str(info.get('reason'))[:40] if info else 'absent'}"),
                judged("HTTP_JSON-STATUS-001", got, frames, got.code == TASK_NOT_FOUND and got.status == 404,
                       f"TaskNotFound as {got.said()}")]
    document = got.document if isinstance(got.document, dict) else {}
    sent_id = frames[0].body and request_id(frames[0].body) if frames else None  # none: not sent (a skip)
    shaped = document.get("jsonrpc") == "2.0" and "id" in document and document.get("id") == sent_id \
        and type(error.get("code")) is int and isinstance(error.get("message"), str) and "result" not in document
    found = [judged("JSONRPC-ERR-001", got, frames, shaped, f"{got.said()}: id {str(document.get('id'))[:20]} "
                    f"for request id {sent_id}, error {sorted(error)[:4]}")]
    info = error_info(error.get("data"))
    found.append(judged("JSONRPC-ERR-003", got, frames, info is not None and isinstance(info.get("reason"), str),
                        f"{got.said()}: ErrorInfo {'reason ' + str(info.get('reason'))[:40] if info else 'absent'}")
                 if v10 else Verdict("JSONRPC-ERR-003", SKIP, "a 0.3 error's data is free-form", frames, name))
    return found


def request_id(body: bytes) -> Any:
    """The id a JSON-RPC request of ours carries (None: none, or no JSON-RPC request)."""
    from transports.codec import loads_strict
    try:
        sent = loads_strict(body)
    except ValueError:
        return None
    return sent.get("id") if isinstance(sent, dict) else None


def _jsonrpc_errors(asker: Asker, judged: Any) -> list[Verdict]:
    found = []
    answer, frames = asker.ask("WbCheckNoSuchMethod", {})
    found.append(judged("WB-JSONRPC-ERR-001", answer, frames, answer.code == -32601))
    answer, frames = asker.ask("get", {"id": 5})
    found.append(judged("WB-JSONRPC-ERR-002", answer, frames, answer.code == -32602, f"GetTask id 5: {answer.said()}"))
    answer, frames = asker.ask("get", {"id": UNKNOWN}, body=b'{"jsonrpc": "2.0", "id": 1, "method": ')
    found.append(judged("WB-JSONRPC-ERR-003", answer, frames, answer.code == -32700))
    return found + [_wrong_type(asker, judged)]


def _rest_errors(asker: Asker, judged: Any) -> list[Verdict]:
    answer, frames = asker.ask("cancel", {"id": UNKNOWN}, body=b'{"metadata": ')  # the task is unknown too: either
    found = [judged("WB-HTTP_JSON-ERR-003", answer, frames, answer.status == 400 or  # may be refused first
                    (answer.status == 404 and answer.code == TASK_NOT_FOUND))]
    answer, frames = asker.ask("get", {"id": UNKNOWN, "historyLength": "many"})  # in the query: ?historyLength=many
    found.append(judged("WB-HTTP_JSON-ERR-004", answer, frames, answer.status == 400 and invalid_argument(answer),
                        f"historyLength=many: {answer.said()}"))
    headers = {"Accept": "application/a2a+json", **asker.reach.wire.HEADERS, **(asker.reach.credential or {})}
    answer, frames = asker.probe.send(ClientRequest("GET", asker.reach.endpoint.rstrip("/") + "/wb-check-no-such-route",
                                                    headers, b"", asker.reach.name))  # no operation's: not in answers
    found.append(judged("WB-HTTP_JSON-URL-001", answer, frames, answer.status == 404))
    return found + [_wrong_type(asker, judged)]


def invalid_argument(answer: Answer) -> bool:
    """An HTTP+JSON validation error (3.3.2): status INVALID_ARGUMENT, a google.rpc.BadRequest, or an
    ErrorInfo meaning -32602. Invalid params is no A2A-specific error, so 11.6 asks no ErrorInfo of
    it, and its reason (the Python SDK's INVALID_REQUEST) is not judged."""
    error = answer.document.get("error") if isinstance(answer.document, dict) else None
    details = error.get("details") if isinstance(error, dict) else None
    return answer.code == -32602 or isinstance(error, dict) and error.get("status") == "INVALID_ARGUMENT" or \
        isinstance(details, list) and any(isinstance(each, dict) and each.get("@type") == BAD_REQUEST for each in details)


BAD_REQUEST = "type.googleapis.com/google.rpc.BadRequest"


def _wrong_type(asker: Asker, judged: Any) -> Verdict:
    """A body of the right shape under Content-Type text/plain: refused, not read as JSON."""
    operation = "cancel" if asker.reach.name == "HTTP+JSON" else "get"
    request, _ = asker.reach.binding.request(asker.reach.endpoint, method_for(asker.reach.wire, operation),
                                             {"id": UNKNOWN}, {**asker.reach.wire.HEADERS,
                                                               **(asker.reach.credential or {})}, asker.probe.next_id())
    answer, frames = asker.sent(request._replace(headers={**request.headers, "Content-Type": "text/plain"}))
    refused = answer.code != TASK_NOT_FOUND and answer.status is not None and (answer.status >= 400 or answer.code is not None)
    return judged("WB-BIND-CTYPE-001", answer, frames, refused, f"Content-Type: text/plain: {answer.said()}")


def _media_types(answers: list[tuple[Answer, tuple[Frame, ...]]], rest: bool, name: str) -> Verdict:
    id = "HTTP_JSON-SVC-001" if rest else "JSONRPC-FMT-002"  # noqa: A001
    allowed = ("application/json", "application/a2a+json") if rest else ("application/json",)
    judged = [(answer, frames) for answer, frames in answers if answer.status is not None and answer.body]
    wrong = [(answer, frames) for answer, frames in judged if answer.content_type not in allowed]
    if not judged:
        return Verdict(id, SKIP, "no answer with a body came back", (), name)
    if wrong:
        answer, frames = wrong[0]
        return Verdict(id, "fail", f"{len(wrong)} of {len(judged)} answers were not {' or '.join(allowed)}; "
                       f"the first: Content-Type {answer.content_type or '(none)'}", frames, name)
    return Verdict(id, "pass", f"{len(judged)} answers, each {' or '.join(allowed)}", (), name)
