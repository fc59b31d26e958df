"""Cards in the wild: a 1.0 card whose security schemes or requirements are in a dialect an
SDK writes is read as A2A 1.0 spells them, with one warning line naming the dialect and the
field, and the delegation goes on; --strict-cards refuses it instead, in one line; a scheme of
no shape we know is named as such, never as a credential we lack
(peers/support/calling/card_dialects.py).

Billing (the demo's 1.0 peer, which checks the bearer token) serves its own card rewritten
into each dialect, and the support agent, holding billing's token, delegates to it: every
frame crosses the real in-process transport. The card reader is also checked alone: each
dialect reads as the card in 1.0's own form would. Hostile cards (wrong types, deep nesting,
huge maps, unhashable values, a `$case` naming nothing) are seeded and bounded."""
import json
import random

import pytest

import a2a_delegation as story
from conftest import BILLING, BILLING_CARD, cli
from peers import billing, demo
from peers.app import PeerApp
from peers.a2a import wire_v10
from peers.support.calling.card_reading import read_card
from transports.base import HttpResponse
from transports.inprocess import InProcessTransport
from transports.printer import FramePrinter
from transports.server import PeerServer

BASE = "https://billing.acme.example"
BEARER_10 = {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}}  # billing's, as 1.0 spells it
OIDC_URL = "https://accounts.example/.well-known/openid-configuration"

# Each dialect: billing's card's security as it writes it, what the warning names, and the field.
DIALECTS = {
    "javascript-oneof": ({"securitySchemes": {"bearer": {"scheme": {"$case": "httpAuthSecurityScheme", "value": {
        "description": "", "scheme": "Bearer", "bearerFormat": ""}}}}}, "the JavaScript SDK's oneof form",
        "securitySchemes.bearer"),
    "java-unwrapped": ({"securitySchemes": {"bearer": {"scheme": "Bearer", "description": None}}},
                       "a scheme without its oneof key (a2a-java #590)", "securitySchemes.bearer"),
    "openapi-typed": ({"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}}},
                      "OpenAPI's form", "securitySchemes.bearer"),
    "bare-scope-list": ({"securityRequirements": [{"schemes": {"bearer": []}}]},
                        "scopes as a bare list", "securityRequirements[0]"),
    "requirement-unwrapped": ({"securityRequirements": [{"bearer": []}]},
                              "a requirement without \"schemes\"", "securityRequirements[0]"),
    "0.3-security": ({"securityRequirements": [], "security": [{"bearer": []}]},
                     "0.3's `security` on a 1.0 card", "security"),
}


def writing(app, rewrite):
    """`app`, its card rewritten by `rewrite` (its JSON -> the card served)."""
    def served(request):
        response = app(request)
        if not request.url.endswith("/.well-known/agent-card.json"):
            return response
        return HttpResponse(200, {"Content-Type": "application/json"},
                            json.dumps(rewrite(json.loads(response.body))).encode())
    return served


def billing_writing(rewrite):
    """The demo's apps, billing's card rewritten by `rewrite`; and the tokens our store holds."""
    network = demo.network(wire_v10, {}, log=lambda line: None)
    return {**network.apps, BASE: writing(network.apps[BASE], rewrite)}, network.credentials


def delegated(rewrite, *, strict=False):
    """The support agent's turn with billing serving its card as `rewrite` makes it: the
    outcome, the lines said (warnings marked), and the frames printed."""
    apps, credentials = billing_writing(rewrite)
    said, frames = [], []
    printer = FramePrinter(InProcessTransport(apps), lambda text, frame: frames.append(text))
    agent = story.SupportAgent(printer, [BILLING], credentials, lambda text="", kind=None, **facts: said.append(
        f"warning: {text}" if kind is not None and kind.name == "WARNING" else text), strict_cards=strict)
    return agent.handle(BILLING_CARD, story.SKILL, story.PAYLOAD), said, frames


def as_dialect(name):
    return lambda card: {**card, **DIALECTS[name][0]}


@pytest.mark.parametrize("name", list(DIALECTS))
def test_a_card_in_each_dialect_is_read_as_1_0_spells_it_with_one_warning_and_the_delegation_goes_on(name):
    outcome, said, frames = delegated(as_dialect(name))
    _, dialect, where = DIALECTS[name]
    assert outcome.result == "refund of $180.00 issued for ORD-3300 (ref BILL-ORD-3300)", said
    warned = [line for line in said if line.startswith("warning: ")]
    assert len(warned) == 1 and "\n" not in warned[0], said
    assert f"{where} in {dialect}" in warned[0] and "--strict-cards refuses such a card" in warned[0]
    assert said.index(warned[0]) < next(i for i, line in enumerate(said) if line.startswith("[support] discovered"))


@pytest.mark.parametrize("name", list(DIALECTS))
def test_with_strict_cards_a_card_in_a_dialect_is_refused_in_one_line_naming_it_and_nothing_is_sent(name):
    outcome, said, frames = delegated(as_dialect(name), strict=True)
    _, dialect, where = DIALECTS[name]
    assert outcome.task is None and outcome.error.startswith("not sent: its card is not in A2A 1.0's form: "), said
    assert f"{where} in {dialect}" in outcome.error and "--strict-cards refuses" in outcome.error
    assert "\n" not in outcome.error and not any(line.startswith("warning: ") for line in said)
    assert [line.split(" ", 2)[:2] for line in frames if line.startswith("-->")] == [["-->", "GET"]], frames


def test_a_card_in_1_0s_own_form_says_nothing_and_strict_cards_takes_it():
    for strict in (False, True):
        outcome, said, _ = delegated(lambda card: card, strict=strict)
        assert outcome.result is not None and not any(line.startswith("warning: ") for line in said), said


def card_of(security):
    network = demo.network(wire_v10, {}, log=lambda line: None)
    document = json.loads(InProcessTransport(network.apps).get(BILLING_CARD, {}).body)
    return {key: value for key, value in document.items() if key not in ("securitySchemes", "securityRequirements")
            } | security


SPEC_FORMS = {  # what each dialect's card says, as 1.0 spells it
    "oidc": ({"securitySchemes": {"google": {"openIdConnectUrl": OIDC_URL, "description": None}},
              "security": [{"google": ["openid", "profile"]}]},
             {"securitySchemes": {"google": {"openIdConnectSecurityScheme": {"openIdConnectUrl": OIDC_URL}}},
              "securityRequirements": [{"schemes": {"google": {"list": ["openid", "profile"]}}}]}),
    "api key": ({"securitySchemes": {"key": {"type": "apiKey", "in": "header", "name": "X-API-Key"}},
                 "securityRequirements": [{"key": []}]},
                {"securitySchemes": {"key": {"apiKeySecurityScheme": {"location": "header", "name": "X-API-Key"}}},
                 "securityRequirements": [{"schemes": {"key": {"list": []}}}]}),
    "oauth2 in javascript": (
        {"securitySchemes": {"o": {"scheme": {"$case": "oauth2SecurityScheme", "value": {"flows": {
            "clientCredentials": {"tokenUrl": "https://billing.acme.example/token", "scopes": {"refund": "r"}}}}}}}},
        {"securitySchemes": {"o": {"oauth2SecurityScheme": {"flows": {"clientCredentials": {
            "tokenUrl": "https://billing.acme.example/token", "scopes": {"refund": "r"}}}}}}}),
    "mtls as openapi": ({"securitySchemes": {"cert": {"type": "mutualTLS"}}},
                        {"securitySchemes": {"cert": {"mtlsSecurityScheme": {}}}}),
}


@pytest.mark.parametrize("name", list(SPEC_FORMS))
def test_the_card_reader_reads_each_dialect_as_the_card_in_1_0s_form_reads(name):
    dialect, spec = SPEC_FORMS[name]
    said = []
    read, meant = read_card(wire_v10, card_of(dialect), warn=said.append).card, read_card(wire_v10, card_of(spec)).card
    assert (read.security_schemes, read.security_requirements, read.auth_schemes) == (
        meant.security_schemes, meant.security_requirements, meant.auth_schemes)
    assert len(said) == 1 and "is not in A2A 1.0's form" in said[0], said
    assert not [kind for kind in read.security_schemes if kind.type == "unknown"]


def test_a_signed_cards_signatures_are_checked_on_the_card_as_served_not_as_read():
    document = card_of(DIALECTS["javascript-oneof"][0]) | {"signatures": [{"protected": "e30", "signature": "AA"}]}
    fetched = read_card(wire_v10, document, warn=lambda line: None)
    assert b'"$case"' in fetched.signed.payload, "what the signature covers is the card its agent signed"


UNKNOWN = {"bearer": {"scheme": {"$case": "passkeySecurityScheme", "value": {"rpId": "acme"}}}}
UNKNOWN_SHAPES = {  # a scheme named bearer, in a shape no dialect reads
    "$case naming nothing": UNKNOWN["bearer"],
    "$case unhashable": {"scheme": {"$case": ["httpAuthSecurityScheme"], "value": {"scheme": "Bearer"}}},
    "a kind without its fields": {"scheme": {"$case": "httpAuthSecurityScheme", "value": {"bearerFormat": "JWT"}}},
    "a type of no kind": {"type": "gopher", "scheme": "bearer"},
    "not an object": "Bearer",
    "two kinds at once": {"scheme": "Bearer", "openIdConnectUrl": OIDC_URL},
}


@pytest.mark.parametrize("shape", list(UNKNOWN_SHAPES))
def test_an_unknown_scheme_shape_is_named_as_such_never_as_a_credential_we_lack(shape):
    outcome, said, frames = delegated(lambda card: {**card, "securitySchemes": {"bearer": UNKNOWN_SHAPES[shape]}})
    warned = [line for line in said if line.startswith("warning: ")]
    assert len(warned) == 1 and "an unknown security scheme shape at securitySchemes.bearer" in warned[0], said
    assert outcome.task is None and "an unknown security scheme shape at securitySchemes.bearer" in outcome.error
    assert "no credential can be chosen for that, whatever --credentials holds" in outcome.error
    assert "unknown credential" not in outcome.error and "holds none" not in outcome.error
    assert [line for line in frames if line.startswith("-->")][1:] == [], "nothing is sent past the card"


def test_a_card_offering_another_way_in_beside_an_unknown_shape_is_delegated_to_by_that_way():
    outcome, said, _ = delegated(lambda card: {**card, "securitySchemes": {**UNKNOWN, "token": BEARER_10["bearer"]},
                                               "securityRequirements": [{"schemes": {"bearer": {"list": []}}},
                                                                        {"schemes": {"token": {"list": []}}}]})
    assert outcome.result == "refund of $180.00 issued for ORD-3300 (ref BILL-ORD-3300)", said


def hostile(rng, depth=0):
    """A value of any JSON shape, nested at most 24 deep (within the codec's 32)."""
    if depth > 24 or rng.random() < 0.3:
        return rng.choice([None, True, 0, -1.5, "", "Bearer", "httpAuthSecurityScheme", "$case", "\x1b[31m", "x" * 300])
    if rng.random() < 0.5:
        return [hostile(rng, depth + 1) for _ in range(rng.randrange(3))]
    keys = ["scheme", "$case", "value", "type", "schemes", "list", "in", "name", "flows", "openIdConnectUrl",
            "httpAuthSecurityScheme", "apiKeySecurityScheme", "location", "security", "bearer"]
    return {rng.choice(keys): hostile(rng, depth + 1) for _ in range(rng.randrange(4))}


def hostile_security(rng):
    """Security a hostile card might declare: each field of a wrong type, a near miss of a dialect,
    deep, or a map of thousands of schemes."""
    case = rng.choice(["httpAuthSecurityScheme", "nothingWeKnow", ["httpAuthSecurityScheme"], {"a": 1}, None, 7])
    schemes = rng.choice([
        hostile(rng), {"bearer": hostile(rng)}, {"b\n\x1b[2J": {"scheme": {"$case": case, "value": hostile(rng)}}},
        {"bearer": {"type": rng.choice(["http", ["http"], {"http": 1}, "gopher"]), "scheme": hostile(rng)}},
        {f"s{index}": {"scheme": {"$case": case, "value": {}}} for index in range(rng.choice([1, 2000]))}])
    requirements = rng.choice([hostile(rng), [hostile(rng) for _ in range(3)], [{"schemes": hostile(rng)}],
                               [{"bearer": hostile(rng)}], []])
    return {"securitySchemes": schemes, "securityRequirements": requirements, "security": hostile(rng)}


def test_whatever_security_a_card_declares_the_turn_ends_in_one_line_never_a_traceback():
    rng = random.Random(14)
    for _ in range(120):
        security = hostile_security(rng)
        for strict in (False, True):
            outcome, said, _ = delegated(lambda card: {**card, **security}, strict=strict)
            warned = [line for line in said if line.startswith("warning: ")]
            assert len(warned) <= 1 and all("\n" not in line and len(line) < 1200 for line in warned), warned
            ended = said[-1]  # the result, or why there is none: as printed, escaped
            assert "\n" not in ended and len(ended) < 1200 and (outcome.task is not None or outcome.error), said


@pytest.mark.parametrize("strict", [False, True])
def test_the_command_line_reads_a_served_dialect_card_and_strict_cards_refuses_it(tmp_path, strict):
    """Over real sockets, as a learner points the support agent at an outside agent: a registry
    naming its card, an allowlist vetting it, a credentials file holding its token."""
    server = PeerServer(None, "127.0.0.1", 0, idle_timeout=2.0)
    server.app = writing(PeerApp(billing.billing_agent(server.base_url), wire_v10, token="dialect-token",
                                 log=lambda line: None), as_dialect("javascript-oneof"))
    base = server.start().base_url
    files = {"registry": {"peers": [{"cardUrl": f"{base}/.well-known/agent-card.json"}]},
             "allowlist": {"trusted": [{"name": "billing-agent", "endpoint": f"{base}/a2a"}]},
             "credentials": {"tokens": {f"{base}/a2a": "dialect-token"}}}
    for name, document in files.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(document))
    try:
        done = cli("--transport", "http", "--frames", "summary", *[arg for name in files for arg in (
            f"--{name}", tmp_path / f"{name}.json")], *(["--strict-cards"] if strict else []))
    finally:
        server.stop()
    said = "securitySchemes.bearer in the JavaScript SDK's oneof form"
    if strict:
        assert done.returncode == 2 and f"not sent: its card is not in A2A 1.0's form: {said}" in done.stdout
        assert "warning:" not in done.stderr and "--> POST" not in done.stdout, done.stdout + done.stderr
    else:
        assert done.returncode == 0, done.stdout + done.stderr
        assert "[support] trusted result (from billing-agent): refund of $180.00" in done.stdout
        assert [line for line in done.stderr.splitlines() if said in line] == [
            line for line in done.stderr.splitlines() if line.startswith("warning:")], done.stderr
        assert len(done.stderr.splitlines()) == 1, done.stderr


def test_a_0_3_agents_card_as_the_official_sdk_serves_it_is_read_as_0_3_and_the_refund_is_delegated():
    """The official SDK serves a 0.3 agent's card with 0.3's fields and a supportedInterfaces list
    whose one interface is at 0.3. Read as a 1.0 card (it has supportedInterfaces), it was refused
    as malformed, "no interface for protocol 1.0", even with --wire 0.3."""
    from peers.a2a.wire_format import by_name

    def as_the_sdk_serves_it(card):
        return {**card, "supportedInterfaces": [{"url": card["url"], "protocolBinding": "JSONRPC",
                                                 "protocolVersion": "0.3"}]}
    network = demo.network(by_name("0.3"), {}, log=lambda line: None)
    apps = {**network.apps, BASE: writing(network.apps[BASE], as_the_sdk_serves_it)}
    said, frames = [], []
    printer = FramePrinter(InProcessTransport(apps), lambda text, frame: frames.append(text))
    agent = story.SupportAgent(printer, [BILLING], network.credentials, lambda text="", kind=None, **facts: said.append(text))
    outcome = agent.handle(BILLING_CARD, story.SKILL, story.PAYLOAD)
    assert outcome.result == "refund of $180.00 issued for ORD-3300 (ref BILL-ORD-3300)", (outcome.error, said)
    assert any('"method": "message/send"' in frame for frame in frames), "spoken as 0.3"
