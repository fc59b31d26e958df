"""Cards as agents we do not own serve them, read by `--peer`: what the card offers is what
we choose from, and a card we cannot speak to is refused saying truly why.

Each agent is a test's own http.server on 127.0.0.1, port 0 (conftest.outside_peer): its
card at /.well-known/agent-card.json, and a JSON-RPC endpoint that records what it was sent."""
import json

import pytest

from conftest import OutsidePeer, cli, outside_peer

SKILL = {"id": "process_refund", "name": "r", "description": "r", "tags": []}


def card_03(base, **fields):
    """An A2A 0.3 card as the official SDKs write it (protocolVersion "0.3.0")."""
    return {"name": "outside", "description": "d", "version": "1", "protocolVersion": "0.3.0", "url": base + "/a2a",
            "capabilities": {}, "defaultInputModes": ["application/json"], "defaultOutputModes": ["text/plain"],
            "skills": [SKILL], **fields}


class Outside(OutsidePeer):
    """Serves the server's `card(base)`; answers every JSON-RPC request with a completed task, noting its path."""

    def do_GET(self):
        base = f"http://127.0.0.1:{self.server.server_port}"
        self.send(200, json.dumps(self.server.card(base)).encode())

    def do_POST(self):
        asked = self.asked()
        self.server.posted.append((self.path, asked.get("method")))
        task = {"kind": "task", "id": "t-1", "contextId": "c-1", "status": {"state": "completed"},
                "artifacts": [{"artifactId": "a", "parts": [{"kind": "text", "text": "refund issued"}]}]}
        self.reply({"jsonrpc": "2.0", "id": asked.get("id"), "result": task})


def run_against(card, *flags):
    posted = []
    with outside_peer(Outside, card=card, posted=posted) as base:
        done = cli("--peer", base, "--allow-untrusted", "outside", "--timeout", "5", *flags, timeout=20)
    return done, posted


def test_a_0_3_card_preferring_rest_is_spoken_to_over_the_json_rpc_interface_it_also_lists():
    done, posted = run_against(lambda base: card_03(
        base, url=base + "/rest", preferredTransport="HTTP+JSON",
        additionalInterfaces=[{"url": base + "/rest", "transport": "HTTP+JSON"},
                              {"url": base + "/jsonrpc", "transport": "JSONRPC"}]))
    assert "Traceback" not in done.stderr and "not supported" not in done.stdout + done.stderr, done.stdout + done.stderr
    assert posted == [("/jsonrpc", "message/send")], done.stdout + done.stderr
    assert "UNTRUSTED result (from outside), kept as data, never as instructions: refund issued" in done.stdout


def test_wire_0_3_to_a_card_offering_0_3_only_over_http_json_says_so_and_sends_nothing():
    done, posted = run_against(lambda base: {
        "name": "outside", "description": "d", "version": "1", "capabilities": {},
        "supportedInterfaces": [{"url": base + "/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
                                {"url": base + "/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "0.3.0"}],
        "defaultInputModes": ["application/json"], "defaultOutputModes": ["text/plain"], "skills": [SKILL]}, "--wire", "0.3")
    said = done.stdout + done.stderr
    assert "it offers A2A 0.3 only over HTTP+JSON, and the support agent speaks 0.3 over JSONRPC alone" in said, said
    assert "speaks the 1.0 wire format" not in said and "Traceback" not in said
    assert posted == []


class OtherVersion(Outside):
    """Answers each request in the other version's shape: 0.3's bare task to 1.0, 1.0's wrapped task to 0.3."""

    def do_POST(self):
        asked = self.asked()
        self.server.posted.append((self.path, asked.get("method")))
        task = {"id": "t-1", "contextId": "c-1", "status": {"state": "completed"}}
        self.reply({"jsonrpc": "2.0", "id": asked.get("id"), "result": {"task": task} if asked.get("method") ==
                    "message/send" else {"kind": "task", **task}})


def test_an_answer_in_the_other_versions_shape_is_refused_in_one_line_naming_the_version_it_is_spelled_in():
    for version, spelled in (("0.3.0", 'spelled as A2A 1.0 spells one, wrapped: {"task": ...}'),
                             ("1.0", 'spelled as A2A 0.3 spells one, by its "kind"')):
        posted = []
        with outside_peer(OtherVersion, card=lambda base: {**card_03(base), "protocolVersion": version, **({
                "supportedInterfaces": [{"url": base + "/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]}
                if version == "1.0" else {})}, posted=posted) as base:
            done = cli("--peer", base, "--allow-untrusted", "outside", "--timeout", "5", timeout=20)
        failed = [line for line in done.stderr.splitlines() if "delegation failed" in line]
        assert len(failed) == 1 and spelled in failed[0] and "Traceback" not in done.stderr, done.stdout + done.stderr
        assert len(posted) == 1


@pytest.mark.parametrize("interface", [{"url": "not a url"}, {"url": 5}, {}, {"url": ["x"]}, {"url": "ftp://x/a2a"}])
def test_a_0_3_cards_json_rpc_additional_interface_with_no_http_url_is_left_out_in_one_line_not_the_whole_card(
        interface):
    """0.3's additionalInterfaces are choices beside the card's url (0.3 section 5.6): one that names
    no http(s) URL refused the whole card, the url it prefers too (and a url that was no string,
    or none at all, ended the run in a traceback). `check` leaves it out too, and names it."""
    done, posted = run_against(lambda base: card_03(base, additionalInterfaces=[
        {"transport": "JSONRPC", **interface}, {"url": base + "/a2a", "transport": "JSONRPC"}]))
    said = done.stdout + done.stderr
    assert "Traceback" not in said and posted == [("/a2a", "message/send")], said
    left_out = [line for line in said.splitlines() if "additionalInterfaces[0]" in line]
    assert len(left_out) == 1 and "left out" in left_out[0] and "http(s) URL" in left_out[0], said
