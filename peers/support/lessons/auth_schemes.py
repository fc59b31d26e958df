"""--scenario auth-schemes: one refund under each security scheme a card can declare.

A card's securitySchemes say how a caller must prove who it is (A2A 4.5: an API key,
HTTP Basic, OAuth2 client credentials, OpenID Connect, mutual TLS); only the server can
make that true. Billing is served here under each in turn, at a host of its own, and
each time the same refund goes three ways. First as a caller that ignores the card
would send it, with no credential: billing answers 401 and its WWW-Authenticate says
what it wants, and no task is made. Then with a wrong credential: 401 again. Then by the
support agent, which reads the scheme from the card and takes the credential its own
store holds for that endpoint (provisioned by the platform, never read from a card): the
refund is made. For OAuth2 the token fetch is frames of its own (the client secret goes
to the token endpoint only, masked as every credential is); for OpenID Connect the
discovery document names that endpoint first. Mutual TLS is proved in the TLS handshake,
so the lesson needs TLS and runs over --transport https whatever --transport says: with
no client certificate billing answers 401 like the others, and a certificate another CA
issued (a DEMO one, peers/keys) ends the handshake before any HTTP, in one line. The two
callers without ours speak through a connection of their own, made as the run's is
(the same hosts, the same CA trusted) but presenting only what they hold. It ends with
the difference between a card that declares a scheme and a server that enforces it.
The lesson vets billing at each of these hosts itself, whatever allowlist.json says (that
file names billing at its own host, not at these): what it teaches is the server's check,
not the gate's. The gate still passes each host before any refund frame goes to it, the
two other callers' included.
The three ways are one pattern, so it is shown once: the first host's frames are printed,
and at each other host its card and refund frames are recorded (--trace keeps them) but not
printed; a line says what differs there (the scheme, each refusal's status and challenge),
and a token fetch or an OpenID discovery, frames of its own, is printed. --frames full,
--verbose, --step and --break print every frame at every host.
"""
from __future__ import annotations

import base64
import contextlib
import os

from peers.a2a.model import AgentCard, Part
from peers.a2a.wire_format import by_name, card_url
from peers.support.calling.config import AllowEntry
from peers.support.calling.credentials import client_tls
from peers.support.calling.held import Held
from peers.support.calling.outcomes import Contact
from peers.support.lessons import Lesson
from peers.support.lessons.turns import carries
from peers.support.output import Kind
from transports import jsonrpc
from transports.errors import TransportError
from transports.escaping import escape
from transports.network import HttpTransport
from transports.printer import FramePrinter
from transports.records import Record

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Callable, Iterator
    from peers.support.calling.story_steps import Steps
    from peers.support.calling.outcomes import Outcome

KEYS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(__file__))), "keys")  # peers/keys: DEMO only
DEMO_CA = os.path.join(KEYS, "demo-ca.DEMO-CERT.pem")  # what issued every certificate --transport https serves
REFUND = {"order_id": "ORD-3300", "amount": 180.0}


class Caller(Record):
    """A caller other than the support agent: the headers it sends, and the client
    certificate (its PEM files) it presents in the TLS handshake, if any."""

    headers: dict[str, str] = {}
    certificate: tuple[str, str] | None = None


NOBODY = Caller()  # no credential at all: a caller that ignores the card
WRONG_BASIC = "Basic " + base64.b64encode(b"support-agent:not-the-password").decode()
STRANGER = Caller(certificate=(os.path.join(KEYS, "stranger.DEMO-CLIENT-CERT.pem"),
                               os.path.join(KEYS, "stranger.DEMO-CLIENT-KEY.pem")))  # another CA issued it
# Each scheme: where billing serves it, a caller with a wrong credential, what our store holds for it.
CASES = (
    ("apikey", "https://apikey.billing.acme.example", Caller({"X-API-Key": "a-key-we-guessed"}), "an API key"),
    ("basic", "https://basic.billing.acme.example", Caller({"Authorization": WRONG_BASIC}), "a user and password"),
    ("oauth2", "https://oauth2.billing.acme.example", Caller({"Authorization": "Bearer a-token-billing-never-issued"}),
     "an OAuth2 client id and secret"),
    ("oidc", "https://oidc.billing.acme.example", Caller({"Authorization": "Bearer a-token-billing-never-issued"}),
     "an OAuth2 client id and secret"),
    ("mtls", "https://mtls.billing.acme.example", STRANGER, "a client certificate"),
)
LESSON = Lesson(
    about="one refund under each security scheme a card can declare (API key, Basic, OAuth2, OpenID Connect, "
          "mutual TLS): refused without a credential, refused with a wrong one, made with ours",
    teaches="essay: Discovery is not trust (a card declares its auth; only the server enforces it: A2A 4.5, 7)",
    order=25, flags={"--wire": "1.0"},
    reads={"--wire": "the wire each card is read in, and the one the callers without our credential speak",
           "--frames": "full: every host's frames printed; summary (a lesson's default): the first host's, and "
                       "at the others what differs in a line",
           "--step": "every host's frames printed, each held before it leaves",
           "--break": "every host's frames printed, the debugger stopping before each leaves"},
    needs={"--transport": ("https", "mutual TLS is proved in the TLS handshake, which plain HTTP and the "
                                    "in-process shim do not have")},
    peers={"billing-agent": {"schemes_at": {host: kind for kind, host, _, _ in CASES}}})


def run(story: Steps, card_urls: list[str], wire: str = "1.0", frames: str = "summary", step: bool = False,
        debugger: bool = False) -> list[Outcome]:
    """Each scheme in turn: without a credential, with a wrong one, then with ours. The pattern is
    shown once: past the first host, unless every frame is asked for, its repeats are said in a line."""
    story.say(f"[transport] {story.label}. Security schemes: declared by the card, enforced by "
              "the server.", Kind.BANNER)
    carries(by_name(wire), "security schemes in its card (securitySchemes)", story.say)
    story.say("[support] this lesson vets billing-agent itself at each host below, whatever allowlist.json says "
              "(it serves billing at a host of its own for each scheme, which that file does not name): what it "
              "shows is the server's check, not the gate's", Kind.TRUSTED)  # a trust decision: --quiet keeps it
    whole = frames == "full" or step or debugger  # a frame held before it leaves is one the learner sees
    if not whole:
        story.say("[support] at each host the same refund goes with no credential, then with a wrong one, and then "
                  "the support agent sends it as the card asks, if our own store holds a credential for it. The first "
                  "host's frames are shown; at the others, a line says what differs, and their card and refund frames "
                  "are not shown (--frames full shows them, --trace keeps them)")
    outcomes = []
    for number, (_, host, wrong, held) in enumerate(CASES):
        story.say()
        with unshowing(story.printer) as hide:  # the steps go on to the next host: what a run says once, stays so
            outcome, story = at_host(story, host, wrong, held, wire, None if whole or number == 0 else hide)
        outcomes.append(outcome)
    story.say()
    # Task ids count from task-1 at each billing: if ours is task-1, no refusal above made one.
    only_ours = len(outcomes) == len(CASES) and all(outcome.task is not None and outcome.task.id == "task-1"
                                                     for outcome in outcomes)
    story.say("[support] A card that declares a scheme only says what its server wants: anyone can write "
              "that into a card, and a server that does not check it serves everyone (an extended card "
              "declared 'authenticated' but served to anyone, a2a-samples #340). A server that enforces it "
              "refuses the rest before any task: " + (
                  "each billing's only task is task-1, the one our credential made." if only_ours else
                  "not every refund above was made, so this run cannot show it."), Kind.BANNER)
    return outcomes


def at_host(story: Steps, host: str, wrong: Caller, held: str, wire: str,
            hide: Callable[[str], None] | None) -> tuple[Outcome, Steps]:
    """The refund three ways at billing's `host`, every frame shown; or, given `hide`, the frames of its
    card and endpoint are not (the pattern shown already), and what differs is said in one line. With
    the outcome, the steps that vetted this host, for the next."""
    if hide:
        hide(card_url(host))
    card = story.find(card_url(host))
    if not isinstance(card, AgentCard):
        return card, story
    if hide:
        hide(card.url)
    declared = escape(", ".join(f"{scheme.name} ({scheme.type})" for scheme in card.security_schemes))
    lacking = story.lacks(card)  # a --credentials entry for this host stands in for the demo's
    if not hide:
        story.say(f"[support] billing at {host} declares {declared}; " + (f"our store holds {held} for it" if lacking
                  is None else f"our store holds nothing it asks for ({lacking})"))
    story = story.vetting([AllowEntry(card.name, card.url)])  # vetted at this endpoint too, by the lesson
    contact = story.gate(card)  # before any refund frame to this host, the other callers' too
    if not isinstance(contact, Contact):
        return contact, story
    ways = [(NOBODY, "with no credential", ", as a caller that ignores the card would send it"),
            (wrong, "with a client certificate another CA issued" if wrong.certificate else "with a wrong credential",
             "")]
    if hide:  # the pattern shown already: what differs here, in one line
        answers = [bare(story, card, wire, caller) for caller, _, _ in ways]
        nobody, other = (f"{how}: {said}." for (_, how, _), (said, _) in zip(ways, answers))
        story.say(f"[support] billing at {host} declares {declared}. The refund {nobody} {other[0].upper()}{other[1:]} "
                  + (f"Now as the card asks, with {held} from our own store:" if lacking is None else
                     f"Our store holds nothing it asks for ({lacking})."),
                  Kind.WARNING if any(kind is Kind.WARNING for _, kind in answers) else Kind.REFUSED)
        return story.handoff(contact, "process_refund", REFUND), story
    for caller, how, why in ways:
        story.say(f"[support] the refund {how}{why}:")
        said, kind = bare(story, card, wire, caller)
        story.say(f"[support] {said}", kind)
    if lacking is None:  # else the support agent sends nothing, and says why
        story.say("[support] now as the card asks, with the credential from our own store:")
    return story.handoff(contact, "process_refund", REFUND), story


def bare(story: Steps, card: AgentCard, wire: str, caller: Caller) -> tuple[str, Kind]:
    """The refund sent straight by `caller` (not by the support agent, which would not send
    it), over a connection of the caller's own: what came of it, to be said (billing's 401
    and its challenge; or the handshake's failure, in one line), and its kind. `wire`: the
    one the card was read in (--wire)."""
    spoken = by_name(wire)
    message = story.message(Part(data=REFUND, media_type="application/json"), metadata={"skillId": "process_refund"})
    frame = jsonrpc.encode_request(story.request_id(), spoken.SEND_METHOD, spoken.send_params(message))
    headers = {"Content-Type": "application/json", **spoken.HEADERS, **caller.headers}
    with connected_as(story.printer, card.url, caller) as transport:
        try:
            response = transport.post(card.url, frame, headers)
        except TransportError as failure:  # in the words the support agent says it in (delegation failed: ...)
            return f"{escape(str(failure))}; {failure.retry_advice()}", Kind.REFUSED
    challenge = response.header("WWW-Authenticate") or "(none)"
    refused = response.status in (401, 403)  # refused before acting; any other answer may have acted
    return (f"billing answered HTTP {response.status}, WWW-Authenticate: {escape(challenge[:200])}; "
            + ("no task was made" if refused else "it may have acted: look before sending it again"),
            Kind.REFUSED if refused else Kind.WARNING)


@contextlib.contextmanager
def unshowing(printer: FramePrinter) -> Iterator[Callable[[str], None]]:
    """For the block, `hide(url)`: the printer shows no frame to or from `url`, and still records
    and tells each (--trace keeps it); after the block, each URL hidden in it is shown again."""
    hidden: set[str] = set()

    def hide(url: str) -> None:
        if url not in printer.unshown:  # one hidden before the block stays so after it
            hidden.add(url)
            printer.unshown.add(url)
    try:
        yield hide
    finally:
        printer.unshown -= hidden


@contextlib.contextmanager
def connected_as(printer: FramePrinter, endpoint: str, caller: Caller) -> Iterator[FramePrinter]:
    """The printer, speaking for the block through a transport of `caller`'s own: the run's
    hosts, timeout and trusted CA, and to `endpoint`'s host only the caller's client
    certificate (or none), in a context made as the run's are (credentials.client_tls,
    trusting the demo CA, which issued every certificate the lesson's peers serve). Every
    frame is still printed, and kept, by the run's printer; its transport is back after."""
    network = printer.inner
    store = {endpoint: Held(certificate=caller.certificate)} if caller.certificate else {}
    own = HttpTransport(resolve=network.resolve, resolved_tls=network.resolved_tls, timeout=network.timeout,
                        tls=network.tls, client_tls=client_tls(store, DEMO_CA))
    try:
        with printer.beneath(own):
            yield printer
    finally:
        own.close()
