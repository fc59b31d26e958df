"""Talking to any agent, one operation at a time: what the live page's "Any agent" does
once the trust gate let that agent through.

Essay: Discovery is not trust, then Delegation over JSON-RPC ("the reply is a task, not
a value"). Spec: A2A 1.0 sections 3.1.1 (SendMessage: a new task, or the next turn of a
paused one, input-required or auth-required, by its taskId and contextId), 3.1.3
(GetTask), 3.1.4 (ListTasks), 3.1.5 (CancelTask), 4.5 (the security scheme a card
declares). `talk(asked)` is the story of one run of main() (the page hands it in as its
Watch's story, peers/support/web/agent.py): the card fetched and checked and the gate's
verdict, as in every run (the story's own `find` and `trust_gate`), then the one
operation asked for, through the same printer, so each frame shows as it crosses. A send
is followed as the story's delegate follows a task (follow.py: stream, poll or push, as
the card declares and the flags ask); a task's id, context and state are told to the
page as a `task` event, so the next turn can name them.

The credential the person entered, for the scheme the card declares, is added to every
request by `credential` (the one place: the credential store, config.py, takes it over
when it covers every scheme); it lives in this run's memory, is never written, and the
printer masks it. Not here: the page's requests (web/agent.py); anything a card does not
declare; sending a message again on our own (only the peer knows whether it acted).
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Callable, NamedTuple

from peers.a2a.model import AgentCard, Message, Part, SecurityScheme, Task
from peers.a2a.wire_format import method_for
from peers.support.follow import Delegation, followed, listening, way_to_follow
from peers.support.lessons.turns import essay_cannot
from peers.support.output import Kind
from peers.support.replies import read
from transports.errors import PeerError, ProtocolViolation
from transports.printer import escape, mask

if TYPE_CHECKING:
    from a2a_delegation import Outcome, SupportAgent

OPERATIONS = ("send", "list", "get", "cancel")
SCHEMES = {"bearer": "HTTP Bearer", "api-key": "an API key in a header"}  # what the page holds, by its name
HEADER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,63}")
NOT_A_KEY_HEADER = {"host", "content-length", "content-type", "transfer-encoding", "connection", "cookie",
                    "accept", "expect", "te", "upgrade", "a2a-version", "a2a-extensions"}


class Asked(NamedTuple):
    """One operation the page asks of the agent whose card is at `card_url`."""

    card_url: str
    operation: str  # one of OPERATIONS
    message_id: str = ""  # send: new for each message the page sends (a peer refuses one used already)
    part: Part | None = None  # send: the message's one part, text or data
    task_id: str = ""  # send: the paused task it continues ("": a new task); get, cancel: the task
    context_id: str = ""  # send: the task's conversation, with its taskId
    skill: str = ""  # send: metadata.skillId, when the agent has more than one skill
    scheme: str = ""  # one of SCHEMES, or "": no credential
    secret: str = ""  # the credential itself: memory only, masked wherever a frame is shown
    header: str = "X-API-Key"  # an API key's header, as entered, where the card's reading lacks it


def talk(asked: Asked, agent: SupportAgent, card_urls: list[str]) -> list[Outcome]:
    """The run's story: the agent's card, the gate's verdict, then `asked`; its outcomes."""
    agent.say(f"[transport] {agent.transport.label}. One operation on an agent of your choosing: "
              f"{asked.operation}.", Kind.BANNER)
    agent.say()
    card = agent.find(asked.card_url)
    if not isinstance(card, AgentCard):
        return [card]  # the card could not be had or spoken to: said already
    verdict = agent.trust_gate(card)
    if verdict.value == "refused":  # no frame but the card's GET goes to an agent not vetted
        return [agent.refuse(card)]
    headers, problem = credential(card, asked.scheme, asked.secret, asked.header)
    if problem is None and asked.operation != "send" and method_for(agent.format_of[card.url], asked.operation) is None:
        problem = f"the {agent.format_of[card.url].NAME} wire its card speaks has no {asked.operation!r} operation"
    if problem:
        return [agent.failed(card.name, verdict, f"not sent: {problem}", refused=True)]

    def call(url: str, method: str, params: Any, extra: dict[str, str], stream: bool = False) -> Any:
        return agent.call(url, method, params, {**extra, **headers}, stream=stream)
    try:
        if asked.operation == "send":
            task = send(agent, card, call, asked)
            if task is not None:
                agent.report(card, verdict, task)
                told(agent, card, task)
        elif asked.operation == "list":
            listed(agent, card, call)
        else:
            task = looked_up(agent, card, call, asked.operation, asked.task_id)
            agent.report(card, verdict, task)
            told(agent, card, task)
    except PeerError as failure:
        return [agent.failed(card.name, verdict, f"{asked.operation} failed: {failure}; "
                                                 f"{failure.retry_advice()}", failure)]
    return []


def credential(card: AgentCard, scheme: str, secret: str,
               header: str = "X-API-Key") -> tuple[dict[str, str], str | None]:
    """The headers that carry `secret` by the scheme the card declares that matches `scheme`,
    and None; or no headers and why it cannot go. An API key goes in the header the card
    names where our reading of it keeps that, else in `header`, as entered. The page's only
    credential handling: the credential store (config.py) takes it over for every scheme."""
    declared = card.security_schemes or ((SecurityScheme("bearer", "http", "Bearer"),)
                                         if "bearer" in card.auth_schemes else ())
    declared += tuple(SecurityScheme(name, "apiKey", key_name=header) for name in card.auth_schemes
                      if name not in ("bearer", "none") and not card.security_schemes)  # named, not spelled out
    if not secret:
        return {}, None  # a card that declares a scheme is answered 401, shown as it comes
    for offered in declared:
        if scheme == "bearer" and offered.type == "http" and offered.scheme.lower() == "bearer":
            return {"Authorization": f"Bearer {secret}"}, None
        if scheme == "api-key" and offered.type == "apiKey":
            name = offered.key_name
            if not HEADER_NAME.fullmatch(name) or name.lower() in NOT_A_KEY_HEADER:
                return {}, f"{escape(name[:64])!r} cannot carry an API key: it is not a header of its own"
            if mask({name: secret})[name] != "****":  # the printer's own rule: what it shows, we never send
                return {}, f"{name!r} is not named as a key, token or secret, so a frame would show it"
            return {name: secret}, None
    named = ", ".join(f"{s.name[:40]} ({s.type[:20]})" for s in declared) or "none"
    return {}, f"the credential entered is {SCHEMES.get(scheme, scheme)}, but its card declares {named}"


def send(agent: SupportAgent, card: AgentCard, call: Callable[..., Any], asked: Asked) -> Task | None:
    """A message with one part: a new task, or the next turn of the paused task it names
    (its taskId and contextId), followed as the story's delegate follows one."""
    spoken = agent.format_of[card.url]
    if asked.task_id and essay_cannot(spoken, "taskId to continue a task with", agent.say):
        return None
    if asked.task_id:
        agent.say(f"[support] continuing task {escape(asked.task_id)} (context {escape(asked.context_id or '-')})")
    message = Message(asked.message_id or f"msg-{next(agent.message_ids)}", "user", (asked.part,),
                      asked.context_id or None, asked.task_id or None, metadata={"skillId": asked.skill} if asked.skill else None)
    way = way_to_follow(card, spoken, agent.stream, agent.no_wait, agent.patience,
                        lambda line: agent.say(line, Kind.WARNING))
    with listening(way.pushed) as webhook:  # the page's "push": our webhook, for this send only
        params = spoken.send_params(message, way.at_once, webhook and webhook.config)
        reply = call(card.url, way.method, params, spoken.HEADERS, stream=way.streamed)
        return followed(reply, Delegation(card, spoken, call, agent.say, agent.told), way.until, webhook)


def looked_up(agent: SupportAgent, card: AgentCard, call: Callable[..., Any], operation: str,
              task_id: str) -> Task:
    """GetTask or CancelTask on one task: the task as the agent has it now."""
    spoken = agent.format_of[card.url]
    answer = call(card.url, method_for(spoken, operation), {"id": task_id}, spoken.HEADERS)
    task = read(spoken.task_from_wire, answer, "the task")
    if task.id != task_id:
        raise ProtocolViolation(f"asked about task {task_id[:80]!r}, the agent answered about another")
    return task


def listed(agent: SupportAgent, card: AgentCard, call: Callable[..., Any]) -> None:
    """ListTasks: each task the agent lists for us, one line and one `task` event each."""
    spoken = agent.format_of[card.url]
    tasks = read(spoken.tasks_from_list, call(card.url, method_for(spoken, "list"), {}, spoken.HEADERS),
                 "the list")
    agent.say(f"[support] {card.name} lists {len(tasks)} task{'' if len(tasks) == 1 else 's'} of ours")
    for task in tasks:
        told(agent, card, task)


def told(agent: SupportAgent, card: AgentCard, task: Task) -> None:
    """One line naming the task, its context and state; the page keeps them for the next turn."""
    agent.say(f"[support] task {escape(task.id)} (context {escape(task.context_id or '-')}): {task.state.value}",
              event="task", peer=card.name, endpoint=card.url, task=task.id, context=task.context_id or "",
              state=task.state.value)

