"""--scenario auth: a task paused for a stronger credential goes on once it is shown.

A2A's auth-required state: the peer accepted the caller, but this step needs more proof.
Billing here asks for a step-up for any refund above $1,000: the task pauses in
auth-required, naming as data the scheme and the scope it needs. The support agent looks
in its own credential store for a token for that endpoint and scope (a platform issued
it, as it issued the ordinary one) and sends the next turn of the same task with that
token in HTTP Authorization. The payload never carries a credential: "a token in a
payload is a permission escalation with extra steps" (seed 004), and a message is
logged, stored and forwarded. A follow-up without the step-up is refused and the task
stays paused; with it, the same task completes. The printer masks both tokens, each
with a short fingerprint (`Bearer ****#1ec1`), so the two are told apart, never shown.
"""
from __future__ import annotations

from peers.a2a.model import AgentCard, Message, Part, Task
from peers.a2a.schema import check
from peers.support.calling.config import token_for
from peers.support.calling.outcomes import Contact, Variant
from peers.support.lessons import Lesson
from peers.support.lessons.turns import attempt, open_lesson, said, turn_failed
from peers.support.output import Kind
from transports.errors import PeerError
from transports.printer import masked

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from peers.support.calling.story_steps import Steps
    from peers.support.calling.outcomes import Outcome

ORDER, AMOUNT = "ORD-4200", 2400.0
# What a paused task may ask for as a credential: a peer's data, checked like any reply.
ASKED = {"type": "object", "required": ["scheme", "scope"], "additionalProperties": False,
         "properties": {"scheme": {"type": "string", "pattern": "^bearer$"},
                        "scope": {"type": "string", "pattern": "^[A-Za-z0-9:._-]{1,64}$"}}}


LESSON = Lesson(
    about="a refund above $1,000 pauses in auth-required for a step-up token; the support agent sends the "
          "next turn with it from its own store (never in the payload)",
    teaches="seed 004: the receiver's own audience-bound credentials, never a token in a payload",
    order=70, flags={"--wire": "1.0"},
    peers={"billing-agent": {"step_up_above": 1_000.0}})  # a large refund needs a step-up


def run(story: Steps, card_urls: list[str]) -> list[Outcome]:
    """A refund that needs a step-up: the task pauses, our store supplies it, it goes on."""
    card = open_lesson(story, card_urls, "auth-required: a step-up credential, from our own "
                          "store, continues the same task.",
                          lacks="auth-required state, nor a taskId to continue a task with")
    if not isinstance(card, AgentCard):
        return card  # why it cannot go on, said already
    contact = story.gate(card)  # the trust gate, where the lesson first hands off
    if not isinstance(contact, Contact):
        return [contact]
    outcome = story.handoff(contact, "process_refund", {"order_id": ORDER, "amount": AMOUNT})
    if outcome.variant is not Variant.AUTH_REQUIRED:
        return [outcome]
    task = outcome.task
    asked = (task.status_data or {}).get("credential")
    problem = check(asked, ASKED, "the credential asked for")
    if problem:
        story.say(f"[support] the task is paused, but names no credential we could look up ({problem})",
                  Kind.WARNING)
        return [outcome]
    scope, endpoint = asked["scope"], contact.card.url
    _, store = story.holds()
    if token_for(store, endpoint, scope) is None:
        story.say(f"[support] our store holds no token for {endpoint} with scope {scope!r}: "
                  "a person must obtain one", Kind.ESCALATED)
        return [outcome]
    try:
        # Each token as the printer shows it, fingerprinted: told apart, neither shown. The demo's
        # tokens are fresh each run, so the lines say how they compare; --verbose shows each.
        first, step_up = (masked(token_for(store, endpoint, asked) or "") for asked in (None, scope))
        story.say(f"[support] billing asks for a bearer token with scope {scope!r}; first, the next "
                  "turn with the token we already sent")
        said(story.say, attempt(story, contact, next_turn(story, task)))
        story.say(f"[support] now with the {scope!r} token from our store, "
                  + ("another credential than the first" if first != step_up else "the same credential")
                  + " (--verbose shows each request's Authorization masked, as Bearer ****#, then a fingerprint "
                  "that tells two apart), in HTTP Authorization (the message itself carries none)")
        answer = attempt(story, contact, next_turn(story, task), scope)
    except PeerError as failure:
        return [turn_failed(story, contact, outcome, failure)]
    said(story.say, answer)
    return [outcome._replace(task=answer) if isinstance(answer, Task) else outcome]


def next_turn(story: Steps, task: Task) -> Message:
    """The next turn of `task`: it carries no credential, only words saying where it is."""
    return story.message(Part(text="continuing with the credential asked for (in Authorization)"),
                         context_id=task.context_id, task_id=task.id, metadata={"skillId": "process_refund"})
