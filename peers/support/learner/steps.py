"""A run's --trace records read as steps, for the diagrams (diagram.py) and the
step-through page (page.py): which records are events, what the terminal printed with
each, and which lane each peer's marks go on. Essay: Fig 2, the run drawn step by step.

One step per event: the registry read, each frame (a card fetch is two: the GET and the
card), each trust decision, the model's choice, each failure, a stream that broke off and
the subscription that resumed it, and each result: a line printed as an outcome (a result,
a pause, a peer's refusal) that no event announced. The other printed lines are not steps:
- a frame's printed text is that frame (its body is on the page);
- the line that announces an event (`[trust] ...`, `NAME: error`) is that event's own words,
  `said`: the trace records it right after the event, in the same call (trace.py), so the
  page and the diagrams say what the terminal said, never a sentence of their own;
- lines of the same kind right after those words continue them (`-> delegation result:
  None` after a refusal);
- story lines join the step printed before them, or, after a blank line, the step they
  introduce; blank lines separate, and are never a step.

Lanes are per endpoint, not per name: a card is anyone's to copy, so a look-alike host
serving billing's card is a lane of its own (`peer:https://billing-acme.example`),
labelled with the name on the card it served and its host.

What this does not do: draw or describe. Every field of a record is hostile (a trace file
is input too): it is read with isinstance checks, and shortened and escaped by `short`.
"""
from __future__ import annotations

from peers.support.learner.trace import PUSH
from transports.base import parse_url
from transports.escaping import escape
from transports.records import Record

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

EVENTS = ("registry", "trust", "model", "failure", "frame", "broken", "resumed")
OUTCOMES = ("trusted", "untrusted", "refused", "escalated", "error", "warning")  # line kinds that are results
SAID = ("trust", "model", "failure", "broken", "resumed")  # events a printed line announces


def short(value: Any, limit: int = 48) -> str:
    """`value` as text safe to show: invisible characters written out, at most `limit` long."""
    text = escape(str(value))
    return text if len(text) <= limit else text[:limit - 1] + "…"


class Step(Record):
    """One step of the run: an event, or a result line."""

    record: dict[str, Any]  # the event's record; for a result, its printed line's
    said: str  # the line the terminal printed for it; "" for the registry and a frame
    printed: list[str]  # every line printed with it, in order, `said` among them
    lane: str | None  # the peer lane it is drawn on (a frame, a failure, a break), or None

    @property
    def kind(self) -> str:
        return "result" if self.record.get("kind") == "line" else str(self.record.get("kind"))


class Run(Record):
    steps: list[Step]
    lanes: dict[str, tuple[str, str]]  # peer lane -> (the name on its card, its host), in order of appearance


def read_run(records: list[Any]) -> Run:
    """The steps and the peer lanes of a run's records, in the order they were recorded."""
    lanes, found, waiting = Lanes(), [], []  # waiting: lines after a blank, for the step they introduce
    previous, paragraph, continues = None, False, ""  # continues: the kind of line the last words were
    for record in records:
        kind = record.get("kind") if isinstance(record, dict) else None
        text = escape(record["text"], keep_newlines=True) if kind == "line" and isinstance(record.get("text"), str) \
            else None  # as the terminal showed it: a trace file may hold anything
        line = str(record.get("line")) if kind == "line" else ""
        if kind in EVENTS:
            found.append(Step(record, "", waiting, lanes.of(record)))
            waiting, paragraph, continues = [], False, ""
        elif not isinstance(text, str) or line == "frame":
            pass  # a frame's text is its frame
        elif not text.strip() or text.startswith("\n"):
            paragraph = True  # what follows opens a paragraph: it introduces the next step
            if text.strip():
                waiting.append(text.lstrip("\n"))
        elif found and found[-1].record is previous and found[-1].kind in SAID:
            found[-1] = found[-1]._replace(said=text)
            found[-1].printed.append(text)
            continues = line
        elif found and continues == line and not paragraph:  # (a trace may begin with any line: nothing to continue)
            found[-1].printed.append(text)
        elif line in OUTCOMES:
            found.append(Step(record, text, [*waiting, text], None))
            waiting, paragraph, continues = [], False, line
        else:
            (waiting if paragraph or not found else found[-1].printed).append(text)
            continues = ""
        previous = record
    if found and waiting:
        found[-1].printed.extend(waiting)
    return Run(found, lanes.labels)


class Lanes:
    """Each peer's lane: `peer:<origin>` where its frames crossed; `peer:<name>` for a peer
    only named (a hand-written trace). A peer called "registry" is not the registry's lane."""

    def __init__(self) -> None:
        self.labels: dict[str, tuple[str, str]] = {}
        self.last: dict[str, str] = {}  # a peer's name -> its lane, for records that name only the peer

    def of(self, record: dict[str, Any]) -> str | None:
        kind, name = record.get("kind"), short(record.get("peer"), 60)
        if kind == "frame":
            url = parse_url(record.get("origin"))  # where it crossed; for a push, the peer that sent it
            if url is None and record.get("method") != PUSH:  # a trace recorded before `origin` was
                url = parse_url(record.get("url"))
            return self.lane(name, url.origin if url else None)
        if kind == "failure":
            url = parse_url(record.get("origin"))
            return self.lane(name, url.origin if url else None)
        if kind == "broken":  # the stream went to the card's endpoint
            url = parse_url(record.get("endpoint"))
            return self.lane(name, url.origin if url else None)
        if kind == "trust" and name not in self.last:  # a peer no frame reached: where frames would go
            url = parse_url(record.get("endpoint"))
            self.lane(name, url.origin if url else None)
        return None

    def lane(self, name: str, origin: str | None) -> str:
        """The lane of `origin` (made now, labelled `name`, if new); without one, the
        lane `name` was last seen on, or one of its own."""
        lane = f"peer:{short(origin, 120)}" if origin else self.last.get(name, f"peer:{name}")
        if lane not in self.labels:
            host = short(origin.split("://", 1)[1], 60) if origin else ""
            self.labels[lane] = (name, "" if host == name else host)
        self.last[name] = lane
        return lane
