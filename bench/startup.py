#!/usr/bin/env python3
"""Start-up cost of the default run, side by side with a bare interpreter.

Target (issue 2): `python a2a_delegation.py` takes at most 1.5x the wall time of
`python -c pass` on the same interpreter, and peaks under 20 MB. Both are measured here,
interleaved so machine noise hits both alike; medians of --runs runs each.

With PYTHONDONTWRITEBYTECODE set, Python recompiles every module on every run; the
benchmark reports both that case and the usual one (bytecode cached after a first run).
Run from the project root:  python bench/startup.py [--runs 41]
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def wall_ms(args: list[str], env: dict[str, str], cwd: Path) -> float:
    # No timeout here: with one, subprocess waits by polling with growing sleeps, which
    # rounds every measurement up to tens of milliseconds.
    start = time.perf_counter()
    subprocess.run(args, stdout=subprocess.DEVNULL, env=env, cwd=cwd, check=True)
    return (time.perf_counter() - start) * 1000


def peak_rss_mb(args: list[str], env: dict[str, str], cwd: Path) -> float:
    """Peak resident memory of one child run (ru_maxrss of a fresh helper process)."""
    probe = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL);"
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True,
                         env=env, cwd=cwd, check=True, timeout=60).stdout
    return int(out) / 1024  # Linux reports KiB


def measure(label: str, env: dict[str, str], cwd: Path, runs: int) -> None:
    bare, run = [], []
    for _ in range(runs):
        bare.append(wall_ms([sys.executable, "-c", "pass"], env, cwd))
        run.append(wall_ms([sys.executable, "a2a_delegation.py"], env, cwd))
    b, r = statistics.median(bare), statistics.median(run)
    mem = peak_rss_mb([sys.executable, "a2a_delegation.py"], env, cwd)
    verdict = "ok" if r <= 1.5 * b and mem < 20 else "OVER TARGET"
    print(f"{label:<34} bare {b:6.1f} ms   run {r:6.1f} ms   ratio {r / b:4.2f}   "
          f"peak {mem:5.1f} MB   {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=41)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as tmp:  # a clean copy: no stale bytecode
        copy = Path(tmp) / "wb"
        shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".git", "__pycache__"))
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        measure("bytecode not cached (every run)", env, copy, runs)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        wall_ms([sys.executable, "a2a_delegation.py"], env, copy)  # the first run writes .pyc
        measure("bytecode cached (second run on)", env, copy, runs)


if __name__ == "__main__":
    main()
