"""The handoff envelope: what a delegation carries besides its payload (seed 004).

"The envelope we send is deliberately small": the contract version it follows, the
objective, the actions the receiver is permitted to take with their limits, when that
permission expires, and the hops the handoff has already made, with a limit and who owns
the decision if it runs out. What it never carries: the transcript, the receiver's
prompt, the transferor's credentials (a token in a payload "is a permission escalation
with extra steps"; the receiver's own credentials travel in HTTP Authorization).

It is shared like the A2A protocol: the support agent writes it, billing reads it. On
the 0.3 and 1.0 wires it rides in the message's `metadata.handoff`; the essay's
`tasks/send` has no metadata, so it cannot carry one. A receiver judges it before any
effect: `read` refuses an unsupported contract version (-32602, naming the versions it
supports) or a malformed envelope; `refusal` says why a permitted action does not cover
what is asked, or None.
"""
from __future__ import annotations

from peers.contracts import evidence, transfer
from peers.contracts.no_credentials import ESCALATION, credential_in  # noqa: F401 - part of the contract
from peers.a2a.schema import check
from transports.jsonrpc import InvalidParams
from transports.records import Record

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

CONTRACT = "refund-handoff/1"
SUPPORTED = (CONTRACT,)
_TEXT = {"type": "string", "minLength": 1, "maxLength": 200}
SCHEMA = {
    "type": "object",
    "required": ["contract", "objective", "permitted", "expiresAt", "hops", "maxHops", "decisionOwner"],
    "additionalProperties": False,  # so a token or a transcript cannot ride along unnoticed
    "properties": {
        "contract": _TEXT, "objective": _TEXT, "decisionOwner": _TEXT,
        "permitted": {"type": "array", "minItems": 1, "items": {
            "type": "object", "required": ["action", "maxAmount", "currency"], "additionalProperties": False,
            "properties": {"action": _TEXT, "currency": {"type": "string", "pattern": "^[A-Z]{3}$"},
                           "maxAmount": {"type": "number", "minimum": 0, "maximum": 1_000_000}}}},
        "expiresAt": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$"},
        "hops": {"type": "array", "items": _TEXT},
        "maxHops": {"type": "integer", "minimum": 1, "maximum": 10},
        "evidence": {"type": "array", "items": evidence.CLAIM_SCHEMA},  # optional: evidence.py
        **transfer.PROPERTIES,  # optional: who advances the task, its status, the customer's owner, a span
    },
}


class ContractNotSupported(InvalidParams):
    """-32602 for a contract version this agent does not speak, naming the ones it does in
    words and as data (`details`: on 1.0 the ErrorInfo's metadata, on 0.3 the error's
    data), so a sender that speaks several can choose one both speak."""

    def __init__(self, offered: str) -> None:
        super().__init__(f"handoff contract {offered[:40]!r} is not supported; this agent "
                         f"supports {', '.join(SUPPORTED)}")
        self.details = {"supportedContracts": " ".join(SUPPORTED)}


class Permit(Record):
    action: str  # "refund"
    max_amount: float
    currency: str


class Envelope(Record):
    objective: str
    permitted: tuple[Permit, ...]
    expires_at: str  # ISO 8601 UTC to the second: as text, such times sort in time order
    decision_owner: str  # who decides when the handoff cannot go on (seed 004: "who owns it")
    hops: tuple[str, ...] = ()  # the agents it has passed through, the sender last
    max_hops: int = 3
    contract: str = CONTRACT
    evidence: tuple[evidence.Claim, ...] = ()  # claims by reference, classed and dated
    transfer: transfer.Transfer | None = None  # who advances the task after it, and more (transfer.py)


def to_wire(envelope: Envelope) -> dict[str, Any]:
    wire = {"contract": envelope.contract, "objective": envelope.objective,
            "permitted": [{"action": p.action, "maxAmount": p.max_amount, "currency": p.currency}
                          for p in envelope.permitted],
            "expiresAt": envelope.expires_at, "hops": list(envelope.hops), "maxHops": envelope.max_hops,
            "decisionOwner": envelope.decision_owner}
    if envelope.evidence:  # optional: an envelope without claims carries no empty list
        wire["evidence"] = [evidence.claim_to_wire(claim) for claim in envelope.evidence]
    if envelope.transfer is not None:
        wire.update(transfer.to_wire(envelope.transfer))
    return wire


def read(value: Any) -> Envelope:
    """The envelope a message carries, or InvalidParams naming what is wrong with it."""
    contract = value.get("contract") if isinstance(value, dict) else None
    if isinstance(contract, str) and contract not in SUPPORTED:  # first: a newer sender's fields differ
        raise ContractNotSupported(contract)
    carried = credential_in(value, "metadata.handoff")  # before the schema: the reason is the escalation
    if carried:
        raise InvalidParams(f"{carried}; nothing was done")
    problem = check(value, SCHEMA, "metadata.handoff")
    if problem:
        raise InvalidParams(problem)
    permitted = tuple(Permit(p["action"], float(p["maxAmount"]), p["currency"]) for p in value["permitted"])
    return Envelope(value["objective"], permitted, value["expiresAt"], value["decisionOwner"],
                    tuple(value["hops"]), value["maxHops"], contract,
                    tuple(evidence.claim_from_wire(claim) for claim in value.get("evidence", [])),
                    transfer.from_wire(value))


def refusal(envelope: Envelope, action: str, amount: float, currency: str, now: str) -> str | None:
    """Why the envelope does not permit `action` for `amount` at `now`, or None."""
    if len(envelope.hops) >= envelope.max_hops:
        return (f"the handoff has made {len(envelope.hops)} hops ({' -> '.join(envelope.hops)}), its "
                f"limit; {envelope.decision_owner} owns this decision; nothing was done")
    if envelope.expires_at <= now[:19] + "Z":  # `now` to the second, as the expiry is written
        return f"the permission to {action} expired at {envelope.expires_at}; nothing was done"
    permits = [p for p in envelope.permitted if p.action == action and p.currency == currency]
    if not permits:
        return f"the handoff does not permit {action} in {currency}; nothing was done"
    if amount > max(p.max_amount for p in permits):
        return (f"the handoff permits {action} up to {max(p.max_amount for p in permits):,.2f} "
                f"{currency}, not {amount:,.2f}; nothing was done")
    return None
