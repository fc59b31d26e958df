"""How --deep asks for what needs a task: the message it sends, the task read back out of
an answer in either binding and version, a stream read up to its final event (and, after a
Message or a terminal state, on for CLOSE_SECONDS: 3.1.2 says it MUST close there).

Spec: A2A 1.0 sections 3.1 (the operations), 4.1 (Task, Message, TaskState), 3.2.3 (a
stream's events), 9 and 11 (a result in JSON-RPC's `result` or HTTP+JSON's body); A2A 0.3
for a 0.3 card (a Task or Message with its `kind`, states in lower case). The message is
what the card's first skill accepts (skill_input.py). Its messageId starts with a token
fresh for each run, so a rerun is not a duplicate of the last. Everything read here is read leniently: a missing field is None, never a traceback.
Not here: the verdicts (task_checks, stream_checks, push_checks, caller_checks).
"""
from __future__ import annotations

import time

from peers.a2a.bindings import HTTP_JSON
from peers.a2a.model import Message
from peers.a2a.wire_format import method_for
from peers.support.check.probe import MAX_TIMEOUTS, NOT_SENT, SPENT, Answer, stalled
from peers.support.check.protocol_checks import Asker
from peers.support.check.skill_input import RUN, part_for
from transports import sse
from transports.codec import loads_strict
from transports.base import patient_until
from transports.errors import PeerError
from transports.printer import Frame

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

TERMINAL = frozenset({"completed", "failed", "canceled", "rejected"})
INTERRUPTED = frozenset({"input-required", "auth-required"})
MAX_EVENTS = 200  # a stream longer than this is read no further: it did not end (CORE-STREAM-003 fails)
CLOSE_SECONDS = 1.0  # how long a stream is read on after its Message or terminal state, where it MUST close (3.1.2)


class Deep(Asker):
    """One binding's requests that make and read tasks, as one caller (its credential)."""

    def __init__(self, probe: Any, reach: Any, document: dict[str, Any]) -> None:
        super().__init__(probe, reach)
        self.document, self.made = document, 0

    def message(self, task_id: str | None = None, context_id: str | None = None, message_id: str | None = None) -> Message:
        self.made += 1
        return Message(message_id or f"wb-check-{RUN}-{self.reach.name.lower()}-{self.made}", "user",
                       (part_for(self.document, self.made),), context_id=context_id, task_id=task_id)

    def ask(self, operation: str, params: Any, *args: Any, **changes: Any) -> tuple[Answer, tuple[Frame, ...]]:
        """As Asker's; a request our binding cannot spell (an id that is no string, in a path) is not sent."""
        try:
            return super().ask(operation, params, *args, **changes)
        except PeerError as exc:
            return Answer(None, "", None, None, f"{NOT_SENT}{str(exc)[:200]}"), ()

    def send(self, message: Message, at_once: bool = False) -> tuple[Answer, tuple[Frame, ...]]:
        return self.ask("send", self.reach.wire.send_params(message, return_immediately=at_once))

    def result(self, answer: Answer) -> Any:
        """The operation's result: JSON-RPC's `result`, or a successful HTTP+JSON body; none from
        an answer that is not to our request (probe.py: another request's id)."""
        if answer.code is not None or answer.failure or answer.status is None or not 200 <= answer.status < 300:
            return None
        if self.reach.name == HTTP_JSON.name:
            return answer.document
        return answer.document.get("result") if isinstance(answer.document, dict) else None

    def task(self, answer: Answer) -> dict[str, Any] | None:
        """The task a SendMessage, GetTask or CancelTask answered with, if it did."""
        return task_in(self.result(answer))

    def stream(self, operation: str, params: Any) -> tuple[Answer, list[Any], tuple[Frame, ...], str]:
        """A streaming request: its answer, the events read (until a final one, the end, or
        the deadline), its frames, and how the stream ended ("final", "closed", or why not)."""
        method = method_for(self.reach.wire, operation) or operation
        headers = {**self.reach.wire.HEADERS, **(self.reach.credential or {})}
        try:
            request, _ = self.reach.binding.request(self.reach.endpoint, method, params, headers, self.probe.next_id())
        except PeerError as exc:
            return Answer(None, "", None, None, f"{NOT_SENT}{str(exc)[:200]}"), [], (), "not sent"
        request = request._replace(headers={**request.headers, "Accept": "text/event-stream"})
        return read_stream(self.probe, request, self.reach.name == HTTP_JSON.name)


class NotOurs(PeerError):
    """A JSON-RPC stream's event that answers another request (JSON-RPC 2.0 section 5: a response's id is its
    request's): it and what follows are not read as this stream's."""


def read_stream(probe: Any, request: Any, rest: bool) -> tuple[Answer, list[Any], tuple[Frame, ...], str]:
    from peers.support.check.probe import of_this_request, read_answer
    from peers.support.check.protocol_checks import request_id
    printer, before, left = probe.printer, probe.printer.recorded, probe.deadline - time.monotonic()
    if left <= 0 or probe.timeouts >= MAX_TIMEOUTS:
        return Answer(None, "", None, None, SPENT if left <= 0 else stalled(probe.timeouts)), [], (), "not sent"
    try:
        with patient_until(probe.deadline):  # its stream read within that too: its deadline is set as it is sent
            response = printer.send(request, stream=True)
    except PeerError as exc:
        probe.timeouts = probe.timeouts + 1 if getattr(exc, "timed_out", False) else 0
        return Answer(None, "", None, None, str(exc)[:300], reached=getattr(exc, "sent", True)), [], \
            printer.since(before), "no answer"
    probe.timeouts = 0
    streamed = response.status == 200 and sse.is_stream(response.header("Content-Type"))
    if isinstance(response.body, bytes) and not streamed:  # not a stream: an error, or a plain answer
        return of_this_request(read_answer(response), request), [], printer.since(before), "not a stream"
    events, ended, decoder, at, closing = [], "closed", sse.Decoder(), None, 0.0
    asked = None if rest else request_id(request.body)  # each JSON-RPC event's id is this
    chunks = [response.body] if isinstance(response.body, bytes) else response.body  # a stream of known length
    try:
        for chunk in chunks:
            for data in decoder.feed(chunk):
                events.append(_event(data, rest, asked))
            at = final_at(events) if at is None else at
            if at is not None and (len(events) > at + 1 + _resent(events, at) or not closes(events[at])):  # more
                ended = _after(events, at)  # (a stream may stay open in input-required: it is read no further)
                break
            if at is not None:  # 3.1.2: the stream MUST close here; read on a little, to see that it does
                closing = closing or time.monotonic() + min(CLOSE_SECONDS, probe.timeout)
                if time.monotonic() > closing:
                    ended = f"did not close within {CLOSE_SECONDS:g} s of its final event"
                    break
            if len(events) >= MAX_EVENTS:  # an endless stream is not a finished one: said as it is
                ended = f"was read no further after {MAX_EVENTS} events, no final event among them"
                break
        else:
            events += [_event(data, rest, asked) for data in decoder.end()]
            if decoder.unended:  # what looked like a last event: none, its blank line never came
                ended = (f"closed after {decoder.unended} bytes of data lines of an event no blank line ended "
                         "(so no event)")
            elif final_at(events) is not None:
                ended = _after(events, final_at(events))
    except PeerError as exc:
        if at is None:  # a deadline missed after the final event is this stream's finding, not the agent's pace
            probe.timeouts = probe.timeouts + 1 if getattr(exc, "timed_out", False) else 0
        ended = str(exc) if isinstance(exc, NotOurs) else f"did not close after its final event: {str(exc)[:120]}" \
            if at is not None else f"was broken off: {str(exc)[:120]}"
    finally:
        if not isinstance(response.body, bytes):
            response.body.close()
    return read_answer(response._replace(body=b"")), events, printer.since(before), ended


def _resent(events: list[Any], at: int) -> int:
    """1 if the event after the final one (at `at`) is the task once more, in its terminal state (11.7: a
    final Task snapshot MAY be resent before closing; read on after it, as after the final event), else 0."""
    first, again = first_task(events), task_in(events[at + 1]) if len(events) > at + 1 else None
    return int(bool(first and again and again["id"] == first["id"] and state_of(again) in TERMINAL))


def _after(events: list[Any], at: int) -> str:
    """How a stream went on after its final event (at `at`): "final" if it did not, or if all it sent
    was its task once more, ended (`_resent`)."""
    more = events[at + 1:]
    if not more or len(more) == 1 and _resent(events, at):
        return "final"
    more = [f"{kind_of(each) or '?'}" + (f" {state_of(inner_of(each))}" if state_of(inner_of(each)) else "")
            for each in more]
    return f"sent {len(more)} more event(s) after its final one ({', '.join(more[:4])})"


def _event(data: bytes, rest: bool, asked: Any = None) -> Any:
    """One event's StreamResponse (JSON-RPC: its result, if its id is `asked`, else NotOurs), or {"error": ...},
    or None."""
    try:
        document = loads_strict(data)
    except ValueError:
        return None
    if not rest and isinstance(document, dict) and (type(document.get("id")) is not type(asked)
                                                     or document.get("id") != asked):
        raise NotOurs(f"sent an event that answers request id {repr(document.get('id'))[:40]}, not ours ({asked!r})")
    if not rest and isinstance(document, dict):
        return document.get("result") if "result" in document else {"error": document.get("error")}
    return document


def kind_of(event: Any) -> str | None:
    """task, message, statusUpdate or artifactUpdate: what one event (or result) is."""
    if not isinstance(event, dict):
        return None
    for key, kind in (("task", "task"), ("message", "message"), ("statusUpdate", "statusUpdate"),
                      ("artifactUpdate", "artifactUpdate")):
        if isinstance(event.get(key), dict):
            return kind
    return {"task": "task", "message": "message", "status-update": "statusUpdate",
            "artifact-update": "artifactUpdate"}.get(event.get("kind"))


def final(event: Any, task_id: str | None = None) -> bool:
    """Whether a stream may end after this event: a message, or a terminal or interrupted state
    (of the task `task_id`, when given: an update naming another task ends nothing)."""
    kind = kind_of(event)
    if kind == "message":
        return True
    inner = inner_of(event)
    named = inner.get("id" if kind == "task" else "taskId") if isinstance(inner, dict) else None
    return kind in ("task", "statusUpdate") and state_of(inner) in TERMINAL | INTERRUPTED and \
        (task_id is None or named == task_id)


def closes(event: Any) -> bool:
    """Whether the stream MUST close after this final event (3.1.2): a Message, or a terminal state."""
    return kind_of(event) == "message" or state_of(inner_of(event)) in TERMINAL


def final_at(events: list[Any]) -> int | None:
    """Where the stream's first final event is: of the task its first event is, if it began with one."""
    first = first_task(events)
    return next((index for index, each in enumerate(events) if final(each, first and first["id"])), None)


def first_task(events: list[Any]) -> dict[str, Any] | None:
    return task_in(events[0]) if events and kind_of(events[0]) == "task" else None


def inner_of(event: Any) -> Any:
    """What an event carries: 1.0's {"statusUpdate": {...}}'s inside, or 0.3's event itself."""
    kind = kind_of(event)
    return event.get(kind) if isinstance(event, dict) and isinstance(event.get(kind), dict) else event


def task_in(result: Any) -> dict[str, Any] | None:
    """The Task a result holds: 1.0's {"task": ...}, a bare Task, or 0.3's kind "task"."""
    if not isinstance(result, dict):
        return None
    task = result["task"] if isinstance(result.get("task"), dict) else result
    return task if isinstance(task.get("id"), str) and isinstance(task.get("status"), dict) else None


def state_of(task: Any) -> str | None:
    """A task's (or status update's) state, as 0.3 spells it: TASK_STATE_INPUT_REQUIRED -> input-required."""
    status = task.get("status") if isinstance(task, dict) else None
    state = status.get("state") if isinstance(status, dict) else None
    if not isinstance(state, str):
        return None
    return state.removeprefix("TASK_STATE_").lower().replace("_", "-")
