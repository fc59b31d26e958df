"""The README is part of the product: its commands work and its breakpoints are true."""
import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def first_statement(path: Path, qualname: str) -> int:
    """The line a debugger should stop on to be inside `qualname`: its first statement
    after any docstring (a breakpoint on the `def` line fires when the module loads)."""
    body = ast.parse(path.read_text()).body
    for name in qualname.split("."):
        body = next(n for n in body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == name).body
    if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return body[0].lineno


def test_every_breakpoint_in_the_readme_is_the_first_line_of_its_function():
    rows = re.findall(r"\| `b ([\w/.]+):(\d+)` \| `([\w.]+)` \|", README)
    assert len(rows) == 4
    for path, line, function in rows:
        assert int(line) == first_statement(ROOT / path, function), \
            f"README says {path}:{line} for {function}; it is now line {first_statement(ROOT / path, function)}"


def test_the_readme_names_exactly_two_set_up_commands_and_ci_runs_the_second():
    setup = README.split("```sh\n", 1)[1].split("```", 1)[0].strip().splitlines()
    assert len(setup) == 2 and setup[0].startswith("python a2a_delegation.py")
    test_command = setup[1].split("#")[0].strip()
    assert test_command in (ROOT / ".ci" / "run").read_text()


def test_the_breakpoints_really_stop_in_pdb_with_those_names_in_scope():
    rows = re.findall(r"\| `b ([\w/.]+):(\d+)` \|", README)
    # Hit in story order: the gate, the frame leaving, the peer receiving it, the skill.
    commands = "".join(f"b {path}:{line}\n" for path, line in rows) \
        + "c\np card.name\nc\np body[:40]\nc\np frame[:20]\nc\np skill_id\nquit\n"
    done = subprocess.run([sys.executable, "-m", "pdb", "a2a_delegation.py"], input=commands, cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    gate_line = dict(rows)["a2a_delegation.py"]
    assert f"> {ROOT / 'a2a_delegation.py'}({gate_line})trust_gate()" in done.stdout
    assert """(Pdb) b'{"jsonrpc": "2.0", "id": 1, "method": "t'""" in done.stdout  # leaving
    assert """(Pdb) b'{"jsonrpc": "2.0", "'""" in done.stdout  # arriving at the peer
    assert "(Pdb) 'process_refund'" in done.stdout and "(Pdb) 'billing-agent'" in done.stdout
