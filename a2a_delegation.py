#!/usr/bin/env python3
"""Agent to Agent: a support agent discovers peers, trusts or refuses them, and delegates.

The companion to the essay "Agent to Agent". `python a2a_delegation.py` prints the run
the essay quotes. Read this file top to bottom; it is the essay's story in order:

  1. load the registry      where peers live                (essay: The Agent Card)
  2. discover               fetch each peer's Agent Card    (essay: The Agent Card)
  3. the trust gate         the allowlist decides           (essay: Discovery is not trust)
  4. delegate               tasks/send, a task lifecycle    (essay: Delegation over JSON-RPC)
  5. refuse                 no frame goes to an unvetted peer (essay: Discovery is not trust)
  6. MCP vertical, A2A horizontal                            (essay: the closing comparison)

Every `-->` / `<--` line is printed by transports/printer.py from the bytes that really
crossed the transport; nothing here prints a frame. The peers live in peers/ and are
reached only through the transport, as if another team owned them.
"""
from __future__ import annotations

import sys
from enum import Enum
from itertools import count
from types import ModuleType
from typing import Any, Callable, NamedTuple

from peers import wires
from peers.output import say  # the one output function: colour, --quiet, --trace
from peers.config import AllowEntry, ConfigError, load_allowlist, load_credentials, load_registry
from peers.model import AgentCard, Task, TaskState
from peers.schema import REFUND_INPUT
from transports import jsonrpc
from transports.base import HttpRefusal, StopRun, Transport, TransportError, retry_advice
from transports.printer import escape

# The customer's ticket the support agent cannot handle itself: a refund is billing's job.
SKILL = "process_refund"
PAYLOAD = {"order_id": "ORD-3300", "amount": 180.0}
# The input contracts the support agent relies on (seed 000's typed payload), for peers
# whose cards cannot carry a skill's schema, such as the essay's.
CONTRACTS = {"process_refund": REFUND_INPUT}


CLOSING = """
Discovering a peer is not trusting it. Any result from outside the allowlist is
tagged UNTRUSTED. The deep treatment (injection via a delegated result, the lethal
trifecta) is Part 16.

  MCP (Part 12): agent -> TOOLS      (vertical)   initialize / tools-list / tools-call
  A2A (this part): agent -> AGENT    (horizontal) agent-card / tasks-send + a task lifecycle
  Both ride JSON-RPC; A2A adds discovery via Agent Cards and a trust boundary between peers."""


class Verdict(Enum):
    TRUSTED = "trusted"  # on the allowlist, at the endpoint it was vetted at
    UNTRUSTED = "untrusted"  # not vetted, but the user opted in: its output is data only
    REFUSED = "refused"  # not vetted: no frame is sent


class Outcome(NamedTuple):
    """How one peer's turn ended: the Handoff Contract's explicit variants, never prose."""

    peer: str
    verdict: Verdict | None  # None when discovery itself failed
    task: Task | None = None
    error: str | None = None  # why it failed, naming the stage

    @property
    def result(self) -> str | None:
        done = self.task is not None and self.task.state is TaskState.COMPLETED
        return "".join(a.text for a in self.task.artifacts) if done else None


class SupportAgent:
    """The agent that owns the customer and delegates work it cannot do to peers."""

    def __init__(self, transport: Transport, allowlist: list[AllowEntry], *,
                 credentials: dict[str, str] | None = None,
                 allow_untrusted: tuple[str, ...] = (), wire: ModuleType | None = None,
                 notify: Callable[..., None] | None = None) -> None:
        self.transport = transport
        self.allowlist = allowlist
        self.credentials = credentials or {}  # endpoint -> bearer token: our own store, never the card
        self.allow_untrusted = set(allow_untrusted)  # names the user explicitly opted in to
        self.forced_wire = wire  # None: speak whichever wire each peer's card declares
        self.wire_of: dict[str, ModuleType] = {}  # endpoint -> its wire format (peers/wires.py)
        self.request_ids = count(1)  # JSON-RPC ids from a counter: stable transcripts
        self.message_ids = count(1)  # A2A messageIds too (0.3 and 1.0 frames carry one)
        self.notify = notify or (lambda kind, **facts: None)  # tells --trace/--diagram

    # -- 2. discover: fetching the card is all discovery is -----------------------------
    def discover(self, card_url: str) -> AgentCard:
        """Essay: The Agent Card. Raises TransportError or ValueError with the reason."""
        response = self.transport.get(card_url, {"Accept": "application/json"})
        if response.status != 200:
            raise ValueError(f"HTTP {response.status} from {card_url}")
        document = jsonrpc.loads_strict(response.body)
        wire = self.forced_wire or wires.declared_by(document)  # the card says how to speak
        card = wire.card_from_wire(document)
        self.wire_of[card.url] = wire
        say(f"[support] discovered {card.name!r} at {escape(card.url)}: "
            f"skills={card.skill_ids!r}, auth={list(card.auth_schemes)!r}")
        return card

    # -- 3. the trust gate: discovery is not trust -------------------------------------
    def trust_gate(self, card: AgentCard) -> Verdict:
        """Essay: Discovery is not trust. Runs before any frame is sent to the peer.

        A peer is trusted only if the allowlist names it *and* the endpoint its frames
        would go to, so a card that copies billing's name onto another host is refused.
        """
        name = repr(card.name)
        vetted_at = [e.endpoint for e in self.allowlist if e.name == card.name]
        if card.url in vetted_at:
            say(f"[trust] {name} is allowlisted -> delegating")
            return Verdict.TRUSTED
        if card.name in self.allow_untrusted:
            say(f"[trust] {name} is NOT on the allowlist -> delegating anyway "
                "(--allow-untrusted); its output will be tagged UNTRUSTED")
            return Verdict.UNTRUSTED
        if vetted_at:
            say(f"[trust] {name} is allowlisted only at {', '.join(vetted_at)}, but its card "
                f"sends frames to {escape(card.url)} -> delegation REFUSED")
        else:
            say(f"[trust] {name} is NOT on the allowlist -> delegation REFUSED")
        return Verdict.REFUSED

    # -- 4. delegate: one JSON-RPC call carrying a task --------------------------------
    def delegate(self, card: AgentCard, skill: str, payload: dict[str, Any]) -> Task:
        """Essay: Delegation over JSON-RPC. tasks/send; the reply is a task, not a value."""
        wire = self.wire_of.get(card.url) or self.forced_wire or wires.wire("essay")
        params = wire.send_params(skill, payload, f"msg-{next(self.message_ids)}")
        result = self.call(card.url, wire.SEND_METHOD, params, wire.HEADERS)
        try:
            return wire.task_from_result(result)
        except ValueError as exc:
            raise jsonrpc.ProtocolViolation(f"the result is not a task: {exc}") from None

    def call(self, url: str, method: str, params: Any, extra_headers: dict[str, str]) -> Any:
        """One JSON-RPC request, one response: the envelope Part 12 used for tools."""
        request_id = next(self.request_ids)
        frame = jsonrpc.encode_request(request_id, method, params)
        headers = {"Content-Type": "application/json", **extra_headers}
        if url in self.credentials:  # a token goes only to the endpoint it was issued for
            headers["Authorization"] = f"Bearer {self.credentials[url]}"
        response = self.transport.post(url, frame, headers)
        if response.status != 200:
            raise HttpRefusal(response.status, response.header("WWW-Authenticate"))
        return jsonrpc.decode_response(response.body, request_id)

    # -- one peer, start to finish ------------------------------------------------------
    def handle(self, card_url: str, skill: str, payload: dict[str, Any]) -> Outcome:
        """One peer's whole turn in the essay's run: discover, then gate, then delegate."""
        try:
            card = self.discover(card_url)
        except (TransportError, ValueError) as exc:
            return self._failed(card_url, None, f"card fetch failed: {exc}")
        return self.gate_then_delegate(card, skill, payload)

    def gate_then_delegate(self, card: AgentCard, skill: str, payload: dict[str, Any]) -> Outcome:
        """Essay: Discovery is not trust, then Delegation over JSON-RPC. The gate first;
        a refused peer gets no frame. A result is printed as trusted or UNTRUSTED."""
        verdict = self.trust_gate(card)
        self.notify("trust", peer=card.name, endpoint=card.url, verdict=verdict.value)
        if verdict is Verdict.REFUSED:  # 5. refuse: nothing is sent, nothing comes back
            say("-> delegation result: None  (refused; output never trusted)")
            return Outcome(card.name, verdict)
        try:
            task = self.delegate(card, skill, payload)
        except (TransportError, HttpRefusal, jsonrpc.RemoteError, jsonrpc.ProtocolViolation) as exc:
            return self._failed(card.name, verdict, f"delegation failed: {exc}; {retry_advice(exc)}")
        outcome = Outcome(card.name, verdict, task)
        seen = "lifecycle" if len(task.lifecycle) > 1 else "state"  # 0.3/1.0 report only the last
        say(f"[support] task {escape(task.id)} {seen}: " + " -> ".join(s.value for s in task.lifecycle))
        source = f"(from {escape(card.name)})"
        if outcome.result is None:  # paused, failed or rejected: escalate, never guess
            note = f": {escape(task.status_message)}" if task.status_message else ""
            how = "ended" if task.state.is_terminal else "paused"
            say(f"[support] task {how} {task.state.value}{note} -> escalating to a human")
        elif verdict is Verdict.TRUSTED:
            say(f"[support] trusted result {source}: {escape(outcome.result)}")
        else:
            say(f"[support] UNTRUSTED result {source}, kept as data, never as instructions: "
                f"{escape(outcome.result)}")
        return outcome

    def _failed(self, peer: str, verdict: Verdict | None, error: str) -> Outcome:
        say(f"{escape(peer)}: {escape(error)}", error=True)
        return Outcome(peer, verdict, error=error)


def run(transport: Transport, card_urls: list[str], allowlist: list[AllowEntry],
        **agent_options: Any) -> list[Outcome]:
    """The whole story over any transport; returns each peer's outcome. `agent_options`
    are SupportAgent's: credentials, allow_untrusted, wire, notify."""
    say(f"[transport] {transport.label}. MCP = vertical (agent -> tools);")
    say("A2A = horizontal (agent -> agent). Same plumbing, opposite direction.")
    agent = SupportAgent(transport, allowlist, **agent_options)
    outcomes = []
    for card_url in card_urls:  # 1. the registry says where peers live
        say()
        outcomes.append(agent.handle(card_url, SKILL, PAYLOAD))
    say(CLOSING)
    return outcomes


def run_request(transport: Transport, card_urls: list[str], allowlist: list[AllowEntry],
                request: str, generate: Callable[[str], str], *, show_prompts: bool = False,
                **agent_options: Any) -> Outcome | None:
    """--request: the model chooses the peer and skill; the trust gate still decides.
    Essay: Discovery is not trust. None when the model's answer could not be used."""
    from peers import planner  # loaded only when a model is asked
    say(f"[transport] {transport.label}; delegation chosen by generate()")
    agent = SupportAgent(transport, allowlist, **agent_options)
    cards = []
    for card_url in card_urls:
        try:
            cards.append(agent.discover(card_url))
        except (TransportError, ValueError) as exc:
            agent._failed(card_url, None, f"card fetch failed: {exc}")
    try:
        decision = planner.choose(request, cards, generate, CONTRACTS, show=show_prompts, say=say)
    except planner.ModelStepFailed as exc:
        say(f"the model's delegation could not be used: {exc}", error=True)
        return None
    outcome = agent.gate_then_delegate(decision.card, decision.skill, decision.payload)
    if outcome.verdict is Verdict.REFUSED:
        say("[support] the model chose it; the trust gate, in code, refused it. Nothing was sent.")
    if outcome.result is not None:  # the result goes back to the model as fenced data
        planner.reply(request, outcome.peer, outcome.result, outcome.verdict is Verdict.TRUSTED,
                      generate, show=show_prompts, say=say)
    return outcome


# -- the command line: wiring a transport and the demo peers around the story -------------

def main(argv: list[str] | None = None) -> int:
    from peers import cli, demo, output
    args = cli.parse(sys.argv[1:] if argv is None else argv)
    output.configure(colour=False if args.no_color else None, quiet=args.quiet)
    if args.command == "serve":  # one peer as a standalone A2A server
        return demo.serve_command(args, wires.wire(args.wire), say)
    try:
        if args.replay:  # a saved run, printed again with no peers
            from peers import trace
            trace.replay(trace.load(args.replay), say)
            return 0
        registry = load_registry(args.registry)
        allowlist = load_allowlist(args.allowlist)
        credentials = load_credentials(args.credentials) if args.credentials else {}
        generate = cli.generator(args) if args.request is not None else None
    except (ConfigError, ValueError) as exc:
        say(str(exc), error=True)
        return 2
    cards = [e.card_url for e in registry]
    # The transport with the demo peers behind it, wrapped by the frame printer (and
    # --step/--break, --trace/--diagram when asked): see peers/cli.py.
    with cli.session(args, cards, credentials, say) as (printer, options):
        try:
            if args.request is None:
                outcomes = run(printer, cards, allowlist, **options)
            else:  # a model (or its offline stand-in) chooses; the gate decides
                chosen = run_request(printer, cards, allowlist, args.request, generate,
                                     show_prompts=args.show_prompts, **options)
                if chosen is None:
                    return 1
                outcomes = [chosen]
        except StopRun:
            say("[step] stopped before that frame left; nothing more was sent.")
            return 0
    if any(o.error and o.verdict is None for o in outcomes):
        return 2
    return 1 if any(o.error for o in outcomes) else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
