"""--scenario slow: a timeout on our side does not mean the peer stopped.

Seed 004 asks of every failure "whether retrying is safe and which effects may already
have landed". A timeout is the hardest case: the request left, no answer came back in
time, and the caller cannot tell "never arrived" from "still being done". Billing here
takes a second and a half per refund and the support agent waits half a second (--timeout,
which each look waits too: wide enough for a busy machine's pauses). Instead
of retrying blindly, the support agent looks for the task first: it sent the message
in a context of its own (the customer's ticket), so ListTasks by that contextId finds
the task its lost answer would have named, still working; it asks again (GetTask, after
a growing pause, a bounded number of times) until the task ends. 0.3 has no ListTasks:
there the same message is sent again (the same messageId), which billing answers with
the task it already made, never with a second refund.
"""
from __future__ import annotations

import time

from peers.a2a.model import AgentCard, Message, Task
from peers.support.lessons import Lesson
from peers.support.lessons.turns import ask, contact_of, look_up, open_lesson, stop_short
from peers.support.calling.outcomes import Variant
from peers.support.output import Kind
from peers.support.calling.replies import read
from transports.errors import PeerError
from transports.escaping import escape

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from peers.support.calling.outcomes import Contact, Outcome
    from peers.support.calling.story_steps import Steps

TICKET, ORDER, AMOUNT = "ticket-8800", "ORD-8800", 95.0
PAUSES = (2.0, 2.0, 2.0, 4.0)  # seconds between looks: bounded, growing


LESSON = Lesson(
    about="billing takes longer than the support agent waits: the timeout does not mean it stopped, so the "
          "support agent finds the task (ListTasks, GetTask) before any retry",
    teaches="seed 004: whether retrying is safe, after a timeout", order=100,
    flags={"--wire": "1.0", "--timeout": 0.5},  # we wait half a second ...
    peers={"billing-agent": {"slow": 1.5}})  # ... for a refund that takes a second and a half


def run(story: Steps, card_urls: list[str]) -> list[Outcome]:
    """Delegate a refund that outlasts our deadline; find the task before any retry."""
    card = open_lesson(story, card_urls, "A slow peer: our deadline passes; the task goes on.",
                       lacks="contextId, nor a GetTask to find a task by")
    if not isinstance(card, AgentCard):
        return card  # why it cannot go on, said already
    story.say(f"[support] refund {ORDER} for ${AMOUNT:,.2f}, in context {TICKET} (the customer's ticket)")
    outcome = story.delegate(card, "process_refund", {"order_id": ORDER, "amount": AMOUNT}, TICKET)
    contact = contact_of(story, card, outcome)
    timed_out = outcome.variant is Variant.TIMED_OUT
    # --no-wait or --push: no deadline passed, the task named is still going: followed as found
    going = outcome.task is not None and outcome.variant.group == "active"  # not ended, nor paused for us
    if contact is None or not (timed_out or going):
        if contact is not None and outcome.error is None:  # this run's --timeout cannot show it: exit status 2
            stop_short(story.say, "[support] billing answered within --timeout, so no deadline passed: this lesson "
                                  "has nothing to show with a timeout longer than the refund")
        return [outcome]  # refused, or failed otherwise: the story said why
    listed = contact.method("list")  # 1.0 looks (ListTasks); 0.3 has no look but the same message again
    if timed_out:
        handling = outcome.variant.handling if listed else (
            "the peer may still be working: find its task before any new request; this wire has no ListTasks, "
            "so the same message (its messageId) goes again, to be answered with the task it made")
        story.say(f"[support] {outcome.variant.label} ({outcome.variant.group}) -> {handling}", Kind.ESCALATED)
    try:
        task = _find(story, contact, outcome.sent) if timed_out else outcome.task
        for pause in PAUSES:
            if task is None or task.state.is_terminal:
                break
            story.say(f"[support] task {escape(task.id)} is {task.state.value}; asking again in {pause:g}s")
            time.sleep(pause)
            looked = look_up(story, contact, "get", task.id)
            task = looked if looked.id == task.id else None  # an answer about another task is none
    except PeerError as failure:
        return [story.failed(contact.name, outcome.verdict, f"looking for the task failed: {failure}; the "
                             "refund may still have been made: look again, never send a new request (a look, or "
                             "the same message again, changes nothing)", failure)]
    if task is None:  # not found, or not yet: only the very same message may go again
        story.say("[support] no task found in that context yet: the message may not have arrived, or "
                  "not been taken up yet; only the same message (same messageId) is safe to send again",
                  Kind.ESCALATED)
        return [outcome]
    story.report(contact, task)
    if task.state.is_terminal:
        resent = timed_out and not listed
        story.say(f"[support] task {escape(task.id)} ended {task.state.value} while nobody waited: "
                  + ("nothing more to send: the same message, sent again, was answered with this task"
                     if resent else "nothing to retry") + " (a new request would have asked billing for this "
                  "refund again)", Kind.BANNER)
    return [outcome._replace(task=task, error=None, failure=None)]  # still working: the variant says so


def _find(story: Steps, contact: Contact, message: Message) -> Task | None:
    """The task the lost answer would have named: ListTasks by our contextId where the
    wire has it (1.0); else the same `message` again, which names its task (0.3). A task
    in another context is not ours to find."""
    spoken = contact.wire
    if contact.method("list"):
        story.say(f"[support] looking for the task in context {TICKET} before any retry")
        found = read(spoken.tasks_from_list, ask(story, contact, "list", {"contextId": TICKET, "includeArtifacts": True}),
                     "the list")  # with its result, should it have ended meanwhile
    else:
        story.say(f"[support] {spoken.NAME} has no ListTasks: sending the same message again "
                  f"({message.message_id}), which billing answers with the task it made, never a second refund")
        result = story.call(contact, spoken.SEND_METHOD, spoken.send_params(message))
        found = [read(spoken.task_from_result, result, "the result")]
    return next((task for task in found if task.context_id == TICKET), None)
