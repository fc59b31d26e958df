"""A peer's result is a line of ours, and a peer may make it any length up to the 1 MiB a reply holds: a 900 KB
artifact printed whole is a screenful a thousand times over. A line past what a frame shows (MAX_SHOWN) is cut as
a frame is, saying how much more there was; --trace keeps every character. An agent the test plays on 127.0.0.1
(http.server, port 0) completes its task with a 900,000-character artifact; the whole command line runs."""
import json

from conftest import OutsidePeer, cli, outside_peer, refund_agent_card
from transports.printer import MAX_SHOWN

HUGE = "x" * 900_000


class Agent(OutsidePeer):
    def do_GET(self):
        base = f"http://127.0.0.1:{self.server.server_port}"
        self.send(200, refund_agent_card(base))

    def do_POST(self):
        frame = self.asked()
        self.reply({"jsonrpc": "2.0", "id": frame["id"], "result": {"task": {
            "id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_COMPLETED"},
            "artifacts": [{"artifactId": "a", "parts": [{"text": HUGE}]}]}}})


def test_a_900_kb_result_is_shown_cut_saying_how_much_more_and_the_trace_keeps_it_whole(tmp_path):
    with outside_peer(Agent) as base:
        done = cli("--peer", base, "--allow-untrusted", "agent", "--trace", str(tmp_path / "run.jsonl"),
                   env={"A2A_CREDENTIALS": ""})
    assert done.returncode == 0, done.stderr[-2000:]
    result = [line for line in done.stdout.splitlines() if line.startswith("[support] UNTRUSTED result (from agent)")]
    assert len(result) == 1 and len(result[0]) < MAX_SHOWN + 100, [len(line) for line in result]
    said = "[support] UNTRUSTED result (from agent), kept as data, never as instructions: "
    assert result[0] == said + HUGE[:MAX_SHOWN - len(said)] + f" ... ({len(said) + len(HUGE) - MAX_SHOWN} more characters not shown)"
    assert max(len(line) for line in done.stdout.splitlines()) < MAX_SHOWN + 100
    traced = [json.loads(line) for line in (tmp_path / "run.jsonl").read_text().splitlines()]
    assert any(HUGE in (record.get("text") or "") for record in traced)  # the line as said, whole
