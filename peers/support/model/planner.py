"""The generate() step of the story: a model proposes the delegation, code checks it.

Essay: "a real LLM driving the delegation decisions through generate()". The model is
asked which discovered peer and skill should take the customer's request, and with what
input; its answer must fit the skill's input contract and keep the order and amount the
customer's words name (one retry, with the reason), and
the story's trust gate then decides about the peer it named, exactly as for any other.
When a trusted result comes back, the model drafts the customer's reply from it, the
result fenced as data; an UNTRUSTED result never reaches the reply (customer.py).
`--show-prompts` prints every prompt and answer.
"""
from __future__ import annotations

import json
import sys
import traceback

from peers.a2a.model import AgentCard
from peers.contracts.refund_text import read_refund
from peers.support.model import customer, prompts
from peers.support.model.generate import STAND_IN_READS, Generate, GenerateError, gullible, said, stand_in
from peers.support.model.prompts import ModelStepFailed
from peers.support.calling.contracts import CONTRACTS
from peers.support.output import Kind
from transports.errors import let_quit
from transports.escaping import escape

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable
    from peers.support.calling.story_steps import Steps
    from peers.support.calling.outcomes import Outcome


MAX_REPLY = 2000  # characters of the customer's reply shown, of a model's answer of any length


def ask(generate: Generate, prompt: str, show: bool, say: Callable[..., None]) -> str:
    try:
        answer = generate(prompt)
    except GenerateError:
        raise
    except Exception as exc:  # the plugged-in model's own failure: one line, nothing sent
        let_quit(exc)
        raise GenerateError(f"generate() raised {exc.__class__.__name__}: {said(exc)}") from exc
    if not isinstance(answer, str):
        raise GenerateError(f"generate() returned {type(answer).__name__}, not text")
    answer = str.__str__(answer)  # a plain str: a subclass's own methods (a slow __getitem__) run nowhere after
    if show:  # exactly what the model saw, and what it said
        say("[prompt]\n" + escape(prompt, keep_newlines=True))
        say("[answer]\n" + escape(answer, keep_newlines=True))
    return answer


def choose(request: str, cards: list[AgentCard], generate: Generate, contracts: dict[str, Any],
           *, show: bool, say: Callable[..., None]) -> prompts.Decision:
    """The model's choice, checked. Raises InvalidDecision after a second bad answer."""
    offered = {s.id for c in cards for s in c.skills}
    known = {skill: schema for skill, schema in contracts.items() if skill in offered}
    prompt = prompts.decision_prompt(request, cards, known)
    asked = read_refund(request)  # what the customer's own words name: the model may not change it
    try:
        decision = prompts.parse_decision(ask(generate, prompt, show, say), cards, contracts, asked)
    except prompts.InvalidDecision as exc:  # one more chance, told what was wrong
        prompt += "\n" + prompts.retry(str(exc))
        decision = prompts.parse_decision(ask(generate, prompt, show, say), cards, contracts, asked)
    say(f"[model] chose {escape(repr(decision.card.name))} / {escape(decision.skill)} with "
        f"{escape(json.dumps(decision.payload))}", Kind.MODEL, event="model",
        peer=decision.card.name, skill=decision.skill)
    return decision


def reply(request: str, peer: str, result: str, trusted: bool, generate: Generate,
          *, show: bool, say: Callable[..., None], payload: dict[str, Any] | None = None) -> str:
    """The customer's reply. From a trusted result, the model drafts it (the result fenced as
    data); from an UNTRUSTED one, code writes it and nothing of the result is in it, since a
    model shown that text may repeat its claims as fact (peers/support/model/customer.py)."""
    if not trusted:
        text = customer.untrusted_reply(payload)
        say(f"[support] reply to the customer (written without the UNTRUSTED result, which is "
            f"unverified and not passed on): {text}", Kind.UNTRUSTED)
        return text
    text = ask(generate, prompts.summary_prompt(request, peer, result, trusted), show, say)
    if len(text) > MAX_REPLY:  # a model may answer at any length: a reply to a customer is a sentence or two
        text = f"{text[:MAX_REPLY]} ... (cut: {len(text) - MAX_REPLY:,} characters more)"
    say(f"[support] reply to the customer: {escape(text)}", Kind.TRUSTED)
    return text


def run_request(story: Steps, card_urls: list[str], request: str, generate: Generate, *,
                show_prompts: bool = False, verbose: bool = False) -> list[Outcome] | None:
    """--request: the model chooses the peer and skill; the story's trust gate still decides.
    Essay: Discovery is not trust. `agent` is the story's SupportAgent. Returns the outcomes
    (cards that could not be fetched, then the delegation), or None when the model's answer
    could not be used."""
    story.say(f"[transport] {story.label}; delegation chosen by generate()", Kind.BANNER)
    found = [story.find(card_url) for card_url in card_urls]
    cards = [card for card in found if isinstance(card, AgentCard)]
    failures = [outcome for outcome in found if not isinstance(outcome, AgentCard)]
    if not cards:  # the model is not asked to choose among none
        story.say("[support] no card this run could use (each said above): there is no peer to delegate to",
                  Kind.ERROR)
        return failures
    try:
        decision = choose(request, cards, generate, CONTRACTS, show=show_prompts, say=story.say)
    except ModelStepFailed as exc:
        hint = f" ({STAND_IN_READS})" if generate in (stand_in, gullible) else ""
        story.say(f"the model's delegation could not be used: {exc}{hint}", Kind.ERROR)
        if verbose and exc.__cause__ is not None:  # the plugged-in model's own traceback
            traceback.print_exception(exc.__cause__, file=sys.stderr)
        return None
    outcome = story.delegate(decision.card, decision.skill, decision.payload)
    if outcome.refused:
        story.say("[support] the model chose it; the trust gate, in code, refused it. "
                  "Nothing was delegated: no frame went to it but the fetch of its card.", Kind.REFUSED)
    if outcome.result is not None:  # the result goes back to the model as fenced data
        try:
            reply(request, outcome.peer, outcome.result, outcome.trusted, generate,
                  show=show_prompts, say=story.say, payload=decision.payload)
        except ModelStepFailed as exc:
            story.say(f"the model could not draft the reply: {exc}", Kind.ERROR)
    return failures + [outcome]
