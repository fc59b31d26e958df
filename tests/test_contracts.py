"""The support agent's own copy of the refund contract still says what billing publishes.

The copy exists because the essay's card cannot carry a schema; it must not drift from
the contract billing publishes on its 1.0 card (read here through real frames)."""
import json

from conftest import BILLING_CARD
from peers import demo
from peers.a2a import wire_v10
from peers.support.contracts import CONTRACTS
from transports.inprocess import InProcessTransport


def test_the_support_agents_copy_of_the_refund_contract_matches_billings_published_card():
    network = demo.network(wire_v10, log=lambda line: None)
    document = json.loads(InProcessTransport(network.apps).get(BILLING_CARD, {}).body)
    published = {skill.id: skill.input_schema for skill in wire_v10.card_from_wire(document).skills}
    assert published == CONTRACTS
