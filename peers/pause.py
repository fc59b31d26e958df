"""How a skill ends without a result: it failed (`SkillFailed`), or it may not decide alone
and the task waits for a person (seed 004: non-delegable decisions).

A skill that may not decide alone raises `NeedsApproval` with the exact effect it
proposes; the peer pauses the task in input-required and keeps a `Pending` beside it in
the store. A follow-up to that task goes on only if `approved` finds it approves exactly
that proposal, "because an approval is evidence about one specific action rather than a
standing permission"; the peer then judges the request's admission again and does it.
"""
from __future__ import annotations

import json
from typing import Any, Callable, NamedTuple

from peers.a2a.model import Message
from transports.jsonrpc import InvalidParams


class SkillFailed(Exception):
    """A skill ran and could not finish. Seed 004: a failure says "whether retrying is safe
    and which effects may already have landed", as data a caller can act on, not prose."""

    def __init__(self, reason: str, *, retry_safe: bool, landed: tuple[str, ...] = ()) -> None:
        super().__init__(reason)
        self.reason, self.retry_safe, self.landed = reason, retry_safe, landed

    def as_data(self) -> dict[str, Any]:
        return {"retrySafe": self.retry_safe, "effectsLanded": list(self.landed)}


class NeedsApproval(Exception):
    """A decision the skill may not take alone (seed 004: releasing money above a threshold).
    The task pauses in input-required naming the exact `proposal`; a follow-up to the same
    task approving exactly that proposal lets `then()` do it, once (see `approved`)."""

    def __init__(self, reason: str, proposal: dict[str, Any], then: Callable[[], str]) -> None:
        super().__init__(reason)
        self.proposal, self.then = proposal, then


class Pending(NamedTuple):
    """What a paused task waits for, kept beside it in the store."""
    approval: NeedsApproval
    effect: str | None  # the effect it will have, claimed in the ledger once approved
    claim: str  # the checked input, as canonical JSON
    admit: Callable[[], str | None]  # the skill's admission check, judged again on approval


def approved(pending: Pending, message: Message) -> None:
    """A follow-up releases a paused effect only by approving exactly what was proposed:
    an approval for $600 cannot release $900. Anything else leaves the task paused."""
    data = next((part.data for part in message.parts if part.data is not None), None)
    if not isinstance(data, dict) or data.get("approval") != pending.approval.proposal:
        proposal = json.dumps(pending.approval.proposal, sort_keys=True)
        raise InvalidParams(f'this task waits for a data part {{"approval": {proposal}}} approving '
                            "exactly what it proposed; nothing was done")
