"""No hangs, clear failures: one line naming the peer and the stage, and for a delegation,
whether a retry is safe. Each misbehaving peer is a real server on 127.0.0.1."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

import a2a_delegation as story
from conftest import ROOT, Child, cli, start_serve
from peers.support.calling.config import AllowEntry
from transports.network import HttpTransport
from transports.printer import FramePrinter


def delegate_to(base_url, timeout=0.3):
    card_url = f"{base_url}/.well-known/agent-card.json"
    transport = FramePrinter(HttpTransport(timeout=timeout))
    agent = story.SupportAgent(transport, [AllowEntry("billing-agent", f"{base_url}/a2a")],
                               {f"{base_url}/a2a": "t0k"}, lambda *args, **facts: None)
    (outcome,) = story.run(agent, [card_url])
    return outcome


def test_a_peer_that_is_down_fails_at_card_fetch_and_says_so(closed_port):
    outcome = delegate_to(f"http://127.0.0.1:{closed_port}")
    assert outcome.verdict is None
    assert "card fetch failed: could not connect" in outcome.error and "connection refused" in outcome.error


def test_a_slow_card_times_out_instead_of_hanging(misbehaving_peer):
    started = time.monotonic()
    outcome = delegate_to(misbehaving_peer("slow-card"))
    assert "card fetch failed: no reply within 0.3s (read timeout)" in outcome.error
    assert time.monotonic() - started < 3


@pytest.mark.parametrize("mode, reason", [
    ("slow", "no reply within 0.3s (read timeout)"),
    ("not-json", "response is not JSON"),
    ("http-500", "HTTP 500"),
    ("close", "the connection broke before a full reply"),
])
def test_a_delegation_that_breaks_after_sending_says_retry_is_not_safe(misbehaving_peer, mode, reason):
    started = time.monotonic()
    outcome = delegate_to(misbehaving_peer(mode))
    assert outcome.verdict is story.Verdict.TRUSTED and outcome.result is None
    assert outcome.error.startswith("delegation failed: ") and reason in outcome.error
    assert "retry is NOT safe" in outcome.error
    assert time.monotonic() - started < 3


@pytest.mark.parametrize("code, advice", [
    (-32001, "refused the request before acting"),  # A2A's: no such task, nothing was done
    (-32004, "refused the request before acting"),  # an operation it does not take
    (-32009, "refused the request before acting"),  # a version it does not speak
    (-32006, "retry is NOT safe"),  # the agent's own failure: it may have acted first
    (-32603, "retry is NOT safe"),  # JSON-RPC's internal error: the same
])
def test_each_a2a_refusal_says_nothing_was_done_and_a_failure_says_retry_is_not_safe(misbehaving_peer, code, advice):
    outcome = delegate_to(misbehaving_peer(f"error:{code}"))
    assert outcome.error.startswith("delegation failed: ") and f"({code})" in outcome.error, outcome.error
    assert advice in outcome.error, outcome.error


def test_the_cli_names_the_peer_and_stage_in_one_line(tmp_path, misbehaving_peer):
    base = misbehaving_peer("http-500")
    (tmp_path / "reg.json").write_text(json.dumps({"peers": [{"cardUrl": f"{base}/.well-known/agent-card.json"}]}))
    (tmp_path / "allow.json").write_text(json.dumps({"trusted": [{"name": "billing-agent", "endpoint": f"{base}/a2a"}]}))
    (tmp_path / "tokens.json").write_text(json.dumps({"tokens": {f"{base}/a2a": "t0k"}}))
    done = cli("--transport", "http", "--timeout", "2", "--registry", str(tmp_path / "reg.json"),
               "--allowlist", str(tmp_path / "allow.json"), "--credentials", str(tmp_path / "tokens.json"))
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("error: billing-agent: delegation failed: HTTP 500")


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_a_served_peer_asked_to_stop_twice_stops_once_cleanly_with_its_last_line(stop):
    """A signal asks the loop to stop (transports/signals.py), and a second is ignored: the
    clean-up is never cut short, and nothing is raised into the loop mid-write."""
    process, lines = start_serve("billing-agent", "--port", "0")
    process.send_signal(stop)
    process.send_signal(stop)
    out, err = process.communicate(timeout=10)
    assert process.returncode == 0 and out.count("[serve] billing-agent stopped.") == 1 and "Traceback" not in err


def test_serve_runs_a_standalone_peer_until_sigterm():
    process, lines = start_serve("billing-agent", "--port", "0", env={"A2A_SERVE_TOKEN": "tok-42"})
    try:
        base = lines[0].split("listening on ")[1].split()[0]
        assert base.startswith("http://127.0.0.1:")
        assert any(f"card:     {base}/.well-known/agent-card.json" in line for line in lines)
        transport = HttpTransport(timeout=5)
        card = json.loads(transport.get(f"{base}/.well-known/agent-card.json", {}).body)
        assert card["url"] == f"{base}/a2a"
        frame = b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/send", "params": {"skill": "process_refund", "input": {"order_id": "ORD-9", "amount": 3}}}'
        assert transport.post(card["url"], frame, {"Content-Type": "application/json"}).status == 401
        ok = transport.post(card["url"], frame, {"Content-Type": "application/json", "Authorization": "Bearer tok-42"})
        task_id = json.loads(ok.body)["result"]["id"]
        assert len(task_id) > 20, "a served peer's task ids are not guessable counters"
        transport.close()
    finally:
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=10)
    assert process.returncode == 0 and "stopped" in out and "Traceback" not in err


@pytest.mark.parametrize("command", [["serve", "billing-agent", "--port", "0"], ["web", "--port", "0"]])
def test_a_server_command_prints_its_banner_to_a_pipe_at_once_without_pythonunbuffered(command, tmp_path):
    """A stock machine sets no PYTHONUNBUFFERED: Python then writes a pipe in blocks, and a
    log collector (or a test) would see nothing until the server stopped."""
    env = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}
    process = Child([sys.executable, str(ROOT / "a2a_delegation.py"), *command], stderr=subprocess.DEVNULL,
                    env={**env, "TMPDIR": str(tmp_path)})
    try:
        assert "Ctrl-C" in process.until("Ctrl-C", seconds=10)[-1]
    finally:
        process.stop()


def test_serve_refuses_a_busy_port_with_one_line():
    process, lines = start_serve("refund-bot-9000")
    try:
        port = lines[0].split("listening on ")[1].split()[0].rsplit(":", 1)[1]
        done = subprocess.run([sys.executable, str(ROOT / "a2a_delegation.py"), "serve", "billing-agent",
                               "--port", port], capture_output=True, text=True, timeout=10)
        assert done.returncode == 2 and done.stderr.startswith("error: cannot serve billing-agent")
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=10)
