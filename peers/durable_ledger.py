"""The ledger on its store file (`serve --store`, durable.py): each effect done a row, found by its key.

Read back whole as the peer started, a long-served ledger (200,000 refunds) grew each start's memory
and time without bound, and memory then held every effect done for the process's life. So, keeping
the in-memory Ledger's rules (ledger.py), and exactly-once (no effect done is ever forgotten):
- an effect done is a row of the file, found by its key when asked (`get`: the file's index on key,
  durable_schema.py): one indexed read for a request's new effect, which `record` then takes as read,
  and none for a claim, which memory holds;
- memory holds the claims (being done, or waiting for a caller: all the Ledger needs of them, as many
  as the requests at work and the tasks paused), each caller's count (its share), and an effect done,
  or a claim let go, until the commit that writes it has returned (the file meanwhile holds what was);
- as the peer starts, the claims are read (the rows whose body holds a claim's words), each caller's
  count and the last seq, and every row's columns are judged in SQL (types, sizes, a key or seq given
  twice), never every row's JSON: a done effect's row is judged when it is read. One this peer did not
  write (a file edited by hand) is UnreadableEffect then: the request that meets it is refused, -32603
  saying so, nothing done (serve's banner, which reads the newest five: one line, exit 2). A start's
  memory does not grow with the ledger; its time does only by SQLite's few passes over the table.
Not here: the file's tables (durable_schema.py), staging and committing (durable.py).
"""
from __future__ import annotations

from _thread import allocate_lock  # threading.Lock itself, without loading threading (peers/ledger.py)
from collections.abc import Mapping

from peers.durable_codec import from_json
from peers.durable_read import MAX_ROW_CHARS
from peers.durable_schema import EFFECT_ROW, MAX_SEQ, Slots
from peers.ledger import BEING_DONE, WAITING, Effect, Ledger
from transports.jsonrpc import InternalError

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Iterator

CLAIMS = (BEING_DONE, WAITING)
# A row this peer did not write, as the file's columns show it: judged for every row as the peer starts, in SQLite.
_STRANGE = (f"typeof(seq) <> 'integer' OR seq < 1 OR seq >= {MAX_SEQ} OR slot < 1 OR slot >= {MAX_SEQ} OR "
            f"typeof(key) <> 'text' OR typeof(owner) <> 'text' OR typeof(body) <> 'text' OR "
            f"length(key) + length(owner) + length(body) > {MAX_ROW_CHARS}")


class UnreadableEffect(InternalError):
    """A done effect's row this peer did not write (a file edited by hand), met as it is read: the request
    is refused, nothing done. Its text names the effect, never the file: it is the caller's answer."""

    title = "Internal error: this agent's ledger holds a row it cannot read"


class DurableLedger(Ledger):
    """The ledger, each effect it records (or forgets) staged, written with the next commit; an effect
    done found in the file (the module's rules)."""

    def __init__(self, file: Any, max_effects: int = 10_000) -> None:  # not Ledger's: its `effects` is the file's
        self.file, self.max_effects = file, max_effects
        self.owned: dict[str, int] = {}  # owner -> how many effects are its claims (its share), in the file too
        self.waiting: dict[str, set[str]] = {}  # owner -> the keys its paused tasks hold (ledger.py)
        self.lock = allocate_lock()
        self.writing = allocate_lock()  # memory and file change together under it: staged in the order made
        # The claims; and each effect done, or forgotten (None), until the commit that writes it returns.
        self.kept: dict[str, Effect | None] = {}
        self.unwritten: dict[str, int] = {}  # a key of `kept` not a claim -> the number its change was staged as
        self.seq = 0  # the last place given in the file: the next effect's is after it
        self.seqs: dict[str, int] = {}  # the place of each effect in `kept` (a claim's result keeps the claim's)
        self.slots = Slots()  # the row of each effect in `kept`
        self.looked: tuple[str, Any] | None = None  # the key last read from the file, and its row: read once a request

    @property
    def effects(self) -> EffectsOnFile:
        """Every effect, oldest first, as the file holds it: for tests and a look at the whole; a request
        asks `get` for its key alone."""
        return EffectsOnFile(self)

    def get(self, key: str | None) -> Effect | None:
        if key is None:
            return None
        found = self.kept.get(key)
        if found is not None:
            return found
        with self.writing:  # memory, then the file, as one: an effect recorded meanwhile is in one of them
            if key in self.kept:  # (None: forgotten, its row not yet deleted from the file)
                return self.kept[key]
            row = self._row(key)
        return row[2] if row is not None else None

    def claim_of(self, key: str | None) -> Effect | None:
        held = self.kept.get(key) if key is not None else None  # every claim is in memory: the file is not read
        return held if held is not None and held.summary in CLAIMS else None

    def claims(self) -> list[tuple[str, Effect]]:
        """Every claim held (being done, or waiting), oldest first: what a restart settles."""
        with self.writing:
            return [(key, held) for key, held in self.kept.items() if held is not None and held.summary in CLAIMS]

    def record(self, key: str, effect: Effect) -> None:
        with self.writing:
            earlier = self.kept[key] if key in self.kept else self._placed(key)
            self._counted(key, earlier, effect)
            self.kept[key] = effect
            if key not in self.seqs:  # a claim's result keeps the claim's place
                self.seq = self.seqs[key] = self.seq + 1
            slot = self.slots.slot(key)
            staged = self.file.stage(("effects", slot), EFFECT_ROW, (slot, self.seqs[key], key, effect.owner), effect)
            self.unwritten.pop(key, None)
            if effect.summary not in CLAIMS:  # in memory until its commit returns, oldest first
                self.unwritten[key] = staged
            self._let_go_written()

    def forget(self, key: str) -> None:  # its row by its slot, not its key: a key forgotten may be recorded again
        with self.writing:
            earlier = self.kept[key] if key in self.kept else self._placed(key)
            if earlier is None:
                return
            self._uncounted(key, earlier)
            self.seqs.pop(key, None)
            slot = self.slots.give_back(key)
            self.kept[key] = None  # until its row is deleted from the file too
            self.unwritten.pop(key, None)
            self.unwritten[key] = self.file.stage(("effects", slot), "DELETE FROM effects WHERE slot = ?", (slot,))
            self._let_go_written()

    def newest(self, count: int | None, unreadable: Effect | None = None) -> tuple[int, list[tuple[str, Effect]]]:
        """How many effects the ledger holds, and its newest `count` (None: every one), oldest first, as the
        file holds them once what is staged is committed: serve's banner (five), and `effects`. A row this
        peer did not write is `unreadable` (the banner's words for it), or UnreadableEffect if that is None."""
        with self.writing:  # none changes meanwhile
            self.file.commit()
            (total,), = self.file.rows("SELECT COUNT(*) FROM effects")
            rows = self.file.rows("SELECT key, owner, body FROM effects ORDER BY seq DESC" +
                                  ("" if count is None else f" LIMIT {int(count)}"))
        return total, [(key, _readable(key, owner, body, unreadable)) for key, owner, body in reversed(rows)]

    def read_back(self, db: Any) -> None:
        """As the peer starts (no other thread yet): each caller's count, the last seq and slot, and the
        claims, never the effects done; every row's columns judged. ValueError: a row this peer did not write."""
        for owner, count, last, strange in db.execute(  # a strange owner never read: it may be of any length
                "SELECT CASE WHEN strange THEN NULL ELSE owner END, count, last, strange FROM (SELECT owner, "
                f"COUNT(*) AS count, MAX(seq) AS last, SUM({_STRANGE}) AS strange FROM effects GROUP BY owner)"):
            if strange:
                raise ValueError(f"{strange} effect(s) this peer did not write (a seq, slot, key or owner of "
                                 "another type, or larger than it writes)")
            self.owned[owner], self.seq = count, max(self.seq, last)
        twice = db.execute("SELECT key FROM effects GROUP BY key HAVING COUNT(*) > 1 LIMIT 1").fetchone() or \
            db.execute("SELECT seq FROM effects GROUP BY seq HAVING COUNT(*) > 1 LIMIT 1").fetchone()
        if twice:  # (the key's by its index; the seq's by a sort in SQLite, whose memory is its own, bounded)
            raise ValueError(f"two effects of one key, or one place in the ledger's order ({str(twice[0])[:40]!r})")
        self.slots.last = db.execute("SELECT MAX(slot) FROM effects").fetchone()[0] or 0
        for slot, seq, key, owner, body in db.execute("SELECT slot, seq, key, owner, body FROM effects WHERE "
                                                      "instr(body, ?) OR instr(body, ?) ORDER BY seq", CLAIMS):
            effect = judged(key, owner, body)
            if effect.summary in CLAIMS:  # (not an effect done whose words hold a claim's)
                if effect.summary == WAITING:
                    self.waiting.setdefault(owner, set()).add(key)
                self.kept[key], self.seqs[key], self.slots.of[key] = effect, seq, slot

    def _row(self, key: str) -> tuple[int, int, Effect] | None:
        """(slot, seq, effect) of `key`'s row in the file, None if it has none; called holding `writing`.
        The last read is kept (`looked`) until that key changes: `record` after `get` reads nothing more."""
        if self.looked is not None and self.looked[0] == key:
            return self.looked[1]
        found = self.file.rows("SELECT slot, seq, owner, body FROM effects WHERE key = ?", (key,))
        row = (found[0][0], found[0][1], _readable(key, *found[0][2:])) if found else None
        self.looked = (key, row)
        return row

    def _placed(self, key: str) -> Effect | None:
        """`key`'s effect as the file holds it (None: none), its slot and place taken into memory: it changes now."""
        row = self._row(key)
        self.looked = None
        if row is None:
            return None
        self.slots.of[key], self.seqs[key] = row[0], row[1]
        return row[2]

    def _let_go_written(self) -> None:
        """Each effect done, or forgotten, whose commit has returned, out of memory: the file holds it as it is now."""
        while self.unwritten:
            key = next(iter(self.unwritten))
            if self.unwritten[key] > self.file.written:
                return
            del self.unwritten[key], self.kept[key]
            self.seqs.pop(key, None)
            self.slots.of.pop(key, None)


def judged(key: Any, owner: Any, body: Any) -> Effect:
    """The effect a row holds; ValueError if this peer did not write it (its owner the body's too)."""
    try:
        effect = from_json(body, Effect) if type(body) is str and len(body) <= MAX_ROW_CHARS else None
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
        effect = None
    if effect is None or not all(type(value) is str for value in effect) or effect.owner != owner:
        raise ValueError(f"effect {str(key)[:40]!r} is not one this peer wrote")
    return effect


def _readable(key: Any, owner: Any, body: Any, unreadable: Effect | None = None) -> Effect:
    try:
        return judged(key, owner, body)
    except ValueError as exc:
        if unreadable is not None:
            return unreadable
        raise UnreadableEffect(f"{exc} (its store file edited?); nothing was done") from None


class EffectsOnFile(Mapping):
    """The ledger's every effect, key -> Effect, read from its file (`DurableLedger.effects`)."""

    def __init__(self, ledger: DurableLedger) -> None:
        self.ledger = ledger

    def __getitem__(self, key: str) -> Effect:
        found = self.ledger.get(key)
        if found is None:
            raise KeyError(key)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter([key for key, _ in self.items()])

    def __len__(self) -> int:
        return self.ledger.newest(0)[0]

    def items(self) -> list[tuple[str, Effect]]:  # type: ignore[override]
        return self.ledger.newest(None)[1]

    def values(self) -> list[Effect]:  # type: ignore[override]
        return [effect for _, effect in self.items()]
