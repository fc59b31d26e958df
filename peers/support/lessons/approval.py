"""--scenario approval: a refund above billing's limit is a person's decision, and the
task waits for it: one task across turns.

Seed 004: authority travels with a handoff and is checked before any effect. Billing
does not refund $6,200 on an agent's say-so: it pauses the task in `input-required`,
naming the exact effect it proposes (order, amount, currency). A person decides (here a
script plays them, holding the approver's DEMO key, peers/keys/approver.DEMO-KEY.pem).
The support agent then continues the *same task*, a message that carries its taskId and
contextId and the approval. What billing checks (it pins the approver's public key): the
approval is exactly its proposal, and carries an RS256 signature by that key over the
proposal, billing's endpoint and this task's id (peers/signing/approval_signature.py). So the agent alone,
which holds only the caller's token, cannot approve: its unsigned approval is refused,
and so is one signed by another key; the person's signed one releases the refund, once;
the same signature sent again finds the task finished, and it cannot release another
task or agent (it names them). What billing cannot check: who holds the key. The demo key is
published, so here it proves only the lesson's point.
The essay's wire has no taskId, so it cannot carry this lesson: the scenario speaks 1.0
unless --wire says 0.3.

The rules a served peer applies to any follow-up, on the 1.0 and 0.3 wires: an unknown
taskId, or another caller's, is -32001; a finished task takes no more messages (-32004);
a contextId that is not the task's is -32602 naming both; a message without a contextId
gets one, and ListTasks filters by it; the same follow-up delivered twice answers with
the task as it is; a paused task holds its order, so asking for that refund again gets
the waiting task, and only a task still waiting can be canceled. A follow-up is judged
under the handoff grant its task was created with (checked again, since it may have
expired meanwhile); a follow-up's own metadata is not read, so it cannot widen the grant.
"""
from __future__ import annotations

import json
import os

from peers.a2a.model import AgentCard, Message, Part, Task, TaskState
from peers.a2a.schema import check
from peers.signing import approval_signature, rs256
from peers.support.lessons import Lesson
from peers.support.lessons.turns import attempt, carries, contact_of, look_up, open_lesson, said, turn_failed
from peers.support.output import Kind
from transports.errors import PeerError
from transports.escaping import escape

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any
    from peers.support.calling.outcomes import Contact, Outcome
    from peers.support.calling.story_steps import Steps

ORDER, AMOUNT = "ORD-4100", 6200.0
# What a person can be asked to approve: a peer's proposal is its data, so it is checked
# like any reply before it is shown, inflated or sent back as our approval.
PROPOSAL = {"type": "object", "required": ["order_id", "amount", "currency"], "additionalProperties": False,
            "properties": {"order_id": {"type": "string", "minLength": 1, "maxLength": 64},
                           "amount": {"type": "number", "exclusiveMinimum": 0, "maximum": 1_000_000},
                           "currency": {"type": "string", "pattern": "^[A-Z]{3}$"}}}


# The person's key and another (someone who is not the approver): published DEMO keys.
APPROVER_KEY = os.path.join(os.path.dirname(__file__), "..", "..", "keys", "approver.DEMO-KEY.pem")
ANOTHER_KEY = os.path.join(os.path.dirname(__file__), "..", "keys", "another.DEMO-KEY.pem")


LESSON = Lesson(
    about="a refund above billing's limit pauses for a person; the agent's own approval and one signed "
          "by another key are refused; the approver's signature over exactly the proposal continues the "
          "same task, once",
    teaches="seed 004: non-delegable decisions (an approval is evidence about one specific action)",
    order=130, flags={"--wire": "1.0"},
    reads={"--interactive": "you are the person asked to approve (otherwise a script plays them)"},
    peers={"billing-agent": {"signed_approvals": True}})  # billing pins the approver's public key


def run(story: Steps, card_urls: list[str], *, interactive: bool = False) -> list[Outcome]:
    """Delegate a refund that needs a person; continue the same task once they approve.
    `interactive`: the person at the terminal says yes or no; otherwise a script plays them."""
    card = open_lesson(story, card_urls, "One task, three turns: a refund above billing's limit "
                       "waits for a person.")
    if not isinstance(card, AgentCard):
        return card  # the card could not be had: the outcome says why
    outcome = story.delegate(card, "process_refund", {"order_id": ORDER, "amount": AMOUNT})
    task, contact = outcome.task, contact_of(story, card, outcome)
    if task is None or contact is None or task.state is not TaskState.INPUT_REQUIRED:
        return [outcome]
    carries(contact.wire, "taskId to continue the task with", story.say)
    proposal = (task.status_data or {}).get("approval")
    problem = check(proposal, PROPOSAL, "the proposal")
    if problem:  # nothing a person could approve: escalated as it is
        story.say(f"[support] the task is paused, but it names no proposal a person could approve "
                  f"({problem})", Kind.WARNING)
        return [outcome]
    story.say(f"[support] billing proposes {json.dumps(proposal)} and waits for a person")
    if interactive:
        return [decided(story, contact, task, proposal, person_at_terminal(
            f"approve a refund of ${proposal['amount']:,.2f} for {escape(proposal['order_id'])} "
            f"({proposal['currency']})?"), outcome)]
    try:
        story.say("[support] approving it myself, unsigned: I hold only the caller's token, not a person's key")
        said(story.say, attempt(story, contact, follow_up(story, task, proposal)))
        story.say("[someone] signs exactly the proposal with a key that is not the approver's")
        said(story.say, attempt(story, contact, follow_up(story, task, proposal, key_at(ANOTHER_KEY), card.url)))
        story.say(f"[person] approves exactly {json.dumps(proposal)}, signing it with the approver's key")
        signed = key_at(APPROVER_KEY)
        done = attempt(story, contact, follow_up(story, task, proposal, signed, card.url))
        said(story.say, done)
        if isinstance(done, Task):
            task = done
            story.say("[support] the same signed approval again, as a new message:")
            said(story.say, attempt(story, contact, follow_up(story, task, proposal, signed, card.url)),
                 "it was for this task, which has gone on: used once")
    except PeerError as failure:  # not a refusal: the peer broke the exchange
        return [turn_failed(story, contact, outcome._replace(task=task), failure)]
    story.say("[support] what billing checked: the approval is exactly its proposal, signed (RS256) by the "
              "approver key it pins, over that proposal, billing's endpoint and this task's id; a task goes on "
              "once. It cannot check who holds the key: the approver keeps it (this one is a published DEMO key).")
    return [outcome._replace(task=task)]


def decided(story: Steps, contact: Contact, task: Task, proposal: dict[str, Any],
            approve: bool, outcome: Outcome) -> Outcome:
    """A person's answer, carried out: the exact approval as the task's next turn, or the
    task canceled (nothing was done, and its claim on the order is let go)."""
    try:
        if approve:
            story.say(f"[person] approves exactly {json.dumps(proposal)}, signing it with the approver's key")
            done = attempt(story, contact, follow_up(story, task, proposal, key_at(APPROVER_KEY), contact.card.url))
            said(story.say, done)
        else:
            story.say(f"[person] declines: canceling task {escape(task.id)}")
            done = look_up(story, contact, "cancel", task.id)
            story.report(contact, done)
    except PeerError as failure:
        return turn_failed(story, contact, outcome, failure)
    return outcome._replace(task=done) if isinstance(done, Task) else outcome


def person_at_terminal(question: str) -> bool:
    """--interactive: ask the person at the terminal; anything but yes (or no terminal) is no."""
    from transports.stepping import answer  # as --step reads one: bounded, from a pipe too
    try:
        return answer(f"[person] {question} [y/N] ").strip().lower() in ("y", "yes")
    except EOFError:
        return False


def key_at(path: str) -> rs256.PrivateKey:
    """A published DEMO key, read from its file."""
    with open(path, encoding="ascii") as file:
        return rs256.private_from_pem(file.read())


def follow_up(story: Steps, task: Task, approval: dict[str, Any],
              key: rs256.PrivateKey | None = None, audience: str = "") -> Message:
    """The next turn of `task`: a message naming it, carrying the approval as data, and,
    given the `key` that signs it, its signature over the approval, the endpoint of the
    agent it is for (`audience`) and the task's id."""
    story.say(f"[support] continuing task {escape(task.id)} (context {escape(str(task.context_id))}) "
              "with that approval")
    data: dict[str, Any] = {"approval": approval}
    if key is not None:
        data["signature"] = approval_signature.sign(approval, audience, task.id, key)
    return story.message(Part(data=data), context_id=task.context_id, task_id=task.id,
                         metadata={"skillId": "process_refund"})
