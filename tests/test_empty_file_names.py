"""A file flag given an empty name (`--replay "$TRACE"` with TRACE unset, a script's typo) is a
mistake, said in one line with exit status 2, as `--trace ""` already is ("needs a file
name"): never read as "the flag was not given". For --replay that would turn a printed,
peerless replay into a live run that delegates a refund; for --allowlist and --registry it
would silently put the default trust list and registry in place of the ones the user named.

A hostile round's finding: each test runs the support agent against a peer of the test's own
on 127.0.0.1 (port 0), and counts the messages that reached it."""
import json

import pytest

from conftest import OutsidePeer, cli, outside_peer

CARD = {"name": "counted", "description": "d", "version": "1",
        "supportedInterfaces": [{"url": "BASE/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {}, "defaultInputModes": ["application/json"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "process_refund", "name": "r", "description": "d", "tags": []}]}


class CountingPeer(OutsidePeer):
    def do_GET(self):
        base = f"http://127.0.0.1:{self.server.server_port}"
        self.send(200, json.dumps(CARD).replace("BASE", base).encode())

    def do_POST(self):
        asked = self.asked()
        self.server.messages.append(asked)
        self.reply({"jsonrpc": "2.0", "id": asked["id"], "result": {"task": {
            "id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_COMPLETED"},
            "artifacts": [{"artifactId": "a", "parts": [{"text": "refund issued"}]}]}}})


@pytest.mark.parametrize("flag", ["--replay", "--allowlist", "--registry"])
def test_an_empty_file_name_is_one_line_and_no_message_is_sent(flag):
    messages = []
    with outside_peer(CountingPeer, messages=messages) as base:
        done = cli("--peer", base, "--allow-untrusted", "counted", flag, "", "--timeout", "5", "--quiet")
    assert messages == [], f"{flag} \"\" sent {len(messages)} message(s) to the peer: a live run, not a mistake said"
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert len(done.stderr.strip().splitlines()) == 1 and flag in done.stderr, done.stderr
