"""--scenario mcp: the support agent reaches down to its own tool over MCP, then across to
billing over A2A, through one printer and one transport, in-process or over HTTP."""
import json

import pytest

from conftest import cli, cli_once
from peers.support.lessons import orders_tool
from transports.inprocess import InProcessTransport


def sent_methods(stdout):
    return [json.loads(line[4:]).get("method") for line in stdout.splitlines() if line.startswith("--> {")]


@pytest.mark.parametrize("transport", ["in-process", "http"])
def test_the_tool_is_called_over_mcp_then_the_refund_is_delegated_over_a2a(transport):
    done = cli_once("--scenario", "mcp", "--transport", transport)
    assert done.returncode == 0, done.stderr
    assert sent_methods(done.stdout) == ["initialize", "notifications/initialized", "tools/list", "tools/call",
                                         "tasks/send"]
    assert "[mcp] the tool says ORD-3300 was charged $180.00" in done.stdout
    assert "trusted result (from billing-agent): refund of $180.00 issued for ORD-3300" in done.stdout


def test_the_tool_meets_no_trust_gate_and_the_peers_do_and_the_output_says_why():
    out = cli("--scenario", "mcp").stdout
    gated = [line for line in out.splitlines() if line.startswith("[trust]")]
    assert gated == ["[trust] 'billing-agent' is allowlisted -> delegating",
                     "[trust] 'refund-bot-9000' is NOT on the allowlist -> delegation REFUSED"]
    assert "wired in by us, so there is no trust gate" in out
    assert "the tool was called with no trust gate: we wired it in. Each peer met the gate:" in out


def test_the_frames_are_the_same_over_both_transports():
    def frames(transport):
        return [line for line in cli_once("--scenario", "mcp", "--transport", transport).stdout.splitlines()
                if line.startswith(("--> {", "<-- {"))]
    assert frames("in-process") == frames("http")


def mcp(frame):
    transport = InProcessTransport({orders_tool.TOOLS_URL: orders_tool.app})
    return transport.post(orders_tool.TOOLS_URL, json.dumps(frame).encode(), {"Content-Type": "application/json"})


def test_the_tool_server_answers_in_the_mcp_specifications_shapes():
    init = json.loads(mcp({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}).body)
    assert set(init["result"]) == {"protocolVersion", "capabilities", "serverInfo"}
    assert mcp({"jsonrpc": "2.0", "method": "notifications/initialized"}).status == 202
    listed = json.loads(mcp({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).body)["result"]["tools"]
    assert [tool["name"] for tool in listed] == ["lookup_order"] and "inputSchema" in listed[0]
    missing = json.loads(mcp({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "lookup_order", "arguments": {"order_id": "ORD-1"}}}).body)["result"]
    assert missing["isError"] is True, "a tool's own failure is a result, not a protocol error"
    bad = json.loads(mcp({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
        "name": "lookup_order", "arguments": {"order": []}}}).body)
    assert bad["error"]["code"] == -32602


def test_the_202_that_answers_the_initialized_notification_is_drawn_as_the_success_it_is(tmp_path):
    from peers.support.learner.diagram import marked
    from peers.support.learner.page import describe
    trace, drawn = tmp_path / "mcp.jsonl", tmp_path / "mcp.mmd"
    done = cli("--scenario", "mcp", "--trace", str(trace), "--diagram", str(drawn))
    assert done.returncode == 0, done.stderr
    assert "L3-->>L0: HTTP 202 accepted (a notification gets no reply)" in drawn.read_text()
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    run, marks = marked(records)
    accepted = [(step, mark) for step, mark in zip(run.steps, marks)
                if step.kind == "frame" and step.record.get("http_status") == 202]
    assert len(accepted) == 1
    step, mark = accepted[0]
    assert [m.cls for m in mark] == ["reply"], "a notification's 202 is no failure"
    fields = dict(describe(step, mark, "tools.support.example")["fields"])
    assert fields["Wire format"] == "MCP" and fields["Status"] == "202"
    mcp = [r["wire"] for r in records if r.get("kind") == "frame" and r.get("method") in orders_tool.METHODS]
    assert mcp and set(mcp) == {"MCP"}, "every MCP frame names its protocol, never None"


def test_a_202_to_a_request_that_expects_a_reply_is_still_a_failure():
    from peers.support.learner.diagram import frame_label
    assert frame_label({"direction": "<--", "http_status": 202, "jsonrpc_id": 3, "body": ""}, None)[1] == "fail"
    assert frame_label({"direction": "<--", "http_status": 500, "jsonrpc_id": None, "body": ""}, None)[1] == "fail"


def test_the_closing_lines_say_which_binding_the_delegations_rode_and_whether_any_peer_met_the_gate():
    assert cli_once("--scenario", "mcp").stdout.splitlines()[-1] == \
        "we do not own it. MCP and A2A rode the same JSON-RPC envelope, through the same printer."
    assert cli("--scenario", "mcp", "--wire", "1.0", "--binding", "http+json").stdout.splitlines()[-1] == \
        "we do not own it. MCP rode JSON-RPC, A2A HTTP+JSON, through the same printer."
    nothing = cli("--scenario", "mcp", "--binding", "http+json").stdout.splitlines()[-1]
    assert nothing.endswith("we wired it in. No peer's card could be used, so none met the gate."), nothing
