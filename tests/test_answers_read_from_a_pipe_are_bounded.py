"""What a person answers (--step's Enter or q, --interactive's y or N) may come from a pipe or a
file instead of a terminal; there a line may never end (/dev/zero, a program writing without
newlines), so each answer is read to a bounded length, and the run ends as it would on any
answer that is neither.

A hostile round's finding: `--step < /dev/zero` read one endless line, some 15 GB in 30 s,
and never stopped; a later round's: so did `--break < /dev/zero` in the debugger, and `yes "" | ... --break`
never ended. Each run here is a process held to 512 MB, so that the old code fails
the test (a MemoryError) instead of filling the machine."""
import resource
import subprocess
import sys

import pytest

from conftest import ROOT

MEMORY = 512 << 20


def limited():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


@pytest.mark.parametrize("flags, said", [
    (["--step"], "[step] stopped before that frame left; nothing more was sent."),
    (["--scenario", "approval", "--interactive"], "[person] declines"),
    (["--break"], "[step] stopped before that frame left; nothing more was sent."),
], ids=["--step", "--interactive", "--break"])
def test_an_answer_from_a_line_that_never_ends_is_read_bounded_and_the_run_ends(flags, said):
    with open("/dev/zero", "rb") as endless:
        done = subprocess.run([sys.executable, str(ROOT / "a2a_delegation.py"), *flags], cwd=ROOT, stdin=endless,
                              capture_output=True, timeout=60, preexec_fn=limited)
    out, err = done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err and "MemoryError" not in err, err[-600:]
    assert said in out and done.returncode == 0, (done.returncode, out[-600:], err[-600:])
    assert "\0" * 2000 not in out, "an answer is not echoed back whole"


def test_debugger_commands_from_a_pipe_that_never_says_continue_end_the_run():
    """`yes "" | ... --break`: the debugger read empty lines for ever, and the run never ended."""
    endless = subprocess.Popen(["yes", ""], stdout=subprocess.PIPE)
    try:
        done = subprocess.run([sys.executable, str(ROOT / "a2a_delegation.py"), "--break"], cwd=ROOT,
                              stdin=endless.stdout, capture_output=True, timeout=60, preexec_fn=limited)
    finally:
        endless.kill()
        endless.wait()
        endless.stdout.close()
    assert b"Traceback" not in done.stderr and done.returncode == 0, done.stderr[-600:]
    assert b"[step] stopped before that frame left" in done.stdout and b"<--" not in done.stdout
