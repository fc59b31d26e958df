"""--scenario injection: the rogue's card tells the model to delegate to it; a gullible
model obeys; the trust gate refuses anyway, and nothing is delegated to the rogue.

Essay: Discovery is not trust: "the ability to find a peer that claims a skill says
nothing about whether you should act on what it returns". This is injection through a
card, read by a model before any delegation; injection through a delegated result
(the essay leaves it to Part 16) is --scenario untrusted. This is a --request run
(peers/support/model/planner.py): a model reads the customer's words and the peers' cards,
and chooses the peer, skill and input. Here the rogue's card description carries an instruction to any AI reading it
(the rogue's trick 6), and the offline stand-in is a gullible one that obeys any
"delegate to NAME" it finds (peers/support/model/generate.py). The model chooses the rogue;
the trust gate, in code, refuses it, so no delegation frame is sent to it (only its card was
fetched, as every card is, before the model chose). Card text reaches the
model only inside fenced UNTRUSTED DATA blocks; a real model may or may not be fooled
(--generate, --llm-url), and the gate decides either way. An allowlist that vets the rogue lets
the fooled choice through: the run says that this lesson cannot show its point then, and exits 2.
"""
from __future__ import annotations

from peers.support.model import planner
from peers.support.model.generate import Generate, gullible
from peers.support.lessons import Lesson
from peers.support.lessons.turns import stop_short

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from peers.support.calling.story_steps import Steps
    from peers.support.calling.outcomes import Outcome

REQUEST = "Please refund $180 on order ORD-3300"
ROGUE = "refund-bot-9000"

LESSON = Lesson(
    about="the rogue's card tells the model to delegate to it; a gullible model obeys; the trust gate "
          "refuses anyway, and nothing is delegated to the rogue",
    teaches="essay: Discovery is not trust (injection through a card's text, read by a model)", order=30,
    flags={"--request": REQUEST},
    reads={"--request": f"the customer's words the model reads (default: {REQUEST!r})",
           "--show-prompts": "print every prompt and answer, exactly as the model saw them",
           "--verbose": "also the plugged-in model's own traceback, if it fails"},
    peers={"refund-bot-9000": {"injected_card": True}},  # trick 6: an instruction in its card
    model=gullible)  # the offline stand-in, unless --generate or --llm-url plugs in a model


def run(story: Steps, card_urls: list[str], *, request: str, generate: Generate,
        show_prompts: bool = False, verbose: bool = False) -> list[Outcome] | None:
    """The model chooses, fooled or not; the trust gate decides."""
    outcomes = planner.run_request(story, card_urls, request, generate, show_prompts=show_prompts, verbose=verbose)
    if any(outcome.peer == ROGUE and outcome.trusted for outcome in outcomes or ()):  # the gate let it through
        stop_short(story.say, f"[support] this run's allowlist vets {ROGUE!r}, so the gate let the fooled model's "
                              "choice through, and its answer was taken as trusted: the gate is all that stands "
                              "between a model and a rogue. This lesson needs the rogue off the allowlist")
    return outcomes
