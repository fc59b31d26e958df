"""The folders show the story's boundary, and the imports keep it: the shared protocol
imports neither side, a peer never imports the support agent's side, the support side
never imports another team's peer, the story imports no peer but the demo network that
plays them, and the transports know nothing of A2A."""
import ast
from functools import cache

import pytest

from conftest import ROOT


@cache
def tree(path):
    """A module's syntax tree, parsed once for all the tests here (read, never changed)."""
    return ast.parse(path.read_text())


@cache
def imports_of(path):
    """Every module a file imports, at any depth of its code (lazy imports included)."""
    names = set()
    for node in ast.walk(tree(path)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def modules(folder, *, nested=True):
    """The folder's modules, and its subfolders' unless they are packages of their own
    with their own rules (peers/ holds peers/a2a and peers/support)."""
    found = (ROOT / folder).rglob("*.py") if nested else (ROOT / folder).glob("*.py")
    return sorted(p for p in found if "__pycache__" not in p.parts)


def violations(files, forbidden):
    return [(f.relative_to(ROOT).as_posix(), name) for f in files for name in imports_of(f)
            if any(name == bad or name.startswith(bad + ".") for bad in forbidden)]


# Every module of the other teams' side: each file directly in peers/ (the demo's peers,
# their core, store, app ...), whatever is added there later.
OTHER_TEAMS = sorted(f"peers.{p.stem}" for p in (ROOT / "peers").glob("*.py") if p.stem != "__init__")


def test_the_shared_protocol_imports_neither_side():
    assert violations(modules("peers/a2a"), OTHER_TEAMS + ["peers.support", "peers.signing", "peers.contracts"]) == []


def test_signing_imports_neither_side_nor_the_protocol():
    assert violations(modules("peers/signing"), OTHER_TEAMS + ["peers.support", "peers.a2a", "peers.contracts"]) == []


def test_the_demos_contracts_import_neither_side():
    assert violations(modules("peers/contracts"), OTHER_TEAMS + ["peers.support", "peers.signing"]) == []


def test_the_security_schemes_import_no_peer_and_not_the_support_side():
    assert violations(modules("peers/schemes"), OTHER_TEAMS + ["peers.support", "peers.contracts"]) == []


def test_no_peer_imports_the_support_agents_side():
    assert violations(modules("peers", nested=False), ["peers.support"]) == []


def test_the_support_side_never_imports_another_teams_peer():
    assert violations(modules("peers/support"), OTHER_TEAMS) == []


def test_the_story_imports_no_peer_only_the_demo_network_that_plays_them():
    story = [ROOT / "a2a_delegation.py"]
    assert violations(story, [m for m in OTHER_TEAMS if m != "peers.demo"]) == []


def test_the_transports_know_nothing_of_a2a():
    assert violations(modules("transports"), ["peers"]) == []


@pytest.mark.parametrize("package", ["peers", "peers/a2a", "peers/signing", "peers/contracts", "peers/support",
                                     "peers/support/calling", "peers/support/check", "peers/support/cli", "peers/support/learner",
                                     "peers/support/model", "peers/support/proxy", "peers/support/web",
                                     "peers/support/lessons", "peers/schemes", "transports"])
def test_each_package_docstring_says_what_lives_there_and_what_it_must_not_import(package):
    doc = ast.get_docstring(ast.parse((ROOT / package / "__init__.py").read_text())) or ""
    assert len(doc) > 200 and ("must not import" in doc.lower() or "no a2a vocabulary" in doc.lower()
                               or "knows a2a" in doc.lower() or "nothing in this package knows a2a" in doc.lower())


def test_every_module_stays_small_enough_to_read_in_one_sitting():
    """About 250 lines each; the story, which holds the central idea, may run a little longer."""
    files = modules("transports") + modules("peers")  # peers/ holds its subfolders
    too_long = {f.relative_to(ROOT).as_posix(): n for f in files
                if (n := len(f.read_text().splitlines())) > 260}
    assert too_long == {}
    assert len((ROOT / "a2a_delegation.py").read_text().splitlines()) <= 360


def single_letter_names(path):
    """Names bound outside comprehensions (arguments, assignments, loop targets) that are
    one letter long: a reader stepping through should not have to guess what `d` was."""
    found = []
    for node in ast.walk(tree(path)):
        bound = []
        if isinstance(node, (ast.FunctionDef, ast.Lambda)):
            bound = [a.arg for a in node.args.args + node.args.kwonlyargs + node.args.posonlyargs]
        elif isinstance(node, (ast.Assign, ast.For, ast.With, ast.NamedExpr)):
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if not isinstance(node, ast.With) else \
                [item.optional_vars for item in node.items if item.optional_vars is not None]
            bound = [n.id for target in targets for n in ast.walk(target) if isinstance(n, ast.Name)]
        found += [f"{path.name}:{node.lineno}: {name}" for name in bound if len(name) == 1 and name != "_"]
    return found


def test_no_single_letter_names_outside_comprehensions():
    files = [ROOT / "a2a_delegation.py"] + modules("transports") + modules("peers")  # peers/ holds the rest
    assert [name for f in files for name in single_letter_names(f)] == []


def test_the_default_run_loads_nothing_only_other_runs_need():
    """Not a timing (bench/startup.py measures); a guard: sockets, http.server, TLS, queues,
    the handoff envelope, the conformance peer, card signing, OpenSSL's digests (hashlib, hmac:
    transports/digests.py), and a peer's parts the essay's run never meets (streams, webhooks,
    ListTasks's cursors, restarts, a stream's events), threading (background work, a stream's wait: its locks
    are _thread's) and importlib with warnings (a module named at run time: transports.imported) load only in
    the runs that use them; and typing, which no run uses (its names are for
    type checkers: a tenth of the default run's start)."""
    import subprocess
    import sys
    probe = ("import contextlib, io, sys; import a2a_delegation\n"
             "with contextlib.redirect_stdout(io.StringIO()): a2a_delegation.main([])\n"
             "print(' '.join(sorted(sys.modules)))")
    loaded = set(subprocess.run([sys.executable, "-S", "-c", probe], cwd=ROOT, capture_output=True, text=True,  # -S: ours alone
                                timeout=30).stdout.split())
    assert "a2a_delegation" in loaded
    assert not loaded & {"socket", "ssl", "http.server", "socketserver", "queue", "peers.contracts.evidence",
                         "peers.contracts.handoff", "peers.contracts.refund_text", "peers.conformance", "peers.signing.card_signature",
                         "peers.signing.rs256", "peers.signing.jcs", "peers.signing.new_key", "peers.signing.algorithms",
                         "peers.signing.es256", "peers.signing.ed25519", "peers.streaming", "peers.push",
                         "peers.pages", "peers.restart", "peers.a2a.stream", "peers.support.calling.caught_up",
                         "peers.a2a.wire_card", "peers.durable", "hashlib", "hmac", "_hashlib", "typing",
                         "threading", "importlib", "warnings"}


@pytest.mark.parametrize("argv", [[], ["check", "http://127.0.0.1:9/"]], ids=["the default run", "check"])
def test_a_run_compiles_no_annotation_at_run_time(argv):
    """typing compiles a string annotation where it must evaluate one: a NamedTuple field
    (every field, under `from __future__ import annotations`), or a quoted name inside a
    subscript evaluated at import (`Callable[..., "Result"]`). The first such compile sets up
    the whole AST machinery: about 9 million instructions, 4% of the default run's start
    (bench/startup.py measures it); a record type's own constructor (transports/records.py) is
    compiled too, once the type has made many records. So a run compiles nothing after its
    imports' bytecode: the default run, and `check` (an agent nothing listens for: its modules
    load, then one line)."""
    import subprocess
    import sys
    probe = ("import builtins, contextlib, io, sys\n"
             "compile, made = builtins.compile, []\n"
             "def watched(source, filename, *rest, **named):\n"
             "    if filename == '<string>': made.append(repr(source))  # the annotation, as written\n"
             "    return compile(source, filename, *rest, **named)\n"
             "builtins.compile = watched\n"
             "evaluate = builtins.eval  # a record type's own constructor is written with eval\n"
             "def ours(source, *rest):  # (the standard library's namedtuples are its own start-up's)\n"
             "    if sys._getframe(1).f_code.co_filename.endswith('records.py'): made.append(repr(source))\n"
             "    return evaluate(source, *rest)\n"
             "builtins.eval = ours\n"
             "import a2a_delegation\n"
             f"with contextlib.redirect_stdout(io.StringIO()): status = a2a_delegation.main({argv!r})\n"
             "print('\\n'.join(made) or 'none')")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.stdout.strip() == "none"


@pytest.mark.parametrize("argv", [[], ["check", "http://127.0.0.1:9/"]], ids=["the default run", "check"])
def test_the_collector_waits_through_start_up_then_never_walks_what_start_up_made(argv):
    """The story file, run as a program, stops the garbage collector while its modules load
    (bench/startup.py: about 4% of the default run); session.py then freezes what start-up
    made (it lives as long as the process) and restarts the collector for the rest of any
    run, which may last (a person deciding, a debugger, a server). Imported (as here, by
    tests), and run by the program that imported it, it changes nothing. (Python 3.12 starts
    with some objects frozen already: what counts is what each run adds.)"""
    import subprocess
    import sys
    probe = ("import contextlib, gc, io, runpy, sys\n"
             "print(gc.get_freeze_count())\n"
             "story = runpy.run_path('a2a_delegation.py', run_name='imported')\n"
             "sys.argv = ['a2a_delegation.py', '--list-scenarios']\n"
             "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
             "    story['main']()  # a program that imported it, and runs it: its heap is its own\n"
             "print(gc.isenabled(), gc.get_freeze_count())\n"
             f"sys.argv = ['a2a_delegation.py', *{argv!r}]\n"
             "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
             "    runpy.run_path('a2a_delegation.py', run_name='__main__')\n"
             "print(gc.isenabled(), gc.get_freeze_count())")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=30)
    (before,), (imported, none_frozen), (ran, frozen) = (line.split() for line in done.stdout.splitlines())
    assert (imported, none_frozen, ran) == ("True", before, "True"), done.stderr[-2000:]
    assert int(frozen) - int(before) > 5_000, "start-up's objects are frozen, not walked by each collection"


@cache
def import_graph():
    """File -> the files of the house it imports, at any depth of its code (a lazy import, or
    one under TYPE_CHECKING, is an arrow too): every module but the tests and benchmarks."""
    files = {".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): p
             for p in [ROOT / "a2a_delegation.py"] + modules("transports") + modules("peers")}
    def resolved(name):  # peers.support.cli.flags.parse -> peers.support.cli.flags; a package -> its __init__
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name
    return {module: {found for name in imports_of(path) if (found := resolved(name)) and found != module}
            for module, path in files.items()}


def circles(graph):
    """The strongly connected parts of more than one file (Tarjan's algorithm, iteratively)."""
    index, low, stack, on_stack, found, counter = {}, {}, [], set(), [], [0]
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            step = next(edges, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = counter[0]
                    counter[0] += 1
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph[step]))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                part = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    part.append(member)
                    if member == node:
                        break
                if len(part) > 1:
                    found.append(sorted(part))
    return found


def test_the_house_has_no_import_circle():
    """Each file on a floor of its own: what it imports sits below it, so it can be read (and
    changed) without first reading what imports it."""
    assert circles(import_graph()) == []


def test_the_story_is_the_top_floor_nothing_imports_it():
    """a2a_delegation.py imports the machinery; the machinery never imports the story (the
    types it needs, such as Outcome and Verdict, live beside the code that makes them)."""
    graph = import_graph()
    assert sorted(module for module, imported in graph.items() if "a2a_delegation" in imported) == []


# Our side's rooms, and the rooms each may import (besides itself and the shared output path).
ROOMS = {"calling": set(), "model": {"calling"}, "learner": {"calling"}, "lessons": {"calling", "model"},
         "web": {"calling", "check", "learner", "lessons", "proxy"}, "check": {"calling"}, "proxy": {"calling", "check", "learner"},
         "cli": {"calling", "check", "learner", "lessons", "model", "proxy", "web"}}


def room_of(module):
    parts = module.split(".")
    return parts[2] if parts[:2] == ["peers", "support"] and len(parts) > 3 else None


def test_each_room_of_our_side_imports_only_the_rooms_below_it():
    graph = import_graph()
    crossing = sorted((module, imported) for module, imports in graph.items() if room_of(module)
                      for imported in imports if room_of(imported) not in (None, room_of(module))
                      and room_of(imported) not in ROOMS[room_of(module)])
    assert crossing == []
    assert set(ROOMS) == {p.name for p in (ROOT / "peers/support").iterdir() if (p / "__init__.py").exists()}


def test_only_the_story_and_the_command_lines_session_hold_the_whole_support_agent():
    """A lesson, the page and a model's run are told with the story's steps (calling/story_steps.py),
    values in and values out; only the story's own run and the session that hands it over take
    the agent itself."""
    holders = []
    for path in [ROOT / "a2a_delegation.py"] + modules("peers") + modules("transports"):
        for node in ast.walk(tree(path)):
            if isinstance(node, (ast.FunctionDef, ast.Lambda)):
                params = node.args.args + node.args.kwonlyargs + node.args.posonlyargs
                if any(p.arg == "agent" or (p.annotation is not None and "SupportAgent" in ast.unparse(p.annotation))
                       for p in params):
                    holders.append(path.relative_to(ROOT).as_posix())
    assert sorted(set(holders)) == ["a2a_delegation.py", "peers/support/cli/session.py"]
    assert len(holders) <= 5
