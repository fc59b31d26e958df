"""Standard output or error may be a file on a full disk (/dev/full here), closed by the shell (`>&-`), or a terminal
whose encoding is not UTF-8 (LC_ALL=C with Python's UTF-8 mode off: ASCII), and standard input may be closed (`<&-`).
Whatever of these a run meets, it ends with one line saying so (or none, where there is nowhere to say it), never a
traceback, and the --trace it was asked for is still written; what a peer says in letters the terminal cannot show is
shown escaped.

A hostile round's findings: each of these was a traceback (an OSError, an AttributeError on None, a
UnicodeEncodeError mid-run, RuntimeError "input(): lost sys.stdin")."""
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT, OutsidePeer, agent_card, outside_peer

STORY = str(ROOT / "a2a_delegation.py")


def run(*args, stdout, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, env=None, closing=""):
    """The story as a process, `closing` naming the shell redirections that close a stream (`>&-`)."""
    command = [sys.executable, STORY, *args]
    if closing:
        command = ["sh", "-c", 'exec "$@" ' + closing, "sh", *command]
    return subprocess.run(command, cwd=ROOT, stdin=stdin, stdout=stdout, stderr=stderr, timeout=60, env=env)


@pytest.mark.parametrize("flags", [[], ["--quiet"], ["--scenario", "outcomes"]], ids=["essay", "quiet", "lesson"])
def test_a_full_disk_on_stdout_ends_the_run_in_one_line_and_the_trace_is_still_written(tmp_path, flags):
    trace = tmp_path / "run.jsonl"
    with open("/dev/full", "w") as full:
        done = run(*flags, "--trace", str(trace), stdout=full)
    err = done.stderr.decode()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err[-800:]
    assert "cannot write" in err and "No space left on device" in err and done.returncode == 2
    assert json.loads(trace.read_text().splitlines()[0])["kind"] == "registry"


def test_a_full_disk_on_stdout_during_a_replay_is_one_line(tmp_path):
    trace = tmp_path / "run.jsonl"
    trace.write_text(json.dumps({"kind": "line", "line": "story", "text": "hello"}) + "\n")
    with open("/dev/full", "w") as full:
        done = run("--replay", str(trace), stdout=full)
    assert done.returncode == 2 and done.stderr.decode().count("\n") == 1 and b"Traceback" not in done.stderr


@pytest.mark.parametrize("flags", [[], ["--step"]], ids=["essay", "--step"])
def test_a_closed_stdout_ends_the_run_in_one_line(flags):
    done = run(*flags, stdout=None, closing=">&-")
    err = done.stderr.decode()
    assert "Traceback" not in err and len(err.splitlines()) == 1 and "standard output" in err, err[-800:]
    assert done.returncode == 2


@pytest.mark.parametrize("unbuffered", [False, True], ids=["buffered, as a stock machine runs it", "PYTHONUNBUFFERED"])
def test_a_full_disk_on_both_stdout_and_stderr_ends_the_run_with_status_2_and_no_more(unbuffered):
    env = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}
    with open("/dev/full", "w") as full:  # buffered, the error line stayed in stderr's buffer: exit's flush made it 120
        done = run(stdout=full, stderr=full, env={**env, "PYTHONUNBUFFERED": "1"} if unbuffered else env)
    assert done.returncode == 2


@pytest.mark.parametrize("flags, said", [(["--step"], "[step] stopped before that frame left"),
                                         (["--break"], "[step] stopped before that frame left")])
def test_a_closed_stdin_at_a_step_or_break_ends_the_run_as_end_of_input_does(flags, said):
    done = run(*flags, stdout=subprocess.PIPE, stdin=None, closing="<&-")
    assert b"Traceback" not in done.stderr and done.returncode == 0, done.stderr[-800:]
    assert said in done.stdout.decode() and b"<--" not in done.stdout, "nothing was answered: nothing left"


class NamedInOtherLetters(OutsidePeer):
    """An agent whose card is in letters an ASCII terminal has none of."""

    def do_GET(self):
        self.send(200, agent_card(f"http://127.0.0.1:{self.server.server_port}", "Bílling ☃"))


def test_a_peers_letters_on_an_ascii_terminal_are_shown_escaped_and_the_run_goes_on():
    env = {"LC_ALL": "C", "PYTHONUTF8": "0", "PATH": "/usr/bin:/bin"}  # no PYTHONIOENCODING: the locale's ASCII
    with outside_peer(NamedInOtherLetters) as base:
        done = run("--transport", "http", "--peer", base, "--timeout", "5", stdout=subprocess.PIPE, env=env)
    out, err = done.stdout.decode("ascii"), done.stderr.decode("ascii")
    assert "Traceback" not in err and done.returncode == 0, err[-800:]
    assert "[support] discovered 'B\\xedlling \\u2603' at http://127.0.0.1:" in out
    assert "[trust] 'B\\xedlling \\u2603' is NOT on the allowlist -> delegation REFUSED" in out
