#!/usr/bin/env python3
"""Start-up cost of the default run, beside two baselines on the same interpreter.

Target: `python a2a_delegation.py` costs at most 2x the CPU time of
`python -c 'import json'` (the least a program that reads two JSON files must load), and
peaks under 20 MB. `python -c pass` is shown too. Runs are interleaved, so machine noise
hits all three alike; medians of --runs runs each; bytecode is cached (a first run
writes it), as it is for anyone who runs the workbench twice.

Measure with a fresh venv's interpreter, not a pyenv shim or a Python whose `site`
imports a lot: those inflate both baselines and hide the real ratio.
    python -m venv /tmp/v && /tmp/v/bin/python bench/startup.py

CPU time moves with whatever else the machine does; `--instructions` also counts the
instructions each case executes under valgrind's callgrind (when valgrind is installed):
the same count run after run, so two commits can be compared on a busy machine. Its
target: at most 2.5x `import json`.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
JSON = "python -c 'import json'"  # the baseline the target is written in
CASES = {"python -c pass": ["-c", "pass"], JSON: ["-c", "import json"],
         "a2a_delegation.py": ["a2a_delegation.py"]}


def one_run(args: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(CPU ms, wall ms) of one child run. CPU is user + system time, from rusage."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], stdout=subprocess.DEVNULL, env=env, cwd=cwd, check=True)
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return cpu, wall


def instructions(args: list[str], env: dict[str, str], cwd: Path) -> int | None:
    """Instructions one run executes, counted by callgrind; None without valgrind."""
    if shutil.which("valgrind") is None:
        return None
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, *args],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd,
                          check=True, timeout=600)
    refs = [line for line in done.stderr.splitlines() if "I   refs:" in line or "I refs:" in line]
    return int(refs[-1].split(":")[1].replace(",", "")) if refs else None


def peak_rss_mb(args: list[str], env: dict[str, str], cwd: Path) -> float:
    """Peak resident memory of one child run (ru_maxrss of a fresh helper process)."""
    probe = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL);"
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", probe, sys.executable, *args], capture_output=True,
                         text=True, env=env, cwd=cwd, check=True, timeout=60).stdout
    return int(out) / 1024  # Linux reports KiB


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=41)
    parser.add_argument("--instructions", action="store_true", help="also count instructions (valgrind)")
    options = parser.parse_args()
    runs = options.runs
    in_venv = sys.prefix != sys.base_prefix
    print(f"interpreter: {sys.executable} (Python {sys.version.split()[0]}"
          f"{', a venv' if in_venv else ', NOT a venv: baselines may be inflated'})")
    with tempfile.TemporaryDirectory() as tmp:  # a clean copy: no stale bytecode
        copy = Path(tmp) / "wb"
        shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".git", "__pycache__", ".sdk", ".venv"))
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        for args in CASES.values():
            one_run(args, env, copy)  # the first run writes the bytecode
        cpu: dict[str, list[float]] = {name: [] for name in CASES}
        wall: dict[str, list[float]] = {name: [] for name in CASES}
        for _ in range(runs):
            for name, args in CASES.items():
                used, took = one_run(args, env, copy)
                cpu[name].append(used)
                wall[name].append(took)
        json_cpu = statistics.median(cpu[JSON])
        for name in CASES:
            print(f"{name:<26} cpu {statistics.median(cpu[name]):6.1f} ms   "
                  f"wall {statistics.median(wall[name]):6.1f} ms")
        run_cpu = statistics.median(cpu["a2a_delegation.py"])
        peak = peak_rss_mb(CASES["a2a_delegation.py"], env, copy)
        verdict = "meets the target" if run_cpu <= 2 * json_cpu and peak < 20 else "OVER TARGET"
        print(f"default run: {run_cpu / json_cpu:.2f}x the CPU of `import json`, "
              f"{run_cpu / statistics.median(cpu['python -c pass']):.2f}x `pass`, peak {peak:.1f} MB "
              f"-> {verdict} (<= 2x `import json`, < 20 MB), medians of {runs} runs")
        if options.instructions:
            counts = {name: instructions(args, env, copy) for name, args in CASES.items()}
            if None in counts.values():
                print("instructions: valgrind is not installed")
            else:
                for name, count in counts.items():
                    print(f"{name:<26} {count:>13,} instructions")
                ratio = counts["a2a_delegation.py"] / counts[JSON]
                print(f"default run: {ratio:.2f}x the instructions of `import json` -> "
                      f"{'meets' if ratio <= 2.5 else 'MISSES'} (<= 2.5x, issue 36)")


if __name__ == "__main__":
    main()
