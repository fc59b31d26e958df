"""--scenario bindings: the same refund over JSON-RPC and over HTTP+JSON; the binding
changes the envelope, not the task.

A2A 1.0 section 5: one set of operations, three protocol bindings (JSON-RPC, gRPC,
HTTP+JSON). A 1.0 card lists each interface it offers (`supportedInterfaces`: a binding
at a URL). The support agent sends billing the same refund twice: first as a JSON-RPC
frame (POSTed to the one endpoint, the operation named inside it: "method":
"SendMessage"), then over HTTP+JSON (section 11: the operation named by the request's
verb and path, POST /message:send, the same message as the whole body, and the answer
with its HTTP status). The message is the same proto JSON in both; so is the task that
comes back, and billing refunds the order once, whichever way it is asked. The frames
above say so byte for byte; the lines at the end set them side by side.

A card that offers no HTTP+JSON interface (a build whose peers serve only JSON-RPC) is
said as such, naming what it offers: then only the JSON-RPC half is shown.
"""
from __future__ import annotations

import json

from peers.a2a.bindings import HTTP_JSON, JSONRPC
from peers.a2a.model import AgentCard
from peers.support.lessons import Lesson
from peers.support.lessons.turns import open_lesson
from peers.support.output import Kind
from transports.errors import PeerError
from transports.escaping import escape

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from peers.support.calling.story_steps import Steps
    from peers.support.calling.outcomes import Outcome

ORDER, AMOUNT = "ORD-5100", 75.0
BINDINGS = (JSONRPC.name, HTTP_JSON.name)  # as cards name them; the first is the one every card before 1.0 has


LESSON = Lesson(
    about="the same refund over JSON-RPC, then over HTTP+JSON: a method in an envelope, then a verb and a path; "
          "the same message, the same task, one refund",
    teaches="essay: Delegation over JSON-RPC (A2A 1.0 sections 5 and 11: the protocol bindings)", order=45,
    flags={"--wire": "1.0"})


def run(story: Steps, card_urls: list[str]) -> list[Outcome]:
    """Send the refund by the binding billing's card was read with, then discover it again
    for the other and send the same refund by that one; then compare."""
    card = open_lesson(story, card_urls, "Bindings: one refund, sent as a JSON-RPC frame and as an "
                       "HTTP+JSON request.", lacks="second binding (A2A 1.0 cards list their interfaces)",
                       run_with="--wire 1.0 (0.3's cards name one binding)")
    if not isinstance(card, AgentCard):
        return card  # why it cannot go on, said already
    first = binding_of(story, card)
    outcomes, seen = [], []
    for binding in (first, *(other for other in BINDINGS if other != first)):
        story.say()
        story.say(f"[support] over {binding}:", Kind.BANNER)
        if binding != first:
            try:  # the card again, to be read for its other interface
                card = story.discover(card_urls[0], binding)
            except PeerError as failure:  # a card offering only one: said, and the lesson ends here
                story.say(f"[support] {escape(str(failure))}: only the {first} half can be shown (a card "
                          "listing both, as billing's 1.0 card does, shows both: --wire 1.0)", Kind.WARNING)
                break
        outcome = story.delegate(card, "process_refund", {"order_id": ORDER, "amount": AMOUNT})
        outcomes.append(outcome)
        if outcome.task is None:
            break
        seen.append((story.fetched(card).binding, outcome.sent, outcome))
    if len(seen) == len(BINDINGS):
        side_by_side(story, seen)
    return outcomes


def binding_of(story: Steps, card: AgentCard) -> str:
    """The binding the support agent chose for `card` (cards.py): JSON-RPC, unless --binding said."""
    binding = story.fetched(card).binding
    return binding.NAME if binding is not None else BINDINGS[0]


def side_by_side(story: Steps, seen: list) -> None:
    """What differed between the two exchanges, and what did not."""
    story.say()
    for binding, _, outcome in seen:  # each binding says how it carries an operation
        story.say(f"[bindings] {binding.NAME:<9} {binding.ENVELOPE}; answered {outcome.task.state.value}: "
                  f"{escape(outcome.result or '')}", Kind.BANNER)
    (_, first, done), (_, second, again) = seen  # the messages, the outcomes
    same_message = first is not None and second is not None and \
        json.dumps(first._replace(message_id="")._asdict(), default=str) == \
        json.dumps(second._replace(message_id="")._asdict(), default=str)
    task = f"{escape(done.task.id)} both times" if done.task.id == again.task.id else "two tasks"
    story.say(f"[bindings] the message: {'the same' if same_message else 'NOT the same'} but for its "
              f"messageId; the task: {task}; the result: {'the same' if done.result == again.result else 'NOT the same'}"
              " (billing refunds an order once, whichever way it is asked)", Kind.BANNER)
    story.say("[bindings] the binding changed the envelope; the task is the protocol's, in either", Kind.BANNER)
