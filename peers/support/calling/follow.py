"""Following a delegated task to its end: one loop over its updates, whatever brings them.

Essay: Delegation over JSON-RPC ("the reply is a task, not a value"). Spec: A2A 1.0 sections 3.1.2 (SendStreamingMessage),
3.1.3 (GetTask), 3.1.6 (SubscribeToTask), 4.2 (StreamResponse) and 4.3 (push notifications, a StreamResponse too); 0.3's
message/stream, tasks/get and tasks/resubscribe. A peer may answer before its task ends: when asked to (returnImmediately,
--no-wait, --push), or while streaming it (--stream). What happens next reaches us as updates, each one of a
StreamResponse's four kinds (peers/a2a/stream.py): the task as it now is, a status it entered, an artifact (or a chunk of
one) it made, a message. `follow(updates, task, deadline)` folds them into the task until it ends or pauses, the updates
stop, or the deadline passes; it does not know where they come from, and takes what the spec lets any source send: an
update about another task changes nothing, nor one that takes the task back to a state it has left (it arrived late).
`followed` chooses the source, as the card and the flags did:
- `streamed`: the events of a stream, read as they arrive (the printer shows each). A stream can break (the connection
  drops, a proxy times out, the peer restarts); the task goes on without us, so we subscribe to it again: the first event
  of a subscription is the task as it is now, and comparing it with what was seen says what was missed (caught_up.py). A
  task that ended meanwhile has no stream to join (1.0 refuses): it is asked for (GetTask); the same when a stream ends
  before its task does. At most RESUMES times; a stream that broke before it named its task, or is still broken when time
  is up, is the delegation's failure, said as what it is (a timeout, say), with the task it named and its state last seen.
- `pushed`: what the peer POSTs to our webhook (webhook.py, open while `listening`), each shown as its own frame (`told`,
  as main() wired it), then read as an update, as on a stream; one delivered twice (A2A 4.3.3 warns it may be) is read
  once. A task that came back ended is heard out briefly all the same: the peer may yet push it, and would find us gone.
- `polled`: GetTask again after pauses that grow (0.1 s ... 2 s); also what a stream left going.
All within one deadline (`Following.patience`, --timeout), each request included (transports.base.patient_until); a task
still going then is reported as last seen. Never done here: send the message again (only the peer knows if it acted)."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager

from peers.a2a.model import AgentCard, Task, ends
from peers.a2a.wire_format import WireFormat, method_for
from peers.support.calling.replies import read, read_json
from transports.digests import sha256
from transports.base import patient_until
from transports.errors import ProtocolViolation, RemoteError, TransportError
from transports.escaping import escape
from transports.records import Record

RESUMES, FIRST_PAUSE, LONGEST_PAUSE = 3, 0.1, 2.0  # a broken stream's resumes; polling's pauses, in seconds
MAX_SEEN_PUSHES, HEARD_OUT = 1000, 1.0  # pushes remembered (one sent twice is read once); an ended task heard out, s
TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:  # for readers and type checkers: webhook.py loads only when --push listens, and
    from peers.a2a.stream import Event  # a stream's events only when a task is followed past its answer
    from peers.support.calling.webhook import Receiver
    from typing import Any, Callable, Generator
    Updates = Generator[Event, None, None]  # what a follower reads: task updates, from any source
    Told = Callable[[str, dict[str, str], bytes, str], None]  # (url, headers, body, sender): a push to us, seen


class Following(Record):
    """How the support agent follows each task it delegates, as the settings say: a value."""
    mode: str = "wait"  # "wait": the answer is awaited; "poll": --no-wait; "push": --push
    stream: bool = False  # --stream: the streaming send, where the card offers it
    patience: float = 10.0  # seconds from the send until we stop following (--timeout)


class Way(Record):
    """How a delegated task is followed, as the flags ask and the card allows, and until when."""
    method: str  # the send: SEND_METHOD, or the wire's streaming send
    streamed: bool  # --stream, to a card that streams: the reply is the task's events
    at_once: bool  # --no-wait or --push: the reply is the task as it is (returnImmediately)
    pushed: bool  # --push, to a card that takes webhooks: ours is told of each change
    until: float  # time.monotonic() when our patience runs out: counted from the send, for all of it


def way_to_follow(card: AgentCard, spoken: WireFormat, following: Following,
                  warn: Callable[[str], None] = lambda line: None) -> Way:
    """With --stream, to a card that streams: the streaming send. Else the send, asking for the task at once
    with --no-wait ("poll") or --push ("push"), and with --push, where the card takes webhooks, naming ours
    (one that takes none has its task asked about). A flag this card or wire cannot honour is said (`warn`).
    Called as the message leaves: we stop `patience` on."""
    stream, no_wait = following.stream, "" if following.mode == "wait" else following.mode
    until, name = time.monotonic() + following.patience, card.name
    streaming = method_for(spoken, "stream") if stream and card.streaming else None
    if streaming is not None:
        return Way(streaming, True, False, False, until)
    if stream:
        warn(f"--stream does nothing for {name}: " + ("its card declares no streaming" if method_for(
             spoken, "stream") else f"the {spoken.NAME} wire has no streaming send (0.3 and 1.0 have one)")
             + "; its task is followed as sent")
    asks_again = method_for(spoken, "get") is not None
    if no_wait and not asks_again:  # the essay's tasks/send: no returnImmediately, no GetTask
        warn(f"--{'push' if no_wait == 'push' else 'no-wait'} does nothing for {name}: the {spoken.NAME} "
             "wire cannot answer before the task ends, nor be asked again; its answer is awaited")
        return Way(spoken.SEND_METHOD, False, False, False, until)
    pushed = no_wait == "push" and card.push_notifications and method_for(spoken, "push-set") is not None
    if no_wait == "push" and not pushed:
        warn(f"--push: {name}'s card declares no push notifications; its task is asked about instead (GetTask)")
    return Way(spoken.SEND_METHOD, False, bool(no_wait), pushed, until)


class Delegation(Record):
    """One delegation, as following its task needs it: values, not the support agent."""
    card: AgentCard  # the peer's: its name for the lines said
    spoken: WireFormat  # the wire its card speaks
    call: Callable[..., Any]  # call(method, params, stream=False): one operation on its agent, its result
    say: Callable[..., None]  # the story's lines
    told: Told | None  # the frame printer's `received`, as main() wired it


def follow(updates: "Updates", task: Task | None, deadline: float) -> Task | None:
    """The task as `updates` leave it: each folded in, until the task ends or pauses, the updates stop, or `deadline`
    (time.monotonic()) passes; then closed, so a stream read no further is hung up."""
    from peers.a2a.stream import Folding  # each by a stream's rules: loaded once a task is followed past its answer
    folding = Folding(task)
    try:
        for update in updates:
            folding.add(update)
            if folding.ended() or time.monotonic() >= deadline:
                break
    finally:
        updates.close()
    return folding.task


@contextmanager
def listening(wanted: bool) -> "Iterator[Receiver | None]":
    """Our webhook (webhook.py) while the block runs, if `wanted` (--push, to a card taking webhooks); else None."""
    if not wanted:
        yield None
        return
    from peers.support.calling.webhook import Receiver  # sockets and a server thread: --push only
    with Receiver() as receiver:
        yield receiver


def followed(reply: Any, delegation: Delegation, deadline: float, webhook: "Receiver | None" = None) -> Task:
    """The task a send's `reply` (a result, or a stream of them) starts, followed until it ends or pauses, or `deadline`
    passes: streamed, then told to our webhook or asked about; every request made meanwhile ends by `deadline` too."""
    with patient_until(deadline):  # a subscription, a GetTask: given what is left, not a --timeout of its own
        task = streamed(reply, delegation, deadline) if isinstance(reply, Iterator) else \
            read(delegation.spoken.task_from_result, reply, "the result")
        if ends(task.state):  # nearly always: the task came back finished, or paused
            if webhook is not None:  # the peer may yet push so: heard out (each push shown), not hung up on
                try:
                    for update in pushed(delegation, task, webhook, min(deadline, time.monotonic() + HEARD_OUT), False):
                        if getattr(update, "state", None) == task.state and task.id in (
                                getattr(update, "task_id", ""), getattr(update, "id", "")):
                            break  # its last word on this task: what the answer said
                except ProtocolViolation as exc:  # the answer stands, whatever a push after it is
                    delegation.say(f"[support] a push after the answer is not read: {escape(str(exc))}")
            return task
        more = polled(delegation, task, deadline) if webhook is None else pushed(delegation, task, webhook, deadline)
        return follow(more, task, deadline) or task


def polled(delegation: Delegation, task: Task, deadline: float) -> "Updates":
    """GetTask, asked again after a growing pause while the task is going (where the wire has it; the essay's has not),
    the last pause cut to what is left less twice the last answer's time (`took`), or that answer would come too late."""
    from peers.a2a.stream import Current  # each answer, asked after all read before it, is the task as it is now
    pause, method, took = FIRST_PAUSE, method_for(delegation.spoken, "get"), 0.0
    while not ends(task.state) and method is not None and (pause := min(pause, math.floor(
            (deadline - time.monotonic() - 2 * took) * 10) / 10)) >= FIRST_PAUSE:
        delegation.say(f"[support] task {escape(task.id)} is {task.state.value}: asking again in {pause:g}s")
        time.sleep(pause)
        try:
            asked, answer = time.monotonic(), delegation.call(method, {"id": task.id})
        except TransportError as failure:  # when our patience ran out, unanswered or never sent (no time was
            if time.monotonic() < deadline or (failure.sent and not failure.timed_out):  # left to connect in):
                raise  # else the task is as last seen
            return delegation.say(f"[support] {method} had no answer before the deadline ({escape(str(failure))}): "
                                  f"task {escape(task.id)} was last seen {task.state.value}")
        later = read(delegation.spoken.task_from_wire, answer, "the task")
        if later.id != task.id:
            raise ProtocolViolation(f"asked for task {task.id[:80]!r}, the peer answered about another")
        task, pause, took = later, min(pause * 2, LONGEST_PAUSE), time.monotonic() - asked
        yield Current(task)


def pushed(delegation: Delegation, task: Task, webhook: "Receiver", deadline: float, awaited: bool = True) -> "Updates":
    """Each push to our webhook, shown as the frame it is, then read as an update; a push delivered again (the same
    bytes: a retry whose answer was lost, A2A 4.3.3) only once."""
    if awaited:
        delegation.say(f"[support] task {escape(task.id)} is {task.state.value}: {escape(delegation.card.name)} will tell "
                       "our webhook of each change")
    seen: set[bytes] = set()  # the digests of the first MAX_SEEN_PUSHES pushes: memory stays bounded
    while time.monotonic() < deadline:
        push = webhook.next_push(deadline - time.monotonic())
        if push is None and webhook.over:  # the peer's doing, as a stream's reply over the limit is
            raise ProtocolViolation(f"the pushes to our webhook are over the {webhook.most_taken}-byte limit: "
                                    "the rest were refused")
        if push is None:
            return
        if delegation.told is not None:  # the frame printer, as main() wired it
            delegation.told(push.url, push.headers, push.body, delegation.card.url)
        if (digest := sha256(push.body).digest()) in seen:
            continue
        if len(seen) < MAX_SEEN_PUSHES:
            seen.add(digest)
        yield read(delegation.spoken.event_from_result, read_json(push.body, "a push"), "a push")


def streamed(results: Iterator[Any], delegation: Delegation, deadline: float) -> Task:
    """The task a stream describes, joined again if the stream breaks off, or ends, before the task does."""
    spoken, broke = delegation.spoken, []
    task = follow(_events(results, spoken, broke), None, deadline)
    subscribe = method_for(spoken, "subscribe")
    for _ in range(RESUMES):
        if task is None or ends(task.state) or subscribe is None or time.monotonic() >= deadline:
            break
        why = f"broke off ({broke[-1]})" if broke else "ended before the task did"
        delegation.say(f"[support] the stream {escape(why)}; task {escape(task.id)} was last seen "
                       f"{task.state.value}: subscribing to it again ({subscribe}) for what was missed",
                       event="broken", peer=delegation.card.name, endpoint=delegation.card.url, task=task.id)
        broke = []
        try:
            task = _rejoined(delegation, subscribe, task, broke, deadline)
        except TransportError as failure:  # not even connected when time was up: broken still, said as such below
            if time.monotonic() < deadline:
                raise
            broke.append(failure)
    if broke and (task is None or (not ends(task.state) and time.monotonic() >= deadline)):
        last = broke[-1]  # before it named its task (nothing to ask for), or out of time: said as it is
        raise last if task is None else TransportError(f"{last.reason}; task {task.id[:80]} was last seen "
                                                       f"{task.state.value}: ask for it (GetTask) before any retry",
                                                       sent=last.sent, timed_out=last.timed_out)
    if task is None:
        raise ProtocolViolation("the stream described no task")
    return task


def _rejoined(delegation: Delegation, subscribe: str, seen: Task, broke: list[TransportError], deadline: float) -> Task:
    """The task's stream joined again; or, for a task that ended meanwhile (1.0 section 3.1.6: no stream to join,
    UnsupportedOperationError), the task asked for (GetTask). What was missed is said as soon as the first event arrives."""
    from peers.support.calling.caught_up import continued, missed

    def caught_up(now: Any) -> Any:
        if isinstance(now, Task) and now.id != seen.id:
            raise ProtocolViolation(f"subscribed to task {seen.id[:80]!r}, the peer answered about another")
        delegation.say(f"[support] missed while not listening: {escape(missed(seen, now))}", event="resumed",
                       peer=delegation.card.name, endpoint=delegation.card.url, task=seen.id)
        return continued(seen, now) if isinstance(now, Task) else now
    try:
        results = delegation.call(subscribe, {"id": seen.id}, stream=True)
    except RemoteError as refused:
        if (get := method_for(delegation.spoken, "get")) is None:
            raise
        delegation.say(f"[support] {subscribe} was refused ({escape(str(refused))}): asking for the task instead ({get})")
        now = read(delegation.spoken.task_from_wire, delegation.call(get, {"id": seen.id}), "the task")
        return caught_up(now).task  # a Task found: the task as it is now (caught_up.continued)
    return follow(_events(results, delegation.spoken, broke, caught_up), seen, deadline) or seen


def _events(results: Any, spoken: WireFormat, broke: list[TransportError],
            first: Callable[[Any], Any] = lambda event: event) -> "Updates":
    """The events of a stream as they arrive, `first` applied to the first (a subscription's: the task as it was when we
    came back). A break in the connection is kept in `broke`, not raised: it is not the peer's word, and the task goes on."""
    if not isinstance(results, Iterator):  # one JSON answer where a stream was asked for
        yield first(read(spoken.task_from_result, results, "the result"))
        return
    try:
        for number, result in enumerate(results):
            event = read(spoken.event_from_result, result, "the stream")
            yield first(event) if number == 0 else event
    except TransportError as exc:
        broke.append(exc)
    finally:
        results.close()  # the event that ends the stream was read, or we stopped: hang up
