"""The learner's path, walked as a newcomer would: nothing ends in a traceback, nothing
asked for is silently ignored, and what is printed says what happened."""
import json
import shutil
import subprocess
import sys

import pytest

from conftest import GOLDEN, ROOT, Child, base_url, cli
from transports.printer import masked
from test_learner_tools import run_in_terminal


def test_the_workbench_runs_from_another_folder_with_its_own_registry_and_allowlist(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "a2a_delegation.py")], cwd=tmp_path,
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and done.stdout == (GOLDEN / "default_run.txt").read_text()


def test_a_path_the_user_gives_stays_relative_to_where_they_run_it(tmp_path):
    shutil.copy(ROOT / "allowlist.json", tmp_path / "mine.json")
    done = cli("--allowlist", "mine.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert cli("--allowlist", "allowlist.json", cwd=tmp_path).stderr.startswith(
        "error: allowlist.json: file not found")


@pytest.mark.parametrize("args, warning", [
    (["--generate", "tests.fake_models:boom"], "--generate does nothing without --request"),
    (["--show-prompts"], "--show-prompts does nothing without --request"),
    (["--allow-untrusted", "refund-bot-9001"], "--allow-untrusted 'refund-bot-9001' named no peer"),
])
def test_a_flag_that_would_do_nothing_gets_a_one_line_warning(args, warning):
    done = cli(*args)
    assert done.returncode == 0 and f"warning: {warning}" in done.stderr
    assert done.stderr.count("\n") == 1


@pytest.mark.parametrize("args, content, error", [
    (["--step", "--quiet"], None, "--step shows each frame before it leaves, and --quiet hides frames"),
    (["--frames", "full", "--quiet"], None, "--frames full says how frames are shown, and --quiet hides them"),
    (["--registry", "{path}"], '{"peers": []}', "lists no peers"),
    (["--replay", "{path}"], "", "empty; a trace has one JSON record per line"),
])
def test_a_run_that_could_show_nothing_is_an_error_not_silence(tmp_path, args, content, error):
    path = tmp_path / "file.json"
    if content is not None:
        path.write_text(content)
    done = cli(*[a.format(path=path) for a in args])
    assert done.returncode == 2 and error in done.stderr and "Traceback" not in done.stderr


def test_a_model_hook_that_raises_is_one_line_naming_it_and_nothing_is_sent():
    done = cli("--request", "Please refund $180 on order ORD-3300", "--generate", "tests.fake_models:boom")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "generate() raised RuntimeError: the model's server is on fire" in done.stderr
    assert '"method": "tasks/send"' not in done.stdout
    verbose = cli("--request", "Please refund $180 on order ORD-3300", "--generate", "tests.fake_models:boom",
                  "--verbose")
    assert "Traceback" in verbose.stderr and "fake_models.py" in verbose.stderr


def test_a_model_hook_given_as_a_file_path_is_loaded(tmp_path):
    (tmp_path / "mygen.py").write_text("import json\ndef generate(prompt):\n    return json.dumps("
                                       "{'peer': 'billing-agent', 'skill': 'process_refund', "
                                       "'input': {'order_id': 'ORD-9', 'amount': 9.5}})\n")
    done = cli("--request", "Please refund $9.50 on order ORD-9", "--generate", f"{tmp_path / 'mygen.py'}:generate")
    assert done.returncode == 0, done.stderr
    assert '"input": {"order_id": "ORD-9", "amount": 9.5}' in done.stdout


def test_a_request_the_stand_in_cannot_read_says_what_it_understands():
    done = cli("--request", "Please refund order ORD-3300")
    assert done.returncode == 1
    assert "input.amount is missing" in done.stderr and "reads one order id like ORD-3300" in done.stderr


@pytest.mark.parametrize("wire, method", [("1.0", "SendMessage"), ("0.3", "message-send"), ("essay", "tasks-send")])
def test_the_closing_comparison_names_the_method_the_run_really_used(wire, method):
    closing = [line for line in cli("--wire", wire).stdout.splitlines() if "A2A (this part)" in line]
    assert closing == [f"  A2A (this part): agent -> AGENT    (horizontal) agent-card / {method} + a task lifecycle"]


def test_replaying_a_trace_can_draw_it_and_write_it_again(tmp_path):
    cli("--trace", str(tmp_path / "run.jsonl"))
    done = cli("--replay", str(tmp_path / "run.jsonl"), "--diagram", str(tmp_path / "again.svg"),
               "--trace", str(tmp_path / "again.jsonl"))
    assert done.returncode == 0, done.stderr
    assert "<svg" in (tmp_path / "again.svg").read_text()
    assert (tmp_path / "again.jsonl").read_text() == (tmp_path / "run.jsonl").read_text()


@pytest.mark.parametrize("served, forced, works", [("1.0", "0.3", True), ("0.3", "1.0", False), ("essay", "1.0", False)])
def test_a_forced_wire_format_is_spoken_where_the_card_offers_it_and_named_where_not(served, forced, works):
    # A 1.0 card lists a 0.3 interface too (one endpoint answers both); a 0.3 card lists none.
    from peers import demo
    from peers.a2a import wire_format
    from peers.support.output import Console
    import a2a_delegation as story
    from conftest import BILLING, BILLING_CARD
    from transports.inprocess import InProcessTransport
    from transports.printer import FramePrinter
    network = demo.network(wire_format.by_name(served), log=lambda line: None)
    printer = FramePrinter(InProcessTransport(network.apps))
    agent = story.SupportAgent(printer, [BILLING], network.credentials, Console(colour=False).say, wire_name=forced)
    outcome = agent.handle(BILLING_CARD, story.SKILL, story.PAYLOAD)
    if works:
        assert outcome.result.startswith("refund of $180.00") and b'"method": "message/send"' in printer.frames[-2].body
    else:
        assert f"the card speaks the {served} wire format, not the {forced} that --wire asked for" in outcome.error


def test_a_401_when_no_token_was_sent_says_so_and_how_to_give_one(tmp_path):
    from peers.a2a import wire_essay
    network_cmd = [sys.executable, str(ROOT / "a2a_delegation.py"), "serve", "billing-agent", "--token", "s3cret"]
    server = Child(network_cmd, stderr=subprocess.DEVNULL)
    try:
        base = base_url(server.until("listening on")[-1])
        (tmp_path / "reg.json").write_text(json.dumps({"peers": [{"cardUrl": f"{base}/.well-known/agent-card.json"}]}))
        (tmp_path / "allow.json").write_text(json.dumps({"trusted": [{"name": "billing-agent", "endpoint": f"{base}/a2a"}]}))
        # The card says bearer, and no token is held: the card check stops it before any frame.
        done = cli("--transport", "http", "--registry", str(tmp_path / "reg.json"), "--allowlist", str(tmp_path / "allow.json"))
        assert "not sent: its card requires ['bearer'] and the support agent holds no credential" in done.stdout
        assert wire_essay.NAME == "essay"
    finally:
        server.terminate()
        server.communicate(timeout=10)


def test_colour_follows_each_stream_and_a_dumb_terminal_gets_none(tmp_path):
    coloured = run_in_terminal()
    assert "\x1b[32m[trust] 'billing-agent'" in coloured
    assert "\x1b[" not in run_in_terminal(env_extra={"TERM": "dumb"})
    # stdout on a terminal, stderr to a file: the error line in the file has no colour
    err = tmp_path / "err.txt"
    run_in_terminal("--registry", "/nonexistent.json", stderr_to=str(err))
    assert err.read_text().startswith("error: /nonexistent.json: file not found") and "\x1b[" not in err.read_text()


def test_q_at_a_break_stops_the_run_as_cleanly_as_q_at_a_step():
    done = subprocess.run([sys.executable, str(ROOT / "a2a_delegation.py"), "--break"], input="q\n",
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0 and "Traceback" not in done.stdout + done.stderr
    assert "[step] stopped before that frame left; nothing more was sent." in done.stdout


def test_step_with_piped_answers_ends_each_prompt_line_before_the_next_frame():
    done = subprocess.run([sys.executable, str(ROOT / "a2a_delegation.py"), "--step"], input="\n" * 10,
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert "[step] Enter sends it, q stops: \n" in done.stdout
    assert "q stops: -->" not in done.stdout and "q stops: {" not in done.stdout


def start_serve(*args):
    """`serve` as a learner starts it in a second terminal; returns (process, base URL)."""
    process = Child([sys.executable, str(ROOT / "a2a_delegation.py"), "serve", *args], stderr=subprocess.DEVNULL)
    return process, base_url(process.until("listening on")[-1])


def test_peer_points_the_run_at_any_agent_and_prints_the_entry_that_would_trust_it(tmp_path):
    server, base = start_serve("billing-agent", "--wire", "1.0", "--token", "s3cret")
    try:
        env = {"MY_TOKEN": "s3cret"}
        untrusted = cli("--peer", base, "--token-env", "MY_TOKEN", env=env)
        assert "[trust] 'billing-agent' is allowlisted only at https://billing.acme.example/a2a" in untrusted.stdout
        entry = json.dumps({"name": "billing-agent", "endpoint": f"{base}/a2a"})
        assert f"[support] to trust 'billing-agent', vet it, then add this to the allowlist: {entry}" \
            in untrusted.stdout
        allow = json.loads((ROOT / "allowlist.json").read_text())
        allow["trusted"].append(json.loads(entry))
        (tmp_path / "allow.json").write_text(json.dumps(allow))
        trusted = cli("--peer", f"{base}/.well-known/agent-card.json", "--token-env", "MY_TOKEN",
                      "--allowlist", str(tmp_path / "allow.json"), env=env)
        assert trusted.returncode == 0, trusted.stderr
        assert trusted.stdout.count("[support] trusted result (from billing-agent): refund of $180.00") == 2
        assert "Bearer s3cret" not in trusted.stdout + trusted.stderr, "the token is never printed"
    finally:
        server.terminate()
        server.communicate(timeout=10)


def test_a_peer_token_goes_only_to_that_peers_origin(tmp_path):
    server, base = start_serve("refund-bot-9000", "--wire", "1.0")
    try:
        done = cli("--peer", base, "--token-env", "MY_TOKEN", "--allow-untrusted", "refund-bot-9000",
                   "--verbose", env={"MY_TOKEN": "s3cret"})
        posts = [line for line in done.stdout.splitlines() if line.startswith("    [--> POST")]
        to_peer = [line for line in posts if base in line]
        assert to_peer and all(f"Authorization: Bearer {masked('s3cret')}" in line for line in to_peer)
        assert not any("Bearer" in line for line in posts if base not in line and "refunds-r-us" in line)
    finally:
        server.terminate()
        server.communicate(timeout=10)
