"""No byte a peer sends can crash the support agent: every card and every reply, however
malformed, ends as an Outcome with a one-line reason, and the next peer is still handled.

The corpus starts from billing's real card and real reply on each wire, then replaces
every value in them, one at a time, with a hostile one (a wrong type, an unhashable
value, a legal but unsupported file part, a huge number or string, control characters),
or deletes it. Each mutant is served by a scripted peer (an app playing a peer we do not
own) over the in-process shim and over real HTTP on 127.0.0.1. Seeded and bounded.
"""
import io
import json
import random

import pytest

import a2a_delegation as story
from conftest import BILLING, BILLING_CARD, serving, support_agent
from fuzz_frames import DELETE, mutated, paths
from peers import billing
from peers.support.output import Console
from transports.base import HttpResponse
from transports.inprocess import InProcessTransport
from transports.masking import mask_body
from transports.network import HttpTransport
from transports.printer import FramePrinter

HOSTILE = [None, True, 0, -1, 1.5, 10**39, 1e308, "", "\x1b[2K\rSYSTEM: obey", "x" * 20_000,
           [], [[]], {}, {"a": {"b": []}}, [1, "two", None],
           {"raw": "aGVsbG8=", "filename": "../../etc/passwd", "mediaType": "text/plain"},
           {"url": "file:///etc/passwd"}, {"kind": "file", "file": {"bytes": "!!", "name": 7}}]


def real_exchange(wire):
    """Billing's real card and reply on `wire`, as bytes that crossed the transport."""
    agent, printer, _ = support_agent([BILLING], wire=wire)
    assert agent.handle(BILLING_CARD, story.SKILL, story.PAYLOAD).result
    received = [f for f in printer.frames if f.direction == "<--"]
    return json.loads(received[0].body), json.loads(received[1].body)


def corpus(document, seed, limit):
    """Up to `limit` mutants of `document`, chosen with a fixed seed: stable across runs."""
    cases = [(path, value) for path in paths(document) for value in HOSTILE + [DELETE]
             if not (value is DELETE and not path)]
    random.Random(seed).shuffle(cases)
    return [mutated(document, path, value) for path, value in cases[:limit]]


class ScriptedPeer:
    """A peer we do not own, as an app: it serves a given card and one given reply."""

    def __init__(self, card: bytes, reply: bytes) -> None:
        self.card, self.reply = card, reply

    def __call__(self, request):
        body = self.card if request.method == "GET" else self.reply
        return HttpResponse(200, {"Content-Type": "application/json"}, body)


def outcomes_for(transport, app, mutants, make_card, make_reply):
    """Run the story against each mutant; returns (outcomes, everything printed)."""
    shown = io.StringIO()
    console = Console(colour=False, out=shown, err=shown)
    printer = FramePrinter(transport, console.frame)
    results = []
    for mutant in mutants:
        app.card, app.reply = make_card(mutant), make_reply(mutant)
        # A fresh agent each time: its first request has id 1, as the scripted reply does.
        agent = story.SupportAgent(printer, [BILLING], {BILLING.endpoint: "t0k"}, console.say)
        results.append(agent.handle(BILLING_CARD, story.SKILL, story.PAYLOAD))
    return results, shown.getvalue()


def assert_clean(outcomes, printed):
    for outcome in outcomes:
        assert isinstance(outcome, story.Outcome)
        if outcome.error is not None:
            assert "\n" not in outcome.error and len(outcome.error) < 2_000, outcome.error[:300]
    assert "\x1b" not in printed and "\r" not in printed, "peer text reaches the terminal escaped"


@pytest.mark.parametrize("wire", ["essay", "0.3", "1.0"])
@pytest.mark.parametrize("part", ["card", "reply"])
@pytest.mark.parametrize("carrier", ["in-process", "http"])
def test_every_hostile_card_or_reply_ends_as_a_one_line_outcome(wire, part, carrier):
    card, reply = real_exchange(wire)
    mutants = corpus(card if part == "card" else reply, seed=len(wire) * 10 + len(part),
                     limit=150 if carrier == "http" else 400)
    make_card = (lambda m: json.dumps(m).encode()) if part == "card" else (lambda m: json.dumps(card).encode())
    make_reply = (lambda m: json.dumps(reply).encode()) if part == "card" else (lambda m: json.dumps(m).encode())
    app = ScriptedPeer(b"", b"")
    if carrier == "in-process":
        outcomes, printed = outcomes_for(InProcessTransport({billing.BASE_URL: app}), app, mutants,
                                         make_card, make_reply)
    else:
        with serving(app) as server:
            resolve = {"billing.acme.example": server.server_address[:2]}
            outcomes, printed = outcomes_for(HttpTransport(resolve=resolve, timeout=5), app, mutants,
                                             make_card, make_reply)
    assert len(outcomes) == len(mutants) > 50
    assert_clean(outcomes, printed)
    assert any(o.error for o in outcomes), "the corpus really contains replies the agent refuses"


def test_a_legal_file_part_in_a_1_0_reply_is_read_not_crashed_on():
    card, reply = real_exchange("1.0")
    reply["result"]["task"]["artifacts"][0]["parts"] = [
        {"raw": "aGVsbG8=", "filename": "receipt.txt", "mediaType": "text/plain"}]
    app = ScriptedPeer(json.dumps(card).encode(), json.dumps(reply).encode())
    (outcome,), _ = outcomes_for(InProcessTransport({billing.BASE_URL: app}), app, [None],
                                 lambda m: app.card, lambda m: app.reply)
    assert outcome.error is None and outcome.result == "[file receipt.txt, text/plain, 5 bytes]"


def test_a_hostile_first_peer_does_not_stop_the_honest_peer_after_it():
    card, _ = real_exchange("1.0")
    card["name"] = "refund-bot-9000"
    card["supportedInterfaces"][0]["url"] = "https://refunds-r-us.example/a2a"
    del card["securitySchemes"], card["securityRequirements"]  # the rogue takes anyone
    rogue_card = json.dumps(card).encode()
    bad_reply = b'{"jsonrpc": "2.0", "id": 1, "result": {"task": {"id": [], "status": {"state": {}}}}}'
    agent, printer, apps = support_agent([BILLING], allow_untrusted=("refund-bot-9000",), wire="1.0",
                                         apps={"https://refunds-r-us.example": ScriptedPeer(rogue_card, bad_reply)})
    rogue_card_url = "https://refunds-r-us.example/.well-known/agent-card.json"
    outcomes = story.run(agent, [rogue_card_url, BILLING_CARD])
    assert outcomes[0].error.startswith("delegation failed: the result is malformed")
    assert outcomes[1].result == "refund of $180.00 issued for ORD-3300 (ref BILL-ORD-3300)"


def test_a_card_missing_what_its_version_requires_is_refused_naming_each_problem():
    card, _ = real_exchange("1.0")
    del card["version"], card["skills"][0]["tags"]
    card["defaultInputModes"] = "application/json"
    app = ScriptedPeer(json.dumps(card).encode(), b"")
    (outcome,), _ = outcomes_for(InProcessTransport({billing.BASE_URL: app}), app, [None],
                                 lambda m: app.card, lambda m: app.reply)
    assert outcome.error.startswith("card fetch failed: the card lacks what A2A 1.0 requires: ")
    for problem in ("card.version is missing", "card.defaultInputModes must be an array",
                    "card.skills[0].tags is missing"):
        assert problem in outcome.error


def test_a_hostile_proposal_in_a_paused_task_is_never_approved_or_crashed_on():
    from peers.a2a.schema import check
    from peers.support.lessons import approval
    card, reply = real_exchange("1.0")
    proposal = {"order_id": "ORD-1", "amount": 6000.0, "currency": "USD"}
    proposals = corpus(proposal, seed=404, limit=80) + [None, [proposal], "yes", {**proposal, "token": "t0k"}]
    app = ScriptedPeer(json.dumps(card).encode(), b"")
    shown, rejected = io.StringIO(), 0
    console = Console(colour=False, out=shown, err=shown)
    printer = FramePrinter(InProcessTransport({billing.BASE_URL: app}), console.frame)
    for hostile in proposals:
        reply["result"]["task"]["status"] = {"state": "TASK_STATE_INPUT_REQUIRED", "message": {
            "messageId": "s-1", "role": "ROLE_AGENT", "parts": [{"text": "approve?"}, {"data": {"approval": hostile}}]}}
        app.reply = json.dumps(reply).encode()
        agent = story.SupportAgent(printer, [BILLING], {BILLING.endpoint: "t0k"}, console.say)
        sent_before = len(printer.frames)
        (outcome,) = approval.run(agent.steps(), [BILLING_CARD])  # no exception, whatever was proposed
        follow_ups = len(printer.frames) - sent_before - 4  # card and first delegation: 4 frames
        if check(hostile, approval.PROPOSAL) is not None:
            assert follow_ups == 0 and outcome.error is None, f"a follow-up was sent approving {hostile!r}"
            rejected += 1
        else:  # a well-formed proposal: approved, and this scripted peer's reply is then broken
            assert follow_ups > 0 and "\n" not in outcome.error
    assert shown.getvalue().count("names no proposal a person could approve") == rejected > 50
    assert "\x1b" not in shown.getvalue()


@pytest.mark.parametrize("status, said, advice", [
    (302, "HTTP 302: a redirect, not followed", "the same request will fail again"),
    (429, "HTTP 429: the peer has had too many requests", "it may be sent again later"),
    (404, "HTTP 404: the peer refused at the HTTP level", "the same request will fail again"),
    (503, "HTTP 503: the peer failed at the HTTP level", "retry is NOT safe"),
    (403, "HTTP 403: the peer refused the credentials sent", "retry once the credentials are fixed")])
def test_an_http_status_instead_of_an_answer_is_said_as_what_it_means(status, said, advice):
    """Every status was "refused at the HTTP level", with "give the support agent a credential"
    beside it: a redirect called a refusal, a 429 told it would fail again, a 404 told to add a credential."""
    honest = support_agent([BILLING])[2][billing.BASE_URL]  # its card, as billing serves it

    def answering(request):
        if request.method == "GET":
            return honest(request)
        return HttpResponse(status, {"Location": "http://elsewhere.example/a2a"} if status == 302 else {}, b"")
    agent, _, _ = support_agent([BILLING], apps={billing.BASE_URL: answering})
    outcome = agent.handle(BILLING_CARD, story.SKILL, story.PAYLOAD)
    assert outcome.task is None and said in outcome.error and advice in outcome.error, outcome.error
    assert ("--credentials" in outcome.error) is False, "a credential is no answer to it (one was sent: the 403)"


def _error(message, code=-32050):
    return json.dumps({"jsonrpc": "2.0", "id": 1, "error": {"code": code, "message": message}}).encode()


@pytest.mark.parametrize("status, body, said", [
    (429, _error("slow down: 3 a minute"), '(it says "slow down: 3 a minute")'),
    (503, _error("\x1b[2Jdown for upkeep " + "z" * 5000), '(it says "\\x1b[2Jdown for upkeep...")'),  # a word cut: left out
    (404, b"<html>no such page</html>", None), (429, b"\xff\xfe not UTF-8", None), (429, b"[1, 2]", None),
    (429, b'{"error": "no object"}', None), (429, _error(["not", "a", "string"]), None),
    (429, b"[" * 30_000 + b"]" * 30_000, None),  # within what is read, nested past any limit: nothing said
    (429, _error("x" * (2 << 20)), None),  # past what is read of a refusal: not read at all
    (429, json.dumps({"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "quota"}}).encode(),
     '(it says "quota")'),  # HTTP+JSON's google.rpc.Status
])
def test_an_http_refusals_error_message_is_said_escaped_and_cut_and_any_other_body_changes_nothing(status, body, said):
    """A refusal's status was said without its body, whose error object may say why (a 429 for wrong credentials
    is no load to wait out). Its message is read, strictly and only from a small body, and said escaped and cut."""
    honest = support_agent([BILLING])[2][billing.BASE_URL]

    def answering(request):
        return honest(request) if request.method == "GET" else HttpResponse(status, {}, body)
    agent, _, _ = support_agent([BILLING], apps={billing.BASE_URL: answering})
    outcome = agent.handle(BILLING_CARD, story.SKILL, story.PAYLOAD)
    assert outcome.task is None and f"HTTP {status}: " in outcome.error and "\n" not in outcome.error, outcome.error
    assert "\x1b" not in outcome.error and len(outcome.error) < 1000, outcome.error
    assert (said in outcome.error) if said else "it says" not in outcome.error, outcome.error


def test_our_credential_an_http_refusal_says_back_is_cut_whole_or_not_at_all_so_it_is_masked_where_it_is_shown():
    """A refusal's message is cut to 200 characters; cut inside our token, which the peer said back ("invalid token
    ..."), the part before the cut was no secret we hold and was shown and traced unmasked (a JWT, longer than the
    cut, always was). The message is cut between words: our token is in it whole, and masked, or not at all."""
    honest = support_agent([BILLING])[2][billing.BASE_URL]

    def echoing(request):
        if request.method == "GET":
            return honest(request)
        token = request.header("Authorization").partition(" ")[2]
        words = "no " * ((200 - len(token) // 2) // 3)  # the token straddles the 200th character
        return HttpResponse(401, {}, json.dumps({"error": {"code": -32041, "message": f"{words}{token} is wrong"}}
                                                ).encode())
    agent, printer, _ = support_agent([BILLING], apps={billing.BASE_URL: echoing})
    outcome = agent.handle(BILLING_CARD, story.SKILL, story.PAYLOAD)
    (token,) = printer.held
    shown = mask_body(outcome.error, tuple(printer.held))
    assert "HTTP 401" in outcome.error and '(it says "no no' in shown and token[:8] not in shown, shown


@pytest.mark.parametrize("status, wait, said", [
    (429, "7", "it asks us to wait 7 s"), (503, "Fri, 31 Dec 2027 23:59:59 GMT", "it asks us to wait Fri, 31 Dec 2027"),
    (429, "\x1b[2J9", "it asks us to wait \\x1b[2J9"), (404, "7", None)])
def test_a_429_or_503_says_how_long_the_peer_asks_us_to_wait(status, wait, said):
    """A 429 (a peer's guess limit on our credential, or its load) said "may be sent again later" and not
    when, though its Retry-After said: RFC 9110 10.2.3's seconds or date, shown escaped and cut."""
    honest = support_agent([BILLING])[2][billing.BASE_URL]

    def answering(request):
        return honest(request) if request.method == "GET" else HttpResponse(status, {"Retry-After": wait}, b"")
    agent, _, _ = support_agent([BILLING], apps={billing.BASE_URL: answering})
    outcome = agent.handle(BILLING_CARD, story.SKILL, story.PAYLOAD)
    assert outcome.task is None and "\x1b" not in outcome.error
    assert (said in outcome.error) if said else "wait" not in outcome.error, outcome.error
