"""How a skill ends without a result: it failed (`SkillFailed`), it was not admitted
(`Refusal`), or it may not go on alone and the task waits for its caller: for a person's
approval (seed 004: non-delegable decisions) or for a stronger credential.

A skill that may not finish alone raises a `Paused`: `NeedsApproval` with the exact
effect it proposes (input-required), or `NeedsCredential` naming the scope of a step-up
credential (auth-required). The peer pauses the task and keeps a `Pending` beside it in
the store; a follow-up to that task goes on only if the pause's `accept` lets it, and
the peer then judges the request's admission again before doing the work.

A paused task holds its effect (a refund of one order) against its own caller, so that
caller's request for it again meanwhile gets the waiting task, not a second effect. It
holds nothing against another caller: nothing has been done, and whether it will be is
only its caller's word, so another caller's refund of that order goes ahead at once, and
the paused task, approved later, finds it done and does nothing (peer.py; ledger.py's
`held`). A hold that turned others away would let one caller's paused tasks (however
few) keep honest refunds of those orders out for as long as the hold lasts. So that no
caller can hold effects for ever, or hold many, a caller may have at most
MAX_PAUSED_PER_CALLER tasks paused at once, and on a peer with a clock each hold ends at
a stated time, HOLD_SECONDS after the task first paused: its status data says when
("holdsUntil"), and the time is kept with the task, so a restart does not renew it.
After it, the effect may be asked for again; the task, approved later, goes on only if
nobody did.
"""

from __future__ import annotations

import json

from peers.a2a.errors import PermissionDenied
from peers.a2a.fields import instant
from peers.a2a.model import PAUSED, Message, Part, Task, TaskState
from transports.jsonrpc import InvalidParams
from transports.records import Record

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable


class SkillFailed(Exception):
    """A skill ran and could not finish. Seed 004: a failure says "whether retrying is safe
    and which effects may already have landed", as data a caller can act on, not prose."""

    def __init__(self, reason: str, *, retry_safe: bool, landed: tuple[str, ...] = ()) -> None:
        super().__init__(reason)
        self.reason, self.retry_safe, self.landed = reason, retry_safe, landed

    def as_data(self) -> dict[str, Any]:
        return {"retrySafe": self.retry_safe, "effectsLanded": list(self.landed)}


class Refusal(Record):
    """Why a request is not admitted (a skill's `admit` may return this or just the reason),
    and, as data, what a caller can act on: billing names where a request belongs instead."""
    reason: str
    data: dict[str, Any] | None = None


def reason_and_data(refused: str | Refusal) -> tuple[str, dict[str, Any] | None]:
    return (refused, None) if isinstance(refused, str) else (refused.reason, refused.data)


class Paused(Exception):
    """The skill may not finish alone: the task pauses in `STATE`, its status naming what
    it asks for as data (`asked`); a follow-up to the same task that `accept` lets through
    has `then()` do the work, once. Nothing is done before that."""

    STATE = TaskState.INPUT_REQUIRED

    def __init__(self, reason: str, asked: dict[str, Any], then: Callable[[], str]) -> None:
        super().__init__(reason)
        self.asked, self.then = asked, then

    def accept(self, message: Message, scopes: frozenset[str]) -> None:
        """Raise a JSON-RPC error (the task stays paused) unless the follow-up gives what was asked."""
        raise NotImplementedError

    def granted(self, scopes: frozenset[str]) -> bool:
        """Whether the request that met this pause already brought what it asks for."""
        return False


class NeedsApproval(Paused):
    """A decision the skill may not take alone (seed 004: releasing money above a threshold).
    The task pauses in input-required naming the exact `proposal`; only a follow-up that
    approves exactly it goes on: an approval for $600 cannot release $900, "because an
    approval is evidence about one specific action rather than a standing permission".

    With an `approver` key pinned, the approval must also carry that key's signature over
    the proposal, this agent's endpoint and this task's id (peers/signing/approval_signature.py): then it is a
    person's decision, not anything a holder of the caller's token can type; and since the
    signature names the task and a task goes on once, it is used once. Without one, the
    bare proposal is all that is checked (the reason the task pauses with says which)."""

    def __init__(self, reason: str, proposal: dict[str, Any], then: Callable[[], str],
                 approver: Any = None) -> None:
        super().__init__(reason, {"approval": proposal}, then)
        self.proposal, self.approver = proposal, approver  # approver: (an rs256.PublicKey, our endpoint), or None

    def accept(self, message: Message, scopes: frozenset[str]) -> None:
        data = next((part.data for part in message.parts if part.data is not None), None)
        if not isinstance(data, dict) or data.get("approval") != self.proposal:
            proposal = json.dumps(self.proposal, sort_keys=True)
            raise InvalidParams(f'this task waits for a data part {{"approval": {proposal}}} approving '
                                "exactly what it proposed; nothing was done")
        if self.approver is not None:
            from peers.signing import approval_signature  # only a peer that pins an approver signs
            key, audience = self.approver
            unsigned = approval_signature.unproven(self.proposal, audience, str(message.task_id),
                                                   data.get("signature"), key)
            if unsigned:
                raise InvalidParams(f"{unsigned}; nothing was done")


class NeedsInput(Paused):
    """The plainest pause: the skill asks its caller for more, and whatever the next turn
    says is the answer; `answered(message)` does the work with it."""

    def __init__(self, reason: str, answered: Callable[[Message], Any]) -> None:
        super().__init__(reason, {}, then=lambda: answered(self.answer))
        self.answer: Message | None = None

    def accept(self, message: Message, scopes: frozenset[str]) -> None:
        self.answer = message


class NeedsCredential(Paused):
    """A step-up: the caller's credential admits it, but this effect needs more (a token
    with `scope`). The task pauses in auth-required naming the scope; the follow-up goes
    on only if it was sent with such a token, in HTTP Authorization: a credential never
    travels in a message, where it would be logged, stored and forwarded."""

    STATE = TaskState.AUTH_REQUIRED

    def __init__(self, reason: str, scope: str, then: Callable[[], str]) -> None:
        super().__init__(reason, {"credential": {"scheme": "bearer", "scope": scope}}, then)
        self.scope = scope

    def granted(self, scopes: frozenset[str]) -> bool:
        return self.scope in scopes  # the step-up token came with the request itself

    def accept(self, message: Message, scopes: frozenset[str]) -> None:
        if self.scope not in scopes:  # a caller it knows, without the scope: 403's kind of refusal
            raise PermissionDenied(f"this task waits for a follow-up sent with a bearer token for scope "
                                   f"{self.scope!r} in HTTP Authorization; nothing was done", self.scope)


def run_granted(work: Callable[[], str], scopes: frozenset[str]) -> str:
    """Run `work`; a pause the request already satisfies (its step-up token came with it)
    goes straight on to what follows it. A skill chains a few steps at most: bounded."""
    for _ in range(8):
        try:
            return work()
        except Paused as pause:
            if not pause.granted(scopes):
                raise
            work = pause.then
    raise RuntimeError("a skill paused more than 8 times in a row")  # a bug in a skill: -32603


class Pending(Record):
    """What a paused task waits for, kept beside it in the store."""
    paused: Paused
    effect: str | None  # the effect it will have, claimed in the ledger once it goes on
    claim: str  # the checked input, as canonical JSON
    admit: Callable[[], str | Refusal | None]  # the skill's admission check, judged again before it goes on
    holds_until: str | None = None  # when its hold on the effect ends, once stated (kept across a restart)

    @property
    def hold(self) -> dict[str, str] | None:
        """The end of its hold, as the task keeps it while it works again (unshown; a restart reads it: restart.py)."""
        return {"holdsUntil": self.holds_until} if self.holds_until else None


MAX_PAUSED_PER_CALLER = 20  # tasks one caller may have waiting at once
HOLD_SECONDS = 600.0  # how long a paused task holds its effect against other requests


def hold_end(now: str | None, seconds: float) -> str | None:
    """`seconds` after `now` (an RFC 3339 UTC timestamp, as a peer's clock says it), in the
    same form; None without a clock: a learner's run states no time, and its holds do not end."""
    if now is None or instant(now) is None:
        return None
    from datetime import datetime, timedelta  # here: only a served peer's clock needs it, not a learner's run
    # Read through `instant`, not datetime.fromisoformat: before 3.11 that refuses "Z" and
    # a fraction of other than 3 or 6 digits, which RFC 3339 allows ("...:00.5Z").
    whole, _, fraction = instant(now).partition(".")
    later = datetime.strptime(whole, "%Y-%m-%dT%H:%M:%S") + timedelta(microseconds=int(fraction[:6]), seconds=seconds)
    return later.strftime("%Y-%m-%dT%H:%M:%S.") + f"{later.microsecond // 1000:03d}Z"


def hold_over(task: Task, now: str | None) -> bool:
    """Whether a paused task's stated hold has ended by `now`."""
    until = (task.status_data or {}).get("holdsUntil")
    return task.state in PAUSED and instant(until) is not None and instant(now) is not None \
        and instant(now) >= instant(until)


def paused_or_failed(task: Task, paused: Paused, waiting_already: int, holds_until: str | None,
                     hold_seconds: float | None, now: str | None) -> Task:
    """`task`, paused as `paused` asks, saying when its hold ends (`holds_until`, stated
    before a restart, or `hold_seconds` from `now`); or, when its caller has
    MAX_PAUSED_PER_CALLER tasks waiting already, failed as safe to retry: nothing is held."""
    if waiting_already >= MAX_PAUSED_PER_CALLER:
        return task.advance(TaskState.FAILED, timestamp=now, data={"retrySafe": True, "effectsLanded": []}, message=(
            f"{MAX_PAUSED_PER_CALLER} of your tasks wait for you already; approve or cancel one, then ask "
            "again (nothing was done; retry is safe)"))
    until = holds_until or hold_end(now, HOLD_SECONDS if hold_seconds is None else hold_seconds)
    data = paused.asked if until is None else {**paused.asked, "holdsUntil": until}
    return task.advance(paused.STATE, message=str(paused), timestamp=now, data=data)


def asked(task: Task) -> Message:
    """The turn a paused task waits on (its status message, and what it asks for as data), as the
    agent's message in its history: it joins it when the task goes on, or is canceled, so the task
    keeps every message exchanged (a continued task's answer follows it; a canceled one ends there)."""
    return Message(f"{task.id}-asked-{len(task.history)}", "agent",
                   (Part(text=task.status_message or ""),) + ((Part(data=task.status_data),) if task.status_data else ()),
                   task.context_id, task.id)
