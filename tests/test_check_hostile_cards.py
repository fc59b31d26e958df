"""`check URL` against cards of every wrong shape: each is a finding under a card requirement,
never a traceback, and a card too broken to read stops the run after the card, saying so.

Spec: A2A 1.0 section 4.4 (the card's fields) and 8.2 (discovery). Every byte of a card is
the agent's: wrong types, unhashable values where names go, nesting past any card's, a card
over the size limit, interfaces whose URLs are not URLs."""
import json

import pytest

from conftest import OutsidePeer, cli, outside_peer

GOOD = {"name": "n", "description": "d", "version": "1", "capabilities": {}, "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"], "skills": [{"id": "s", "name": "s", "description": "d", "tags": []}]}
CARDS = {
    "a list, not an object": [GOOD],
    "wrong types everywhere": {**GOOD, "name": 5, "skills": {"id": "s"}, "capabilities": [],
                               "supportedInterfaces": ["http://x", 5, {"url": 7}],
                               "securitySchemes": [], "securityRequirements": {"schemes": 1}},
    "unhashable names": {**GOOD, "supportedInterfaces": [{"url": "http://127.0.0.1:9/a", "protocolBinding": ["JSONRPC"],
                                                          "protocolVersion": {"1": 0}}],
                         "skills": [{"id": ["s"], "name": "s", "description": "d", "tags": []}, {"id": ["s"]}],
                         "securitySchemes": {"b": {"httpAuthSecurityScheme": []}},
                         "securityRequirements": [{"schemes": {"b": {"list": [[]]}}}, [], 5]},
    "a url that is not one": {**GOOD, "supportedInterfaces": [{"url": "javascript:alert(1)", "protocolBinding": "JSONRPC",
                                                               "protocolVersion": "1.0"}]},
    "deep nesting": b'{"name": "n", "x": ' + b"[" * 5000 + b"]" * 5000 + b"}",
    "an unknown binding only": {**GOOD, "supportedInterfaces": [{"url": "http://127.0.0.1:9/g", "protocolBinding": "GRPC",
                                                                "protocolVersion": "1.0"}]},
}


class CardServer(OutsidePeer):
    def do_GET(self):
        card = self.server.card
        self.send(200, card if isinstance(card, bytes) else json.dumps(card).encode())

    do_HEAD = do_GET
    do_POST = do_GET


@pytest.mark.parametrize("name", list(CARDS) + ["over the size limit"])
def test_a_card_of_any_shape_is_findings_never_a_traceback(name):
    card = CARDS.get(name, b'{"name": "' + b"x" * (2 << 20) + b'"}')
    with outside_peer(CardServer, card=card, handle_error=lambda request, address: None) as base:
        done = cli("check", base, "--format", "json", "--timeout", "2")
    assert "Traceback" not in done.stdout + done.stderr and done.returncode in (0, 1), done.stderr
    report = json.loads(done.stdout)
    outcomes = {row["id"]: row["outcome"] for row in report["requirements"]}
    if name in ("a list, not an object", "over the size limit", "deep nesting"):
        assert outcomes["CARD-DISC-001"] == "fail" and done.returncode == 1
    elif name == "an unknown binding only":
        assert outcomes["WB-BIND-MEASURED-001"] == "not measured"
    else:
        assert "fail" in {outcomes[id] for id in ("CARD-STRUCT-001", "CARD-PROTO-002", "WB-CARD-SKILLS-001")}


@pytest.mark.parametrize("unusable", [{"url": "ftp://x/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
                                      5, "x", []])
def test_a_1_0_interface_with_no_http_url_beside_a_good_one_still_fails_card_proto_002_and_the_card_is_read(unusable):
    """The calling side leaves such an interface out (one with no http(s) url, or no object) and speaks
    to the others (card_reading.usable), as it does a 0.3 card's: check still names it, a MUST broken,
    and its auth family reads the card as the calling side does, where both refused the whole card
    ('cannot be read')."""
    def served(base):
        return {**GOOD, "supportedInterfaces": [
            unusable, {"url": base + "/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]}

    class Served(CardServer):
        def do_GET(self):
            self.send(200, json.dumps(served(f"http://127.0.0.1:{self.server.server_port}")).encode())

    with outside_peer(Served, card=None, handle_error=lambda request, address: None) as base:
        done = cli("check", base, "--format", "json", "--timeout", "2")
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    report = json.loads(done.stdout)
    proto = {row["id"]: row for row in report["requirements"]}["CARD-PROTO-002"]
    assert proto["outcome"] == "fail" and "supportedInterfaces[0]" in proto["verdicts"][0]["detail"], proto
    assert "cannot be read" not in json.dumps(report), json.dumps(report)[:3000]
