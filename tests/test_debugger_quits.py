"""`q` in pdb quits the run, wherever the breakpoint stopped it.

pdb's quit is an exception (bdb.BdbQuit, an Exception) raised in whatever frame the
debugger stopped; a catch-all on the run's path (dispatch's, turning a handler's bug into
a -32603) used to take it for a bug, print `internal error in tasks/send`, answer with a
made-up protocol error ("retry is NOT safe"), and let the run go on, so pdb started it
again. Each case drives real pdb, in a subprocess with a deadline, at the README's
breakpoints and a few steps past them (inside the catch-alls' `try`)."""
import subprocess
import sys

import pytest

from conftest import ROOT
from test_readme import ROWS

START = "a2a_delegation.py(2)<module>()"  # where pdb stops first, and again if it restarts the program
AT = {path: f"b {path}:{line}" for path, line, *_ in ROWS}  # the README's breakpoints, where they are now
PEER, DISPATCH, PRINTER, GATE = (AT[path] for path in ("peers/peer.py", "transports/jsonrpc.py",
                                                       "transports/printer.py", "a2a_delegation.py"))


@pytest.mark.parametrize("flags, commands", [
    ([], [PEER, "c", "q"]),  # in the peer's handler, called by dispatch
    ([], [PEER, "c", "n", "n", "n", "s", "q"]),  # stepped into the task's run
    ([], [DISPATCH, "c", *["n"] * 6, "q"]),  # inside dispatch's catch-all
    ([], [PRINTER, "c", "n", "q"]),  # the client side, as the frame leaves
    ([], [GATE, "c", "q"]),  # the trust gate
    (["--binding", "http+json", "--wire", "1.0"], [PEER, "c", "q"]),  # the REST binding's catch-all
    (["--wire", "1.0", "--stream"], [PEER, "c", "q"]),  # a streamed reply
], ids=["peer", "peer-stepped-in", "dispatch", "printer", "trust-gate", "rest-binding", "stream"])
def test_q_at_a_breakpoint_quits_the_run_with_no_made_up_error(flags, commands):
    if flags and sys.version_info[:3] == (3, 13, 0):
        pytest.skip("3.13.0's pdb reads the script's own flags as its options (a bug of that release)")
    done = subprocess.run([sys.executable, "-m", "pdb", "a2a_delegation.py", *flags], input="\n".join(commands) + "\n",
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    said = done.stdout + done.stderr
    assert said.count("(Pdb)") >= len(commands), f"pdb never reached its last command: {said[-1500:]}"
    assert "internal error" not in said and "-32603" not in said and "NOT safe" not in said, said[-1500:]
    assert "'refund-bot-9000'" not in said, "the run went on after q"
    assert said.count(START) == 1 and "will be restarted" not in said, "pdb ran the program again"
    assert "Traceback" not in said and done.returncode == 0, said[-1500:]
