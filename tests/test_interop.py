"""Interoperability with the official A2A SDK, the acceptance test of the 1.0 wire.

The project stays dependency-free, so these tests need an interpreter that has the SDK,
named by A2A_SDK_PYTHON; without it they are skipped. To run them:
    python -m venv .sdk && .sdk/bin/pip install "a2a-sdk[http-server,signing]" uvicorn
    A2A_SDK_PYTHON=.sdk/bin/python python -m pytest tests/test_interop.py
Everything listens on 127.0.0.1 and is stopped when the test ends.

The last tests follow a task the SDK's agent takes its time over (tests/interop/
sdk_push_server.py) with --no-wait, --stream and --push (with --trace and --diagram too):
each run must end with the agent's result and exit status 0, within FOLLOW_TIMEOUT.
tests/test_interop_js.py runs the same ones against the JavaScript SDK's agent.
"""
import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from typing import NamedTuple

import pytest

from conftest import ROOT, Child, base_url, free_port

SDK_PYTHON = os.environ.get("A2A_SDK_PYTHON")
pytestmark = pytest.mark.skipif(not SDK_PYTHON, reason="set A2A_SDK_PYTHON to a Python with a2a-sdk")
INTEROP = ROOT / "tests" / "interop"


@pytest.fixture
def served_billing():
    """`serve billing-agent --wire 1.0` on a free port: its base URL, until the test ends."""
    serve = Child([sys.executable, str(ROOT / "a2a_delegation.py"), "serve", "billing-agent",
                   "--wire", "1.0", "--token", "interop-token"], stderr=subprocess.DEVNULL)
    try:
        yield base_url(serve.until("listening on")[-1])
    finally:
        serve.terminate()
        serve.communicate(timeout=10)


def sdk_client(base, text, *flags):
    done = subprocess.run([SDK_PYTHON, str(INTEROP / "sdk_client.py"), base, "interop-token", text, *flags],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_the_official_sdk_client_gets_the_refund_from_our_served_peer(served_billing):
    out = sdk_client(served_billing, "Please refund $42 on order ORD-42")
    assert "text refund of $42.00 issued for ORD-42 (ref BILL-ORD-42)" in out


def test_the_official_sdk_client_streams_a_refund_from_our_served_peer(served_billing):
    out = sdk_client(served_billing, "Please refund $42 on order ORD-42", "--stream")
    kinds = [line.split()[1] for line in out.splitlines() if line.startswith("event ")]
    assert kinds == ["task", "status_update", "artifact_update", "status_update"], out
    assert "text refund of $42.00 issued for ORD-42 (ref BILL-ORD-42)" in out


@pytest.mark.parametrize("flags, kinds", [((), None), (("--stream",), ["task", "status_update",
                                                                     "artifact_update", "status_update"])])
def test_the_official_sdk_client_allowed_only_http_json_gets_the_refund_over_our_rest_routes(served_billing, flags,
                                                                                             kinds):
    out = sdk_client(served_billing, "Please refund $42 on order ORD-42", "--rest", *flags)
    assert "text refund of $42.00 issued for ORD-42 (ref BILL-ORD-42)" in out
    assert kinds is None or [line.split()[1] for line in out.splitlines() if line.startswith("event ")] == kinds, out


def test_the_official_sdk_client_continues_a_task_paused_for_approval_on_our_served_peer(served_billing):
    out = sdk_client(served_billing, "Please refund $6200 on order ORD-62", "--approve")
    states = [line.split() for line in out.splitlines() if line.startswith("state ")]
    assert [fields[1] for fields in states] == ["6", "3"], out  # INPUT_REQUIRED, then COMPLETED
    assert states[0][3] == states[1][3], "the same task, continued"
    assert states[1][5] == "3", "its history holds all three turns"
    assert "text refund of $6,200.00 issued for ORD-62 (ref BILL-ORD-62)" in out


@pytest.mark.parametrize("version, method", [("1.0", "SendMessage"), ("0.3", "message/send")])
def test_our_support_agent_delegates_to_an_agent_built_with_the_official_sdk(tmp_path, version, method):
    """A 0.3 agent's card, as the SDK serves it, lists its one interface at 0.3 beside 0.3's own
    fields: read as a 1.0 card (it has supportedInterfaces), it was refused as malformed."""
    port = free_port()
    server = Child([SDK_PYTHON, str(INTEROP / "sdk_server.py"), str(port), version], stderr=subprocess.PIPE)
    try:
        server.until("ready")
        base = f"http://127.0.0.1:{port}"
        for _ in range(100):  # "ready" comes just before uvicorn binds; wait until it does
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        (tmp_path / "reg.json").write_text(json.dumps({"peers": [{"cardUrl": f"{base}/.well-known/agent-card.json"}]}))
        (tmp_path / "allow.json").write_text(json.dumps({"trusted": [{"name": "echo-refunds", "endpoint": f"{base}/"}]}))
        done = subprocess.run([sys.executable, str(ROOT / "a2a_delegation.py"), "--transport", "http",
                               "--registry", str(tmp_path / "reg.json"), "--allowlist", str(tmp_path / "allow.json")],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert f'"method": "{method}"' in done.stdout, done.stdout[-2000:]
        result = next(line for line in done.stdout.splitlines() if line.startswith("[support] trusted result"))
        assert result.startswith("[support] trusted result (from echo-refunds): sdk-agent received: ")
        assert '"order_id": "ORD-3300"' in result and '"amount": 180.0' in result  # our data part arrived
    finally:
        server.terminate()
        server.communicate(timeout=10)


def test_a_card_we_sign_verifies_in_the_official_sdk_and_one_it_signs_verifies_here(tmp_path):
    """A2A 1.0 signed cards: the same canonical bytes on both sides (RFC 8785, empties dropped)."""
    if subprocess.run([SDK_PYTHON, "-c", "import jwt"], capture_output=True).returncode != 0:
        pytest.skip("the SDK's signing extra (PyJWT) is not installed: a2a-sdk[signing]")
    from peers import billing
    from peers.a2a import wire_v10
    from peers.signing import card_signature, rs256
    from peers.app import PeerApp
    key_file = ROOT / "tests" / "keys" / "signer.pem"
    key = rs256.private_from_pem(key_file.read_text())
    (tmp_path / "ours.json").write_bytes(PeerApp(billing.billing_agent(), wire_v10, signing_key=key).card_body)
    (tmp_path / "key.jwk").write_text(json.dumps(key.public.jwk()))
    script = str(INTEROP / "sdk_signing.py")
    verified = subprocess.run([SDK_PYTHON, script, "verify", str(tmp_path / "ours.json"), str(tmp_path / "key.jwk")],
                              capture_output=True, text=True, timeout=60)
    assert verified.stdout.strip() == "verified", verified.stderr[-2000:]
    (tmp_path / "unsigned.json").write_bytes(PeerApp(billing.billing_agent(), wire_v10).card_body)
    (tmp_path / "key.pem").write_text(key_file.read_text())
    (tmp_path / "key.pem.kid").write_text(json.dumps(key.public.jwk()))
    signed = subprocess.run([SDK_PYTHON, script, "sign", str(tmp_path / "key.pem"), str(tmp_path / "unsigned.json")],
                            capture_output=True, text=True, timeout=60)
    assert signed.returncode == 0, signed.stderr[-2000:]
    document = json.loads(signed.stdout)
    assert card_signature.unproven(card_signature.signed_content(document), key.public) is None
    document["description"] += " (altered)"
    assert "altered after it was signed" in card_signature.unproven(card_signature.signed_content(document), key.public)


# -- following a task the SDK's agent takes its time over: --no-wait, --stream, --push --

FOLLOW_TIMEOUT = 8  # our --timeout: far over the agent's 0.5 s of work, far under a run's 60 s
FOLLOWS = [  # how our support agent follows the task; each list is the run's flags
    ["--wire", "1.0"],  # blocking: the one answer is the finished task (shows the agent works)
    ["--wire", "1.0", "--no-wait"],
    ["--wire", "1.0", "--stream"],
    ["--wire", "1.0", "--push"],
    ["--push"],  # the wire the card declares (1.0), not one we chose
    ["--wire", "1.0", "--push", "--trace", "run.jsonl"],
    ["--wire", "1.0", "--push", "--diagram", "run.mmd"],
]


class ServedAgent(NamedTuple):
    base: str  # its base URL: the card is at /.well-known/agent-card.json
    trusted: dict  # the allowlist entry that trusts it: the name on its card, its endpoint
    log: list  # every line it has printed, for a failing test's message


@contextlib.contextmanager
def served_agent(command: list, cwd=None, seconds: float = 30):
    """Runs an agent that prints "listening on BASE_URL {name, endpoint}" once it is bound;
    yields it as a ServedAgent, and stops it however the test ends."""
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log, listening = [], threading.Event()

    def drain() -> None:  # reads to the end, so a chatty agent never blocks on a full pipe
        for line in process.stdout:
            log.append(line.rstrip("\n"))
            if line.startswith("listening on "):
                listening.set()
    threading.Thread(target=drain, daemon=True).start()
    try:
        deadline = time.monotonic() + seconds
        while not listening.wait(0.1):
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"{command[-1]} did not start listening:\n" + "\n".join(log[-30:]))
        first = next(line for line in log if line.startswith("listening on "))
        _, _, base, trusted = first.split(" ", 3)
        yield ServedAgent(base, json.loads(trusted), log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def follow(agent: ServedAgent, flags: list, folder) -> subprocess.CompletedProcess:
    """Our support agent delegates the refund to `agent`, trusted by a fresh allowlist,
    following the task as `flags` say (file names in them are made paths in `folder`)."""
    allowlist = folder / "allow.json"
    allowlist.write_text(json.dumps({"trusted": [agent.trusted]}))
    flags = [str(folder / flag) if flag.endswith((".jsonl", ".mmd")) else flag for flag in flags]
    return subprocess.run([sys.executable, str(ROOT / "a2a_delegation.py"), "--peer", agent.base,
                           "--allowlist", str(allowlist), "--timeout", str(FOLLOW_TIMEOUT), *flags],
                          capture_output=True, text=True, timeout=60)


def assert_followed(done: subprocess.CompletedProcess, agent: ServedAgent, flags: list, result: str) -> None:
    """The run ended well, with `result` from the agent, having followed the task as asked."""
    name, out = agent.trusted["name"], done.stdout
    its_turn = out[out.find(f"[trust] '{name}'"):]  # what the run printed from its trust decision on
    shown = (f"exit {done.returncode}; its turn:\n{its_turn[:4000]}\nstderr ends:\n{done.stderr[-2000:]}\n"
             f"{name} printed:\n" + "\n".join(agent.log[-20:]))
    assert "Traceback" not in done.stderr, shown
    assert done.returncode == 0, shown
    finished = f"[support] trusted result (from {name}): {result}" in out.splitlines()
    assert finished, shown
    if "--stream" in flags:
        assert '"method": "SendStreamingMessage"' in out, shown
    if "--no-wait" in flags:  # the first answer was not the last: it had to ask again
        assert '"returnImmediately": true' in out and '"method": "GetTask"' in out, shown
    if "--push" in flags:  # the agent pushed the artifact and the completed status: no need to ask
        assert '"taskPushNotificationConfig"' in out and '"method": "GetTask"' not in out, shown


def assert_recorded(folder, agent: ServedAgent, flags: list) -> None:
    """--trace: the trace shows each push (the working and completed status updates, the
    artifact) as a record of its own, not only as a printed line, and as coming from the
    agent that pushed it. --diagram, drawn from the same records: the pushes are arrows
    from that agent's lane (beyond its card and its first answer)."""
    name = agent.trusted["name"]
    if "--trace" in flags:
        records = [json.loads(line) for line in (folder / "run.jsonl").read_text().splitlines()]
        told = [record for record in records if record.get("kind") != "line"
                and any(kind in json.dumps(record) for kind in ("statusUpdate", "artifactUpdate"))]
        shown = "\n".join(json.dumps(record)[:300] for record in told)
        assert sum("statusUpdate" in json.dumps(record) for record in told) >= 2, shown
        assert any("artifactUpdate" in json.dumps(record) for record in told), shown
        assert any("TASK_STATE_COMPLETED" in json.dumps(record) for record in told), shown
        assert {record.get("peer", name) for record in told} == {name}, shown
    if "--diagram" in flags:
        drawn = (folder / "run.mmd").read_text()
        lane = next((line.split()[1] for line in drawn.splitlines()
                     if line.strip().startswith("participant ") and line.rstrip().endswith(f" as {name}")), None)
        assert drawn.startswith("sequenceDiagram") and lane is not None, drawn[-3000:]
        assert sum(line.strip().startswith(f"{lane}--") for line in drawn.splitlines()) >= 3, drawn[-3000:]


@pytest.fixture(scope="module")
def slow_sdk_agent():
    """tests/interop/sdk_push_server.py on a free port, for the whole module."""
    with served_agent([SDK_PYTHON, str(INTEROP / "sdk_push_server.py")]) as agent:
        yield agent


@pytest.mark.parametrize("flags", FOLLOWS, ids=" ".join)
def test_our_support_agent_follows_a_slow_task_on_an_agent_built_with_the_official_sdk(
        slow_sdk_agent, tmp_path, flags):
    done = follow(slow_sdk_agent, flags, tmp_path)
    assert_followed(done, slow_sdk_agent, flags, "sdk refund of 180.0 for ORD-3300 (ref SDK-ORD-3300)")
    assert_recorded(tmp_path, slow_sdk_agent, flags)


# -- an agent that offers only HTTP+JSON: the SDK's REST routes, nothing else ----------------

REST_FOLLOWS = {  # our flags -> what must have crossed (the request lines the printer shows)
    "plain": ([], ["--> POST /rest/message:send "]),
    "stream": (["--stream"], ["--> POST /rest/message:stream ", "<-- 200 a stream of events"]),
    "no-wait": (["--no-wait"], ["--> POST /rest/message:send ", '"returnImmediately": true', "--> GET /rest/tasks/"]),
    "push": (["--push"], ["--> POST /rest/message:send ", '"taskPushNotificationConfig"', "(pushed to our webhook)"]),
}


@pytest.fixture(scope="module")
def rest_only_sdk_agent():
    """tests/interop/sdk_push_server.py --rest-only: create_rest_routes only, a card with one HTTP+JSON interface."""
    with served_agent([SDK_PYTHON, str(INTEROP / "sdk_push_server.py"), "--rest-only"]) as agent:
        yield agent


@pytest.mark.parametrize("how", list(REST_FOLLOWS))
def test_our_support_agent_follows_a_task_on_the_official_sdks_rest_only_server(rest_only_sdk_agent, tmp_path, how):
    flags, crossed = REST_FOLLOWS[how]
    done = follow(rest_only_sdk_agent, flags, tmp_path)
    assert_followed(done, rest_only_sdk_agent, [], "sdk refund of 180.0 for ORD-3300 (ref SDK-ORD-3300)")
    for line in crossed:
        assert line in done.stdout, f"{line!r} did not cross:\n{done.stdout[-3000:]}"
    assert '"jsonrpc"' not in done.stdout and "malformed" not in done.stdout + done.stderr


def test_our_support_agent_refuses_the_rest_only_server_when_told_to_speak_json_rpc(rest_only_sdk_agent, tmp_path):
    done = follow(rest_only_sdk_agent, ["--binding", "jsonrpc"], tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "not sent: the card is not supported: it offers HTTP+JSON, not the JSONRPC asked for" in done.stdout
    assert "--> POST" not in done.stdout  # nothing but the card crossed
