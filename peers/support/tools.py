"""The learner tools, attached around a run without changing it: they only hook the
FramePrinter and the Console that main() built.

- `--step` / `--break`: a Stepper as the printer's `before_send` hook (transports/stepping.py).
- `--trace FILE.jsonl` / `--diagram FILE`: a Recorder listening to the printer's frames and
  the Console's lines; the files are written when the run ends, however it ends, so
  nothing recorded is lost (trace.py, diagram.py).
Loaded only when one of them is asked for.
"""
from __future__ import annotations

from contextlib import contextmanager
from types import SimpleNamespace
from typing import Iterator

from peers.support.output import Console
from transports.printer import FramePrinter


@contextmanager
def attached(options: SimpleNamespace, printer: FramePrinter, console: Console,
             card_urls: list[str]) -> Iterator[None]:
    if options.step or options.debugger:
        from transports.stepping import Stepper
        stepper = Stepper(debugger=options.debugger)
        printer.before_send = stepper
        printer.listeners.append(stepper.on_reply)
    if not (options.trace or options.diagram):
        yield
        return
    from peers.support import diagram, trace
    recorder = trace.Recorder(printer.label)
    recorder.event("registry", cards=card_urls)
    printer.listeners.append(recorder.frame)
    console.listeners.append(recorder.line)
    try:
        yield
    finally:
        if options.trace:
            recorder.write(options.trace)
        if options.diagram:
            diagram.write(options.diagram, recorder.resolved())
