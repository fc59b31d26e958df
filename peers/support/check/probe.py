"""How `check` asks an agent something: one request through our own transport and printer,
its frames kept, its answer read without trusting it; and the verdict a check gives.

Spec: A2A 1.0 sections 9.5 and 11.6 (how each binding answers an error). Every request
goes through the FramePrinter (transports/printer.py: secrets masked, every frame
recorded, shown as it crosses with --verbose) over the network transport (deadline per
exchange, bounded reply, no redirect followed). The whole run has a budget too: once it is
spent, what is left is skipped, saying so, so an agent that answers slowly every time
costs one budget, not one deadline per check. An answer is read leniently and completely
here (`Answer`): the status, the media type, the JSON if it is JSON, the A2A or JSON-RPC
error code either binding spells, so that each check judges a value, never a traceback.
Not here: what is asked (the families), what is said about it (report.py).
"""

from __future__ import annotations

import time

from peers.support.calling.http_json import CODES, ERROR_INFO
from transports.base import ClientRequest, HttpResponse, patient_until
from transports.codec import MAX_FRAME_BYTES, loads_strict
from transports.errors import PeerError, TransportError
from transports.printer import Frame, FramePrinter
from transports.records import Record

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

PASS, FAIL, SKIP, NOT_MEASURED = "pass", "fail", "skip", "not measured"
NOT_SENT = "not sent: "  # how a request the run gave up on begins its failure: its checks are skipped
SPENT, STALLED = f"{NOT_SENT}the run's time budget was spent", f"{NOT_SENT}the agent let "  # why a request was not
CUT = "the run's time budget ran out while it was answered"  # sent, and why one sent got no answer: skips, not fails
MAX_TIMEOUTS = 2  # answers in a row that missed their deadline: past this the agent is not asked again


class Verdict(Record):
    """One requirement judged once (on one binding, for a protocol check)."""

    id: str  # the requirement's (requirements.py)
    outcome: str  # PASS, FAIL, SKIP or NOT_MEASURED
    detail: str  # one line: what was seen, or why it was skipped
    frames: tuple[Frame, ...] = ()  # what was sent and what came back, secrets masked
    binding: str | None = None  # the binding it was judged on; None: not a binding's


class Answer(Record):
    """What came back, read as far as it can be: nothing here raises."""

    status: int | None  # None: no answer (`failure` says why)
    content_type: str
    document: Any  # the body as JSON; None where it is not JSON (or empty)
    code: int | None  # the error code it names: JSON-RPC's error.code, or HTTP+JSON's ErrorInfo reason's
    failure: str = ""  # why nothing usable came back (a timeout, a broken reply, an answer to another request)
    headers: dict[str, str] = {}
    body: bytes = b""
    reached: bool = True  # False: the request certainly never reached the agent (nothing listens there)

    @property
    def is_json_rpc_error(self) -> bool:
        error = self.document.get("error") if isinstance(self.document, dict) else None
        return isinstance(error, dict) and type(error.get("code")) is int

    def said(self) -> str:
        """The answer in a few words, for a verdict's line."""
        if self.status is None:
            return f"no answer: {self.failure}"
        if self.failure:
            return f"HTTP {self.status}, {self.failure}"
        code = f", code {self.code}" if self.code is not None else ""
        shape = "" if self.document is not None or not self.body else self._unread()
        if 300 <= self.status < 400 and self.status != 304:  # never followed (network.py): where to, said
            to = next((value for name, value in self.headers.items() if name.lower() == "location"), "nowhere")
            shape = f", a redirect to {to[:80]}, not followed{shape}"
        return f"HTTP {self.status}{code}{shape}"

    def _unread(self) -> str:
        """Why a body was read as no document: an encoding no one asked for, what the strict decoder
        found, or JSON's null. Only asked of an answer that failed a check, so decoded again here."""
        encoding = next((value for name, value in self.headers.items() if name.lower() == "content-encoding"), "")
        if encoding.strip().lower() not in ("", "identity"):
            return f", not JSON (Content-Encoding {encoding[:20]}, which was not asked for)"
        try:
            loads_strict(self.body)
        except ValueError as exc:
            return f", not JSON ({str(exc)[:100]})"
        return ", JSON null"


class Probe:
    """Sends requests for the checks, within a per-request deadline and the run's budget."""

    def __init__(self, printer: FramePrinter, timeout: float, budget: float) -> None:
        self.printer, self.timeout = printer, timeout
        self.deadline = time.monotonic() + budget
        self.ids = iter(range(1, 10_000))  # JSON-RPC request ids, from a counter: a rerun is the same
        self.timeouts = 0  # answers in a row that missed their deadline

    def next_id(self) -> int:
        return next(self.ids)

    def send(self, request: ClientRequest) -> tuple[Answer, tuple[Frame, ...]]:
        """`request` sent (or not, once the budget is spent), its answer read, its frames."""
        before = self.printer.recorded
        left = self.deadline - time.monotonic()
        if left <= 0:
            return Answer(None, "", None, None, SPENT), ()
        if self.timeouts >= MAX_TIMEOUTS:
            return Answer(None, "", None, None, stalled(self.timeouts)), ()
        try:
            with patient_until(self.deadline):  # each request given --timeout, or what is left of the budget
                if request.method == "HEAD":
                    response = self.printer.head(request.url, request.headers, binding=request.binding)
                else:
                    response = self.printer.send(request)
        except PeerError as exc:  # the transport's: nothing came back that could be read
            timed_out = getattr(exc, "timed_out", False)
            self.timeouts = self.timeouts + 1 if timed_out else 0
            if timed_out and left < self.timeout:  # its deadline was the budget's end, not --timeout: unjudged
                return Answer(None, "", None, None, f"{NOT_SENT}{CUT}"), self.printer.since(before)
            return Answer(None, "", None, None, str(exc)[:300], reached=getattr(exc, "sent", True)), \
                self.printer.since(before)
        self.timeouts = 0
        return of_this_request(read_answer(response), request), self.printer.since(before)


def stalled(timeouts: int) -> str:
    return f"{STALLED}{timeouts} requests in a row run past their deadline"


class Budgeted:
    """The printer as the calling side's token fetches use it (reach.py: an OAuth2 token a binding's way
    in asks for, one a binding: credentials.py chooses no way needing two): each request within the run's
    budget as a probe's is, none once it is spent (a TransportError saying so, which the credential's
    reason then says)."""

    def __init__(self, probe: Probe) -> None:
        self.probe = probe

    def _within(self) -> float:
        if self.probe.deadline <= time.monotonic():
            raise TransportError(SPENT)
        return self.probe.deadline

    def get(self, url: str, headers: dict[str, str], *, binding: str | None = None) -> HttpResponse:
        with patient_until(self._within()):
            return self.probe.printer.get(url, headers, binding=binding)

    def post(self, url: str, body: bytes, headers: dict[str, str], *, binding: str | None = None) -> HttpResponse:
        with patient_until(self._within()):
            return self.probe.printer.post(url, body, headers, binding=binding)


def read_answer(response: HttpResponse) -> Answer:
    """An answer's status, media type, JSON and the error code it names, whichever binding."""
    body = response.body if isinstance(response.body, bytes) else b""
    content_type = (response.header("Content-Type") or "").split(";")[0].strip().lower()
    document = None
    if body and len(body) <= MAX_FRAME_BYTES:
        try:
            document = loads_strict(body)
        except ValueError:
            document = None
    return Answer(response.status, content_type, document, error_code(document), headers=dict(response.headers),
                  body=body)


def of_this_request(answer: Answer, request: ClientRequest) -> Answer:
    """A JSON-RPC answer naming another request's id answers nothing we asked (JSON-RPC 2.0
    section 5: the id MUST be the request's): its error code is not read as ours, and its
    `failure` says why, so no check reads its result either (deep_asking.py). A null id is a
    request's that could not be read: refused before it was (an HTTP error, or -32005 for a body
    not in JSON's media type, which the agent did not read), or -32700, -32600. An HTTP+JSON error
    comes with an error status (11.6): one inside a 2xx is a success to every client, so no refusal."""
    if request.binding == "HTTP+JSON" and answer.code is not None and 200 <= (answer.status or 0) < 300:
        return answer._replace(code=None, failure=f"an error ({answer.code}) in a success: HTTP+JSON says an error "
                               "by its HTTP status (11.6), and a client reads a 2xx as the operation's result")
    if request.binding != "JSONRPC" or not isinstance(answer.document, dict) or \
            not {"result", "error"} & answer.document.keys():
        return answer
    try:
        asked = loads_strict(request.body).get("id")
    except (ValueError, AttributeError):  # not a request of ours with an id: nothing to compare
        return answer
    named = answer.document.get("id")
    if answer.document.get("jsonrpc") != "2.0":
        return answer._replace(code=None, failure="its body is no JSON-RPC 2.0 answer (no \"jsonrpc\": \"2.0\")")
    if {"result", "error"} <= answer.document.keys():  # section 5: one or the other, never both
        return answer._replace(code=None, failure="it answers with both a result and an error (JSON-RPC 2.0 "
                               "section 5: one or the other)")
    if asked is None or (type(named) is type(asked) and named == asked) or \
            (named is None and (answer.status != 200 or answer.code in UNREAD)):
        return answer
    return answer._replace(code=None, failure=f"it answers request id {repr(named)[:40]}, not ours ({asked!r})" if
                           named is not None else f"it answers a null id, as to a request it could not read, with "
                           f"error {str(answer.code)[:12]}")


UNREAD = (-32700, -32600, -32005)  # Parse error, Invalid Request, ContentTypeNotSupported: errors of a body not read,
# whose id may be null (JSON-RPC 2.0 section 5: null when it could not be detected)


def error_code(document: Any) -> int | None:
    """The error a body names: JSON-RPC's error.code, or a google.rpc.Status's ErrorInfo reason
    as the code JSON-RPC would have used (http_json.CODES)."""
    error = document.get("error") if isinstance(document, dict) else None
    if not isinstance(error, dict):
        return None
    if type(error.get("code")) is int and "details" not in error and "status" not in error:
        return error["code"]
    info = error_info(error.get("details"))
    return CODES.get(info.get("reason")) if info is not None and isinstance(info.get("reason"), str) else None


def error_info(details: Any) -> dict[str, Any] | None:
    """The ErrorInfo among a list of google.rpc details, if one is there."""
    if not isinstance(details, list):
        return None
    return next((each for each in details if isinstance(each, dict) and each.get("@type") == ERROR_INFO), None)


def verdict(id: str, passed: bool, detail: str, frames: tuple[Frame, ...] = (), binding: str | None = None,  # noqa: A002
            answer: Answer | None = None) -> Verdict:
    """PASS or FAIL; a check that got no answer at all is a FAIL that says so."""
    if answer is not None and answer.status is None:
        if answer.failure.startswith(NOT_SENT):
            return Verdict(id, SKIP, answer.failure, frames, binding)
        return Verdict(id, FAIL, answer.said(), frames, binding)
    return Verdict(id, PASS if passed else FAIL, detail, frames, binding)
