#!/usr/bin/env python3
"""Agent to Agent: a support agent discovers peers, trusts or refuses them, and delegates.

The companion to the essay "Agent to Agent". `python3 a2a_delegation.py` prints the run
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

import gc, sys  # noqa: E401 - one line, one pdb step: a learner's path to the first frame is counted

if sys.version_info < (3, 10):  # before any import that needs 3.10: one line, not a traceback
    sys.exit(print(f"a2a_delegation.py needs Python 3.10 or newer (this is {sys.version.split()[0]})",
                   file=sys.stderr) or 2)
# Start-up makes thousands of lasting objects and no garbage: the collector waits (bench/startup.py) till session.py
# restarts it, and a Ctrl-C meanwhile ends the run as main()'s does, with no traceback. One line, one pdb step.
if __name__ == "__main__": gc.disable(); sys.excepthook = lambda kind, *a: kind is KeyboardInterrupt or sys.__excepthook__(kind, *a)  # noqa
from itertools import count

from peers.a2a import wire_format
from peers.a2a.model import AgentCard, Message, Part, Task, clip
from peers.support.calling import card_reading, cards, config, follow, keyring, replies, story_steps  # our side
from peers.support.calling.outcomes import Contact, Outcome, Variant, Verdict, as_data, in_its_words
from peers.support.output import Kind, OutputLost, ended, flush_output
from transports import TYPE_CHECKING, base, errors, inprocess  # moving frames, and what can go wrong doing it
from transports.escaping import escape
from transports.printer import FramePrinter

if TYPE_CHECKING:  # typing's names, for type checkers: a run need not load it, so annotations naming them are text
    from typing import Any, Callable

# The customer's ticket the support agent cannot handle itself: a refund is billing's job.
SKILL, PAYLOAD, JSON = "process_refund", {"order_id": "ORD-3300", "amount": 180.0}, "application/json"


# -- 1. the registry: where peers live ----------------------------------------------------

def read_registry(path: str, added: int = 0) -> list[str]:
    """Essay: "a registry locates peers (where each lives, keyed by its well-known URL)".
    It says where each peer's Agent Card is; it does not decide trust (the allowlist does)."""
    return config.load_registry(path, added)  # empty only beside `added` peers (--peer)


class SupportAgent:
    """The agent that owns the customer and delegates work it cannot do to peers."""

    ARROWS = {Verdict.TRUSTED: "delegating", Verdict.REFUSED: "delegation REFUSED",  # what the gate does next
              Verdict.UNTRUSTED: "delegating anyway (--allow-untrusted); its output will be tagged UNTRUSTED"}

    def __init__(self, transport: base.Transport, allowlist: list[config.AllowEntry],
                 credentials: dict[str, str], say: "Callable[..., None]", *,
                 allow_untrusted: tuple[str, ...] = (), wire_name: str | None = None, binding: str | None = None,
                 following: follow.Following = follow.Following(), told: "follow.Told | None" = None,
                 verbose: bool = False, strict_cards: bool = False) -> None:
        self.fetched: dict[str, cards.FetchedCard] = {}  # endpoint -> its card as we found it, its binding (cards.py)
        self.seen: list[cards.FetchedCard] = []  # every card as found: two may name one endpoint (a copy, elsewhere)
        self.transport = transport  # 2. cards are fetched through it (the printer: every frame is shown)
        # 4. and frames sent, each with the credential our store holds for where it goes
        self.keyring = keyring.Keyring(transport, credentials, self.fetched, say, verbose=verbose)
        self.allowlist = allowlist  # 3. the trust gate reads it
        self.credentials = credentials  # 4. endpoint -> bearer token, or more (held.py): never a card's
        self.say, self.warn = say, lambda line: say(line, Kind.WARNING)
        self.allow_untrusted, self.forced_binding = set(allow_untrusted), binding  # opted in to; --binding
        self.forced_format = wire_format.by_name(wire_name) if wire_name else None  # else: each card's
        self.strict_cards = strict_cards  # a card in an SDK's dialect: refused, not read as 1.0 spells it
        self.delegated_to: list[Contact] = []  # the peers a message was sent to, in order
        self.request_ids, self.message_ids = count(1), count(1)  # JSON-RPC ids, messageIds: stable
        self.said_why_one_state = False  # 0.3 and 1.0 show one state: why is said once a run
        # how a task is followed (--stream, --no-wait, --push, --timeout); `told` shows each push to our webhook
        self.following, self.told = following, told

    # -- 2. discover: fetching the card is all discovery is -------------------------------
    def discover(self, card_url: str, binding: str | None = None) -> AgentCard:
        """Essay: The Agent Card. Raises PeerError (transports/errors.py); `binding` overrides --binding."""
        response = self.transport.get(card_url, {"Accept": "application/json"})
        if response.status != 200:
            raise errors.HttpRefusal(response.status, credentials_sent=False)
        document = replies.read_json(response.body, "the card")
        spoken = wire_format.declared_by(document)  # the card says how to speak to its peer
        card_reading.check_card(document, spoken)  # every field its version requires, or each problem named
        # --wire, where the card offers that too; + our own contract copy where it publishes none
        fetched = card_reading.read_card(spoken, document, self.forced_format, card_url, binding or self.forced_binding,
                                         strict=self.strict_cards, warn=self.warn)  # an SDK's dialect: said, or refused
        card = fetched.card
        self.seen.append(fetched)  # the trust gate judges each card as it was found (`found`)
        if card.url not in self.fetched or not config.from_elsewhere(fetched):  # never over its own origin's card:
            self.fetched[card.url] = fetched  # the credential each frame carries reads it (keyring.py)
        self.say(f"[support] discovered {card.name!r} at {escape(card.url)}: "
                 f"skills={clip(card.skill_ids)}, auth={clip(list(card.auth_schemes))}")  # a card of thousands: one line
        return card

    # -- 3. the trust gate: discovery is not trust --------------------------------------
    def trust_gate(self, card: AgentCard) -> Verdict:
        """Essay: Discovery is not trust. Runs before any frame is sent to the peer.

        Trusted only if the allowlist names the peer *and* the endpoint its frames would go to, and its
        card is shown to come from there (config.py): a copy, or any card from another origin, is refused.
        """
        vetted = [entry for entry in self.allowlist if entry.name == card.name]
        here = [entry for entry in vetted if config.same_endpoint(card.url, entry.endpoint)]
        elsewhere = config.from_elsewhere(self.found(card))  # whoever it names: --allow-untrusted never waives it
        unproven = config.unproven_card(self.found(card), self.allowlist) or elsewhere  # or not signed
        not_here = (f"is allowlisted only at {', '.join(e.endpoint for e in vetted)}, but its card sends frames to "
                    f"{escape(card.url)}") if vetted else "is NOT on the allowlist"
        if here and not unproven:  # a pinned key was checked too: the line says so
            verdict, why = Verdict.TRUSTED, "is allowlisted" + (
                " and its card is signed by the pinned key" if any(entry.public_key for entry in here) else "")
        elif card.name in self.allow_untrusted and not elsewhere:
            verdict, why = Verdict.UNTRUSTED, unproven or not_here
        elif unproven:  # vetted at this endpoint, but this card is not shown to come from it
            verdict, why = Verdict.REFUSED, unproven
        else:
            verdict, why = Verdict.REFUSED, not_here
        self.say(f"[trust] {card.name!r} {why} -> {self.ARROWS[verdict]}", Kind[verdict.name], event="trust",
                 peer=card.name, endpoint=card.url, verdict=verdict.value, reason=why)
        return verdict

    def gate(self, card: AgentCard) -> Contact | Outcome:
        """Step 3, as a value: a contact (the card, the verdict, how we speak to it), or the refusal."""
        verdict = self.trust_gate(card)
        if verdict is Verdict.REFUSED:
            return self.refuse(card)
        fetched = self.found(card)
        return Contact(card, verdict, fetched.wire, fetched.binding or cards.BINDING)

    def found(self, card: AgentCard) -> cards.FetchedCard:
        """`card` as we found it (where from, its signatures, its wire): this very one, not a copy of it."""
        return next((found for found in reversed(self.seen) if found.card is card), None) or \
            next(found for found in reversed(self.seen) if found.card == card)  # a card rebuilt: the last equal one

    # -- 4. delegate: one JSON-RPC call carrying a task ----------------------------------
    def handoff(self, contact: Contact, skill: str, payload: "dict[str, Any]", context_id: str | None = None,
                **metadata: "Any") -> Outcome:
        """Essay: Delegation over JSON-RPC. The card must say this agent takes what we would
        send; then the handoff goes (tasks/send) and what its task became is reported."""
        problem = self.unsendable(contact.card, skill, payload, metadata)  # its card's terms; no credential
        if problem:  # (no := in this file: Python 3.6 to 3.9 must read it, to say in one line that they cannot run it)
            return self.failed(contact.name, contact.verdict, f"not sent: {problem}", refused=True)
        message = self.message(Part(data=payload, media_type=JSON), context_id=context_id, metadata={"skillId": skill, **metadata})
        try:
            task = self.delegate(contact, message)
        except errors.PeerError as failure:
            return self.failed(contact.name, contact.verdict, f"delegation failed: {failure}; {failure.retry_advice()}",
                               failure, sent=message)
        finally:  # answered or not, it went: the closing names the method each handoff was sent with
            self.delegated_to.append(contact)
        self.report(contact, task)
        return Outcome(contact.name, contact.verdict, task, sent=message)

    def delegate(self, contact: Contact, message: Message, scope: str | None = None) -> Task:
        """Essay: Delegation over JSON-RPC. The one way a message goes to a peer: tasks/send
        (or its wire's send); the reply is a task, not a value, followed to its end as the
        flags ask and the card allows (peers/support/calling/follow.py). Raises PeerError."""
        way = follow.way_to_follow(contact.card, contact.wire, self.following, self.warn)  # as flags ask, card allows
        with follow.listening(way.pushed) as webhook:  # --push: our webhook, for this delegation only
            params = contact.wire.send_params(message, way.at_once, webhook and webhook.config)
            reply = self.call(contact, way.method, params, scope=scope, stream=way.streamed)  # the frame leaves
            asked = lambda method, params, stream=False: self.call(contact, method, params, stream=stream)  # noqa: E731
            following = follow.Delegation(contact.card, contact.wire, asked, self.say, self.told)
            return replies.continued(message, follow.followed(reply, following, way.until, webhook))

    def call(self, contact: Contact, method: str, params: "Any", *, scope: str | None = None,
             stream: bool = False) -> "Any":
        """One request, one response (a stream: one per event, as each arrives), by the binding
        its card offers: a JSON-RPC envelope, or HTTP+JSON's verb and path (peers/support/calling/cards.py);
        our credential goes with it (keyring.py), the one issued for `scope` if a peer asked."""
        request, read = contact.binding.request(contact.url, method, params, contact.wire.HEADERS, next(self.request_ids))
        transport = self.keyring.toward(contact.url, scope)  # the printer, our credential added to each request
        return read(transport.send(request, stream=stream), transport.attached)

    def unsendable(self, card: AgentCard, skill: str, payload: "Any", metadata: "dict[str, Any]") -> str | None:
        """Why `payload` must not go to this agent, or None: what its card says it takes (the
        skill, the modes, the input contract, a credential of ours for its scheme), and seed
        004: what we send never carries a credential, in the payload or the envelope."""
        return cards.refusal(card, skill, payload, unheld=self.lacks(card)) or cards.smuggled(payload, metadata,
                                                                                             self.credentials)

    def lacks(self, card: AgentCard) -> str | None:
        """Why our store holds no credential the card asks for, saying what would do; or None."""
        return cards.unheld(card, self.credentials)

    def message(self, *parts: Part, context_id: str | None = None, task_id: str | None = None,
                metadata: "dict[str, Any] | None" = None) -> Message:
        """A message of ours, its id the run's next: ids from a counter, so a run prints alike each time."""
        return Message(f"msg-{next(self.message_ids)}", "user", parts, context_id, task_id, metadata=metadata)

    # -- one peer, start to finish: each stage's failure becomes an Outcome here -----------
    def handle(self, card_url: str, skill: str, payload: "dict[str, Any]") -> Outcome:
        """One peer's whole turn in the essay's run: discover, then gate, then delegate."""
        found = self.find(card_url)  # 2. its card, or why it could not be had
        contact = self.gate(found) if isinstance(found, AgentCard) else found  # 3. a refused peer gets no frame
        return self.handoff(contact, skill, payload) if isinstance(contact, Contact) else contact  # 4. its task

    def find(self, card_url: str) -> AgentCard | Outcome:
        """Step 2, with its failure as an outcome: the card, or why it could not be had."""
        try:
            return self.discover(card_url)
        except cards.Unspeakable as failure:  # a valid card, none of whose bindings we speak
            return self.failed(card_url, None, f"not sent: {failure}", failure, refused=True)
        except errors.PeerError as failure:  # a GET of a public document changes nothing
            return self.failed(card_url, None, f"card fetch failed: {failure}; fetching a card "
                                               "has no effect, so a retry is safe")

    def gate_then_delegate(self, card: AgentCard, skill: str, payload: "dict[str, Any]",
                           context_id: str | None = None, **metadata: "Any") -> Outcome:
        """Essay: Discovery is not trust, then Delegation over JSON-RPC. The gate first;
        a refused peer gets no frame. A result is printed as trusted or UNTRUSTED."""
        contact = self.gate(card)  # a contact, or the refusal: a refused peer gets no frame
        return self.handoff(contact, skill, payload, context_id, **metadata) if isinstance(contact, Contact) else contact

    # -- 5. refuse: no frame goes to an unvetted peer --------------------------------------
    def refuse(self, card: AgentCard) -> Outcome:
        """Essay: Discovery is not trust. "No tasks/send frame ever goes to this peer"."""
        self.say("-> delegation result: None  (refused; output never trusted)", Kind.REFUSED)
        return Outcome(card.name, Verdict.REFUSED)

    def report(self, contact: Contact, task: Task) -> None:
        """What came back, said as the variant it is: a result (trusted or not), or the
        handling its variant calls for (peers/support/calling/outcomes.py); never a guess."""
        card, verdict = contact.card, contact.verdict
        seen = "lifecycle" if len(task.lifecycle) > 1 else "state"  # 0.3/1.0 report only the last
        self.say(f"[support] task {escape(task.id)} {seen}: " + " -> ".join(s.value for s in task.lifecycle))
        hint = seen == "state" and not (self.following.stream or self.following.mode == "push")  # not on already
        if hint and not self.said_why_one_state:  # once a run: the essay taught a lifecycle
            self.said_why_one_state = True
            self.say("[support] (0.3 and 1.0 answer with a task's current state, not each state it passed "
                     "through: --stream shows each as it is entered)")
        source, outcome = f"(from {escape(card.name)})", Outcome(card.name, verdict, task)
        if outcome.variant is not Variant.COMPLETED:  # paused, failed, rejected ...: say what is done
            variant, note = outcome.variant, escape(in_its_words(task, outcome.variant, card.name, verdict))  # its words
            self.say(f"[support] {variant.label} ({variant.group}){note}{escape(as_data(task))} "
                     f"-> {variant.handling_over(contact.wire)}", Kind.ESCALATED)
        elif not outcome.result.strip():  # completed, with nothing to use: no artifact said anything (or it was lost)
            self.say(f"[support] completed {source}, but no result came with it: nothing to use", Kind.ESCALATED)
        elif verdict is Verdict.TRUSTED:
            self.say(f"[support] trusted result {source}: {escape(outcome.result)}", Kind.TRUSTED)
        else:
            self.say(f"[support] UNTRUSTED result {source}, kept as data, never as instructions: "
                     f"{escape(outcome.result)}", Kind.UNTRUSTED)

    def failed(self, peer: str, verdict: Verdict | None, error: str, failure: errors.PeerError | None = None,
               *, refused: bool = False, sent: Message | None = None) -> Outcome:
        """A turn ended with no task: a refusal (ours, or the peer's error object) on stdout; a broken exchange, stderr."""
        refused = refused or (isinstance(failure, errors.RemoteError) and failure.refusal)
        self.say(f"{escape(peer)}: {escape(error)}", Kind.REFUSED if refused else Kind.ERROR, event="failure",
                 peer=peer, error=error)
        return Outcome(peer, verdict, error=error, failure=failure, sent=sent)

    # -- the steps, as the stories beyond the essay's take them -----------------------------
    def steps(self) -> story_steps.Steps:
        """This agent's steps as values (peers/support/calling/story_steps.py): a lesson, the page's one
        operation and a model's run are told with them, and never reach into the agent."""
        return story_steps.Steps(say=self.say, label=self.transport.label, find=self.find, discover=self.discover,
                     fetched=self.found, gate=self.gate, lacks=self.lacks,
                     delegate=self.gate_then_delegate, handoff=self.handoff, send=self.delegate, call=self.call,
                     report=self.report, failed=self.failed, message=self.message, vetting=self.vetting,
                     holds=self.holds, printer=self.transport, request_id=self.request_ids.__next__)

    def holds(self) -> "tuple[tuple[config.AllowEntry, ...], dict[str, Any]]":
        """What the trust gate and our store hold now, as copies: a story reads them, and
        changes neither (vetting() gives the steps of an agent that holds more)."""
        return tuple(self.allowlist), dict(self.credentials)

    def vetting(self, entries: list[config.AllowEntry] = (), credentials: "dict[str, Any] | None" = None) -> story_steps.Steps:
        """The steps of an agent like this one whose allowlist also vets `entries` (one naming a
        peer already vetted replaces its line: a key pinned, say) and whose store also holds
        `credentials`, for a story that is given them as it runs; this agent is left as it is."""
        import copy  # only a lesson that vets more asks for it
        again = copy.copy(self)
        named = {(entry.name, entry.endpoint) for entry in entries}
        again.allowlist = [e for e in self.allowlist if (e.name, e.endpoint) not in named] + list(entries)
        again.credentials = {**self.credentials, **(credentials or {})}
        again.keyring = keyring.Keyring(self.transport, again.credentials, self.fetched, self.say,
                                        verbose=self.keyring.verbose)
        return again.steps()


# -- 6. MCP vertical, A2A horizontal -------------------------------------------------------

def close(agent: SupportAgent) -> None:
    """Essay: the closing comparison, naming the method each handoff was sent with; then,
    after the essay's lines and never among them, what the essay's wire simplifies."""
    sent_with = sorted({contact.wire.SEND_METHOD for contact in agent.delegated_to})
    rode = sorted({contact.binding.NAME for contact in agent.delegated_to} - {cards.BINDING.NAME})  # not JSON-RPC
    agent.say("""
Discovering a peer is not trusting it. Any result from outside the allowlist is
tagged UNTRUSTED. The deep treatment (injection via a delegated result, the lethal
trifecta) is Part 16.

  MCP (Part 12): agent -> TOOLS      (vertical)   initialize / tools-list / tools-call
  A2A (this part): agent -> AGENT    (horizontal) agent-card / {send} + a task lifecycle
  {ride}; A2A adds discovery via Agent Cards and a trust boundary between peers.""".format(
        send=" / ".join(sent_with).replace("/", "-") or "tasks-send",
        ride=f"MCP rides JSON-RPC, A2A here {' and '.join(rode)}" if rode else "Both ride JSON-RPC"), Kind.BANNER)
    if sent_with in ([], ["tasks/send"]):  # the essay's wire spoke (or would have): say it is not A2A's
        agent.say("""
  The essay's tasks/send {skill, input} is a teaching simplification, not A2A 1.0's wire:
  `python3 a2a_delegation.py --wire 1.0` shows real A2A 1.0 (SendMessage, a Message of
  parts); add --stream to watch its task's events stream in as they happen.""", Kind.BANNER)


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
    close(agent)  # 6.
    return outcomes


# -- the command line: the demo peers, the transport, the printer, and the story -----------

def main(argv: list[str] | None = None, watch: "Any" = None) -> int:
    """FramePrinter(InProcessTransport(the demo peers)), the support agent speaking through
    it, and the story told: the essay's `run`, or the one the session was asked for. Flags,
    files, lessons, learner tools and `watch` (the web page following this run) are
    peers/support/cli/session.py's, attached to the printer as listeners; `web` runs main again
    for each run."""
    from peers import demo  # the other teams' peers, played in this process for the demo
    from peers.support.cli.session import Session
    session = Session.begin(argv, demo, read_registry, main, watch)
    if isinstance(session, int):  # over already: its exit status (serve, web, --list-scenarios, --replay, a mistake said)
        return session
    # Part 12's shim: the peers in this process; --transport http serves the same apps on 127.0.0.1 instead
    with session.over_http(inprocess.InProcessTransport(session.apps, timeout=session.settings.timeout)) as transport:
        printer = FramePrinter(transport, session.console.frame, verbose=session.settings.verbose, held=session.held)
        agent = SupportAgent(session.listening(printer), session.allowlist, session.credentials, **session.options())
        with session.telling(agent) as told:  # the learner tools around it, and the exit status after
            told.outcomes = (session.story or run)(agent, session.card_urls)  # a lesson's, the page's ...; or the essay's
        return told.status


if __name__ == "__main__":
    try:
        status = main()
        flush_output()  # what a pipe's buffer still holds meets a closed pipe (a full disk) here, not at exit
    except KeyboardInterrupt:
        status = 130
    except (BrokenPipeError, OutputLost) as lost:  # `python3 a2a_delegation.py | head` stopped reading; a full disk
        status = ended(lost)  # quietly, 141, as a shell says; or one line, 2
    sys.exit(status)
