#!/usr/bin/env python3
"""How many pdb commands a learner needs to watch the default run's frames cross.

From the start of `python3 -m pdb a2a_delegation.py` (pdb stopped at the story's first line),
the fewest `s`, `n` and `r` commands (one a line typed, no breakpoints) that reach:

  1. the first request frame: the first line of the FramePrinter method that sends the
     first request (the card GET: `FramePrinter.get`; `send` if a GET ever goes there);
  2. tasks/send: the first line of `FramePrinter.send` with the tasks/send request;
  3. its reply: the next line of that `send`, the inner transport's response in hand.

How: a child runs the story as `python3 -m pdb` does (pdb's own runner: the same frames,
the same modules already loaded), recording every call, line, return and exception event
with its frame, up to target 3. A pdb stop is an event; from each, `s`, `n` and `r` lead
to the event where bdb (3.10-3.13) stops next, by its stop_here and dispatch_* rules
replayed over the record (`s` stops at --Call--; `n` at a --Return-- steps; `r` there stops
at the caller's next line; a generator's calls and returns are skipped unless stepping).
Stops only move forward, so one pass in event order finds the fewest. Then each path is
VERIFIED: typed into a real `python3 -m pdb a2a_delegation.py`, every stop pdb reports
must be the one predicted, then `where` and a `p` of what the target holds. "files" are
those the path stops in: the story should leave its own only for the printer and the
transports (transports/).   python3 bench/learner_path.py [--json]
"""
import argparse
import heapq
import json
import marshal
import os
import re
import subprocess
import sys
import tempfile
from bisect import bisect_right
from itertools import islice
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STORY = "a2a_delegation.py"
TRANSPORTS = "transports/"  # the printer, and the transports around it and beneath it
TARGETS = ("first request frame", "tasks/send", "its reply")
PROBES = ("p url", "p request.body[:60]", "p response.status")  # what each target holds, printed by pdb
DEADLINE = 300  # seconds for each child: the traced run, then pdb

# Runs in the child, in a namespace of its own (pdb clears __main__'s). Loads what `python3 -m
# pdb` has loaded (getopt, runpy, pdb, readline) so the story imports exactly what it would.
RECORDER = r'''
import bdb, getopt, itertools, marshal, os, pdb, runpy, sys
GEN, out, root, numbers = bdb.GENERATOR_AND_COROUTINE_FLAGS, sys.argv[1], os.getcwd(), itertools.count(1)
PRINTER = os.path.join(root, "transports", "printer.py")
events, codes, code_ix, tokens, alive, targets = [], [], {}, {}, [], [None, None, None, None]
def dump():
    with open(out, "wb") as f:
        marshal.dump((events, codes, targets), f)
class Recorder(pdb.Pdb):
    def trace_dispatch(self, frame, event, arg):
        code, tok, extra = frame.f_code, tokens.get(id(frame)), 0
        if event == "call":
            if tok is None:
                tok = tokens[id(frame)] = next(numbers)
                if code.co_flags & GEN:  # a generator's frame is resumed: keep its id from being reused
                    alive.append(frame)
            if code not in code_ix:
                code_ix[code] = len(codes)
                codes.append((code.co_filename, code.co_name, bool(code.co_flags & GEN)))
            extra = (tokens.get(id(frame.f_back), -1), code_ix[code])
        elif event == "exception":  # 1: a generator's internal StopIteration; 2: a generator's end
            extra = (1 if code.co_flags & GEN and arg[0] is StopIteration and arg[2] is None else 0) \
                | (2 if arg[0] in (StopIteration, GeneratorExit) else 0)
        events.append((event[0], tok, frame.f_lineno, extra))
        if event == "line" and code.co_filename == PRINTER and code.co_name in ("get", "send") \
                and events[-2][:2] == ("c", tok):  # the first line of the printer's get or send
            body, mro = getattr(frame.f_locals.get("request"), "body", b""), type(frame.f_locals.get("self")).__mro__
            if any(c.__name__ == "FramePrinter" for c in mro):
                targets[0] = len(events) - 1 if targets[0] is None else targets[0]
                if code.co_name == "send" and targets[1] is None and b'"tasks/send"' in bytes(body):
                    targets[1], targets[3] = len(events) - 1, tok
        elif event == "line" and tok == targets[3] and "response" in frame.f_locals:
            targets[2] = len(events) - 1
            os._exit(dump() or 0)
        if event == "return" and not code.co_flags & GEN:
            tokens.pop(id(frame), None)
        if len(events) > 5_000_000:  # bounded: the targets moved out of reach
            os._exit(dump() or 3)
        return self.trace_dispatch
try:
    if hasattr(pdb, "_ScriptTarget"):  # 3.11+: pdb.main()'s own steps
        target = pdb._ScriptTarget("a2a_delegation.py")
        getattr(target, "check", lambda: None)()  # 3.13 checks when it is made
        sys.argv[:] = ["a2a_delegation.py"]
        Recorder()._run(target)
    else:  # 3.10
        sys.argv[:], sys.path[0] = ["a2a_delegation.py"], root
        Recorder()._runscript(os.path.realpath("a2a_delegation.py"))
finally:
    dump()
'''


def record() -> tuple[list, list, list]:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "events")
        boot = "import sys; exec(sys.argv.pop(1), {'__name__': 'recorder', '__builtins__': __builtins__})"
        done = subprocess.run([sys.executable, "-c", boot, RECORDER, out], cwd=ROOT, stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=DEADLINE)
        if not os.path.exists(out):
            raise SystemExit(f"learner_path: the traced run failed: {done.stderr.strip()[-300:]}")
        with open(out, "rb") as f:
            return marshal.load(f)


class Trace:
    """The recorded events, and where bdb stops next after each command."""

    def __init__(self, events: list, codes: list) -> None:
        self.ev, self.codes, self.code_of, self.parent = events, codes, {}, {}
        self.act, current = [], {}  # act[j]: the call event that began event j's activation
        self.of_frame: dict[int, list[int]] = {}  # each frame's events, in order
        self.ends_generator = []  # StopIteration or GeneratorExit: where bdb may stop a generator's `n`/`r`
        for j, (kind, tok, _, extra) in enumerate(events):
            if kind == "c":
                current[tok], self.parent[j], self.code_of[tok] = j, extra[0], extra[1]
            self.act.append(current.get(tok, -1))
            self.of_frame.setdefault(tok, []).append(j)
            if kind == "e" and extra & 2:
                self.ends_generator.append(j)

    def gen(self, tok: int | None) -> bool:
        return tok in self.code_of and self.codes[self.code_of[tok]][2]

    def where(self, j: int) -> tuple[str, int, str]:
        filename, name, _ = self.codes[self.code_of[self.ev[j][1]]]
        return os.path.relpath(filename, ROOT), self.ev[j][2], name

    def advance(self, i: int, cmd: str) -> int | None:
        kind, frame = self.ev[i][0], self.ev[i][1]
        if cmd == "s":
            stopframe, returnframe, stopline = None, None, 0
        elif cmd == "n":
            stopframe, returnframe, stopline = frame, None, 0
        elif self.gen(frame):
            stopframe, returnframe, stopline = frame, None, -1
        else:
            stopframe, returnframe, stopline = self.parent.get(self.act[i], -1), frame, 0
        if kind == "r" and stopframe == frame and stopline != -1:  # dispatch_return: `n` at --Return-- steps
            stopframe = returnframe = None
        if stopframe is None:  # stepping: the next event, but a generator's internal StopIteration
            j = i + 1
            while j < len(self.ev) and self.ev[j][0] == "e" and self.ev[j][3] & 1:
                j += 1
            return j if j < len(self.ev) else None
        # Otherwise bdb's stop_here holds only in the stop frame: a stop can only be an event of
        # it or of the returning frame, or (a generator's) StopIteration in a frame already traced.
        lists = [self.of_frame.get(t, []) for t in {stopframe, returnframe} if t is not None]
        lists += [self.ends_generator] if self.gen(stopframe) else []
        for j in heapq.merge(*(islice(lst, bisect_right(lst, i), None) for lst in lists)):
            kind, y, _, extra = self.ev[j]
            here = y == stopframe and stopline != -1
            if kind == "l" and here or kind == "r" and (here or y == returnframe) and not self.gen(y):
                return j
            if kind == "e" and (here and not extra & 1 or y != stopframe and self.gen(stopframe) and extra & 2
                                and self.act[j] <= i):
                return j
        return None


def fewest(trace: Trace, start: int, target: int) -> list[tuple[str, int]]:
    """The fewest commands from `start` to `target`, as (command, stop) pairs."""
    best = {start: (0, -1, "")}
    for i in range(start, target):  # every command moves forward in the record: one pass
        if i in best:
            for cmd in "nsr":
                j = trace.advance(i, cmd)
                if j is not None and j <= target and (j not in best or best[j][0] > best[i][0] + 1):
                    best[j] = (best[i][0] + 1, i, cmd)
    if target not in best:
        raise SystemExit(f"learner_path: no s/n/r path reaches event {target}")
    path, j = [], target
    while j != start:
        path.append((best[j][2], j))
        j = best[j][1]
    return path[::-1]


STOP = re.compile(r"^> (.+?)\((\d+)\)([^\s()]+)\(\)", re.M)


def verify(trace: Trace, start: int, path: list[tuple[str, int]], probe: str) -> tuple[bool, str]:
    """Type the commands into real pdb; every stop must be the one predicted."""
    commands = [cmd for cmd, _ in path] + ["where", probe, "q"]
    done = subprocess.run([sys.executable, "-m", "pdb", STORY], cwd=ROOT, input="\n".join(commands) + "\n",
                          capture_output=True, text=True, timeout=DEADLINE)
    chunks = done.stdout.split("(Pdb) ")
    for k, j in enumerate([start] + [stop for _, stop in path]):
        seen = STOP.findall(chunks[k]) if k < len(chunks) else []
        got = (os.path.relpath(seen[-1][0], ROOT), int(seen[-1][1]), seen[-1][2]) if seen else None
        if got != trace.where(j):
            return False, f"after {k} commands pdb stopped at {got}, predicted {trace.where(j)}"
    n = len(path)
    last = STOP.findall(chunks[n + 1]) if len(chunks) > n + 2 else []
    if not last or (os.path.relpath(last[-1][0], ROOT), int(last[-1][1])) != trace.where(path[-1][1])[:2]:
        return False, "`where` does not end at the predicted frame"
    return True, chunks[n + 2].strip().splitlines()[0] if chunks[n + 2].strip() else ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    as_json = parser.parse_args().json
    try:
        return measure(as_json)
    except subprocess.TimeoutExpired as late:  # the traced run or pdb
        raise SystemExit(f"learner_path: no answer within {late.timeout:g}s from {late.cmd[1]}") from None


def measure(as_json: bool) -> int:
    events, codes, targets = record()
    if None in targets[:3]:
        raise SystemExit(f"learner_path: the run never reached target {targets.index(None) + 1}")
    trace = Trace(events, codes)
    story = str(ROOT / STORY)
    start = next(j for j, e in enumerate(events) if e[0] == "l" and e[2] > 0
                 and trace.codes[trace.code_of[e[1]]][0] == story)
    rows = []
    for name, target, probe in zip(TARGETS, targets, PROBES):
        path = fewest(trace, start, target)
        files = list(dict.fromkeys(trace.where(j)[0] for j in [start] + [stop for _, stop in path]))
        ok, shown = verify(trace, start, path, probe)
        rows.append({"target": name, "at": "{}:{} {}".format(*trace.where(target)), "commands": len(path),
                     **{cmd: sum(c == cmd for c, _ in path) for cmd in "snr"},
                     "files": files, "only_story_printer_transport": all(f == STORY or f.startswith(TRANSPORTS) for f in files),
                     "verified": ok, "pdb_says": shown, "path": "".join(c for c, _ in path)})
    if as_json:
        print(json.dumps({"python": sys.version.split()[0], "events": len(events), "targets": rows}, indent=2))
    else:
        print(f"pdb from `python3 -m pdb {STORY}`, fewest s/n/r commands (Python {sys.version.split()[0]})\n"
              f"{'target':<20} {'commands':>8} {'s':>4} {'n':>4} {'r':>4}  verified  files stopped in")
        for row in rows:
            print(f"{row['target']:<20} {row['commands']:>8} {row['s']:>4} {row['n']:>4} {row['r']:>4}  "
                  f"{'yes' if row['verified'] else 'NO':<8}  {', '.join(row['files'])}")
        print("\n".join(f"  {row['target']}: stops at {row['at']}; pdb: {row['pdb_says']}" for row in rows))
    return 0 if all(row["verified"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
