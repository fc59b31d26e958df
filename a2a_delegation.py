#!/usr/bin/env python3
"""Agent to Agent: a support agent discovers peers, trusts or refuses them, and delegates.

The companion to the essay "Agent to Agent". `python a2a_delegation.py` prints the run
the essay quotes. Read this file top to bottom; it is the essay's story in order:

  1. the registry           where peers live                  (essay: The Agent Card)
  2. discover               fetch each peer's Agent Card      (essay: The Agent Card)
  3. the trust gate         the allowlist decides             (essay: Discovery is not trust)
  4. delegate               tasks/send, a task lifecycle      (essay: Delegation over JSON-RPC)
  5. refuse                 no frame goes to an unvetted peer (essay: Discovery is not trust)
  6. MCP vertical, A2A horizontal                              (essay: the closing comparison)

then `run()`, which tells the story over any transport, and `main()`, which builds
FramePrinter(InProcessTransport(the demo peers)). Every `-->` / `<--` line is printed by
transports/printer.py from the bytes that really crossed; nothing here prints a frame.
The peers (peers/) are reached only through the transport, as if another team owned
them: this file imports none but the demo network that plays them. The protocol both
share is in peers/a2a/; our own side, peers/support/.
"""

import sys

if sys.version_info < (3, 10):  # before any import that needs 3.10: one line, not a traceback
    sys.exit(print(f"a2a_delegation.py needs Python 3.10 or newer (this is {sys.version.split()[0]})",
                   file=sys.stderr) or 2)
from enum import Enum
from itertools import count
from typing import Any, Callable, NamedTuple

from peers.a2a import wire_format
from peers.a2a.model import AgentCard, Message, Part, Task
from peers.support.config import AllowEntry, load_registry, same_endpoint, token_for, unproven_card
from peers.support.cards import BINDING as JSON_RPC, FetchedCard, Unspeakable, only_bearer, refusal, smuggled, unheld
from peers.support.follow import Delegation, Following, Told, followed, listening, way_to_follow
from peers.support.outcomes import Variant, as_data, variant_of
from peers.support.output import Kind
from peers.support.card_reading import check_card, read_card
from peers.support.replies import read_json
from transports import jsonrpc
from transports.base import Transport
from transports.errors import HttpRefusal, PeerError, RemoteError
from transports.inprocess import InProcessTransport
from transports.printer import escape

# The customer's ticket the support agent cannot handle itself: a refund is billing's job.
SKILL = "process_refund"
PAYLOAD = {"order_id": "ORD-3300", "amount": 180.0}


# -- 1. the registry: where peers live ----------------------------------------------------

def read_registry(path: str) -> list[str]:
    """Essay: "a registry locates peers (where each lives, keyed by its well-known URL)".
    It says where each peer's Agent Card is; it does not decide trust (the allowlist does)."""
    return load_registry(path)


class Verdict(Enum):
    TRUSTED = "trusted"  # on the allowlist, at the endpoint it was vetted at
    UNTRUSTED = "untrusted"  # not vetted, but the user opted in: its output is data only
    REFUSED = "refused"  # not vetted: no frame is sent


ARROWS = {Verdict.TRUSTED: "delegating", Verdict.REFUSED: "delegation REFUSED",  # what the gate does next
          Verdict.UNTRUSTED: "delegating anyway (--allow-untrusted); its output will be tagged UNTRUSTED"}


class Outcome(NamedTuple):
    """How one peer's turn ended: one of the Handoff Contract's explicit variants, never
    prose. peers/support/outcomes.py says which variant, and what is done with each."""

    peer: str
    verdict: Verdict | None  # None when discovery itself failed
    task: Task | None = None
    error: str | None = None  # why it failed, naming the stage, and whether a retry is safe
    failure: PeerError | None = None  # what was raised, when a stage failed with an exception

    @property
    def variant(self) -> Variant:
        return variant_of(self.task, self.failure)

    @property
    def result(self) -> str | None:
        done = self.variant is Variant.COMPLETED
        return "".join(a.text for a in self.task.artifacts) if done else None

    @property
    def trusted(self) -> bool:
        return self.verdict is Verdict.TRUSTED

    @property
    def refused(self) -> bool:
        return self.verdict is Verdict.REFUSED


class SupportAgent:
    """The agent that owns the customer and delegates work it cannot do to peers."""

    def __init__(self, transport: Transport, allowlist: list[AllowEntry],
                 credentials: dict[str, str], say: Callable[..., None], *,
                 allow_untrusted: tuple[str, ...] = (), wire_name: str | None = None, binding: str | None = None,
                 following: Following = Following(), told: Told | None = None,
                 verbose: bool = False) -> None:
        self.transport = transport  # 2. cards are fetched through it, 4. frames sent
        self.allowlist = allowlist  # 3. the trust gate reads it
        self.credentials = credentials  # 4. endpoint -> bearer token, or more (credentials.py): never a card's
        self.issued: dict[Any, Any] = {}  # OAuth2 access tokens fetched for our clients, until they expire
        self.verbose, self.said_why = verbose, set()  # --verbose: which scheme, and why, once per endpoint
        self.say = say
        self.allow_untrusted, self.forced_binding = set(allow_untrusted), binding  # opted in to; --binding
        self.forced_format = wire_format.by_name(wire_name) if wire_name else None  # else: each card's
        self.format_of: dict[str, wire_format.WireFormat] = {}  # endpoint -> the format its card speaks
        self.fetched: dict[str, FetchedCard] = {}  # endpoint -> its card as we found it, its binding (cards.py)
        self.delegated_to: list[AgentCard] = []  # the peers a frame was sent to, in order
        self.request_ids, self.message_ids = count(1), count(1)  # JSON-RPC ids, messageIds: stable
        self.last_sent: Message | None = None  # the last message delegated: a retry resends it as is
        self.said_why_one_state = False  # 0.3 and 1.0 show one state: why is said once a run
        # how a task is followed (--stream, --no-wait, --push, --timeout); `told`: shown each push
        # to our webhook (main() hands it the printer's `received`)
        self.following, self.told = following, told

    # -- 2. discover: fetching the card is all discovery is -------------------------------
    def discover(self, card_url: str, binding: str | None = None) -> AgentCard:
        """Essay: The Agent Card. Raises PeerError (transports/errors.py); `binding` overrides --binding."""
        response = self.transport.get(card_url, {"Accept": "application/json"})
        if response.status != 200:
            raise HttpRefusal(response.status, credentials_sent=False)
        document = read_json(response.body, "the card")
        spoken = wire_format.declared_by(document)  # the card says how to speak to its peer
        check_card(document, spoken)  # every field its version requires, or each problem named
        # --wire, where the card offers that too; + our own contract copy where it publishes none
        fetched = read_card(spoken, document, self.forced_format, card_url, binding or self.forced_binding)
        card = fetched.card
        self.format_of[card.url], self.fetched[card.url] = fetched.wire, fetched
        self.say(f"[support] discovered {card.name!r} at {escape(card.url)}: "
                 f"skills={card.skill_ids!r}, auth={list(card.auth_schemes)!r}")
        return card

    # -- 3. the trust gate: discovery is not trust --------------------------------------
    def trust_gate(self, card: AgentCard) -> Verdict:
        """Essay: Discovery is not trust. Runs before any frame is sent to the peer.

        Trusted only if the allowlist names the peer *and* the endpoint its frames would go
        to, and its card is shown to come from there (config.py), so a copy is refused.
        """
        vetted = [entry for entry in self.allowlist if entry.name == card.name]
        here = [entry for entry in vetted if same_endpoint(card.url, entry.endpoint)]
        unproven = unproven_card(self.fetched[card.url], self.allowlist)  # from elsewhere, or not signed
        if here and not unproven:  # a pinned key was checked too: the line says so
            verdict, why = Verdict.TRUSTED, "is allowlisted" + (
                " and its card is signed by the pinned key" if any(entry.public_key for entry in here) else "")
        elif card.name in self.allow_untrusted:
            verdict, why = Verdict.UNTRUSTED, unproven or "is NOT on the allowlist"
        elif unproven:  # vetted at this endpoint, but this card is not shown to come from it
            verdict, why = Verdict.REFUSED, unproven
        elif vetted:
            verdict, why = Verdict.REFUSED, (f"is allowlisted only at {', '.join(e.endpoint for e in vetted)}, "
                                             f"but its card sends frames to {escape(card.url)}")
        else:
            verdict, why = Verdict.REFUSED, "is NOT on the allowlist"
        self.say(f"[trust] {card.name!r} {why} -> {ARROWS[verdict]}", Kind[verdict.name], event="trust",
                 peer=card.name, endpoint=card.url, verdict=verdict.value, reason=why)
        return verdict

    # -- 4. delegate: one JSON-RPC call carrying a task ----------------------------------
    def delegate(self, card: AgentCard, skill: str, payload: dict[str, Any], context_id: str | None = None,
                 **metadata: Any) -> Task:
        """Essay: Delegation over JSON-RPC. tasks/send; the reply is a task, not a value, followed to
        its end (peers/support/follow.py). `context_id`: its conversation, if we keep one. Raises PeerError."""
        spoken = self.format_of[card.url]
        self.last_sent = message = Message(f"msg-{next(self.message_ids)}", "user",
                                           (Part(data=payload, media_type="application/json"),),
                                           context_id, metadata={"skillId": skill, **metadata})
        self.delegated_to.append(card)
        way = way_to_follow(card, spoken, self.following,  # as flags ask, the card allows
                            lambda line: self.say(line, Kind.WARNING))
        with listening(way.pushed) as webhook:  # --push: our webhook, for this delegation only
            params = spoken.send_params(message, way.at_once, webhook and webhook.config)
            reply = self.call(card.url, way.method, params, spoken.HEADERS, stream=way.streamed)
            return followed(reply, Delegation(card, spoken, self.call, self.say, self.told), way.until, webhook)

    def call(self, url: str, method: str, params: Any, extra_headers: dict[str, str],
             scope: str | None = None, stream: bool = False) -> Any:
        """One request, one response (a stream: one per event, as each arrives), by the binding
        its card offers: a JSON-RPC envelope, or HTTP+JSON's verb and path (peers/support/cards.py)."""
        fetched = self.fetched.get(url)
        binding = fetched.binding if fetched is not None and fetched.binding is not None else JSON_RPC
        for attempt in ("first", "again"):
            headers = {**extra_headers, **self.credential(url, scope)}
            try:
                return binding.call(self.transport, url, method, params, headers,
                                    request_id=next(self.request_ids), stream=stream)
            except HttpRefusal as refusal:  # a 401 is answered before anything is done: safe to send again
                if attempt == "again" or refusal.status != 401:
                    raise
                from peers.support.oauth_tokens import forget_kept  # was it an OAuth2 token we kept?
                dropped = forget_kept(self.issued, url)  # then the next credential() fetches a new one
                if dropped is None:
                    raise
                self.say(dropped, Kind.WARNING)

    def credential(self, url: str, scope: str | None = None) -> dict[str, str]:
        """The headers that prove who we are to `url`, from our own store, never a card's: the
        essay's bearer token issued for `url` (for `scope`, a step-up), or what its card's
        scheme asks for (peers/support/credentials.py: an API key, Basic, an OAuth2 token ...)."""
        fetched = self.fetched.get(url)
        if scope is not None or fetched is None or (only_bearer(fetched.card) and not self.verbose):
            token = token_for(self.credentials, url, scope)  # only ever the one issued for `url`
            return {"Authorization": f"Bearer {token}"} if token else {}
        from peers.support.credentials import credential_for
        attached = credential_for(fetched.card, self.credentials, self.transport, self.issued)
        if self.verbose and url not in self.said_why:
            self.said_why.add(url)
            self.say(attached.why)
        return attached.headers

    # -- one peer, start to finish: each stage's failure becomes an Outcome here -----------
    def handle(self, card_url: str, skill: str, payload: dict[str, Any]) -> Outcome:
        """One peer's whole turn in the essay's run: discover, then gate, then delegate."""
        found = self.find(card_url)
        if isinstance(found, Outcome):
            return found
        return self.gate_then_delegate(found, skill, payload)

    def find(self, card_url: str) -> AgentCard | Outcome:
        """Step 2, with its failure as an outcome: the card, or why it could not be had."""
        try:
            return self.discover(card_url)
        except Unspeakable as failure:  # a valid card, none of whose bindings we speak
            return self.failed(card_url, None, f"not sent: {failure}", failure, refused=True)
        except PeerError as failure:  # a GET of a public document changes nothing
            return self.failed(card_url, None, f"card fetch failed: {failure}; fetching a card "
                                               "has no effect, so a retry is safe")

    def gate_then_delegate(self, card: AgentCard, skill: str, payload: dict[str, Any],
                           context_id: str | None = None, **metadata: Any) -> Outcome:
        """Essay: Discovery is not trust, then Delegation over JSON-RPC. The gate first;
        a refused peer gets no frame. A result is printed as trusted or UNTRUSTED."""
        verdict = self.trust_gate(card)
        if verdict is Verdict.REFUSED:
            return self.refuse(card)
        # Trusted is not enough: the card must also say this agent takes what we would send.
        problem = refusal(card, skill, payload, unheld=unheld(card, self.credentials)) \
            or smuggled(payload, metadata, self.credentials)  # seed 004: no credential in a handoff
        if problem:
            return self.failed(card.name, verdict, f"not sent: {problem}", refused=True)
        try:
            task = self.delegate(card, skill, payload, context_id, **metadata)  # metadata: a handoff envelope
        except PeerError as failure:
            return self.failed(card.name, verdict,
                               f"delegation failed: {failure}; {failure.retry_advice()}", failure)
        self.report(card, verdict, task)
        return Outcome(card.name, verdict, task)

    # -- 5. refuse: no frame goes to an unvetted peer --------------------------------------
    def refuse(self, card: AgentCard) -> Outcome:
        """Essay: Discovery is not trust. "No tasks/send frame ever goes to this peer"."""
        self.say("-> delegation result: None  (refused; output never trusted)", Kind.REFUSED)
        return Outcome(card.name, Verdict.REFUSED)

    def report(self, card: AgentCard, verdict: Verdict, task: Task) -> None:
        """What came back, said as the variant it is: a result (trusted or not), or the
        handling its variant calls for (peers/support/outcomes.py); never a guess."""
        seen = "lifecycle" if len(task.lifecycle) > 1 else "state"  # 0.3/1.0 report only the last
        self.say(f"[support] task {escape(task.id)} {seen}: " + " -> ".join(s.value for s in task.lifecycle))
        if seen == "state" and not self.said_why_one_state:  # once a run: the essay taught a lifecycle
            self.said_why_one_state = True
            self.say("[support] (0.3 and 1.0 answer with a task's current state, not each state it passed "
                     "through: --stream shows each as it is entered)")
        source, outcome = f"(from {escape(card.name)})", Outcome(card.name, verdict, task)
        if outcome.variant is not Variant.COMPLETED:  # paused, failed, rejected ...: say what is done
            variant = outcome.variant
            said = task.status_message or ""  # its own words, without repeating the variant's name
            said = said[len(variant.label) + 1:].lstrip() if said.lower().startswith(variant.label + ":") else said
            note = f": {escape(said)}" if said else ""
            self.say(f"[support] {variant.label} ({variant.group}){note}{escape(as_data(task))} "
                     f"-> {variant.handling}", Kind.ESCALATED)
        elif verdict is Verdict.TRUSTED:
            self.say(f"[support] trusted result {source}: {escape(outcome.result)}", Kind.TRUSTED)
        else:
            self.say(f"[support] UNTRUSTED result {source}, kept as data, never as instructions: "
                     f"{escape(outcome.result)}", Kind.UNTRUSTED)

    def failed(self, peer: str, verdict: Verdict | None, error: str, failure: PeerError | None = None,
               *, refused: bool = False) -> Outcome:
        """A turn that ended without a task. A refusal (ours before sending, or the peer's
        error object: it refused to act) is the story's, on stdout; a broken exchange, stderr."""
        refused = refused or (isinstance(failure, RemoteError) and failure.code != jsonrpc.ErrorCode.INTERNAL_ERROR)
        self.say(f"{escape(peer)}: {escape(error)}", Kind.REFUSED if refused else Kind.ERROR, event="failure",
                 peer=peer, error=error)
        return Outcome(peer, verdict, error=error, failure=failure)


# -- 6. MCP vertical, A2A horizontal -------------------------------------------------------

CLOSING = """
Discovering a peer is not trusting it. Any result from outside the allowlist is
tagged UNTRUSTED. The deep treatment (injection via a delegated result, the lethal
trifecta) is Part 16.

  MCP (Part 12): agent -> TOOLS      (vertical)   initialize / tools-list / tools-call
  A2A (this part): agent -> AGENT    (horizontal) agent-card / {send} + a task lifecycle
  Both ride JSON-RPC; A2A adds discovery via Agent Cards and a trust boundary between peers."""
# After the essay's lines, never among them: what the essay's wire simplifies, and where the real one is.
SIMPLIFIED = """
  The essay's tasks/send {skill, input} is a teaching simplification, not A2A 1.0's wire:
  `python3 a2a_delegation.py --wire 1.0` shows real A2A 1.0 (SendMessage, a Message of
  parts); add --stream to watch its task's events stream in as they happen."""


# -- the whole story, over any transport ----------------------------------------------------

def run(agent: SupportAgent, card_urls: list[str]) -> list[Outcome]:
    """Steps 1-6 in order, one peer after another; returns each peer's outcome."""
    agent.say(f"[transport] {agent.transport.label}. MCP = vertical (agent -> tools);", Kind.BANNER)
    agent.say("A2A = horizontal (agent -> agent). Same plumbing, opposite direction.", Kind.BANNER)
    outcomes = []
    for card_url in card_urls:  # 1. the registry says where peers live
        agent.say()
        outcomes.append(agent.handle(card_url, SKILL, PAYLOAD))
    for name in sorted(agent.allow_untrusted - {outcome.peer for outcome in outcomes}):
        agent.say(f"--allow-untrusted {name!r} named no peer found in the registry", Kind.WARNING)
    sent_with = sorted({agent.format_of[card.url].SEND_METHOD for card in agent.delegated_to})
    agent.say(CLOSING.format(send=" / ".join(sent_with).replace("/", "-") or "tasks-send"), Kind.BANNER)
    if sent_with in ([], ["tasks/send"]):  # the essay's wire spoke (or would have): say it is not A2A's
        agent.say(SIMPLIFIED, Kind.BANNER)
    return outcomes


# -- the command line: the demo peers, the transport, the printer, and the story -----------

def main(argv: list[str] | None = None, watch: Any = None) -> int:
    """FramePrinter(InProcessTransport(the demo peers)), the support agent speaking through
    it, and the story told; flags, files, lessons, learner tools and `watch` (the web page
    following this run) are peers/support/session.py's; `web` runs main again for each run."""
    from peers import demo  # the other teams' peers, played in this process for the demo
    from peers.support.session import Session
    session = Session.begin(sys.argv[1:] if argv is None else argv, demo, read_registry, main, watch)
    if isinstance(session, int):  # serve, web, --list-scenarios, --replay, or a mistake said: done
        return session
    transport = InProcessTransport(session.apps, timeout=session.options.timeout)  # Part 12's shim
    with session.over_http(transport) as transport:  # --transport http: the same apps, on 127.0.0.1
        printer = session.printer_of(transport)  # a FramePrinter: every frame that crosses is shown
        agent = SupportAgent(printer, session.allowlist, session.credentials, session.console.say,
                             told=printer.received, **session.agent_options())  # pushes: frames too
        return session.tell(agent, printer, story=run)


if __name__ == "__main__":
    try:
        status = main()
        sys.stdout.flush()  # what a pipe's buffer still holds meets a closed pipe here, not at exit
    except KeyboardInterrupt:
        status = 130
    except BrokenPipeError:  # `python a2a_delegation.py | head` stopped reading
        from peers.support.session import exit_quietly_on_broken_pipe
        status = exit_quietly_on_broken_pipe()
    sys.exit(status)
