"""The learner tools, attached around a run without changing it: they only hook the
FramePrinter and the Console that main() built.

- `--step` / `--break`: a Stepper as the printer's `before_send` hook (transports/stepping.py).
- `--trace FILE.jsonl` / `--diagram FILE`: a Recorder listening to the printer's frames and
  the Console's lines; the files are written when the run ends, however it ends, so
  nothing recorded is lost (trace.py, diagram.py).
- `--replay FILE.jsonl`: a saved run's lines printed again, and its files written from it.
The trace only records and the diagram only draws: deciding to draw after a run, and which
drawing a file's name asks for (`.svg`, `.mmd`, or the step-through page, page.py), is here.
Loaded only when one of them is asked for.
"""
from __future__ import annotations

import os

from peers.support.output import Console, Kind
from transports.escaping import escape
from transports.printer import FramePrinter

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable, Protocol
else:  # an interface below is a documented class at run time, and typing's Protocol to a checker
    Protocol = object


class Settings(Protocol):
    """What the learner tools read of a run's settings (the command line's record has it)."""

    step: bool  # --step
    debugger: bool  # --break
    trace: str | None  # --trace FILE
    diagram: str | None  # --diagram FILE


class LearnerTools:
    """Attach with `LearnerTools(settings, printer, console, card_urls)`; call `finish()`
    when the run ends, however it ends: it writes the --trace and --diagram files; and
    `cut_short()` if a Ctrl-C ends the run before they are written."""

    def __init__(self, settings: Settings, printer: FramePrinter, console: Console,
                 card_urls: list[str]) -> None:
        self.settings, self.console = settings, console
        self.unwritten = [path for path in (settings.trace, settings.diagram) if path]  # until each is whole
        if settings.step or settings.debugger:
            from transports.stepping import Stepper
            stepper = Stepper(debugger=settings.debugger)
            printer.before_send = stepper
            printer.listeners.append(stepper.on_reply)
        self.recorder = None
        if settings.trace or settings.diagram:
            from peers.support.learner import trace
            self.recorder = trace.Recorder(printer.label, printer.held)
            self.recorder.event("registry", cards=card_urls)
            printer.listeners.append(self.recorder.frame)
            console.listeners.append(self.recorder.line)

    def finish(self) -> str | None:
        """Write the files; None, or why one could not be written (the path was checked
        before the run, but a disk can fill up or a folder vanish meanwhile)."""
        try:
            if self.settings.trace:
                self.recorder.write(self.settings.trace)
                self.unwritten.remove(self.settings.trace)
            if self.settings.diagram:
                write_diagram(self.settings.diagram, self.recorder.resolved())
                self.unwritten.remove(self.settings.diagram)
        except OSError as exc:  # ENOSPC and its kind carry no file name: ours does
            unwritten, self.unwritten = self.unwritten, []  # said here: no Ctrl-C cut it short
            return f"could not write {unwritten[0]}: {exc.strerror or exc}"
        if self.settings.diagram:
            self.console.say(wrote_diagram(self.settings.diagram))
        return None

    def cut_short(self) -> None:
        """A Ctrl-C (most often a second one) ended the run before its files were written whole: while
        they were (a pipe may block), or on the way there. It ends the run, but not silently: said by
        `telling`, which it passes wherever it came from the story's end on, in `finish` or before its
        `try` (at its call, the line listing the files), where it once went unsaid."""
        if self.unwritten:
            self.console.say(f"stopped while writing: {' and '.join(self.unwritten)} not written, or not whole",
                             Kind.ERROR)


def replay(records: list[dict[str, Any]], say: Callable[..., None], settings: Settings) -> int:
    """Print the recorded lines again, each as the kind of line it was; then write the
    --trace and --diagram files from the same records, if asked. Returns the exit status."""
    from peers.support.learner import trace
    kinds = {kind.label: kind for kind in Kind if kind is not Kind.FRAME}
    unknown = {record["kind"] for record in records if record["kind"] not in trace.KINDS}
    if unknown:  # a newer workbench's, or an edited file's: what is known is shown, the rest named
        skipped = sum(record["kind"] in unknown for record in records)
        say(f"skipping {skipped} record{'s' * (skipped != 1)} of a kind this workbench does not know: "
            f"{', '.join(sorted(escape(kind[:40]) for kind in unknown)[:5])}", Kind.WARNING)
    for record in records:
        if record["kind"] == "line" and isinstance(record.get("text"), str):
            kind = kinds.get(record.get("line"), Kind.STORY) if isinstance(record.get("line"), str) \
                else Kind.STORY
            say(escape(record["text"], keep_newlines=True), kind)  # a trace file is input too
    try:
        if settings.trace:
            trace.write(settings.trace, records)
        if settings.diagram:
            write_diagram(settings.diagram, records)
            say(wrote_diagram(settings.diagram))
    except OSError as exc:
        say(f"could not write {exc.filename}: {exc.strerror or exc}", Kind.ERROR)
        return 2
    return 0


def write_diagram(path: str, records: list[dict[str, Any]]) -> None:
    """The run drawn as the file's name asks: .svg or .mmd (diagram.py), .html (page.py)."""
    # As the flag's check reads it: a name's ending (splitext takes ".svg" for a name, no suffix)
    suffix = next((end for end in (".svg", ".html", ".mmd") if path.lower().endswith(end)), "")
    if suffix == ".html":
        from peers.support.learner import page
        text = page.page(records)
    elif suffix in (".svg", ".mmd"):
        from peers.support.learner import diagram
        text = diagram.svg(records) if suffix == ".svg" else diagram.mermaid(records)
    else:
        raise ValueError(f"{path}: the diagram is written as .svg, .html or .mmd")
    from transports.named_files import open_to_write
    with open_to_write(path) as out:
        out.write(text)


def wrote_diagram(path: str) -> str:
    """What is said once the diagram is written: where it is, and how to look at it."""
    how = "open it in a browser" if path.lower().endswith((".html", ".svg")) else "paste it into a Mermaid viewer"
    return f"[diagram] wrote {os.path.abspath(path)}: {how}"
