"""--scenario remote-as-local: a two-stage pipeline whose second stage is another team's
agent, called exactly as the first, which is our own.

Seed 000: the Translator "runs as a separate A2A service ... and treats it as a normal
Agent"; "the local pipeline doesn't know the Translator is remote". Here stage one is
the support agent's own triage (in this process: it reads the ticket and looks the
order's charge up in our order records), and stage two is billing, across the
transport. `pipeline` calls `stage.run(payload)` on each and passes one stage's data to
the next; it never asks which is which. Only the printed frames show where the
boundary was: stage one printed none.
"""
from __future__ import annotations

import json
import re

from peers.a2a.model import AgentCard, Task, TaskState
from peers.support.lessons import Lesson
from peers.support.lessons.turns import billing_first
from peers.support.lessons.stages import LocalAgent, NotDelegated, RemoteAgent, Stage, data_of
from peers.support.lessons.orders_tool import ORDERS
from peers.support.output import Kind

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable
    from peers.support.calling.story_steps import Steps
    from peers.support.calling.outcomes import Outcome

TICKET = {"ticket": "Order ORD-3300 arrived broken. I'd like my money back, please."}


LESSON = Lesson(
    about="a two-stage pipeline calls run() on our own triage, then on billing across the transport: the "
          "same call, and the pipeline cannot tell",
    teaches="seed 000: a remote agent, called as a local one", order=170)


def triage(payload: dict[str, Any], metadata: dict[str, Any]) -> tuple[TaskState, str, dict[str, Any] | None]:
    """Our own first stage: which order, and what it was charged (our order records)."""
    found = re.search(r"\bORD-[0-9]{1,12}\b", str(payload.get("ticket", "")))
    if found is None or found.group() not in ORDERS:
        return TaskState.REJECTED, "the ticket names no order we have a record of", None
    order = found.group()
    return TaskState.COMPLETED, f"a full refund of {order}", {"order_id": order, "amount": ORDERS[order]}


def pipeline(stages: list[Stage], payload: dict[str, Any], say: Callable[..., None]) -> Task | None:
    """Each stage's run(), its data the next one's input: the orchestration, all of it."""
    task = None
    for number, stage in enumerate(stages, 1):
        say(f"[pipeline] stage {number}: {stage.name}.run({json.dumps(payload)})")
        task = stage.run(payload)
        say(f"[pipeline] stage {number} ended {task.state.value}")
        if task.state is not TaskState.COMPLETED or data_of(task) is None:
            return task
        payload = data_of(task)
    return task


def run(story: Steps, card_urls: list[str]) -> list[Outcome]:
    # Not open_lesson: the remote stage passes the trust gate itself, when the pipeline runs it
    story.say(f"[transport] {story.label}. Remote as local: one pipeline, two stages, one of them "
              "across the transport.", Kind.BANNER)
    story.say()
    card = story.find(card_urls[0])
    if not isinstance(card, AgentCard):
        return [card]  # why it could not be had, said already
    billing_first(story, card)
    billing = RemoteAgent(story.delegate, card, "process_refund")
    stages: list[Stage] = [LocalAgent("triage", triage), billing]
    story.say()
    try:
        task = pipeline(stages, TICKET, story.say)
    except NotDelegated as refused:
        return [refused.outcome]
    story.say()
    for number, stage in enumerate(stages, 1):
        story.say(f"[pipeline] stage {number}, {stage.name}, was {stage.where}", Kind.BANNER)
    story.say("[pipeline] the pipeline called run() on each and never asked which was which", Kind.BANNER)
    if task is None or task.state is not TaskState.COMPLETED:
        why = task.status_message if task is not None else "no stages"
        return [story.failed("the pipeline", None, f"it stopped: {why}")]
    return [billing.outcome] if billing.outcome is not None else []
