"""Talking to any agent, one operation at a time: what the live page's "Any agent" does
once the trust gate let that agent through.

Essay: Discovery is not trust, then Delegation over JSON-RPC ("the reply is a task, not
a value"). Spec: A2A 1.0 sections 3.1.1 (SendMessage: a new task, or the next turn of a
paused one, input-required or auth-required, by its taskId and contextId), 3.1.3
(GetTask), 3.1.4 (ListTasks), 3.1.5 (CancelTask), 4.5 (the security scheme a card
declares). `talk(asked)` is the story of one run of main() (the page hands it in as its
Watch's story, peers/support/web/agent.py): the card fetched and checked and the gate's
verdict, as in every run (the story's own steps, `find` and `gate`), then the one
operation asked for, through the same printer, so each frame shows as it crosses. A send
is followed as the story's delegate follows a task (follow.py: stream, poll or push, as
the card declares and the flags ask); a task's id, context and state are told to the
page as a `task` event, so the next turn can name them.

The credential the person entered is in the run's credential store (web/agent.py makes
it, for the agent's origin alone), so it goes as every run's does: the transport around
the printer (transports/credentialed.py, asking calling/keyring.py) attaches what the
card's scheme asks for (credentials.py), with no header of its own here. When one was entered the store is asked first, so a credential of a kind the card does not
declare is refused with the store's one line and nothing but the card's GET is sent;
without one the agent's answer (a 401 and its WWW-Authenticate) is shown as it comes.
Not here: the page's requests (web/agent.py); which credential a scheme takes
(credentials.py); sending a message again on our own (only the peer knows whether it acted).
"""
from __future__ import annotations

from peers.a2a.model import AgentCard, Part, Task
from peers.support.calling.outcomes import Contact
from peers.support.calling.held import Unheld
from peers.support.lessons.turns import carries
from peers.support.output import Kind
from peers.support.calling.replies import read
from transports.errors import PeerError, ProtocolViolation
from transports.escaping import escape
from transports.records import Record

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from peers.support.calling.story_steps import Steps
    from peers.support.calling.outcomes import Outcome

OPERATIONS = ("send", "list", "get", "cancel")


class Asked(Record):
    """One operation the page asks of the agent whose card is at `card_url`."""

    card_url: str
    operation: str  # one of OPERATIONS
    message_id: str = ""  # send: new for each message the page sends (a peer refuses one used already)
    part: Part | None = None  # send: the message's one part, text or data
    task_id: str = ""  # send: the paused task it continues ("": a new task); get, cancel: the task
    context_id: str = ""  # send: the task's conversation, with its taskId
    skill: str = ""  # send: metadata.skillId, when the agent has more than one skill
    scheme: str = ""  # the kind of credential entered (web/agent.py SCHEMES), or "": none. The
    # credential itself is not here: it is in the run's credential store alone.


def talk(asked: Asked, story: Steps, card_urls: list[str]) -> list[Outcome]:
    """The run's story: the agent's card, the gate's verdict, then `asked`; its outcomes."""
    story.say(f"[transport] {story.label}. One operation on an agent of your choosing: "
              f"{asked.operation}.", Kind.BANNER)
    story.say()
    card = story.find(asked.card_url)
    if not isinstance(card, AgentCard):
        return [card]  # the card could not be had or spoken to: said already
    contact = story.gate(card)
    if not isinstance(contact, Contact):  # no frame but the card's GET goes to an agent not vetted
        return [contact]
    problem = story.lacks(card) if asked.scheme else None  # the store's own reason
    if problem is None and asked.operation != "send" and contact.method(asked.operation) is None:
        problem = f"the {contact.wire.NAME} wire its card speaks has no {asked.operation!r} operation"
    if problem:
        return [story.failed(card.name, contact.verdict, f"not sent: {problem}", refused=True)]
    try:  # no header of ours: the store attaches the credential, as on every call of every run
        if asked.operation == "send":
            task = send(story, contact, asked)
            story.report(contact, task)
            told(story, contact, task)
        elif asked.operation == "list":
            listed(story, contact)
        else:
            task = looked_up(story, contact, asked.operation, asked.task_id)
            story.report(contact, task)
            told(story, contact, task)
    except Unheld as failure:  # the store could not attach what the card asks for: nothing sent
        return [story.failed(card.name, contact.verdict, f"not sent: {failure}", refused=True)]
    except PeerError as failure:
        return [story.failed(card.name, contact.verdict, f"{asked.operation} failed: {failure}; "
                                                         f"{failure.retry_advice()}", failure)]
    return []


def send(story: Steps, contact: Contact, asked: Asked) -> Task:
    """A message with one part: a new task, or the next turn of the paused task it names
    (its taskId and contextId), followed as the story's delegate follows one."""
    if asked.task_id:
        carries(contact.wire, "taskId to continue a task with", story.say)  # StoppedShort on the essay's wire
        story.say(f"[support] continuing task {escape(asked.task_id)} (context {escape(asked.context_id or '-')})")
    message = story.message(asked.part, context_id=asked.context_id or None, task_id=asked.task_id or None,
                            metadata={"skillId": asked.skill} if asked.skill else None)
    if asked.message_id:  # the page names each message it sends (a peer refuses one used already)
        message = message._replace(message_id=asked.message_id)
    return story.send(contact, message)


def looked_up(story: Steps, contact: Contact, operation: str, task_id: str) -> Task:
    """GetTask or CancelTask on one task: the task as the agent has it now."""
    answer = story.call(contact, contact.method(operation), {"id": task_id})
    task = read(contact.wire.task_from_wire, answer, "the task")
    if task.id != task_id:
        raise ProtocolViolation(f"asked about task {task_id[:80]!r}, the agent answered about another")
    return task


def listed(story: Steps, contact: Contact) -> None:
    """ListTasks: each task the agent lists for us, one line and one `task` event each."""
    tasks = read(contact.wire.tasks_from_list, story.call(contact, contact.method("list"), {}), "the list")
    name = contact.name
    story.say(f"[support] {name} lists {len(tasks)} task{'' if len(tasks) == 1 else 's'} of ours")
    for task in tasks:
        told(story, contact, task)


def told(story: Steps, contact: Contact, task: Task) -> None:
    """One line naming the task, its context and state; the page keeps them for the next turn."""
    story.say(f"[support] task {escape(task.id)} (context {escape(task.context_id or '-')}): {task.state.value}",
              event="task", peer=contact.name, endpoint=contact.card.url, task=task.id,
              context=task.context_id or "", state=task.state.value)
