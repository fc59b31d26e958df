"""The learner tools, attached around a run without changing it: they only hook the
FramePrinter and the Console that main() built.

- `--step` / `--break`: a Stepper as the printer's `before_send` hook (transports/stepping.py).
- `--trace FILE.jsonl` / `--diagram FILE`: a Recorder listening to the printer's frames and
  the Console's lines; the files are written when the run ends, however it ends, so
  nothing recorded is lost (trace.py, diagram.py).
Loaded only when one of them is asked for.
"""
from __future__ import annotations

from types import SimpleNamespace

from peers.support.output import Console
from transports.printer import FramePrinter


class LearnerTools:
    """Attach with `LearnerTools(options, printer, console, card_urls)`; call `finish()`
    when the run ends, however it ends: it writes the --trace and --diagram files."""

    def __init__(self, options: SimpleNamespace, printer: FramePrinter, console: Console,
                 card_urls: list[str]) -> None:
        self.options, self.console = options, console
        if options.step or options.debugger:
            from transports.stepping import Stepper
            stepper = Stepper(debugger=options.debugger)
            printer.before_send = stepper
            printer.listeners.append(stepper.on_reply)
        self.recorder = None
        if options.trace or options.diagram:
            from peers.support import trace
            self.recorder = trace.Recorder(printer.label, printer.held)
            self.recorder.event("registry", cards=card_urls)
            printer.listeners.append(self.recorder.frame)
            console.listeners.append(self.recorder.line)

    def finish(self) -> str | None:
        """Write the files; None, or why one could not be written (the path was checked
        before the run, but a disk can fill up or a folder vanish meanwhile)."""
        path = self.options.trace
        try:
            if path:
                self.recorder.write(path)
            path = self.options.diagram
            if path:
                from peers.support import diagram
                diagram.write(path, self.recorder.resolved())
                self.console.say(diagram.wrote(path))
        except OSError as exc:  # ENOSPC and its kind carry no file name: ours does
            return f"could not write {path}: {exc.strerror or exc}"
        return None
