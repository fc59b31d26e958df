"""The scopes our OAuth2 token request asks for are the ones the card's security requirement
lists for that scheme (A2A 1.0 securityRequirements, 0.3 security), never every scope the
scheme's flow declares. A signed card is signed over a form without empty values (1.0
section 8.4, as the official SDK canonicalizes), so a scope added to the flow's map with
an empty description (`"payouts:admin": ""`), and a requirement that lists no scope, are
not covered by its signature: an edit in transit keeps the pinned key's signature valid.

Real frames on 127.0.0.1: billing serving its card signed by the key our allowlist pins,
and its own token endpoint (which grants only `a2a`), behind a man in the middle that
alters the card; the token requests are read as they arrived."""
import json
from urllib.parse import parse_qs

import pytest

import a2a_delegation as story
from conftest import ROOT
from peers import billing
from peers.a2a import wire_v03, wire_v10
from peers.a2a.wire_format import CARD_PATH
from peers.app import PeerApp
from peers.serving import scheme_for
from peers.signing import card_signature, rs256
from peers.support.calling.config import AllowEntry
from peers.support.calling.held import Held
from transports.base import HttpResponse, parse_url
from transports.network import HttpTransport
from transports.printer import FramePrinter
from transports.server import PeerServer

KEY = rs256.private_from_pem((ROOT / "peers/keys/billing-agent.DEMO-KEY.pem").read_text())
CLIENT = ("support-agent", "s3cret")


def _scopes(document, version):
    """The clientCredentials flow's scope map of the card's one oauth2 scheme."""
    scheme = document["securitySchemes"]["oauth2"]
    return (scheme["oauth2SecurityScheme"] if version == "1.0" else scheme)["flows"]["clientCredentials"]["scopes"]


def _widened(document, version):
    """The man in the middle's edit: one more scope, described by nothing."""
    _scopes(document, version)["payouts:admin"] = ""


def _unrequired(document, version):
    """A card whose signed requirement lists no scope: its requirement dropped (invisible to the
    signature, as an empty scope list is), and one more scope described by nothing."""
    del document["securityRequirements" if version == "1.0" else "security"]
    _widened(document, version)


def _listing_no_scope(document, version):
    """The card as its signer meant it: the oauth2 scheme required, with no scope listed."""
    document["securityRequirements" if version == "1.0" else "security"] = \
        [{"schemes": {"oauth2": {"list": []}}}] if version == "1.0" else [{"oauth2": []}]


@pytest.fixture
def tampered():
    servers = []

    def start(wire, alter, signed_as=None):
        """billing with --auth oauth2, its card signed by KEY (after `signed_as`, the signer's
        own edit), served altered by `alter`; returns its base URL and the token forms it got."""
        server = PeerServer(None, "127.0.0.1", 0, idle_timeout=2.0)
        peer = billing.billing_agent(server.base_url)
        scheme = scheme_for("oauth2", ":".join(CLIENT), server.base_url, peer, KEY, pytest.fail)[0]
        real = PeerApp(peer, wire, scheme=scheme, log=lambda line: None)
        version = "1.0" if wire is wire_v10 else "0.3"
        document = {k: v for k, v in json.loads(real.card_body).items() if k != "signatures"}
        if signed_as is not None:
            signed_as(document, version)
        document = card_signature.sign(document, KEY)
        alter(document, version)
        assert card_signature.unproven(card_signature.signed_content(document), KEY.public) is None, \
            "the edit is invisible to the signature"
        served, forms = json.dumps(document).encode(), []

        def app(request):
            path = parse_url(request.url).path
            if path == CARD_PATH and request.method == "GET":
                return HttpResponse(200, {"Content-Type": "application/json"}, served)
            if path == "/oauth2/token":
                forms.append(parse_qs(request.body.decode()))
            return real(request)
        server.app = app
        servers.append(server.start())
        return server.base_url, forms
    yield start
    for server in servers:
        server.stop()


def _delegate(base):
    printer = FramePrinter(HttpTransport(timeout=5.0))
    agent = story.SupportAgent(printer, [AllowEntry("billing-agent", base + "/a2a", KEY.public)],
                               {base + "/a2a": Held(client=CLIENT)}, lambda *args, **facts: None)
    try:
        return agent.handle(base + "/.well-known/agent-card.json", story.SKILL, story.PAYLOAD)
    finally:
        printer.inner.close()


@pytest.mark.parametrize("wire", [wire_v10, wire_v03], ids=["1.0", "0.3"])
def test_a_scope_added_to_a_signed_cards_flow_with_no_description_is_not_asked_for(tampered, wire):
    base, forms = tampered(wire, _widened)
    outcome = _delegate(base)
    assert [form.get("scope") for form in forms] == [["a2a"]], "only what the signed requirement lists"
    assert outcome.trusted and outcome.result is not None, outcome.error


@pytest.mark.parametrize("wire", [wire_v10, wire_v03], ids=["1.0", "0.3"])
def test_a_card_listing_no_scope_asks_the_flows_described_scopes_never_one_added_undescribed(tampered, wire):
    """Where no requirement lists a scope (one listing none and none at all sign alike), the flow's scopes
    described are asked (signed, as its description is), not none: a token endpoint may refuse a request
    naming no scope, or grant all our client ever held; never the one added described by nothing."""
    base, forms = tampered(wire, _unrequired, signed_as=_listing_no_scope)
    outcome = _delegate(base)
    assert [form.get("scope") for form in forms] == [["a2a"]], "the flow's described scope, not the added one"
    assert outcome.trusted and outcome.result is not None, outcome.error


def _preempted(document, version):
    """The man in the middle's other edit: a requirement of the same scheme listing no scope, put
    first (invisible to the signature, which drops it whole)."""
    document["securityRequirements" if version == "1.0" else "security"].insert(
        0, {"schemes": {"oauth2": {"list": []}}} if version == "1.0" else {"oauth2": []})


@pytest.mark.parametrize("wire", [wire_v10, wire_v03], ids=["1.0", "0.3"])
def test_a_requirement_listing_no_scope_added_before_the_signed_one_does_not_drop_its_scope(tampered, wire):
    """The first requirement we hold credentials for was used, scopes and all: one listing none, put
    before the signed one in transit, made us ask no scope, the token endpoint's default for our
    client, which may be all it was ever granted."""
    base, forms = tampered(wire, _preempted)
    outcome = _delegate(base)
    assert [form.get("scope") for form in forms] == [["a2a"]], "what the signed requirement lists"
    assert outcome.trusted and outcome.result is not None, outcome.error


@pytest.mark.parametrize("wire", [wire_v10, wire_v03], ids=["1.0", "0.3"])
def test_a_cards_requirements_and_their_scopes_read_back_as_written(wire):
    from peers.a2a.model import SecurityScheme
    card = billing.billing_agent().card._replace(auth_schemes=("oauth2", "key"), security_schemes=(
        SecurityScheme("oauth2", "oauth2", token_url="http://127.0.0.1:1/token", scopes=(("a2a", "tasks"), ("b", ""))),
        SecurityScheme("key", "apiKey", key_name="X-API-Key")),
        security_requirements=({"oauth2": ("a2a",)}, {"key": (), "oauth2": ()}))
    for each in (card, card._replace(security_requirements=())):
        back = wire.card_from_wire(json.loads(json.dumps(wire.card_to_wire(each))))
        assert (back.security_schemes, back.security_requirements) == (each.security_schemes,
                                                                       each.security_requirements)


@pytest.mark.parametrize("requirement, field", [
    ({"schemes": {"oauth2": {"list": ["a2a", 5]}}}, "securityRequirements[0].oauth2"),
    ({"schemes": {"oauth2": {"list": "a2a"}}}, "securityRequirements[0].oauth2.list"),
    ({"schemes": {"oauth2": ["a2a"]}}, "securityRequirements[0].oauth2")])
def test_a_requirements_scopes_of_a_wrong_type_are_refused_naming_the_field(requirement, field):
    from peers.a2a.fields import WireError
    document = wire_v10.card_to_wire(billing.billing_agent().card)
    with pytest.raises(WireError) as refused:
        wire_v10.card_from_wire({**document, "securityRequirements": [requirement]})
    assert refused.value.field == field
