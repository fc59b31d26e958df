"""`check --deep` makes its first message from the input schema a card publishes for its first
skill (the workbench's skill-input-schema extension). That schema is the agent's, read as
data: JSON Schema's own forms (a property whose "type" is a list, ["number", "null"]) and
wrong shapes ("required": null, "properties" naming a list) must give a message of some kind
or a finding, never a traceback, and the run must end with its report and exit status 0 or 1.

A hostile round's finding: the agent is a server of the test's own on 127.0.0.1, port 0,
answering every request with TaskNotFoundError."""
import json

import pytest

from conftest import OutsidePeer, agent_card, cli, outside_peer

SCHEMA_EXTENSION = "urn:a2a-delegation-workbench:skill-input-schema:v1"
SCHEMAS = {
    "a type that is a list (JSON Schema allows it)": {
        "type": "object", "properties": {"amount": {"type": ["number", "null"]}}, "required": ["amount"]},
    "a type that is an object": {
        "type": "object", "properties": {"amount": {"type": {"const": "number"}}}, "required": ["amount"]},
    "required that is null": {"type": "object", "properties": {}, "required": None},
    "required that is a number": {"type": "object", "properties": {}, "required": 5},
}


class SchemaAgent(OutsidePeer):
    def do_GET(self):
        self.send(200, agent_card(f"http://127.0.0.1:{self.server.server_port}", "schema-agent",
                                  defaultInputModes=["application/json"], capabilities={"extensions": [
                                      {"uri": SCHEMA_EXTENSION, "params": {"s": self.server.schema}}]}))

    def do_POST(self):
        try:
            asked_id = json.loads(self.rfile.read(int(self.headers["Content-Length"]))).get("id")
        except (ValueError, AttributeError):
            asked_id = None
        self.reply({"jsonrpc": "2.0", "id": asked_id, "error": {"code": -32001, "message": "Task not found"}})


@pytest.mark.parametrize("name", list(SCHEMAS))
def test_a_published_input_schema_of_any_shape_never_stops_check_deep(name):
    with outside_peer(SchemaAgent, schema=SCHEMAS[name]) as base:
        done = cli("check", base, "--deep", "--format", "json", "--timeout", "2")
    assert "Traceback" not in done.stdout + done.stderr, done.stderr[-2000:]
    assert done.returncode in (0, 1), (done.returncode, done.stderr[-500:])
    assert json.loads(done.stdout)["deep"], "the deep checks ran and were reported"
