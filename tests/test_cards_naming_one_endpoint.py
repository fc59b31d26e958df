"""Two cards may name one endpoint: billing's own, and a copy someone serves from elsewhere
(altered, unsigned, or under another name). The trust gate judges each card as it was found,
where it came from and what signs it, never the other one found for the same endpoint, in
whichever order they were found; and a card from elsewhere is never delegated to, even with
--allow-untrusted, so no frame, and none of the credential we hold for that endpoint, goes
there on its word. In process: the demo network, and a copy served at another origin."""
import json

import pytest

from conftest import BILLING, support_agent
from peers import billing
from peers.a2a import wire_essay
from peers.support.calling.outcomes import Verdict
from transports.base import HttpResponse

BILLING_CARD_URL = "https://billing.acme.example/.well-known/agent-card.json"
COPY_CARD_URL = "https://copies.example/.well-known/agent-card.json"


def served_copy(**changes):
    """An app at another origin serving billing's card, changed: its endpoint is still billing's."""
    document = {**wire_essay.card_to_wire(billing.billing_agent().card), **changes}

    def app(request):
        return HttpResponse(200, {"Content-Type": "application/json"}, json.dumps(document).encode())
    return {"https://copies.example": app}


@pytest.mark.parametrize("copy_first", [True, False], ids=["the copy found first", "the copy found second"])
def test_each_card_naming_billings_endpoint_is_judged_as_it_was_found(copy_first):
    agent, printer, _ = support_agent([BILLING], apps=served_copy(description="a copy, from elsewhere"))
    urls = [COPY_CARD_URL, BILLING_CARD_URL] if copy_first else [BILLING_CARD_URL, COPY_CARD_URL]
    found = {url: agent.discover(url) for url in urls}  # in this order
    copy, own = found[COPY_CARD_URL], found[BILLING_CARD_URL]
    assert copy.url == own.url and copy.description == "a copy, from elsewhere"
    assert agent.trust_gate(copy) is Verdict.REFUSED, "judged by where the copy came from, not billing's card"
    assert agent.trust_gate(own) is Verdict.TRUSTED, "billing's own card, whatever was found after it"
    assert agent.keyring.fetched[own.url].card == own, "the credential for the endpoint follows billing's own card"


def test_an_exact_copy_found_elsewhere_after_billings_own_card_leaves_it_trusted():
    """The same card, byte for byte, served from another origin too: what it says is what billing
    published, so billing's own stays trusted (the copy takes nothing away, and adds nothing)."""
    agent, _, _ = support_agent([BILLING], apps=served_copy())
    own, copy = agent.discover(BILLING_CARD_URL), agent.discover(COPY_CARD_URL)
    assert own == copy and agent.trust_gate(own) is Verdict.TRUSTED


def test_allow_untrusted_never_delegates_to_a_card_from_elsewhere_that_names_another_origins_endpoint(capsys):
    """A confused deputy: refund-bot's card, served from its own origin, names billing's endpoint.
    Delegated to anyway, billing got our request, with the credential we hold for billing, and acted."""
    agent, printer, _ = support_agent([BILLING], apps=served_copy(name="refund-bot-9000"),
                                      allow_untrusted=("refund-bot-9000",), printed=True)
    card = agent.discover(COPY_CARD_URL)
    sent = len(printer.frames)
    outcome = agent.gate_then_delegate(card, "process_refund", {"order_id": "ORD-1", "amount": 5})
    assert outcome.verdict is Verdict.REFUSED and outcome.task is None and len(printer.frames) == sent, "no frame"
    assert "a card is believed only from its own endpoint's origin -> delegation REFUSED" in capsys.readouterr().out
