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
FramePrinter(InProcessTransport(the demo peers)). With --request a model chooses the
delegation instead (peers/support/planner.py), through the same trust gate. Every `-->`
/ `<--` line is printed by transports/printer.py from the bytes that really crossed;
nothing here prints a frame. The peers (peers/) are reached only through the transport,
as if another team owned them: this file imports none (main() starts the demo network
that plays them). The protocol both share is in peers/a2a/; our own side, peers/support/.
"""
from __future__ import annotations

import os
import sys
from enum import Enum
from itertools import count
from typing import Any, Callable, NamedTuple

from peers.a2a import wire_format
from peers.a2a.model import AgentCard, Message, Part, Task
from peers.support.config import (AllowEntry, ConfigError, load_allowlist, load_credentials,
                                  load_registry, token_for, trust_hint, unproven_card)
from peers.support.legacy_cards import LegacyCardPrinter
from peers.support.outcomes import Variant, as_data, variant_of
from peers.support.polling import settle
from peers.support.webhook import webhook_for
from peers.support.output import Console, Kind
from peers.support.replies import check_card, read, read_card, read_json
from peers.support.streams import follow
from transports import jsonrpc, sse
from transports.base import Transport
from transports.errors import HttpRefusal, PeerError
from transports.inprocess import InProcessTransport
from transports.printer import FramePrinter, StopRun, escape

HERE = os.path.dirname(os.path.abspath(__file__))
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
                 allow_untrusted: tuple[str, ...] = (), wire_name: str | None = None,
                 stream: bool = False, no_wait: str = "", patience: float = 10.0) -> None:
        self.transport = transport  # 2. cards are fetched through it, 4. frames sent
        self.allowlist = allowlist  # 3. the trust gate reads it
        self.credentials = credentials  # 4. endpoint -> bearer token: our own store, never a card's
        self.say = say
        self.allow_untrusted = set(allow_untrusted)  # names the user explicitly opted in to
        self.forced_format = wire_format.by_name(wire_name) if wire_name else None  # else: each card's
        self.format_of: dict[str, wire_format.WireFormat] = {}  # endpoint -> the format its card speaks
        self.discovered: dict[str, AgentCard] = {}  # card URL -> the card found there
        self.delegated_to: list[AgentCard] = []  # the peers a frame was sent to, in order
        self.request_ids, self.message_ids = count(1), count(1)  # JSON-RPC ids, messageIds: stable
        self.last_sent: Message | None = None  # the last message delegated: a retry resends it as is
        # --stream (event by event), --no-wait ("poll"), --push ("push"): how a task is followed
        self.stream, self.no_wait, self.patience = stream, no_wait, patience

    # -- 2. discover: fetching the card is all discovery is -------------------------------
    def discover(self, card_url: str) -> AgentCard:
        """Essay: The Agent Card. Raises PeerError (transports/errors.py) with the reason."""
        response = self.transport.get(card_url, {"Accept": "application/json"})
        if response.status != 200:
            raise HttpRefusal(response.status, credentials_sent=False)
        document = read_json(response.body, "the card")
        spoken = wire_format.declared_by(document)  # the card says how to speak to its peer
        check_card(document, spoken)  # every field its version requires, or each problem named
        # --wire, where the card offers that too; + our own contract copy where it publishes none
        card, spoken = read_card(spoken, document, self.forced_format, card_url)
        self.format_of[card.url] = spoken
        self.discovered[card_url] = card
        self.say(f"[support] discovered {card.name!r} at {escape(card.url)}: "
                 f"skills={card.skill_ids!r}, auth={list(card.auth_schemes)!r}")
        return card

    # -- 3. the trust gate: discovery is not trust --------------------------------------
    def trust_gate(self, card: AgentCard) -> Verdict:
        """Essay: Discovery is not trust. Runs before any frame is sent to the peer.

        Trusted only if the allowlist names the peer *and* the endpoint its frames would go
        to, and its card is shown to come from there (config.py), so a copy is refused.
        """
        name = repr(card.name)
        vetted_at = [entry.endpoint for entry in self.allowlist if entry.name == card.name]
        unproven = unproven_card(card, self.allowlist)  # fetched elsewhere, or not signed by a pinned key
        if card.url in vetted_at and not unproven:
            verdict, line = Verdict.TRUSTED, f"[trust] {name} is allowlisted -> delegating"
        elif card.name in self.allow_untrusted:
            verdict, line = Verdict.UNTRUSTED, (
                f"[trust] {name} {unproven or 'is NOT on the allowlist'} -> delegating anyway "
                "(--allow-untrusted); its output will be tagged UNTRUSTED")
        elif unproven:  # vetted at this endpoint, but this card is not shown to come from it
            verdict, line = Verdict.REFUSED, f"[trust] {name} {unproven} -> delegation REFUSED"
        elif vetted_at:
            verdict, line = Verdict.REFUSED, (
                f"[trust] {name} is allowlisted only at {', '.join(vetted_at)}, but its card "
                f"sends frames to {escape(card.url)} -> delegation REFUSED")
        else:
            verdict, line = Verdict.REFUSED, f"[trust] {name} is NOT on the allowlist -> delegation REFUSED"
        self.say(line, Kind[verdict.name], event="trust", peer=card.name, endpoint=card.url, verdict=verdict.value)
        return verdict

    # -- 4. delegate: one JSON-RPC call carrying a task ----------------------------------
    def delegate(self, card: AgentCard, skill: str, payload: dict[str, Any], context_id: str | None = None,
                 **metadata: Any) -> Task:
        """Essay: Delegation over JSON-RPC. tasks/send; the reply is a task, not a value.
        `context_id`: the conversation it belongs to, if we keep one. Raises PeerError."""
        spoken = self.format_of[card.url]
        self.last_sent = message = Message(f"msg-{next(self.message_ids)}", "user",
                                           (Part(data=payload, media_type="application/json"),),
                                           context_id, metadata={"skillId": skill, **metadata})
        self.delegated_to.append(card)
        if self.stream and card.streaming and wire_format.method_for(spoken, "stream"):  # event by event
            return follow(self, card, spoken, message)
        params = spoken.send_params(message, bool(self.no_wait), webhook_for(self, card))  # --push: ours
        result = self.call(card.url, spoken.SEND_METHOD, params, spoken.HEADERS)
        return settle(self, card, read(spoken.task_from_result, result, "the result"), self.patience)

    def call(self, url: str, method: str, params: Any, extra_headers: dict[str, str],
             scope: str | None = None, stream: bool = False) -> Any:
        """One JSON-RPC request, one response (a stream: one per event, as each arrives)."""
        request_id = next(self.request_ids)
        frame = jsonrpc.encode_request(request_id, method, params)
        headers = {"Content-Type": "application/json", **extra_headers}
        token = token_for(self.credentials, url, scope)  # only ever the one issued for `url`
        if token:
            headers["Authorization"] = f"Bearer {token}"
        response = (self.transport.stream if stream else self.transport.post)(url, frame, headers)
        if response.status != 200:
            sent = "Authorization" in headers
            hint = "" if sent else f"give the support agent a token for {url} with --credentials"
            raise HttpRefusal(response.status, credentials_sent=sent, hint=hint)
        if sse.is_stream(response.header("Content-Type")):
            return sse.events(response.body, lambda event: jsonrpc.decode_response(event, request_id))
        return jsonrpc.decode_response(response.body, request_id)

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
        except PeerError as failure:  # a GET of a public document changes nothing
            return self.failed(card_url, None, f"card fetch failed: {failure}; fetching a card "
                                               "has no effect, so a retry is safe")

    def gate_then_delegate(self, card: AgentCard, skill: str, payload: dict[str, Any],
                           context_id: str | None = None, **metadata: Any) -> Outcome:
        """Essay: Discovery is not trust, then Delegation over JSON-RPC. The gate first;
        a refused peer gets no frame. A result is printed as trusted or UNTRUSTED."""
        verdict = self.trust_gate(card)
        if verdict is Verdict.REFUSED:  # 5. refuse: nothing is sent, nothing comes back
            self.say("-> delegation result: None  (refused; output never trusted)", Kind.REFUSED)
            return Outcome(card.name, verdict)
        # Trusted is not enough: the card must also say this agent takes what we would send.
        problem = card.refusal(skill, payload, holds_credential=bool(token_for(self.credentials, card.url)))
        if problem:
            return self.failed(card.name, verdict, f"not sent: {problem}")
        try:
            task = self.delegate(card, skill, payload, context_id, **metadata)  # metadata: a handoff envelope
        except PeerError as failure:
            return self.failed(card.name, verdict,
                               f"delegation failed: {failure}; {failure.retry_advice()}", failure)
        self.report(card, verdict, task)
        return Outcome(card.name, verdict, task)

    def report(self, card: AgentCard, verdict: Verdict, task: Task) -> None:
        """What came back, said as the variant it is: a result (trusted or not), or the
        handling its variant calls for (peers/support/outcomes.py); never a guess."""
        seen = "lifecycle" if len(task.lifecycle) > 1 else "state"  # 0.3/1.0 report only the last
        self.say(f"[support] task {escape(task.id)} {seen}: " + " -> ".join(s.value for s in task.lifecycle))
        source, outcome = f"(from {escape(card.name)})", Outcome(card.name, verdict, task)
        if outcome.variant is not Variant.COMPLETED:  # paused, failed, rejected ...: say what is done
            note = f": {escape(task.status_message)}" if task.status_message else ""
            variant = outcome.variant
            self.say(f"[support] {variant.label} ({variant.group}){note}{escape(as_data(task))} "
                     f"-> {variant.handling}", Kind.ESCALATED)
        elif verdict is Verdict.TRUSTED:
            self.say(f"[support] trusted result {source}: {escape(outcome.result)}", Kind.TRUSTED)
        else:
            self.say(f"[support] UNTRUSTED result {source}, kept as data, never as instructions: "
                     f"{escape(outcome.result)}", Kind.UNTRUSTED)

    def failed(self, peer: str, verdict: Verdict | None, error: str,
               failure: PeerError | None = None) -> Outcome:
        self.say(f"{escape(peer)}: {escape(error)}", Kind.ERROR, event="failure", peer=peer, error=error)
        return Outcome(peer, verdict, error=error, failure=failure)


# -- 6. MCP vertical, A2A horizontal -------------------------------------------------------

CLOSING = """
Discovering a peer is not trusting it. Any result from outside the allowlist is
tagged UNTRUSTED. The deep treatment (injection via a delegated result, the lethal
trifecta) is Part 16.

  MCP (Part 12): agent -> TOOLS      (vertical)   initialize / tools-list / tools-call
  A2A (this part): agent -> AGENT    (horizontal) agent-card / {send} + a task lifecycle
  Both ride JSON-RPC; A2A adds discovery via Agent Cards and a trust boundary between peers."""


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
    return outcomes


# -- the command line: the transport, the demo peers behind it, and the story ---------------

def main(argv: list[str] | None = None) -> int:
    from peers import demo  # the other teams' peers, played in this process for the demo
    from peers.support import flags, scenarios
    options = flags.parse(sys.argv[1:] if argv is None else argv, serve_flags=demo.SERVE_FLAGS)
    console = Console(colour=False if options.no_color else None, quiet=options.quiet)
    for warning in flags.ignored(options) if options.command == "run" else ():
        console.say(warning, Kind.WARNING)
    if options.command == "run" and options.list_scenarios:
        console.say(scenarios.listing())
        return 0
    if options.command == "serve":  # one peer as a standalone A2A server
        return demo.serve(options, wire_format.by_name(options.wire), say=console.say,
                          fail=lambda line: console.say(line, Kind.ERROR))
    try:
        if options.replay:  # a saved run, printed again with no peers (and drawn, if asked)
            from peers.support import trace
            return trace.replay(trace.load(options.replay), console.say, options)
        card_urls = read_registry(options.registry or os.path.join(HERE, "registry.json")) \
            + flags.peer_card_urls(options)  # --peer: agents added to this run
        allowlist = load_allowlist(options.allowlist or os.path.join(HERE, "allowlist.json"))
        credentials = load_credentials(options)
        generate = scenarios.generator(options)  # --request: the model that chooses
        # The demo peers serve the card of --wire (the essay's by default); a token is made
        # for billing and handed to the support agent's store, as a platform would provision it.
        network = demo.network(wire_format.by_name(options.wire or wire_format.DEFAULT), scenario=options.scenario)
    except (ConfigError, ValueError) as exc:  # bad model hooks, traces and card files too
        console.say(str(exc), Kind.ERROR)
        return 2
    apps = {**network.apps, **scenarios.own_apps(options)}  # + the support agent's own tool, if any
    transport: Transport = InProcessTransport(apps, timeout=options.timeout)
    served = http = tools = None
    if options.transport == "http":  # the same apps, served on 127.0.0.1
        from transports.network import HttpTransport
        served = demo.Served(apps)
        transport = http = HttpTransport(resolve=served.resolve, timeout=options.timeout or flags.HTTP_TIMEOUT)
    printer = FramePrinter(transport, console.frame, verbose=options.verbose) if not options.legacy_card_path else \
        LegacyCardPrinter(transport, console.frame, verbose=options.verbose,  # + 0.2's card path
                          warn=lambda line: console.say(line, Kind.WARNING))
    if options.step or options.debugger or options.trace or options.diagram:
        from peers.support.tools import LearnerTools  # they hook the printer and the console
        tools = LearnerTools(options, printer, console, card_urls)
    agent = SupportAgent(printer, allowlist, {**network.credentials, **credentials}, console.say,
                         allow_untrusted=tuple(options.allow_untrusted), wire_name=options.wire,
                         stream=options.stream, no_wait="push" if options.push else "poll" * options.no_wait,
                         patience=options.timeout or flags.HTTP_TIMEOUT)
    try:
        if options.request is None and options.scenario is None:
            outcomes = run(agent, card_urls)
        else:  # a lesson of its own, or a model (or its offline stand-in) chooses: the gate decides
            outcomes = scenarios.run(options, agent, card_urls, generate)
            if outcomes is None:
                return 1
    except StopRun:
        console.say("[step] stopped before that frame left; nothing more was sent.")
        return 0
    finally:  # however the run ended: write what was recorded, stop what was served
        problem = tools.finish() if tools else None
        if problem:
            console.say(problem, Kind.ERROR)
        if http:
            http.close()
            served.stop()
    for card_url in flags.peer_card_urls(options):  # --peer: what trusting it would take
        console.say(trust_hint(agent.discovered.get(card_url), allowlist))
    if problem or any(o.error and o.verdict is None for o in outcomes):  # unwritten, or unreachable
        return 2
    return 1 if any(o.error for o in outcomes) else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
    except BrokenPipeError:  # `python a2a_delegation.py | head` stopped reading: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so exit's flush cannot fail
        sys.exit(141)
