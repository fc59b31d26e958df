"""What a handoff transfers: who advances the task after it, from what status, who keeps
the customer meanwhile, and the span the receiver's work is linked to (seed 004).

Seed 004 asks "a blunt question before writing any handoff: after this transfer, who is
responsible for advancing the task? If the answer is the receiver, it is a handoff and it
needs a contract. If the coordinator keeps the plan and only wants an answer back, that
is a tool call wearing a handoff's clothes." The envelope answers it in `advancedBy`. A
handoff also carries the "current authoritative status" (`status`: the state, the system
of record it comes from, and when), names the owner of "the user relationship during the
transfer, because if that is not stated, both parties assume the other one sent the delay
notice" (`userOwner`), and the sender's responsibility span (`span`: a trace id and span
id), so the receiver's task is traced as a span linked to it.

These fields sit in the handoff envelope beside the others (handoff.py), each optional
there: an envelope that says nothing of a transfer is judged as before. One that names
who advances the task is a transfer, and `refusal` says why a receiver must not take it
on: it names someone else (a tool call in a handoff's clothes), or it lacks the status
or the owner of the customer. May import `peers.a2a` and `transports` only.
"""
from __future__ import annotations

from transports.records import Record

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

_TEXT = {"type": "string", "minLength": 1, "maxLength": 200}
_ID = {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$"}
_WHEN = {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$"}
PROPERTIES = {  # the envelope's transfer fields, merged into handoff.SCHEMA
    "advancedBy": _TEXT,
    "status": {"type": "object", "required": ["state", "source", "asOf"], "additionalProperties": False,
               "properties": {"state": _TEXT, "source": _TEXT, "asOf": _WHEN}},
    "userOwner": _TEXT,
    "span": {"type": "object", "required": ["traceId", "spanId"], "additionalProperties": False,
             "properties": {"traceId": _ID, "spanId": _ID}},
}


class Status(Record):
    state: str  # "charged $6,200.00; refund asked for; nothing refunded yet"
    source: str  # the system of record it was read from
    as_of: str  # when, ISO 8601 UTC to the second


class Transfer(Record):
    advanced_by: str  # who advances the task after the transfer: the receiver, in a handoff
    status: Status | None = None
    user_owner: str | None = None  # who keeps the customer (sends the delay notice) meanwhile
    trace_id: str | None = None  # the sender's responsibility span: its trace,
    span_id: str | None = None  # and its id, which the receiver's task links to


def to_wire(transfer: Transfer) -> dict[str, Any]:
    wire: dict[str, Any] = {"advancedBy": transfer.advanced_by}
    if transfer.status is not None:
        wire["status"] = {"state": transfer.status.state, "source": transfer.status.source,
                          "asOf": transfer.status.as_of}
    if transfer.user_owner is not None:
        wire["userOwner"] = transfer.user_owner
    if transfer.trace_id is not None and transfer.span_id is not None:
        wire["span"] = {"traceId": transfer.trace_id, "spanId": transfer.span_id}
    return wire


def from_wire(envelope: dict[str, Any]) -> Transfer | None:
    """The transfer an envelope (already checked against handoff.SCHEMA) describes, or None
    when it names nobody to advance the task."""
    if "advancedBy" not in envelope:
        return None
    status, span = envelope.get("status"), envelope.get("span") or {}
    return Transfer(envelope["advancedBy"],
                    Status(status["state"], status["source"], status["asOf"]) if status else None,
                    envelope.get("userOwner"), span.get("traceId"), span.get("spanId"))


def refusal(transfer: Transfer | None, receiver: str) -> str | None:
    """Why `receiver` must not take this transfer on, or None (None too for no transfer)."""
    if transfer is None:
        return None
    if transfer.advanced_by != receiver:
        return (f"the handoff says {transfer.advanced_by[:60]} advances the task after it, not {receiver}: "
                "that is a tool call wearing a handoff's clothes; nothing was done")
    if transfer.status is None:
        return ("the handoff carries no current authoritative status to advance the task from; "
                "nothing was done")
    if transfer.user_owner is None:
        return ("the handoff names no owner of the customer during the transfer, so each side would "
                "assume the other sent the delay notice; nothing was done")
    return None
