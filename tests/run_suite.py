"""The whole suite, in two halves at once: `python tests/run_suite.py` (the README's test command).

The suite mostly waits: on deadlines it proves are kept, on servers it starts, on a browser,
on peers that drip or hang, and about half its time is a core doing nothing. So the test
files are split in two halves of about equal time (WEIGHTS: each file's seconds when last
weighed) and two pytest processes run them at once, each with its own temporary folder and
its own browser; a test never shares a server, a port or a file with the other half. The
first half's output is shown as it comes, then the second's, then one line for both
(`suite: N passed, N failed, N skipped`); the exit status is pytest's, the worse of the two.
With arguments (files, -k, -x ...) it is plain pytest, once, as asked: the halves are for
the whole suite. Refresh WEIGHTS, when files grow or move, from
`python -m pytest --durations=0` (the seconds summed per file); a file not named counts as
DEFAULT seconds. Not a plugin: pytest alone runs every test file as well, one after another.
"""
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
WEIGHTS = {"test_readme": 12, "test_live_page_in_chromium": 11, "test_resource_attacks": 10,
           "test_server_hardening": 10, "test_lessons": 9, "test_network_client": 7, "test_push": 7,
           "test_hostile_peers": 6, "test_durable": 5, "test_diagrams_say_what_the_terminal_says": 5,
           "test_stream_resume": 4, "test_streaming": 4, "test_cli_edges": 4, "test_frame_summaries": 3,
           "test_connection_cap": 3, "test_auth_client": 3, "test_live_page_server": 3, "test_serving_edges": 3,
           "test_rest_routes": 4, "test_head_requests": 1, "test_served_cards": 5, "test_rest_server": 2,
           "test_hostile_replies": 2,
           "test_learner_tools": 2, "test_live_page_any_agent": 2}
DEFAULT = 1.0
COUNTED = ("passed", "failed", "skipped", "errors", "error")


def halves(files: list[Path]) -> tuple[list[Path], list[Path]]:
    """The files in two lists of about equal weight: each, heaviest first, to the lighter one."""
    split: tuple[list[Path], list[Path]] = ([], [])
    load = [0.0, 0.0]
    for path in sorted(files, key=lambda path: (-WEIGHTS.get(path.stem, DEFAULT), path.name)):
        lighter = load.index(min(load))
        split[lighter].append(path)
        load[lighter] += WEIGHTS.get(path.stem, DEFAULT)
    return sorted(split[0]), sorted(split[1])


def counts(output: str) -> dict[str, int] | None:
    """What pytest's closing line counted ({"passed": 921, "skipped": 6, ...}); None if the
    output has none (the half died, or was cut off, before it could say)."""
    closing = next((line for line in reversed(output.splitlines())
                    if re.fullmatch(r"=* ?(\d+ [a-z]+(, )?)+ in [\d.]+s( \([\d:]+\))? ?=*", line.strip())), None)
    if closing is None:
        return None
    found = {word: int(number) for number, word in re.findall(r"(\d+) ([a-z]+)", closing.split(" in ")[0])}
    found["failed"] = found.get("failed", 0) + found.pop("errors", 0) + found.pop("error", 0)
    return found


def worst(statuses: list[int]) -> int:
    """pytest's exit status for the two: a failure (1) or trouble (2-4) over all passed (0) over
    no tests collected (5)."""
    trouble = [status for status in statuses if status not in (0, 5)]
    return max(trouble) if trouble else 0 if 0 in statuses else 5


def main(args: list[str]) -> int:
    pytest = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider"]
    if args:
        return subprocess.run(pytest + args, cwd=HERE.parent).returncode
    started = time.monotonic()
    first, second = halves(sorted(HERE.glob("test_*.py")))
    with tempfile.TemporaryDirectory(prefix="a2a-suite-") as folder, \
            tempfile.TemporaryFile("w+", encoding="utf-8") as later:
        shown = subprocess.Popen(pytest + [f"--basetemp={folder}/first", *map(str, first)], cwd=HERE.parent,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        kept = subprocess.Popen(pytest + [f"--basetemp={folder}/second", *map(str, second)], cwd=HERE.parent,
                                stdout=later, stderr=subprocess.STDOUT)
        first_output, interrupted = [], False
        try:
            for line in shown.stdout:  # shown as it comes, and kept for its count
                print(line, end="", flush=True)
                first_output.append(line)
            statuses = [shown.wait(), kept.wait()]
        except KeyboardInterrupt:  # both halves are stopped as Ctrl-C stops pytest; the second says where it was
            interrupted = True
            statuses = [stopped(shown), stopped(kept)]
        later.seek(0)
        second_output = later.read()
    print(f"\n-- the second half, run at the same time ({len(second)} of {len(first) + len(second)} files):")
    print(second_output, end="")
    found = [counts("".join(first_output)), counts(second_output)]
    for number, (half, status) in enumerate(zip(found, statuses), 1):
        if half is None:  # no closing line: it died, or was stopped, before it could count
            print(f"\nhalf {number} ended without pytest's closing line (exit status {status})")
    total = [f"{sum((half or {}).get(word, 0) for half in found)} {word}" for word in ("passed", "failed", "skipped")]
    print(f"\nboth halves at once: {time.monotonic() - started:.1f} s")
    print("suite: " + ", ".join(total), flush=True)
    if interrupted:
        return 130
    return worst(statuses) if None not in found else max(1, worst(statuses))


def stopped(process: subprocess.Popen) -> int:
    """A half's exit status, stopped as Ctrl-C stops pytest (its summary says where it was);
    killed if it has not ended in 10 s."""
    try:
        process.send_signal(signal.SIGINT)
        return process.wait(timeout=10)
    except (subprocess.TimeoutExpired, KeyboardInterrupt):
        process.kill()
        return process.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
