"""`check` against a 0.3 card that declares HTTP+JSON as 0.3 does, in additionalInterfaces
(`{"url", "transport"}`), beside its url and preferredTransport; and, as the Python SDK serves
a 0.3 card, with 1.0's supportedInterfaces (at protocolVersion 0.3) as well. 0.3's HTTP+JSON
(its /v1/ routes) is a binding this checker does not speak: the report says the card declares
it and that it was not measured, and why; nothing it says is untrue (no "no supportedInterfaces",
no "declares no binding it applies to"). Asked for that binding alone (--binding http+json),
the run measures nothing it was asked, so it does not end 0: it says so in one line, exit 2.
The agent is test_check_broken_agents.py's (http.server's, not ours), on 127.0.0.1."""
import json

import pytest

from conftest import cli, outside_peer
from test_check_broken_agents import TOKEN, Agent, card


class Sdk03(Agent):
    def do_GET(self):
        base = f"http://127.0.0.1:{self.server.server_port}"
        document = card(base, "v03_only")
        document["additionalInterfaces"] = [{"transport": "HTTP+JSON", "url": base + "/rest"}]
        document["supportedInterfaces"] = [
            {"url": base + "/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
            {"url": base + "/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "0.3"}]
        self.send(200, json.dumps(document).encode(), headers=[("Cache-Control", "max-age=60"), ("ETag", '"v1"')])


def checked(folder, *extra):
    with outside_peer(Sdk03, flaw=None, handle_error=lambda request, address: None) as base:
        store = folder / "credentials.json"
        store.write_text(json.dumps({"tokens": {base: TOKEN}}))
        done = cli("check", base, "--credentials", store, "--format", "json", "--timeout", "1", *extra)
    assert "Traceback" not in done.stderr + done.stdout
    return done


def test_a_0_3_cards_http_json_interface_is_declared_and_said_not_measured_and_nothing_said_is_false(tmp_path):
    done = checked(tmp_path)
    report = json.loads(done.stdout)
    assert report["card"]["version"] == "0.3" and report["card"]["bindings"] == ["JSONRPC", "HTTP+JSON"]
    details = {row["id"]: [verdict["detail"] for verdict in row["verdicts"]] for row in report["requirements"]}
    outcomes = {row["id"]: row["outcome"] for row in report["requirements"]}
    measured = " ".join(details["WB-BIND-MEASURED-001"])
    assert outcomes["WB-BIND-MEASURED-001"] == "not measured" and "HTTP+JSON" in measured and "0.3" in measured
    said = json.dumps(details)
    assert "has no supportedInterfaces" not in said and "declares no binding it applies to" not in said, said
    assert outcomes["CORE-GET-002"] == "pass", "JSON-RPC, the card's url, is measured as ever"
    assert all(outcomes[row] != "pass" for row in details if "HTTP_JSON" in row)


def test_asked_for_a_binding_it_cannot_measure_check_says_so_and_does_not_end_0(tmp_path):
    done = checked(tmp_path, "--binding", "http+json")
    assert done.returncode == 2 and done.stdout == "", done.stdout[:400]
    line = done.stderr.strip()
    assert "\n" not in line and "HTTP+JSON" in line and "0.3" in line, line


class BadAdditional03(Agent):
    """A 0.3 card whose first JSON-RPC additionalInterfaces entry names no http(s) URL (the server's `bad`)."""

    def do_GET(self):
        base = f"http://127.0.0.1:{self.server.server_port}"
        document = card(base, "v03_only")
        document["additionalInterfaces"] = [{"transport": "JSONRPC", "url": self.server.bad},
                                            {"transport": "JSONRPC", "url": base + "/a2a"}]
        self.send(200, json.dumps(document).encode())


@pytest.mark.parametrize("bad", ["not a url", 5])
def test_a_0_3_additional_interface_with_no_http_url_is_a_must_failed_naming_it_and_the_rest_is_asked(tmp_path, bad):
    """check left such an entry out and said nothing of it (CARD-PROTO-002 was skipped as 1.0's), while
    its auth family read the card as the calling side did, which refused it whole: 'the card cannot be
    read'. Now both leave that one interface out, and check names it."""
    with outside_peer(BadAdditional03, flaw=None, bad=bad, handle_error=lambda request, address: None) as base:
        store = tmp_path / "credentials.json"
        store.write_text(json.dumps({"tokens": {base: TOKEN}}))
        done = cli("check", base, "--credentials", store, "--format", "json", "--timeout", "1")
    assert "Traceback" not in done.stderr + done.stdout
    report = json.loads(done.stdout)
    rows = {row["id"]: row for row in report["requirements"]}
    proto = rows["CARD-PROTO-002"]
    assert proto["outcome"] == "fail" and "additionalInterfaces[0]" in proto["verdicts"][0]["detail"], proto
    assert rows["WB-AUTH-RIGHT-001"]["outcome"] == "pass" and rows["CORE-GET-002"]["outcome"] == "pass"
    assert "cannot be read" not in json.dumps(report)


class BadBesideRest03(Agent):
    """A 0.3 card listing, beside its JSON-RPC url, an interface with no url and an HTTP+JSON one."""

    def do_GET(self):
        base = f"http://127.0.0.1:{self.server.server_port}"
        document = card(base, "v03_only")
        document["additionalInterfaces"] = [{"transport": "JSONRPC"}, {"transport": "HTTP+JSON", "url": base + "/rest"}]
        self.send(200, json.dumps(document).encode())


def test_card_proto_002_says_only_the_json_rpc_interfaces_of_the_rest_are_asked_not_every_one(tmp_path):
    """It said the others "are asked": the HTTP+JSON one never is (0.3's /v1/ routes are not 1.0's)."""
    with outside_peer(BadBesideRest03, flaw=None, handle_error=lambda request, address: None) as base:
        done = cli("check", base, "--format", "json", "--timeout", "1")
    detail = {row["id"]: row for row in json.loads(done.stdout)["requirements"]}["CARD-PROTO-002"]["verdicts"][0]["detail"]
    assert "additionalInterfaces[0]" in detail and "the others are" not in detail, detail
    assert "asks one JSON-RPC interface of the rest, the card's url first" in detail, detail
