"""The protocol's table of bindings (peers/a2a/bindings.py) is what both sides do: a 1.0
card lists its rows, a peer answers each at the path its row names, with the module its
row names, the support agent speaks each with its own, and --binding takes their names."""
import json
from importlib import import_module

import pytest

from peers import billing
from peers.a2a import bindings
from peers.a2a.wire_format import by_name
from peers.app import PeerApp
from peers.support.calling import cards
from peers.support.cli.flags import FLAGS
from transports.base import HttpRequest

TOKEN = "t0k"
HEADERS = {"a2a-version": "1.0", "authorization": f"Bearer {TOKEN}", "content-type": "application/json"}


def test_a_1_0_card_lists_each_binding_of_the_table_at_its_versions_in_the_tables_order():
    document = by_name("1.0").card_to_wire(billing.billing_agent().card)
    listed = [(interface["protocolBinding"], interface["protocolVersion"])
              for interface in document["supportedInterfaces"]]
    assert listed == [(row.name, version) for row in bindings.BINDINGS for version in row.listed]
    assert listed[0] == ("JSONRPC", "1.0")  # the binding we prefer, first


def test_a_request_goes_to_the_binding_whose_path_it_arrives_at_served_by_the_module_its_row_names():
    app = PeerApp(billing.billing_agent(), by_name("1.0"), token=TOKEN)
    assert bindings.arriving_at(None) == (bindings.JSONRPC, "")
    assert bindings.arriving_at("tasks/t-1?historyLength=2") == (bindings.HTTP_JSON, "tasks/t-1")
    for path, row in (("/a2a", bindings.JSONRPC), ("/a2a/", bindings.JSONRPC), ("/a2a/tasks", bindings.HTTP_JSON)):
        served, _ = app.binding_for(path)
        assert type(served) is import_module(row.served_by).SERVED
    assert app.binding_for("/elsewhere") == (None, "")


def test_each_binding_answers_a_real_request_at_its_own_path():
    app = PeerApp(billing.billing_agent(), by_name("1.0"), token=TOKEN)
    message = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"data": {"order_id": "ORD-1", "amount": 5}}]}
    envelope = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    by_jsonrpc = app(HttpRequest("POST", "https://billing.acme.example/a2a", HEADERS, json.dumps(envelope).encode()))
    by_rest = app(HttpRequest("POST", "https://billing.acme.example/a2a/message:send", HEADERS,
                              json.dumps({"message": {**message, "messageId": "m-2"}}).encode()))
    assert by_jsonrpc.status == by_rest.status == 200
    task = json.loads(by_jsonrpc.body)["result"]["task"]
    assert json.loads(by_rest.body)["task"]["status"] == task["status"]  # the same operation, two spellings


@pytest.mark.parametrize("row", bindings.BINDINGS, ids=lambda row: row.name)
def test_the_support_agent_speaks_each_binding_with_the_module_its_row_names_and_the_flag_takes_it(row):
    spoken, where = cards.chosen([("GRPC", "https://x.example/g", None), (row.name, "https://x.example/a2a", None)])
    assert spoken is import_module(row.spoken_by).BINDING and spoken.NAME == row.name
    assert where.startswith("https://x.example/a2a")
    binding_flag = next(flag for flag in FLAGS if flag.name == "--binding")
    assert row.name.lower() in binding_flag.options["choices"]


def test_a_card_offering_no_binding_of_the_table_is_refused_naming_what_we_speak():
    with pytest.raises(cards.Unspeakable) as refused:
        cards.chosen([("GRPC", "https://x.example/g", None)])
    assert str(refused.value).endswith(f"not {cards.EITHER}")
    assert all(row.name in cards.EITHER for row in bindings.BINDINGS)
