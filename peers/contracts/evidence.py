"""Evidence in a handoff: claims by reference, each with its class and when it was retrieved.

Seed 004: "We carry the class of each claim next to the claim, along with when it was
retrieved, so a receiver can refresh anything stale before acting on it", because a
summary that flattens what the customer said, what a system returned and what an agent
concluded "lets a guess get promoted to a fact at every hop". So a claim here is:
- by reference: the record it came from and how to retrieve it again, never a copy of
  the record (the schema admits no other field);
- classed: `observed` (a system of record returned it), `reported` (the customer said
  it) or `inferred` (an agent concluded it), a class that no hop may change;
- dated: `retrievedAt`, ISO 8601 UTC to the second, so a receiver can tell stale.
Claims ride in the handoff envelope's `evidence` (handoff.py). What a receiver requires
of them is its own policy (billing: an observed, fresh charge for what it refunds).
"""
from __future__ import annotations

import time

from transports.records import Record

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

CLASSES = ("observed", "reported", "inferred")
MAX_AGE_SECONDS = 15 * 60  # older than this, a claim is stale: refresh it before acting on it
_ID = {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9:._/-]{0,63}$"}
CLAIM_SCHEMA = {
    "type": "object", "additionalProperties": False,  # a copied row or transcript has no place
    "required": ["claim", "subject", "value", "class", "source", "retrievedAt"],
    "properties": {
        "claim": {"type": "string", "pattern": "^[a-z_]{1,40}$"}, "subject": _ID,
        "value": {"type": "number", "minimum": -1_000_000, "maximum": 1_000_000},
        "class": {"type": "string", "pattern": f"^({'|'.join(CLASSES)})$"},
        "source": {"type": "object", "additionalProperties": False,
                   "required": ["system", "recordId", "retrieve"],
                   "properties": {"system": _ID, "recordId": _ID,
                                  "retrieve": {"type": "string", "minLength": 1, "maxLength": 120}}},
        "retrievedAt": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$"},
    },
}


class Claim(Record):
    claim: str  # what is claimed about the subject: "charged"
    subject: str  # what it is about: "ORD-3300"
    value: float
    klass: str  # "observed", "reported" or "inferred" ("class" on the wire)
    system: str  # the record it came from: which system,
    record_id: str  # which record,
    retrieve: str  # and how to retrieve it again
    retrieved_at: str

    def is_fresh(self, now: float | None = None) -> bool:
        """Retrieved within the last MAX_AGE_SECONDS, and not in the future (a minute of clock
        skew allowed): a claim dated tomorrow is not fresh, it is wrong. Times to the second
        sort as text."""
        now = time.time() if now is None else now
        return utc_second(now - MAX_AGE_SECONDS) <= self.retrieved_at <= utc_second(now + 60)


def claim_to_wire(claim: Claim) -> dict[str, Any]:
    return {"claim": claim.claim, "subject": claim.subject, "value": claim.value, "class": claim.klass,
            "source": {"system": claim.system, "recordId": claim.record_id, "retrieve": claim.retrieve},
            "retrievedAt": claim.retrieved_at}


def claim_from_wire(value: dict[str, Any]) -> Claim:
    """A claim already checked against CLAIM_SCHEMA."""
    source = value["source"]
    return Claim(claim=value["claim"], subject=value["subject"], value=float(value["value"]),
                 klass=value["class"], system=source["system"], record_id=source["recordId"],
                 retrieve=source["retrieve"], retrieved_at=value["retrievedAt"])


def utc_second(now: float | None = None) -> str:
    """A `retrievedAt` for now."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() if now is None else now))
