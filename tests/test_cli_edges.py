"""The command line at its edges, each once in a new learner's way and kept fixed: a prompt that sent frames on
end of input, a traceback on an old Python, a puzzling --timeout 0, an allowlist host name
compared by case, and a key tool whose --help was an error."""
import contextlib
import functools
import glob
import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, cli, cli_once

STORY = str(ROOT / "a2a_delegation.py")


def step(stdin: str):
    return subprocess.run([sys.executable, STORY, "--step"], input=stdin, capture_output=True, text=True,
                          timeout=60, cwd=ROOT)


def test_end_of_input_at_a_step_prompt_stops_the_run_and_sends_nothing():
    done = step("")
    assert done.returncode == 0 and "Traceback" not in done.stderr
    assert "[step] stopped before that frame left; nothing more was sent." in done.stdout
    assert "discovered" not in done.stdout, "the card fetch never left, so no card was read"


def test_end_of_input_after_one_answer_sends_only_that_frame():
    done = step("\n")
    assert "[support] discovered 'billing-agent'" in done.stdout and '"method": "tasks/send"' in done.stdout
    assert "<--" not in done.stdout and "trusted result" not in done.stdout, "the refund never left"


def test_an_answer_that_is_neither_enter_nor_q_is_asked_again_and_never_sends():
    done = step("yes\n" * 20)
    assert "[step] 'yes' is neither Enter nor q" in done.stdout
    assert "discovered" not in done.stdout and done.stdout.count("[step] Enter sends it") == 5
    assert "[step] stopped before that frame left" in done.stdout


@pytest.mark.parametrize("answer", ["\x1c", "\x1f", "\x0b", "\x0c", "\x1e"])
def test_a_control_character_is_no_enter_and_sends_nothing(answer):
    """Python counts these as whitespace, so a file of them answered Enter: a frame left with no one saying so."""
    done = step((answer + "\n") * 20)
    assert "discovered" not in done.stdout and "is neither Enter nor q" in done.stdout
    assert "[step] stopped before that frame left" in done.stdout


@functools.cache
def old_pythons():
    """Each Python 3.6 to 3.9 that really runs here (a pyenv shim may name one that does not),
    looked for once: the python3 of Debian 10 and Ubuntu 18.04 among them."""
    found = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.[6-9].*/bin/python")), reverse=True)
    found += [shutil.which(f"python3.{minor}") for minor in (9, 8, 7, 6)]
    return [path for path in dict.fromkeys(found) if path and subprocess.run(
        [path, "-c", "pass"], capture_output=True, timeout=30).returncode == 0]


def test_the_story_file_parses_as_python_3_6_so_an_old_python_reaches_its_version_check():
    """Wherever no old Python is installed, what ast's 3.6 grammar catches (`:=`, match, positional-only
    parameters) is held here, and the one future import 3.6 lacks. Not caught: what ast accepts anyway
    (3.12's f-strings reusing their quotes): the run on every old Python found (below) is the whole check."""
    import ast
    text = (ROOT / "a2a_delegation.py").read_text()
    ast.parse(text, feature_version=(3, 6))
    assert "from __future__ import annotations" not in text


@pytest.mark.skipif(not old_pythons(), reason="no Python older than 3.10 on this machine")
@pytest.mark.parametrize("args", [[], ["--help"], ["serve", "billing-agent", "--help"]])
def test_an_old_python_gets_one_line_and_exit_2(args):
    for old in old_pythons():
        done = subprocess.run([old, STORY, *args], capture_output=True, text=True, timeout=30, cwd=ROOT)
        assert done.returncode == 2 and done.stdout == "", (old, done.stderr)
        assert done.stderr.startswith("a2a_delegation.py needs Python 3.10 or newer (this is 3.")
        assert len(done.stderr.splitlines()) == 1


@pytest.mark.parametrize("given", ["0", "1_0", " 5", "1e-300", "nan", "-1", "1.2.3"])
def test_a_timeout_that_is_no_plain_number_of_seconds_says_why(given):
    """float() took "1_0", " 5" and "1e-300" (no exchange finishes in that)."""
    done = cli("--timeout", given)
    assert done.returncode == 2
    assert f"{given!r} is not a number of seconds more than 0 and at most 3600" in done.stderr


def test_an_allowlist_host_name_matches_whatever_its_case(tmp_path):
    allowlist = tmp_path / "allowlist.json"
    allowlist.write_text(json.dumps({"trusted": [{"name": "billing-agent",
                                                  "endpoint": "HTTPS://BILLING.Acme.example:443/a2a"}]}))
    done = cli("--allowlist", str(allowlist))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "[trust] 'billing-agent' is allowlisted -> delegating" in done.stdout


def test_an_allowlist_path_still_compares_exactly(tmp_path):
    allowlist = tmp_path / "allowlist.json"
    allowlist.write_text(json.dumps({"trusted": [{"name": "billing-agent", "endpoint": "https://billing.acme.example/A2A"}]}))
    done = cli("--allowlist", str(allowlist))
    assert "'billing-agent' is allowlisted only at https://billing.acme.example/A2A" in done.stdout


def key_tool(*args):
    return subprocess.run([sys.executable, "-m", "peers.signing.new_key", *args], capture_output=True, text=True,
                          timeout=60, cwd=ROOT)


def test_the_key_tools_help_is_not_an_error():
    done = key_tool("--help")
    assert done.returncode == 0 and done.stdout.startswith("usage: python3 -m peers.signing.new_key FILE")


def test_a_key_files_public_key_can_be_printed_again(new_key):
    path, made = new_key
    assert made.returncode == 0
    again = key_tool("--public", str(path))
    assert again.returncode == 0 and json.loads(again.stdout) == json.loads(made.stdout.splitlines()[-1])


def test_printing_the_public_key_of_something_else_is_one_line(tmp_path):
    for path in (tmp_path / "missing.pem", ROOT / "README.md"):
        done = key_tool("--public", str(path))
        assert done.returncode == 2 and len(done.stdout.splitlines()) == 1 and "Traceback" not in done.stderr


def test_a_registry_naming_a_real_server_says_the_shim_cannot_reach_it(tmp_path):
    registry = tmp_path / "registry.json"
    registry.write_text(json.dumps({"peers": [{"cardUrl": "http://127.0.0.1:8002/.well-known/agent-card.json"}]}))
    done = cli("--registry", str(registry))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "nothing serves http://127.0.0.1:8002 in this process" in done.stderr
    assert "a real server needs --transport http" in done.stderr


@pytest.mark.parametrize("flag, said", [
    ("--stream", "--stream does nothing for billing-agent: the essay wire has no streaming send"),
    ("--no-wait", "--no-wait does nothing for billing-agent: the essay wire cannot answer before the task ends"),
    ("--push", "--push does nothing for billing-agent: the essay wire cannot answer before the task ends"),
])
def test_a_following_flag_the_essays_wire_cannot_honour_says_so(flag, said):
    done = cli_once(flag)
    assert done.returncode == 0 and said in done.stderr and "trusted result" in done.stdout


def test_a_following_flag_the_wire_honours_says_nothing():
    for flag in ("--stream", "--no-wait", "--push"):
        done = cli_once("--wire", "1.0", flag)
        assert done.returncode == 0 and "does nothing" not in done.stderr, (flag, done.stderr)


def test_replay_says_which_live_run_flags_it_ignores(tmp_path):
    trace = tmp_path / "run.jsonl"
    assert cli("--trace", str(trace)).returncode == 0
    done = cli("--replay", str(trace), "--scenario", "slow", "--peer", "http://127.0.0.1:9")
    assert done.returncode == 0 and "trusted result (from billing-agent)" in done.stdout
    warned = [line for line in done.stderr.splitlines() if "does nothing with --replay" in line]
    assert [line.split()[1] for line in warned] == ["--scenario", "--peer"], "only what was given, nothing a lesson implied"
    assert cli("--replay", str(trace)).stderr == ""


def test_replay_says_the_data_files_and_peer_flags_it_ignores_too(tmp_path):
    """A learner who edits the allowlist and replays a saved run with --allowlist sees the
    old decisions: each file and flag of a live run is named as doing nothing, none silently."""
    trace = tmp_path / "run.jsonl"
    assert cli("--trace", str(trace)).returncode == 0
    empty = tmp_path / "empty.json"
    empty.write_text('{"trusted": []}')
    given = {"--registry": str(empty), "--allowlist": str(empty), "--credentials": str(empty),
             "--allow-untrusted": "refund-bot-9000", "--timeout": "3", "--ca": str(empty)}
    done = cli("--replay", str(trace), *[part for pair in given.items() for part in pair],
               "--legacy-card-path", "--verbose", "--break")
    assert done.returncode == 0 and "'billing-agent' is allowlisted -> delegating" in done.stdout
    warned = [line.split()[1] for line in done.stderr.splitlines() if "does nothing with --replay" in line]
    assert sorted(warned) == sorted([*given, "--legacy-card-path", "--verbose", "--break"]), done.stderr


def test_a_diagram_says_where_it_was_written(tmp_path):
    done = cli("--diagram", str(tmp_path / "run.html"))
    assert done.returncode == 0 and (tmp_path / "run.html").exists()
    assert done.stdout.splitlines()[-1] == f"[diagram] wrote {tmp_path / 'run.html'}: open it in a browser"


@pytest.mark.parametrize("name", [".svg", ".HTML", ".mmd"])
def test_a_diagram_named_by_its_ending_alone_is_written(tmp_path, name):
    """The flag's check took ".svg"; writing it, splitext found no suffix: a traceback after the run."""
    done = cli("--diagram", str(tmp_path / name))
    assert done.returncode == 0 and "Traceback" not in done.stderr and (tmp_path / name).stat().st_size > 0


@pytest.mark.parametrize("stop", ["SIGINT", "SIGTERM"])
def test_ctrl_c_or_sigterm_during_the_crash_lesson_leaves_no_store_file_and_no_process(tmp_path, stop):
    """Ctrl-C at eight moments of --scenario crash (a terminal sends it to the whole process
    group), or SIGTERM to the run alone (`kill`, a CI job's timeout): each time, the temporary
    folder with billing's store is gone, and so is billing. SIGTERM left the folder behind."""
    import signal
    import time
    for moment in range(8):
        folder = tmp_path / f"run{moment}"
        folder.mkdir()
        run = subprocess.Popen([sys.executable, STORY, "--scenario", "crash"], cwd=ROOT, start_new_session=True,
                               env={**os.environ, "TMPDIR": str(folder)}, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        time.sleep(0.05 * moment if stop == "SIGINT" else 0.15 * moment)
        try:
            os.killpg(run.pid, signal.SIGINT) if stop == "SIGINT" else run.send_signal(signal.SIGTERM)
        except ProcessLookupError:
            pass  # it had finished
        run.wait(timeout=30)
        deadline = time.monotonic() + 10
        while list(folder.iterdir()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert list(folder.rglob("*")) == [], f"left behind after Ctrl-C at {0.05 * moment:.2f}s"
        left = subprocess.run(["pgrep", "-f", f"--store {folder}"], capture_output=True, text=True)
        assert left.stdout == "", "billing still running"


REMOVED_WHILE_ANOTHER_THREAD_TAKES_CTRL_C = r"""
import os, signal, sys, threading, time
from peers.support.lessons.crash import store_folder
FILES = 5000
def ctrl_c_once_removal_starts(folder):  # taken by this thread, as the demo servers' threads may take it
    deadline = time.monotonic() + 30
    while len(os.listdir(folder)) == FILES and time.monotonic() < deadline:
        time.sleep(0.001)
    signal.pthread_kill(threading.get_ident(), signal.SIGINT)
try:
    with store_folder() as folder:
        for n in range(FILES):
            open(os.path.join(folder, str(n)), "w").close()
        helper = threading.Thread(target=ctrl_c_once_removal_starts, args=(folder,))
        helper.start()
    print("never interrupted")
except KeyboardInterrupt:
    helper.join()
    print("interrupted, folder left:", os.path.exists(folder))
"""


def test_a_ctrl_c_another_thread_takes_while_the_crash_lessons_folder_goes_waits_until_it_is_gone(tmp_path):
    """The kernel gives a process's signal to any thread not blocking it: the lesson held Ctrl-C
    back with the main thread's mask, so one taken by a demo server's thread cut the folder's
    removal short anyway (5 runs in 60 under load left it, one with a traceback)."""
    done = subprocess.run([sys.executable, "-c", REMOVED_WHILE_ANOTHER_THREAD_TAKES_CTRL_C], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, env={**os.environ, "TMPDIR": str(tmp_path)})
    assert done.stdout == "interrupted, folder left: False\n", done.stdout + done.stderr
    assert list(tmp_path.iterdir()) == []


SIGTERM_IN_THE_BODY = r"""
import os, shutil, signal, sys, tempfile
from transports.signals import made_and_removed
def removed(folder):  # a Ctrl-C as it is removed: noted, and the removal goes on
    signal.raise_signal(signal.SIGINT)
    shutil.rmtree(folder)
with made_and_removed(tempfile.mkdtemp, removed) as folder:
    print(folder, flush=True)
    signal.raise_signal(signal.SIGTERM)  # unwinds the body, as Ctrl-C would
    print("the body went on", flush=True)
"""


def test_sigterm_in_the_body_unwinds_it_the_removal_runs_whole_then_the_process_ends_by_sigterm(tmp_path):
    """A SIGTERM (`kill`, a CI job's timeout) in the crash lesson ends it as Ctrl-C does, its folder
    removed even though a Ctrl-C came meanwhile, and the process then ends as SIGTERM ends one."""
    import signal
    done = subprocess.run([sys.executable, "-c", SIGTERM_IN_THE_BODY], cwd=ROOT, capture_output=True, text=True,
                          timeout=30, env={**os.environ, "TMPDIR": str(tmp_path)})
    assert done.returncode == -signal.SIGTERM and "the body went on" not in done.stdout, done.stdout + done.stderr
    assert done.stdout.strip() and not os.path.exists(done.stdout.strip()) and list(tmp_path.iterdir()) == []


def run_with_a_second_ctrl_c(at: int, folder) -> tuple[int, str, object, object]:
    """The run with --step, --trace and --diagram, given a Ctrl-C at its first prompt (the story's first frame)
    and another at step `at` of those from there in the code that writes the files (session.py's, tools.py's):
    each line begun and each function entered (not a generator resumed: it goes on inside its `try`), the
    places a signal's handler runs. How many steps there were, what it said on stderr, its two files."""
    import inspect
    import io
    import a2a_delegation as story
    from peers.support.cli import session
    from peers.support.learner import tools
    watched, steps = {session.__file__, tools.__file__}, 0
    trace, diagram = folder / f"{at}.jsonl", folder / f"{at}.html"

    def step(frame, event, arg):
        nonlocal steps
        if event == "line" or (event == "call" and not frame.f_code.co_flags & inspect.CO_GENERATOR):
            steps += 1
            if steps == at:
                raise KeyboardInterrupt  # as Python's handler raises it there (tracing ends with it)
        return step

    def entered(frame, event, arg):
        return step(frame, event, arg) if frame.f_code.co_filename in watched else None

    class CtrlCAtThePrompt(io.StringIO):
        def readline(self, *args):
            sys.settrace(entered)  # from here on: the story unwinds, then the files are written
            raise KeyboardInterrupt

    kept, said = (sys.stdin, sys.stdout, sys.stderr), io.StringIO()
    sys.stdin, sys.stdout, sys.stderr = CtrlCAtThePrompt(), io.StringIO(), said
    try:
        story.main(["--step", "--trace", str(trace), "--diagram", str(diagram)])
    except KeyboardInterrupt:
        pass
    finally:
        sys.settrace(None)
        sys.stdin, sys.stdout, sys.stderr = kept
    return steps, said.getvalue(), trace, diagram


def test_a_second_ctrl_c_while_the_trace_and_diagram_are_written_never_leaves_one_missing_unsaid(tmp_path):
    """Ctrl-C, then another as the files are written: the diagram was silently not written (6 runs in 8);
    then, once in many runs on Python 3.10 under load, the trace, when the second came before finish() began
    its `try` (at its call, or the line listing the files), where nothing said so. Two timed signals found
    that by chance; here the second lands at every step from the story's end in turn, until one comes after
    the files are written. Either file may be cut short, but the run says so."""
    _, _, trace, _ = run_with_a_second_ctrl_c(10 ** 9, tmp_path)  # never: the files whole
    whole_lines = len(trace.read_text().splitlines())
    cut_short = 0
    for at in range(1, 1000):
        steps, said, trace, diagram = run_with_a_second_ctrl_c(at, tmp_path)
        line = next((line for line in said.splitlines() if "stopped while writing: " in line), "")
        cut_short += bool(line)
        assert "Traceback" not in said, (at, said[-300:])
        for path, whole in ((trace, lambda text: len(text.splitlines()) == whole_lines and text.endswith("}\n")),
                            (diagram, lambda text: text.rstrip().endswith("</html>"))):
            assert (path.exists() and whole(path.read_text())) or str(path) in line, (at, path, said[-300:])
        if steps < at:  # it came after the last step: every step was tried
            break
    assert 20 < at < 1000 and cut_short > 10, (at, cut_short)


def test_a_paused_tasks_words_do_not_repeat_its_variants_name():
    done = cli_once("--scenario", "approval")
    paused = [line for line in done.stdout.splitlines() if line.startswith("[support] approval required (")]
    assert paused and all("): approval required:" not in line for line in paused), paused
    assert '[support] approval required (interrupted): "billing-agent" says "a refund of $6,200.00 for ORD-4100' in done.stdout


def test_a_run_on_1_0_says_once_why_it_shows_one_state():
    done = cli("--wire", "1.0", "--scenario", "duplicate")
    why = "(0.3 and 1.0 answer with a task's current state, not each state it passed through"
    assert done.stdout.count(why) == 1 and "--stream shows each as it is entered" in done.stdout
    assert why not in cli_once().stdout, "the essay's run prints its lifecycle: nothing to explain"


def test_a_peer_whose_card_failed_and_one_never_asked_for_are_told_apart():
    """--peer's closing line says what happened to its card: fetched and failed (the essay's
    run asks every peer), or never asked for (a lesson plays its own billing)."""
    unreachable = "http://127.0.0.1:9"
    asked = cli("--peer", unreachable)
    assert "[support] its card could not be read or spoken to (said above), so there is nothing to trust yet" \
        in asked.stdout and f"{unreachable}/.well-known/agent-card.json: card fetch failed" in asked.stderr
    skipped = cli("--scenario", "duplicate", "--peer", unreachable)
    assert f"[support] this run never asked {unreachable}/.well-known/agent-card.json for its card, so there is " \
        "nothing to trust yet" in skipped.stdout and "could not be read" not in skipped.stdout
    assert skipped.returncode == 0 and "card fetch failed" not in skipped.stderr
    keyed = cli("--scenario", "duplicate", "--peer", unreachable + "/?api_key=SECRETAAAA1")  # a key in its query: masked
    assert "SECRETAAAA1" not in keyed.stdout + keyed.stderr and "never asked" in keyed.stdout, keyed.stdout[-600:]


def test_an_empty_registry_beside_a_peer_flag_asks_that_peer(tmp_path):
    """A registry of no peers was refused even when --peer gave one: "nobody to delegate to"."""
    registry = tmp_path / "registry.json"
    registry.write_text('{"peers": []}')
    unreachable = "http://127.0.0.1:9"
    done = cli("--registry", str(registry), "--peer", unreachable)
    assert "lists no peers" not in done.stderr and f"{unreachable}/.well-known/agent-card.json: card fetch failed" \
        in done.stderr
    alone = cli("--registry", str(registry))
    assert alone.returncode == 2 and "lists no peers, and no --peer adds one" in alone.stderr


@pytest.mark.parametrize("transport, label", [("in-process", "[transport] in-process HTTP+JSON shim"),
                                              ("http", "[transport] HTTP+JSON over real sockets")])
def test_the_transport_line_names_http_json_when_binding_asks_for_it(transport, label):
    done = cli("--wire", "1.0", "--binding", "http+json", "--transport", transport)
    assert done.returncode == 0 and done.stdout.startswith(label) and "JSON-RPC" not in done.stdout.splitlines()[0]
    assert "--> POST /a2a/message:send {" in done.stdout and '"jsonrpc"' not in done.stdout
    assert done.stdout.splitlines()[-1] == "  MCP rides JSON-RPC, A2A here HTTP+JSON; A2A adds discovery via Agent " \
        "Cards and a trust boundary between peers.", "the closing comparison says what the refund rode"


@pytest.mark.parametrize("url, said", [("http://127.0.0.1:8001/base?q=1", "has a query or a fragment"),
                                       ("http://127.0.0.1:8001/base#frag", "has a query or a fragment")])
def test_serve_url_with_a_query_or_a_fragment_is_refused_before_a_card_advertises_it(url, said):
    """It was taken: every interface then read http://127.0.0.1:8001/base?q=1#frag/a2a, which nobody reaches."""
    done = subprocess.run([sys.executable, STORY, "serve", "billing-agent", "--wire", "1.0", "--url", url],
                          capture_output=True, text=True, timeout=30, cwd=ROOT)
    assert done.returncode == 2 and said in done.stderr and done.stderr.count("\n") == 1


@pytest.mark.parametrize("uri", ["", "a\nb", "urn:a,urn:b", "urn:a b"])
def test_a_required_extension_no_caller_could_send_is_refused(uri):
    """--require-extension '' (or one holding a newline or a comma) was taken: no caller could ever activate it."""
    done = subprocess.run([sys.executable, STORY, "serve", "conformance-agent", "--wire", "1.0", "--require-extension",
                           uri], capture_output=True, text=True, timeout=30, cwd=ROOT)
    assert done.returncode == 2 and "is not an extension URI a caller could send" in done.stderr


def test_a_peer_whose_card_names_another_origin_is_not_offered_an_allowlist_entry_that_would_not_trust_it():
    """A card is believed only from its own endpoint's origin: the closing line offered the allowlist
    entry for a card fetched at one origin naming an endpoint at another, and with that entry added
    the next run refused it all the same. It now says why no entry would do, and where to ask."""
    import json
    from conftest import OutsidePeer, outside_peer

    class Elsewhere(OutsidePeer):
        def do_GET(self):
            self.send(200, json.dumps({
                "name": "elsewhere", "description": "d", "version": "1",
                "supportedInterfaces": [{"url": "http://127.0.0.1:9/a2a", "protocolBinding": "JSONRPC",
                                         "protocolVersion": "1.0"}],
                "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
                "skills": [{"id": "process_refund", "name": "r", "description": "d", "tags": []}]}).encode())
    with outside_peer(Elsewhere) as base:
        done = cli("--peer", base)
    said = done.stdout + done.stderr
    assert "then add this to the allowlist" not in said, said[-600:]
    assert ("[support] 'elsewhere' names its endpoint at http://127.0.0.1:9, another origin than the one its card "
            f"came from ({base}): no allowlist entry trusts a card fetched elsewhere; ask http://127.0.0.1:9 for "
            "its card (--peer http://127.0.0.1:9)") in said, said[-600:]


CTRL_C_WHILE_A_MODULE_LOADS = r"""
import builtins, runpy, sys
loading = builtins.__import__
def interrupted(name, *args, **kwargs):  # a Ctrl-C that lands as the printer's module loads: deterministic
    if name == "transports.printer":
        raise KeyboardInterrupt
    return loading(name, *args, **kwargs)
builtins.__import__ = interrupted
sys.argv = ["a2a_delegation.py"]
runpy.run_path("a2a_delegation.py", run_name="__main__")
"""


def test_ctrl_c_while_the_story_loads_its_modules_ends_the_run_without_a_traceback():
    """main() turns a Ctrl-C into exit status 130; one in the ~30 ms before it, while the modules
    load, printed a traceback. Python then ends by SIGINT, as a shell expects (status 130 there)."""
    done = subprocess.run([sys.executable, "-c", CTRL_C_WHILE_A_MODULE_LOADS], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == -2 and done.stdout == "" and done.stderr == "", (done.returncode, done.stderr[-500:])
