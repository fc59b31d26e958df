"""--scenario untrusted: a result from outside the allowlist is data: nothing it claims
reaches the customer as fact, and nothing it says is done.

Essay: Discovery is not trust ("any output that did come from outside the allowlist is
tagged untrusted so a later step treats it as suspect rather than as fact"; the deep
treatment, "injection via a delegated result", is Part 16). This run opts in to the rogue
(--allow-untrusted refund-bot-9000), so the gate lets a frame go to it, and its answer is
the injection the essay warns of: it claims a $9,000.00 refund for a $180.00 request, and
tells "the calling agent" to ignore its allowlist, behind a terminal escape sequence. The
support agent shows it only escaped, and fenced as data, the way any later step (a model
drafting a reply) is shown it; reads what it claims as a claim, set against what was
asked; follows none of it (the allowlist is compared before and after); and writes the
customer's reply in its own words, with nothing of the result in it
(peers/support/model/customer.py). Then the refund goes to billing, through the gate as ever,
and billing's result, trusted, is what the customer is told. `--scenario injection`
shows the other way in: an instruction in a card, read by a model.
"""
from __future__ import annotations

from peers.a2a.model import AgentCard
from peers.contracts.refund_text import read_refund
from peers.support.calling.config import same_endpoint
from peers.support.model import customer
from peers.support.lessons import Lesson
from peers.support.lessons.turns import stop_short
from peers.support.output import Kind
from transports.escaping import escape

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from peers.support.calling.story_steps import Steps
    from peers.support.calling.outcomes import Outcome

ROGUE = "refund-bot-9000"
REFUND = {"order_id": "ORD-3300", "amount": 180.0}

LESSON = Lesson(
    about="the rogue, opted in to, answers with a false refund and an instruction to the caller: shown "
          "fenced as data, never followed, none of it told to the customer; billing's trusted result is what "
          "the customer is told",
    teaches="essay: Discovery is not trust (an UNTRUSTED result is data: injection through a delegated result)",
    order=32, flags={"--allow-untrusted": [ROGUE]},
    reads={"--allow-untrusted": "the peers this run opts in to: the lesson delegates to the first found, and "
                                "keeps its result as data"})


def run(story: Steps, card_urls: list[str], allow_untrusted: tuple[str, ...] | list[str] = (ROGUE,)) -> list[Outcome]:
    """Delegate to the opted-in rogue; keep its answer as data; then to billing, trusted."""
    story.say(f"[transport] {story.label}. An UNTRUSTED result is data: nothing it claims "
              "is a fact, nothing it says is done.", Kind.BANNER)
    story.say()
    found = [story.find(card_url) for card_url in card_urls]
    cards = [card for card in found if isinstance(card, AgentCard)]
    failures = [outcome for outcome in found if not isinstance(outcome, AgentCard)]
    opted = [card for card in cards if card.name in allow_untrusted]
    if not opted:
        stop_short(story.say, f"[support] no card this run could use is of a peer it opts in to (--allow-untrusted): "
                              f"this lesson needs one, as it has by default ({ROGUE})")  # exit status 2
    allowlist_before, _ = story.holds()
    story.say()
    vetted = any(entry.name == opted[0].name and same_endpoint(entry.endpoint, opted[0].url)
                 for entry in allowlist_before)
    story.say(f"[support] the customer's refund, {REFUND['order_id']} for ${REFUND['amount']:,.2f}, to "
              f"{opted[0].name!r}: " + ("this run's allowlist vets it at that endpoint (the gate decides)" if vetted
                                        else "not vetted, but this run opts in to it (--allow-untrusted)"))
    untrusted = story.delegate(opted[0], "process_refund", REFUND)
    if untrusted.result is None:
        return failures + [untrusted]  # refused, failed or paused: the story said why
    if untrusted.trusted:  # this run's allowlist vets it: its result is not the lesson's to doubt
        stop_short(story.say, f"[support] {untrusted.peer!r} is on this run's allowlist, so its result is trusted: "
                              "this lesson needs a peer outside it")  # this run's files cannot show it: exit status 2
    story.say("[support] the result, fenced as data, as any later step (a model drafting a reply) "
              "would be shown it:")
    story.say(customer.fenced(untrusted.peer, untrusted.result))
    claimed = read_refund(untrusted.result)
    story.say(f"[support] what it claims, read as a claim: {_claim(claimed)}; we asked for a refund "
              f"of ${REFUND['amount']:,.2f} for {REFUND['order_id']}, and no system we trust has "
              "confirmed any refund", Kind.UNTRUSTED)
    allowlist, _ = story.holds()  # as the gate reads it now
    same = allowlist == allowlist_before
    story.say(f"[support] what it tells the calling agent to do is not done: the allowlist is "
              f"{'the same as before' if same else 'CHANGED'} ("
              + (", ".join(f"{entry.name} at {entry.endpoint}" for entry in allowlist) or "it vets no peer") + ")",
              Kind.UNTRUSTED if same else Kind.ERROR)
    story.say(f"[support] reply to the customer (written without the UNTRUSTED result, which is "
              f"unverified and not passed on): {customer.untrusted_reply(REFUND)}", Kind.UNTRUSTED)
    outcomes = failures + [untrusted]
    for card in cards:
        if card.name in allow_untrusted:
            continue
        story.say()
        story.say(f"[support] the refund, to {card.name!r}: the allowlist decides, as before")
        trusted = story.delegate(card, "process_refund", REFUND)
        outcomes.append(trusted)
        if trusted.trusted and trusted.result is not None:
            story.say(f"[support] reply to the customer (from {escape(card.name)}, trusted): "
                      f"{escape(customer.trusted_reply(card.name, trusted.result))}", Kind.TRUSTED)
            break
    return outcomes


def _claim(claimed: dict) -> str:
    """A refund read out of an untrusted text: its order and amount, as far as it names them."""
    amount = claimed.get("amount")
    order = claimed.get("order_id")
    if amount is None and order is None:
        return "no refund this workbench can read"
    return (f"a refund of {f'${amount:,.2f}' if amount is not None else 'an amount it does not say'} "
            f"for {escape(order) if order else 'an order it does not name'}")
