"""The runs the live page starts: each is main() run again in a thread of its own, watched.

A `Run` is the session's Watch (peers/support/cli/session.py): its Console prints nowhere and
tells `line` every line the terminal would have printed; `attach(printer)` makes it a
listener of the frame printer, so each frame is an event as it is recorded, with its HTTP
status and headers as the printer masked them (a stream's as soon as it starts, before its
events), and the sequence diagram is drawn again (drawing.py). Nothing is re-synthesised. The
events are kept in order, bounded (keeping.py), and the page reads them as server-sent events
(`events_after`), from any point, as often as it reconnects.
Step mode: the printer's `before_send` hook holds each frame until Send or Stop, or until
STEP_PATIENCE passes (then nothing more is sent); Stop works without step mode too. A
Recorder (trace.py) keeps the run as --trace would, for JSONL and the step-through view.
Not here: HTTP, the token, what a run is asked with (server.py builds its argv), the
page's runs by id (runs_by_id.py), how much a run keeps (keeping.py).
"""
from __future__ import annotations

import io
import secrets
import threading
import time
from collections import deque

from peers.support.learner import trace
from peers.support.output import Console, Kind
from peers.support.web import drawing, keeping
from peers.support.web.conversation import Conversation, Remembering
from transports.errors import let_quit
from transports.escaping import escape
from transports.masking import mask_body
from transports.printer import Frame, FramePrinter, StopRun

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable

STEP_PATIENCE = 900.0  # seconds a held frame waits for Send before the run stops on its own


class _Nowhere(io.TextIOBase):
    """Where a watched run's Console prints: the page has every line already."""

    def write(self, text: str) -> int:
        return len(text)


class Run:
    """One run: `again(argv, run)` in a thread; its events; Send and Stop."""

    def __init__(self, run_id: str, argv: list[str], step: bool, cleanup: Callable[[], None],
                 credentials: dict[str, Any] | None = None, story: Callable[..., Any] | None = None,
                 conversation: Conversation | None = None, rolling: bool = False) -> None:
        self.id, self.argv, self.step, self.cleanup, self.rolling = run_id, argv, step, cleanup, rolling
        # What the browser fetches itself (the events, the trace, the step-through view) it asks
        # for with this key in the address: it opens this run's, not the page's token.
        self.key = secrets.token_urlsafe(16)
        self.credentials = credentials or {}  # origin -> a Held (credentials.py): the session's store, never a file
        self.story = story  # what the run tells instead of the essay's story (an operation on an agent)
        self.conversation = conversation  # the page's conversation this run is a turn of, if any
        self.console = Console(colour=False, out=_Nowhere(), err=_Nowhere())
        self.console.listeners.append(self.line)
        self.events = keeping.Events(rolling)  # rolling: a proxy session's newest alone
        self.changed = self.events.changed
        self.recorder: trace.Recorder | None = None
        self.held: tuple[str, ...] = ()  # the run's secrets, masked in what the page is sent
        self.status: int | None = None  # the exit status once it ended
        self.asked: str | None = None  # "send" or "stop", from the page, for the frame held
        self.stopping = False
        self.opened: list[dict[str, Any]] | None = None  # a saved trace's records, for a run opened from one
        # The printer's number of each frame, in the order they crossed: the newest, as many as a run's records hold
        self.frame_seqs: deque[int] = deque(maxlen=max(keeping.MOST_RECORDS, keeping.MOST_RUN_RECORDS))
        self.framing = threading.Lock()  # a frame's record and its number are added, and read to draw, together
        self.drawing, self.one_drawing = threading.Lock(), threading.Lock()  # (redraw_after)
        self.drawn_at = self.drawing_took = 0.0  # the last drawing's end, and what it took (time.monotonic())
        self.due = False  # a drawing is due: whatever is heard before it is drawn with it

    # -- the session's Watch ------------------------------------------------------------
    def attach(self, printer: FramePrinter, card_urls: list[str] | None, *more: FramePrinter) -> Remembering | None:
        """Hook the printer main() made (and `more`: a proxy's printer of pushes): every frame
        an event, and each one held if stepping; a run's trace starts with the registry's card URLs,
        as --trace's does (tools.py), kept to its newest part, bounded (keeping.py).
        A turn of a conversation speaks through the printer wrapped (conversation.py), else None."""
        self.recorder, self.held = trace.Recorder(printer.label, printer.held), printer.held
        if card_urls is not None:  # None: a proxy session, which reads no registry
            self.recorder.event("registry", cards=card_urls)
        window = trace.Window(self.recorder.records, self._add, *((keeping.MOST_RECORDS, keeping.MOST_RECORD_BYTES)
                              if self.rolling else (keeping.MOST_RUN_RECORDS, keeping.MOST_RUN_RECORD_BYTES)))
        self.console.listeners += [self.recorder.line, window, self.redraw_after]
        for each in (printer, *more):
            each.listeners += [self._recorded, window, self.frame, self.redraw_after]
            each.before_send = self.before_send
            if each.show is not None:
                each.show = self._stream_head(each.show)
        return Remembering(printer, self.conversation, self.console.say, self._add) if self.conversation else None

    def line(self, text: str, kind: Kind, facts: dict[str, Any]) -> None:
        """A Console listener: the line as the terminal shows it, and a trust decision's or a
        task's facts."""
        if facts.get("event") == "trust":
            self._trust(facts)
        elif facts.get("event") == "task":  # a task an agent told of: the page's next turn may name it
            self._add({"type": "task", **{key: str(facts.get(key, "")) for key in ("task", "context", "state")}})
        self._add({"type": "line", "kind": kind.label, "text": text})

    def frame(self, frame: Frame, stream: str = "") -> None:
        """A printer listener: what HTTP said of a frame as it crossed (secrets masked already).
        `stream`: "starts" for a stream's status and headers, told before its first event (the
        printer records a stream as one frame once it has ended: "" then)."""
        self._add({"type": "frame", "seq": frame.seq, "direction": frame.direction,
                   "method": frame.http_method, "url": mask_body(frame.url, self.held), "status": frame.status,
                   "headers": frame.headers, "pushed_by": frame.sender, "stream": stream,
                   "elapsed_ms": None if frame.elapsed_ms is None else round(frame.elapsed_ms, 1)})

    def _recorded(self, frame: Frame) -> None:
        """A printer listener: the frame recorded (trace.py) and its number kept, as one step (`draw`)."""
        with self.framing:
            self.recorder.frame(frame)  # type: ignore[union-attr]
            self.frame_seqs.append(frame.seq)

    def _stream_head(self, show: Callable[[str, Frame], None]) -> Callable[[str, Frame], None]:
        """The printer's `show`, wrapped: the first line of a stream is shown with a frame of its
        own, its status and headers, which the printer records only when the stream ends. The printer
        shows that line once a stream, so nothing is kept of the streams started (a set of them grew
        for a session's life, keyed by id(frame), which Python gives again once a frame is freed)."""

        def showing(text: str, frame: Frame) -> None:
            if frame.direction == "<--" and not frame.body and \
                    text.startswith(("<-- a stream of events", "<-- 200 a stream of events")):
                self.frame(frame, "starts")
            show(text, frame)
        return showing

    def redraw_after(self, *heard: Any) -> None:
        """A listener after the recorder: the diagram drawn again (drawing.py) once a frame
        crossed, or a line told of a decision or a result; a line of the story draws nothing.
        A drawing reads every record, so drawing at each frame cost a run of n frames n*n/2 records
        read (an agent pushing thousands: minutes of the page's CPU). So the page spends at most a
        tenth of its time drawing: what is heard sooner is drawn a moment later, with all since."""
        story = len(heard) == 3 and heard[1].label in ("story", "banner", "frame") and "event" not in heard[2]
        if story or self.recorder is None or len(self.recorder.records) > drawing.MOST_RECORDS:
            return
        with self.drawing:
            if self.due:  # the drawing due will read this too
                return
            self.due, wait = True, self.drawn_at + 9 * self.drawing_took - time.monotonic()
        if wait <= 0:
            self.draw_due()
        else:
            later = threading.Timer(wait, self.draw_due)
            later.daemon = True
            later.start()

    def draw_due(self) -> None:
        with self.one_drawing:
            with self.drawing:
                if not self.due or self.status is not None:  # drawn already, or at the run's end
                    return
                self.due, began = False, time.monotonic()
            self.draw()
            self.drawn_at = time.monotonic()
            self.drawing_took = self.drawn_at - began

    def draw(self, records: list[dict[str, Any]] | None = None) -> None:
        """The diagram of `records` (else the run's, read with its frames' numbers at once: frames crossing while
        it is drawn would name each arrow by a later frame), the newest event; the one before is dropped (keeping.py)."""
        with self.framing:
            records = self.recorder.resolved() if records is None else records  # type: ignore[union-attr]
            seqs = list(self.frame_seqs)
        self._add(drawing.drawing(records, seqs))

    def before_send(self, frame: Frame) -> None:
        """The printer's hook: the frame is shown; in step mode it leaves only on Send."""
        if self.stopping:
            raise StopRun()
        if not self.step:
            return
        self._add({"type": "held", "seq": frame.seq})
        with self.changed:
            self.changed.wait_for(lambda: self.asked is not None, timeout=STEP_PATIENCE)
            asked, self.asked = self.asked, None
        if asked != "send":  # Stop, or no one said Send in time: nothing more leaves
            raise StopRun()
        self._add({"type": "sent", "seq": frame.seq})

    # -- asked by the page ------------------------------------------------------------------
    def ask(self, what: str) -> None:
        """"send" lets the held frame go; "stop" stops the run before its next frame leaves."""
        with self.changed:
            self.stopping = self.stopping or what == "stop"
            self.asked = what
            self.changed.notify_all()

    def start(self, again: Callable[[list[str], Any], int]) -> None:
        def running() -> None:
            status = 2
            try:
                status = again(self.argv, self)
            except SystemExit as exc:  # a flag the page built was refused: said on the Console
                status = exc.code if isinstance(exc.code, int) else 2
            except Exception as exc:  # a bug of ours: one line on the page, not a traceback
                let_quit(exc)
                self.console.say(f"the run failed: {repr(exc)[:300]}", Kind.ERROR)  # the Console escapes it
            finally:
                self.cleanup()
                self.credentials, self.story = {}, None  # a credential lives as long as its run
                with self.one_drawing:  # the last drawing: one under way ends first, one due after it draws nothing
                    if self.recorder is not None:
                        self.draw()  # drawn once more, whole, at its end
                    with self.changed:
                        self.status = status
                        self.changed.notify_all()
                self._add({"type": "end", "status": status})
        threading.Thread(target=running, name=f"web-run-{self.id}", daemon=True).start()

    @property
    def done(self) -> bool:
        return self.status is not None

    def events_after(self, index: int, timeout: float) -> tuple[int, list[dict[str, Any]]]:
        """(the number of the event before them, the events after the first `index`), waiting up
        to `timeout` for one (keeping.py: a rolling run may have dropped the oldest)."""
        return self.events.after(index, timeout)

    def records(self) -> list[dict[str, Any]]:
        """The run as --trace keeps it (trace.py), for saving and the step-through view."""
        if self.opened is not None:
            return self.opened
        return self.recorder.resolved() if self.recorder is not None else []

    def replay(self, records: list[dict[str, Any]]) -> None:
        """A saved run (a trace file), shown again as --replay prints it: its lines, its trust
        decisions; then it has ended. Its frames are in the step-through view."""
        self.opened = records
        kinds = {kind.label: kind for kind in Kind if kind is not Kind.FRAME}
        for record in records:
            if record["kind"] == "trust":
                self._trust(record)
            elif record["kind"] == "line" and isinstance(record.get("text"), str):
                label = record.get("line")
                kind = kinds.get(label, Kind.FRAME if label == "frame" else Kind.STORY) \
                    if isinstance(label, str) else Kind.STORY
                self._add({"type": "line", "kind": kind.label, "text": escape(record["text"], keep_newlines=True)})
        self.draw(records)
        self.status = 0
        self._add({"type": "end", "status": 0})

    def _trust(self, facts: dict[str, Any]) -> None:
        self._add({"type": "trust", **{key: str(facts.get(key)) for key in ("peer", "endpoint", "verdict", "reason")}})

    def _add(self, event: dict[str, Any]) -> None:
        self.events.add(event)
