"""The ledger of what a peer has done in the world, kept apart from its tasks.

Seed 004's failure list ends with duplicate delivery: an effect (billing: a refund, by
its order) must happen once, however late, under whatever messageId, a copy arrives.
The task store (store.py) forgets old tasks; the ledger never forgets an effect done. Each
caller (an owner: its credential, in its tenant) has a share of it; a caller whose share is
full claims no new effect (a flood of cheap refunds must not push an earlier one out, to be
done again), and the peer refuses the request saying so. Another caller's flood fills only
its own share.
"""

from __future__ import annotations

from _thread import allocate_lock  # threading.Lock itself, without loading threading: a start-up's cost (bench/startup.py)

from transports.records import Record

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Callable


WAITING = "nothing yet: the task waits for its caller"  # the summary of a claim a paused task holds
BEING_DONE = "being done now"  # the summary of a claim while its skill runs


class Effect(Record):
    """One thing a peer did in the world, and who asked for it."""

    owner: str
    task_id: str
    payload: str  # the checked input that did it, as canonical JSON
    summary: str  # what was done, as the task's result said: "refund of $180.00 issued ..."


class Ledger:
    """The effects a peer has carried out, by what makes two requests the same effect. Kept for
    as long as the peer (its file, with --store): up to `max_effects` a caller (10,000 refunds
    by default, about 5 MB), then that caller claims no new one (`room_for`); no effect done is
    ever forgotten to make room. The peer holds `lock` from "done already?" to claiming the effect,
    so of two copies arriving together one runs and the other finds its task; a claim that ends
    with nothing done is forgotten. A task paused for approval holds its claim (summary WAITING)
    against its own caller until it is approved, canceled or forgotten, or its hold ends at the
    time it states (pause.py: holdsUntil), so that caller's second request for the same order
    meanwhile gets that task, and never for ever. Against another caller it holds nothing (see
    `held`)."""

    def __init__(self, max_effects: int = 10_000) -> None:
        self.max_effects = max_effects
        self.effects: dict[str, Effect] = {}  # in the order claimed
        self.owned: dict[str, int] = {}  # owner -> how many of `effects` are its claims (its share: max_effects)
        self.waiting: dict[str, set[str]] = {}  # owner -> the keys its paused tasks hold (WAITING): a full share's to let go
        self.lock = allocate_lock()

    def get(self, key: str | None) -> Effect | None:
        return None if key is None else self.effects.get(key)

    def room_for(self, key: str | None, owner: str, kept: Callable[[str], bool] = lambda task_id: True) -> bool:
        """Whether `owner` may claim `key` (under `lock`): it holds it already, or its share has room (taking
        another caller's paused claim over needs room too). A full share first lets go of its paused tasks'
        claims that are no longer `kept` (see `held`): only its own, found at once (`waiting`)."""
        if key is None or self.owned.get(owner, 0) < self.max_effects:  # its count first: `get` may read a file
            return True
        held = self.get(key)
        if held is not None and held.owner == owner:
            return True
        for stale in [claimed for claimed in list(self.waiting.get(owner, ())) if not kept(self.claim_of(claimed).task_id)]:
            self.forget(stale)
        return self.owned.get(owner, 0) < self.max_effects

    def record(self, key: str, effect: Effect) -> None:  # a new key only where `room_for` said so
        self._counted(key, self.effects.get(key), effect)
        self.effects[key] = effect

    def _counted(self, key: str, earlier: Effect | None, effect: Effect) -> None:
        """Each caller's share and paused claims, as `key`'s entry goes from `earlier` to `effect`."""
        if earlier is not None and earlier.summary == WAITING:
            self.waiting.get(earlier.owner, set()).discard(key)
        if effect.summary == WAITING:
            self.waiting.setdefault(effect.owner, set()).add(key)
        if earlier is None or earlier.owner != effect.owner:  # a claim taken (under `lock`); not its result (a
            if earlier is not None:  # skill's, recorded outside it): so counts change only under `lock`
                self.owned[earlier.owner] -= 1
            self.owned[effect.owner] = self.owned.get(effect.owner, 0) + 1

    def forget(self, key: str) -> None:
        self._uncounted(key, self.effects.pop(key, None))

    def _uncounted(self, key: str, earlier: Effect | None) -> None:
        if earlier is not None:
            self.owned[earlier.owner] -= 1
            if earlier.summary == WAITING:
                self.waiting.get(earlier.owner, set()).discard(key)

    def held(self, key: str | None, kept: Callable[[str], bool], owner: str) -> Effect | None:
        """The entry for `key` as `owner`'s request meets it, called holding `lock`. A claim
        held by a paused task that is no longer `kept` (by task id) is let go: nobody can
        approve it any more. One that is kept binds its own caller only: to another, the
        effect is not done, nor being done, so it is None, and that caller's request takes
        the claim; the paused task, approved later, finds the effect done and does nothing.
        Why: a pause matters to the order only once its caller approves it, and it must not
        let a stranger's 20 paused refunds turn away the orders' honest refunds meanwhile."""
        earlier = self.get(key)
        if key is not None and earlier is not None and earlier.summary == WAITING:
            if not kept(earlier.task_id):
                self.forget(key)
                return None
            if earlier.owner != owner:
                return None
        return earlier

    def release(self, key: str | None, task_id: str) -> None:
        """Let go of the claim `task_id` holds on `key`: it ended with nothing done. An effect it did is no
        claim, and stays (forgotten, it would be done again)."""
        with self.lock:
            held = self.claim_of(key)
            if held is not None and held.task_id == task_id:
                self.forget(key)

    def claim_of(self, key: str | None) -> Effect | None:
        """The claim held on `key` (being done, or waiting), None if none: memory holds every claim."""
        held = self.get(key)
        return held if held is not None and held.summary in (WAITING, BEING_DONE) else None


def full(ledger: Ledger, owner: str) -> str:
    """Why `owner`'s new effect is refused: its share of the ledger is full, and none of it is forgotten."""
    return (f"this agent's ledger holds {ledger.owned.get(owner, 0):,} effects asked for with this credential, "
            f"its share of at most {ledger.max_effects:,}, and forgets none of them (one forgotten could be done "
            "again): it takes no new one; nothing was done")


def why_not_again(earlier: Effect, owner: str, same: bool) -> str:
    """Why a request for an effect already done (or held) does nothing, as its rejection
    says it: to `owner`, who asked; `same`: whether it asks exactly what `earlier` did."""
    if earlier.summary == WAITING:  # held, not done, and held against its own caller only (`held`)
        return (f"task {earlier.task_id} is paused, waiting for its caller (an approval or a credential); "
                "nothing was done")
    if earlier.owner != owner:
        return "this was already done for another caller; nothing was done again"
    if same:
        return f"already done by task {earlier.task_id}: {earlier.summary}; nothing was done again"
    return (f"task {earlier.task_id} already did this: {earlier.summary}; this request "
            "differs from it, so nothing was done")
