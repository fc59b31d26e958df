"""--scenario NAME and --list-scenarios: lessons beyond the essay's run, one line each.

The essay's run stays the default. A scenario is a short story of its own, told through
the same support agent, printer and transport: its frames are printed like any others.
`own_apps` names the servers of the support agent's own that a scenario needs beside
the demo peers (the MCP tool server); `run` tells it.
"""
from __future__ import annotations

from importlib import import_module
from types import SimpleNamespace
from typing import Any

SCENARIOS = {
    "approval": "a refund above billing's limit pauses for a person; an approval for more is "
                "refused; exactly the proposal continues the same task, once",
    "auth": "a refund above $1,000 pauses in auth-required for a step-up token; the support "
            "agent sends the next turn with it from its own store (never in the payload)",
    "authority": "the same refund under six handoff envelopes (too small, expired, unknown "
                 "version, bounced, a smuggled token, valid): billing admits only the last",
    "broken-stream": "billing's stream breaks off after two events; the task goes on: the support "
                     "agent subscribes to it again (SubscribeToTask) and says what it missed",
    "bounce": "billing refers a disputed refund to our disputes desk, which refers it back; the "
              "handoff's hop limit stops the chain, naming the support agent as the decision's owner",
    "contract": "billing's card publishes the refund's input schema and result variants; three "
                "broken payloads stop before any frame; billing checks again; the valid one is sent",
    "crash": "billing (its own process, with a store file) dies after refunding, before answering; "
             "restarted, it answers the same message with the task it made: one refund",
    "duplicate": "the same handoff delivered again (same messageId, a new one, another amount): "
                 "every answer names one task, and billing refunds the order once",
    "evidence": "claims by reference, each observed, reported or inferred, and dated: billing "
                "rejects a stale fact and a bare inference; the support agent refreshes, then billing acts",
    "injection": "the rogue's card tells the model to delegate to it; a gullible model obeys; "
                 "the trust gate refuses anyway, and nothing reaches the rogue",
    "mcp": "MCP vertical, A2A horizontal in one run: the support agent looks up the charge with "
           "its own tool over MCP (no gate: we wired it in), then delegates the refund to billing "
           "over A2A (gated: another team's)",
    "outcomes": "every way a delegation can end, each a named variant with its handling: "
                "completed, failed, rejected, approval required, canceled; then the legend",
    "remote-as-local": "a two-stage pipeline calls run() on our own triage, then on billing "
                       "across the transport: the same call, and the pipeline cannot tell",
    "signed-card": "billing signs its card and the allowlist pins its key: the card as served is "
                   "trusted; altered in transit, or re-signed by another key, it is refused before any frame",
    "slow": "billing takes longer than the support agent waits: the timeout does not mean it "
            "stopped, so the support agent finds the task (ListTasks, GetTask) before any retry",
    "spoof": "billing's card copied to look-alike hosts: sending frames elsewhere, altered but naming "
             "billing's endpoint, and billing's own signed card replayed; each refused, saying why",
    "versions": "the support agent hands off in refund-handoff/2; billing refuses, naming the "
                "versions it speaks as data; the support agent hands off again in refund-handoff/1",
}
# The lessons that need what the essay's tasks/send lacks (a taskId, a contextId, metadata,
# a card that publishes contracts): they speak 1.0 unless --wire says.
LESSONS_ON_1_0 = ("approval", "auth", "authority", "bounce", "broken-stream", "contract", "crash", "evidence", "duplicate",
                  "outcomes", "signed-card", "slow", "spoof", "versions")
TIMEOUTS = {"slow": 0.25}  # seconds the support agent waits, unless --timeout says


def listing() -> str:
    return "\n".join(f"{name:<16} {about}" for name, about in SCENARIOS.items())


def defaults(options: SimpleNamespace, timeout_given: bool) -> None:
    """What a scenario needs unless the command line says otherwise."""
    if options.scenario == "injection" and options.request is None:
        options.request = "Please refund $180 on order ORD-3300"
    if options.scenario in LESSONS_ON_1_0 and options.wire is None:
        options.wire = "1.0"  # the essay's wire has no taskId: a task cannot be continued on it
    if options.scenario == "crash":
        options.transport = "http"  # billing is a process of its own: reached over real HTTP
    if options.scenario in TIMEOUTS and not timeout_given:
        options.timeout = TIMEOUTS[options.scenario]


def generator(options: SimpleNamespace) -> Any:
    """The generate() a --request run asks (peers/support/generate.py); None without one."""
    if options.request is None:
        return None
    from peers.support.generate import from_options  # only a model's run needs it
    return from_options(options)


def own_apps(options: SimpleNamespace) -> dict[str, Any]:
    """base URL -> app, for the support agent's own servers this run needs."""
    if options.scenario not in ("mcp", "evidence"):  # the lessons that use our own tool
        return {}
    from peers.support import orders_tool
    return {orders_tool.TOOLS_URL: orders_tool.app}


def run(options: SimpleNamespace, agent: Any, card_urls: list[str], generate: Any) -> list[Any] | None:
    """The scenario asked for, or --request: a model chooses the delegation."""
    if options.scenario in SCENARIOS and options.scenario != "injection":
        lesson: Any = import_module(f"peers.support.lessons.{options.scenario.replace('-', '_')}")
        if options.interactive and options.scenario == "approval":  # a person at the terminal decides
            return lesson.run(agent, card_urls, ask=lesson.person_at_terminal)
        return lesson.run(agent, card_urls)
    from peers.support import planner
    return planner.run_request(agent, card_urls, options.request, generate,
                               show_prompts=options.show_prompts, verbose=options.verbose)
