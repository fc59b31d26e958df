"""The whole suite, in five parts at once: `python tests/run_suite.py` (the README's test command).

The suite mostly waits: on deadlines it proves are kept, on servers it starts, on a browser, on
peers that drip or hang, and about a third of the cores' time goes unused. So the test files are
split in PARTS parts of about equal time (WEIGHTS, from suite_weights.json: each file's seconds
when last weighed, its tests' durations as the parts ran at once (averaged over runs), so that a
file slowed by sharing the cores, as a browser's are, weighs what it costs here) and as many
pytest processes run them at once, each with its own temporary folder and its own browser; a
test never shares a server, a port or a file with another part. Five on two cores: each part
waits more than half the time, so the whole suite took 100 s in three parts, 94 s in four and
83-99 s in five, measured one after another (six gained no more). The first part's output is
shown as it comes, then each other's, then one line for all (`suite: N passed, N failed, N skipped`); the exit status is pytest's, the worst of them.
With arguments (files, -k, -x ...) it is plain pytest, once, as asked: the parts are for the
whole suite. Refresh suite_weights.json, when files grow or move, from a run of the parts with
`--durations=0`: each file's tests' seconds summed, plus a tenth for its import; a file not
named counts as DEFAULT seconds. Not a plugin: pytest alone runs every test file as well, one
after another.
"""
import contextlib
import json
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PARTS = 5
WEIGHTS = json.loads((HERE / "suite_weights.json").read_text())  # file stem -> seconds, as the parts ran at once
DEFAULT = 0.3
COUNTED = ("passed", "failed", "skipped", "errors", "error")


def parts(files: list[Path], number: int = PARTS) -> list[list[Path]]:
    """The files in `number` lists of about equal weight: each, heaviest first, to the lightest."""
    split: list[list[Path]] = [[] for _ in range(number)]
    load = [0.0] * number
    for path in sorted(files, key=lambda path: (-WEIGHTS.get(path.stem, DEFAULT), path.name)):
        lightest = load.index(min(load))
        split[lightest].append(path)
        load[lightest] += WEIGHTS.get(path.stem, DEFAULT)
    return [sorted(part) for part in split]


def counts(output: str) -> dict[str, int] | None:
    """What pytest's closing line counted ({"passed": 921, "skipped": 6, ...}); None if the
    output has none (the part died, or was cut off, before it could say)."""
    closing = next((line for line in reversed(output.splitlines())
                    if re.fullmatch(r"=* ?(\d+ [a-z]+(, )?)+ in [\d.]+s( \([\d:]+\))? ?=*", line.strip())), None)
    if closing is None:
        return None
    found = {word: int(number) for number, word in re.findall(r"(\d+) ([a-z]+)", closing.split(" in ")[0])}
    found["failed"] = found.get("failed", 0) + found.pop("errors", 0) + found.pop("error", 0)
    return found


def worst(statuses: list[int]) -> int:
    """pytest's exit status for them all: a failure (1) or trouble (2-4) over all passed (0) over
    no tests collected (5)."""
    trouble = [status for status in statuses if status not in (0, 5)]
    return max(trouble) if trouble else 0 if 0 in statuses else 5


def main(args: list[str]) -> int:
    pytest = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider"]
    if args:
        return subprocess.run(pytest + args, cwd=HERE.parent).returncode
    started = time.monotonic()
    split = parts(sorted(HERE.glob("test_*.py")))
    with tempfile.TemporaryDirectory(prefix="a2a-suite-") as folder, contextlib.ExitStack() as files:
        kept = [files.enter_context(tempfile.TemporaryFile("w+", encoding="utf-8")) for _ in split[1:]]
        shown = subprocess.Popen(pytest + [f"--basetemp={folder}/part1", *map(str, split[0])], cwd=HERE.parent,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        others = [subprocess.Popen(pytest + [f"--basetemp={folder}/part{number}", *map(str, part)],
                                   cwd=HERE.parent, stdout=out, stderr=subprocess.STDOUT)
                  for number, (part, out) in enumerate(zip(split[1:], kept), 2)]
        outputs, interrupted = [[]], False
        try:
            for line in shown.stdout:  # shown as it comes, and kept for its count
                print(line, end="", flush=True)
                outputs[0].append(line)
            statuses = [shown.wait()] + [process.wait() for process in others]
        except KeyboardInterrupt:  # every part is stopped as Ctrl-C stops pytest; each says where it was
            interrupted = True
            statuses = [stopped(process) for process in [shown, *others]]
        for out in kept:
            out.seek(0)
            outputs.append(out.read())
    for number, (part, output) in enumerate(zip(split[1:], outputs[1:]), 2):
        print(f"\n-- part {number}, run at the same time ({len(part)} of {sum(map(len, split))} files):")
        print(output, end="")
    found = [counts("".join(output)) for output in outputs]
    for number, (part, status) in enumerate(zip(found, statuses), 1):
        if part is None:  # no closing line: it died, or was stopped, before it could count
            print(f"\npart {number} ended without pytest's closing line (exit status {status})")
    total = [f"{sum((part or {}).get(word, 0) for part in found)} {word}" for word in ("passed", "failed", "skipped")]
    print(f"\nall {len(split)} parts at once: {time.monotonic() - started:.1f} s")
    print("suite: " + ", ".join(total), flush=True)
    if interrupted:
        return 130
    return worst(statuses) if None not in found else max(1, worst(statuses))


def stopped(process: subprocess.Popen) -> int:
    """A part's exit status, stopped as Ctrl-C stops pytest (its summary says where it was);
    killed if it has not ended in 10 s."""
    try:
        process.send_signal(signal.SIGINT)
        return process.wait(timeout=10)
    except (subprocess.TimeoutExpired, KeyboardInterrupt):
        process.kill()
        return process.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
