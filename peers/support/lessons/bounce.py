"""--scenario bounce: two specialists hand a refund back and forth until the handoff's hop
limit stops it, ending in a state that names who owns the decision.

Seed 004's last test: "a handoff chain that bounces between specialists because nobody
owns the terminal decision". Billing will not refund an order under dispute: it refers
it to disputes-agent (a rejection whose data names where it belongs). Our own
disputes desk finds the customer right and refers the refund back to billing, which
still sees the dispute open. The support agent routes each referral, and every handoff
carries the envelope (peers/contracts/handoff.py) with the hops made so far and a limit. At
the limit the receiver refuses before doing anything, naming the decision's owner: the
support agent, which stops routing and escalates. Without the limit this would loop
forever; the router is bounded too. Each specialist is called with the same `run`
(stages.py): billing across the transport, the disputes desk in this process.
"""
from __future__ import annotations

from peers.contracts import handoff
from peers.contracts.evidence import utc_second
from peers.a2a.model import AgentCard, TaskState
from peers.support.lessons import Lesson
from peers.support.lessons.stages import LocalAgent, NotDelegated, RemoteAgent, Stage
from peers.support.lessons.turns import open_lesson
from peers.support.calling.outcomes import referred_to
from peers.support.output import Kind
from transports.escaping import escape
from transports.jsonrpc import InvalidParams

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any
    from peers.support.calling.story_steps import Steps
    from peers.support.calling.outcomes import Outcome

ORDER, AMOUNT, OWNER = "ORD-5500", 64.0, "support-agent (the customer's owner)"
MAX_HOPS, MAX_ROUTES = 3, 10  # the envelope's limit; the router's own bound, whatever peers say


LESSON = Lesson(
    about="billing refers a disputed refund to our disputes desk, which refers it back; the handoff's hop "
          "limit stops the chain, naming the support agent as the decision's owner",
    teaches="seed 004's tests: a handoff chain that bounces because nobody owns the terminal decision",
    order=160, flags={"--wire": "1.0"},
    peers={"billing-agent": {"disputed": {ORDER: "disputes-agent"}}})  # not billing's to decide yet


def envelope(hops: list[str]) -> dict[str, Any]:
    return handoff.to_wire(handoff.Envelope(
        objective=f"refund {ORDER} once its dispute is settled", decision_owner=OWNER,
        permitted=(handoff.Permit("refund", AMOUNT, "USD"),), expires_at="2099-01-01T00:00:00Z",
        hops=tuple(hops), max_hops=MAX_HOPS))


def disputes_desk(payload: dict[str, Any], metadata: dict[str, Any]) -> tuple[TaskState, str, dict | None]:
    """Our own specialist: it judges the envelope as billing does, then refers the refund on."""
    try:
        grant = handoff.read(metadata.get("handoff"))
    except InvalidParams as exc:
        return TaskState.REJECTED, str(exc), None
    refused = handoff.refusal(grant, "refund", float(payload["amount"]), "USD", utc_second())
    if refused:
        return TaskState.REJECTED, refused, None
    return (TaskState.REJECTED, f"the customer is right about {payload['order_id']}; issuing the refund "
            "is billing-agent's job", {"referTo": "billing-agent"})


def run(story: Steps, card_urls: list[str]) -> list[Outcome]:
    card = open_lesson(story, card_urls, "A chain that bounces: two specialists, one refund, "
                       f"and a limit of {MAX_HOPS} hops.",
                       lacks="metadata to carry an envelope")
    if not isinstance(card, AgentCard):
        return card  # why it cannot go on, said already
    billing = RemoteAgent(story.delegate, card, "process_refund")
    specialists: dict[str, Stage] = {billing.name: billing,
                                     "disputes-agent": LocalAgent("disputes-agent", disputes_desk)}
    hops, target = ["support-agent"], billing.name
    for _ in range(MAX_ROUTES):
        story.say()
        story.say(f"[support] handing {ORDER} to {target} ({specialists[target].where}); "
                  f"hops so far: {' -> '.join(hops)}")
        try:
            task = specialists[target].run({"order_id": ORDER, "amount": AMOUNT}, handoff=envelope(hops))
        except NotDelegated as refused:
            return [refused.outcome]
        referral = referred_to(task)  # a peer's data: only a name we know is routed
        if referral not in specialists or referral == target:
            break
        story.say(f"[support] {target} refers it to {referral}: {escape(str(task.status_message))}")
        hops, target = hops + [target], referral
    else:
        return [story.failed(target, None, f"still bouncing after {MAX_ROUTES} routes; escalating")]
    story.say()
    if task.state is TaskState.COMPLETED:
        story.say(f"[support] {target} completed it", Kind.TRUSTED)
    else:
        story.say(f"[support] {target} ended it {task.state.value}: {escape(str(task.status_message))}",
                  Kind.ESCALATED)
        story.say("[support] the support agent owns this decision: the refund goes to a person, "
                  "with both specialists' answers; nobody routes it again", Kind.ESCALATED)
    return [billing.outcome] if billing.outcome is not None else []
