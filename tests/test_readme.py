"""The README is part of the product: its commands work and its breakpoints are true."""
import ast
import json
import re
import subprocess
import sys

import pytest

from conftest import ROOT, Child, free_port

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
    assert len(setup) == 2 and setup[0].startswith("python3 a2a_delegation.py")
    test_command = setup[1].split("#")[0].strip()
    assert test_command in (ROOT / ".ci" / "run").read_text()


# -- every command in the README runs as printed, in bash ------------------------------------

def sh_commands():
    """Every command in the README's ```sh blocks, continuation lines joined."""
    found = []
    for block in re.findall(r"```sh\n(.*?)```", README, re.S):
        found += [line.strip() for line in block.replace("\\\n", " ").splitlines() if line.strip()]
    return found


def bash(command, *, timeout=60):
    return subprocess.run(["bash", "-c", command], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def with_free_ports(command, ports, folder=None):
    """The changes the test makes to a command: a port the machine may already use, and the
    README's /tmp made `folder`, the test's own (two runs at once share no store file)."""
    for printed, free in ports.items():
        command = command.replace(f":{printed}", f":{free}").replace(f"--port {printed}", f"--port {free}")
    return command.replace("/tmp/", f"{folder}/") if folder else command


def test_no_command_in_the_readme_puts_a_dollar_and_digit_inside_double_quotes():
    # bash and zsh expand "$1" in "refund $180": the model would read "refund 80".
    assert [c for c in sh_commands() if re.search(r'"[^"]*\$[0-9][^"]*"', c)] == []


MY_FILES = "/tmp/my-"  # the three small files of the README's own recipe, written by its echo commands
STORY_COMMANDS = [c for c in sh_commands() if c.startswith("python3 a2a_delegation.py") and " serve " not in c
                  and "--peer" not in c and MY_FILES not in c and " check " not in c and " proxy " not in c]


@pytest.mark.parametrize("command", STORY_COMMANDS)
def test_each_run_command_in_the_readme_works_as_printed(command):
    done = bash(command)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stdout + done.stderr
    if command.endswith("--help"):
        assert done.stdout.startswith("usage: a2a_delegation.py")
    elif "--list-scenarios" in command:
        from peers.support.lessons import every, name_of
        assert [line.split()[0] for line in done.stdout.splitlines()] == [name_of(m.__name__) for m in every()]
    elif "--scenario bounce" in command:  # its point: the hop limit stops it, and a person decides
        assert "[support] the support agent owns this decision" in done.stdout
    elif "--scenario spoof" in command:  # its point: every copy is refused, each saying why
        assert done.stdout.count("-> delegation REFUSED") == 3 and "trusted result" not in done.stdout
    else:
        assert "trusted result (from billing-agent)" in done.stdout or "[model] chose" in done.stdout


SERVE_COMMANDS = [c for c in sh_commands() if " serve " in c and "signing-key" not in c]  # that one: below


def serving(command, printed, tmp_path):
    """The README's serve command on a free port instead of `printed`: (the server, once its banner says it
    listens; the ports). A port found free may be taken before the server binds it (the other parts' sockets,
    run at once), so one refused as in use is tried again on another, a few times."""
    from conftest import free_port
    for attempt in range(5):
        ports = {printed: free_port()}
        server = Child(["bash", "-c", "exec " + with_free_ports(command, ports, tmp_path)], cwd=ROOT,
                       stderr=subprocess.PIPE)
        try:
            assert "listening on" in server.until("Ctrl-C")[0]  # its banner, up to how to stop it
            return server, ports
        except pytest.fail.Exception as failed:
            if "Address already in use" not in str(failed) or attempt == 4:
                raise


@pytest.mark.parametrize("command", SERVE_COMMANDS)
def test_each_serve_command_in_the_readme_serves_and_the_commands_that_use_it_work(command, tmp_path):
    printed = re.search(r"--port (\d+)", command)[1]
    users = [c for c in sh_commands() if (f":{printed}" in c or (MY_FILES in c and printed == "8001"))
             and " serve " not in c]
    server, ports = serving(command, printed, tmp_path)
    try:
        for user in users:
            if " proxy " in user:  # it runs until stopped too: the commands sent through it run meanwhile
                through_the_proxy(user, ports, tmp_path)
                continue
            done = bash(with_free_ports(user, ports, tmp_path))
            assert done.returncode == 0 and "Traceback" not in done.stdout + done.stderr, done.stderr
            if user.startswith("curl -X POST"):
                assert "refund of $180.00 issued for ORD-3300" in done.stdout
            elif user.startswith("curl"):
                assert '"name": "billing-agent"' in done.stdout
            elif " check " in user:  # every requirement judged passes, or is skipped saying why
                assert "Exit status 0: " in done.stdout and "FAIL" not in done.stdout, done.stdout
                summary = done.stdout.strip().splitlines()[-1]  # the counts, as the README quotes them
                assert summary in re.findall(r"^MUST: .*$", README, re.M), summary
                folded = [line.split(", CORE-MULTI-003")[0] for line in done.stdout.splitlines()
                          if line.startswith("SKIP") and "requirements (" in line]  # the skips for one reason
                assert "--deep" in user or (len(folded) == 1 and folded[0] + ", CORE-MULTI-003, ..." in README), folded
            elif "--peer" in user:
                assert "to trust 'billing-agent', vet it, then add this to the allowlist" in done.stdout
            elif not user.startswith("echo"):  # the three small files, used over real HTTP
                assert "trusted result (from billing-agent)" in done.stdout, done.stdout
    finally:
        server.terminate()
        server.communicate(timeout=10)


def through_the_proxy(command, ports, tmp_path):
    """The README's proxy lesson: the first run through it loses the send's answer and says a retry
    is not safe; a second run is answered, by the same task (billing's ledger refunds an order once)."""
    from conftest import free_port
    printed = re.search(r"--port (\d+)", command)[1]
    ports = {**ports, printed: free_port()}
    proxy = Child(["bash", "-c", "exec " + with_free_ports(command, ports, tmp_path)], cwd=ROOT, stderr=subprocess.PIPE)
    try:
        proxy.until("Ctrl-C")
        runs = [c for c in sh_commands() if f":{printed}" in c and " proxy " not in c]
        lost, again = (bash(with_free_ports(run, ports, tmp_path)) for run in runs + runs[-1:])
        assert "retry is NOT safe until the peer confirms what happened" in lost.stdout + lost.stderr, lost.stdout
        assert "refund of $180.00 issued for ORD-3300 (ref BILL-ORD-3300)" in again.stdout, again.stderr
    finally:
        proxy.terminate()
        out, _ = proxy.communicate(timeout=10)
    said = "".join(proxy.seen) + out
    assert "[fault] drop-response:2: the agent answered request 2 (200)" in said
    tasks = re.findall(r'<-- \{"jsonrpc": "2.0", "id": 2, "result": \{"task": \{"id": "([^"]+)"', said)
    assert len(tasks) == 2 and tasks[0] == tasks[1], said[-3000:]


def test_the_readme_commands_that_need_the_network_are_valid_bash():
    # Installing the official SDKs needs the package indexes; it is an opt-in step.
    needing = [command for command in sh_commands() if ".sdk" in command or "npm" in command or "A2A_JS_SDK" in command]
    assert len(needing) == 4
    for command in needing:
        assert bash(f"bash -n <<'EOF'\n{command}\nEOF").returncode == 0


def test_the_sdk_set_up_lines_install_what_the_interop_tests_need(tmp_path):
    pip = next(c for c in sh_commands() if ".sdk/bin/pip install" in c)
    assert {"http-server", "signing"} <= set(re.search(r'"a2a-sdk\[([^\]]*)\]"', pip)[1].split(",")), \
        "tests/test_interop.py's signed-card test needs the signing extra (PyJWT)"
    js = next(c for c in sh_commands() if "npm install" in c)
    # `npm init -y` names the package after its folder, and npm refuses a name that starts with a dot.
    assert "npm init" not in js
    # The line as printed, in bash, with an npm that only says what it was asked (no registry in tests).
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "npm").write_text('#!/bin/sh\necho "$@" > asked.txt\n')
    (tmp_path / "bin" / "npm").chmod(0o755)
    done = subprocess.run(["bash", "-c", js], cwd=tmp_path, capture_output=True, text=True, timeout=30,
                          env={**__import__("os").environ, "PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin"})
    folder = tmp_path / re.search(r"mkdir -p (\S+)", js)[1]
    assert done.returncode == 0, done.stderr
    assert json.loads((folder / "package.json").read_text()) == {"private": True}
    assert (folder / "asked.txt").read_text().split() == ["install", "-q", "@a2a-js/sdk", "express"]


def test_the_readmes_signing_key_commands_make_a_key_and_serve_a_card_it_signed(tmp_path):
    from peers.signing import card_signature, rs256
    from transports.network import HttpTransport
    make, serve = [c for c in sh_commands() if "signing-key.pem" in c]
    env = {**__import__("os").environ, "HOME": str(tmp_path)}  # `~` is a fresh folder
    done = subprocess.run(["bash", "-c", make], cwd=ROOT, capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0 and (tmp_path / "billing-signing-key.pem").exists()
    key = rs256.public_from_jwk(json.loads(done.stdout.splitlines()[-1]))  # what the README says to pin
    again = subprocess.run(["bash", "-c", make], cwd=ROOT, capture_output=True, text=True, timeout=60, env=env)
    assert again.returncode == 2 and "File exists" in again.stdout, "an existing key is never replaced"
    port = free_port()
    server = Child(["bash", "-c", "exec " + with_free_ports(serve, {8001: port})], cwd=ROOT, env=env,
                   stderr=subprocess.PIPE)
    try:
        assert "listening on" in server.until("listening on")[0]
        card = json.loads(HttpTransport(timeout=5).get(f"http://127.0.0.1:{port}/.well-known/agent-card.json", {}).body)
        assert card_signature.unproven(card_signature.signed_content(card), key) is None
    finally:
        server.terminate()
        server.communicate(timeout=10)


# -- the two set-up commands on a stock machine: only `python3` on the PATH -----------------

STOCK_PYTHON3 = "/usr/bin/python3"  # the distribution's own: no `python`, pip externally managed


def made_by_the_stock_python3():
    """Whether this interpreter is the project's .venv as the README's command made it with the
    stock python3 (pyvenv.cfg says how, 3.11+); pytest running in it shows pip installed it."""
    from pathlib import Path
    config = Path(sys.prefix) / "pyvenv.cfg"
    if Path(sys.prefix) != ROOT / ".venv" or not config.is_file():
        return False
    said = dict(line.split(" = ", 1) for line in config.read_text().splitlines() if " = " in line)
    return said.get("command", "") == f"{STOCK_PYTHON3} -m venv {ROOT / '.venv'}"


def only_python3(tmp_path):
    """A PATH holding one program, the stock python3, as a fresh Debian or Ubuntu has."""
    import os
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "python3").symlink_to(STOCK_PYTHON3)
    return {"PATH": str(folder), "HOME": str(tmp_path), "LANG": "C.UTF-8"}  # and nothing else set


def setup_commands():
    return [line.split("  #")[0].strip() for line in
            README.split("```sh\n", 1)[1].split("```", 1)[0].strip().splitlines()]


@pytest.mark.skipif(not __import__("os").path.exists(STOCK_PYTHON3), reason=f"no {STOCK_PYTHON3} here")
def test_the_run_command_works_with_only_a_stock_python3_on_the_path(tmp_path):
    done = subprocess.run(["/bin/bash", "-c", setup_commands()[0]], cwd=ROOT, env=only_python3(tmp_path),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "trusted result (from billing-agent)" in done.stdout, done.stderr


@pytest.mark.skipif(not __import__("os").path.exists(STOCK_PYTHON3), reason=f"no {STOCK_PYTHON3} here")
def test_the_test_command_needs_nothing_a_stock_python3_lacks(tmp_path):
    """Each step of the test command, with only the stock python3 on the PATH, short of the
    download itself (tests reach loopback only; .ci/run does the download for real): the
    venv is made with its own pip (Debian's python3-venv), which installs into the venv
    whether or not the system's pip is externally managed."""
    venv, pip, test = (part.strip() for part in setup_commands()[1].split("&&"))
    assert venv.startswith("python3 -m venv .venv") and test == ".venv/bin/python tests/run_suite.py"
    if made_by_the_stock_python3():  # .ci/run's way: these tests run in the very venv the command made
        done = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and done.stdout.startswith("pip "), done.stderr
        return
    env = only_python3(tmp_path)
    made = subprocess.run(["/bin/bash", "-c", venv], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=180)  # ensurepip's own install: 10 s here, past 60 on a machine at load 20
    assert made.returncode == 0, made.stderr
    asked = pip.split(" install ")[0] + " --version"  # the same pip, told the same target, asked only its version
    done = subprocess.run(["/bin/bash", "-c", asked], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("pip "), done.stderr
    assert (tmp_path / ".venv" / "bin" / "python").exists()


def test_no_text_the_workbench_prints_tells_a_learner_to_run_python_which_a_stock_machine_lacks():
    """A stock Debian/Ubuntu has python3 and no `python`: help texts and messages say python3."""
    import tokenize
    said = []
    for path in [ROOT / "a2a_delegation.py", *sorted((ROOT / "peers").rglob("*.py")),
                 *sorted((ROOT / "transports").rglob("*.py"))]:
        with path.open("rb") as source:
            strings = [token for token in tokenize.tokenize(source.readline) if token.type == tokenize.STRING]
        said += [f"{path.relative_to(ROOT)}:{token.start[0]}" for token in strings
                 if re.search(r"(?<![\w/])python (-m |a2a_delegation)", token.string)]
    assert said == []
