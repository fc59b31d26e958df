"""The README is part of the product: its commands work and its breakpoints are true."""
import ast
import re
import subprocess
import sys

import pytest

from conftest import ROOT

README = (ROOT / "README.md").read_text()
# | `b path:line` | `Function` | `inspect` ... | `n` K times, then `expression` ... |
ROWS = re.findall(r"\| `b ([\w/.]+):(\d+)` \| `([\w.]+)` \| `([^`]+)`[^|]*\| `n` (\d+) times, then `([^`]+)`", README)


def first_statement(path, qualname: str) -> int:
    """The line a debugger should stop on to be inside `qualname`: its first statement
    after any docstring (a breakpoint on the `def` line fires when the module loads)."""
    body = ast.parse(path.read_text()).body
    for name in qualname.split("."):
        body = next(n for n in body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == name).body
    if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return body[0].lineno


def test_the_readme_has_four_breakpoints_each_on_the_first_line_of_its_function():
    assert len(ROWS) == 4
    for path, line, function, *_ in ROWS:
        actual = first_statement(ROOT / path, function)
        assert int(line) == actual, f"README says {path}:{line} for {function}; it is now line {actual}"


@pytest.mark.parametrize("path, line, function, inspect, steps, then", ROWS, ids=[r[2] for r in ROWS])
def test_each_breakpoint_stops_there_and_its_names_exist_after_the_steps_it_says(path, line, function,
                                                                                  inspect, steps, then):
    commands = f"b {path}:{line}\nc\np {inspect}\n" + "n\n" * int(steps) + f"p {then}\nquit\n"
    done = subprocess.run([sys.executable, "-m", "pdb", "a2a_delegation.py"], input=commands, cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    method = function.split(".")[-1]
    assert f"{ROOT / path}({line}){method}()" in done.stdout, done.stdout[-2000:]
    assert "***" not in done.stdout, f"a name the README promises does not exist: {done.stdout[-2000:]}"


def test_the_readme_names_exactly_two_set_up_commands_and_ci_runs_the_second():
    setup = README.split("```sh\n", 1)[1].split("```", 1)[0].strip().splitlines()
    assert len(setup) == 2 and setup[0].startswith("python a2a_delegation.py")
    test_command = setup[1].split("#")[0].strip()
    assert test_command in (ROOT / ".ci" / "run").read_text()
