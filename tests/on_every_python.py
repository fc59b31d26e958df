"""Run the README's test command under every Python 3.10 to 3.13 this machine has.

    python3 tests/on_every_python.py            # each one found, one after another
    python3 tests/on_every_python.py -k lessons # arguments after the script go to pytest

The README promises Python 3.10+, and the standard library is not the same in each
release (ipaddress's idea of private, datetime.fromisoformat, ssl's errors, json's
messages). This looks for `python3.10` ... `python3.13` on the PATH, then the stock
`/usr/bin/python3`, then interpreters installed by pyenv or uv, and for each one makes a
venv in a temporary folder and runs the suite there in a clean environment (PATH, HOME and
LANG only, as .ci/run does). It prints one line per interpreter, the suite's closing line,
and exits 1 if any failed. It is not itself a test (pytest collects only test_*.py).
"""
import glob
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WANTED = ("3.10", "3.11", "3.12", "3.13")
CLEAN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def candidates() -> list[str]:
    """Interpreter paths to try: on the PATH, the system's, then managers' folders."""
    found = [f"{folder}/python{version}" for folder in os.environ.get("PATH", CLEAN_PATH).split(":")
             for version in WANTED]
    found.append("/usr/bin/python3")
    for pattern in ("~/.pyenv/versions/3.1[0-3]*/bin/python3", "~/.local/share/uv/python/*3.1[0-3]*/bin/python3"):
        found += sorted(glob.glob(os.path.expanduser(pattern)))
    return [path for path in found if os.access(path, os.X_OK)]


def version_of(python: str) -> str | None:
    try:
        done = subprocess.run([python, "-c", "import sys; print(sys.version.split()[0])"],
                              capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def each_release() -> dict[str, str]:
    """Full version -> interpreter, one per distinct full version, 3.10 to 3.13 only."""
    chosen: dict[str, str] = {}
    for python in candidates():
        version = version_of(python)
        if version and version.rsplit(".", 1)[0] in WANTED and version not in chosen:
            chosen[version] = python
    return chosen


def run_suite(python: str, pytest_args: list[str]) -> tuple[int, str, float]:
    """(exit status, pytest's last line, seconds) for the suite under `python`."""
    env = {"PATH": CLEAN_PATH, "HOME": os.environ.get("HOME", "/root"), "LANG": "C.UTF-8"}
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="a2a-every-python-") as folder:
        venv = Path(folder) / "venv"
        made = subprocess.run([python, "-m", "venv", str(venv)], capture_output=True, text=True, env=env, timeout=300)
        if made.returncode != 0:
            return made.returncode, f"no venv: {made.stderr.strip().splitlines()[-1:]}", time.monotonic() - started
        steps = [[str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "pytest"],
                 [str(venv / "bin" / "python"), "tests/run_suite.py", *pytest_args]]
        for step in steps:
            done = subprocess.run(step, cwd=ROOT, capture_output=True, text=True, env=env, timeout=1800)
            if done.returncode != 0:
                break
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    failures = [line for line in lines if line.startswith(("FAILED", "ERROR"))]
    return done.returncode, "\n    ".join(failures[:30] + lines[-1:]), time.monotonic() - started


def main() -> int:
    releases = each_release()
    if not releases:
        print("no Python 3.10 to 3.13 found on this machine")
        return 1
    print(f"found: {', '.join(f'{v} ({p})' for v, p in releases.items())}")
    failed = 0
    for version, python in releases.items():
        status, last, seconds = run_suite(python, sys.argv[1:])
        failed += status != 0
        print(f"{version:8} {'ok    ' if status == 0 else 'FAILED'} {seconds:5.0f} s  {last}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
