"""A task, streamed: the events of A2A's SendStreamingMessage and SubscribeToTask.

Spec: A2A 1.0 sections 3.1.2 and 4.2 (StreamResponse: a Task, a Message, a
TaskStatusUpdateEvent or a TaskArtifactUpdateEvent). A stream starts with the task as
it is, then says each state it enters and each artifact it makes, and ends after a
terminal or interrupted state. `events_of` turns a task's recorded lifecycle into
those events (a peer); `fold` turns events back into the task (a client), and `folded`
one more update into it, from a stream or elsewhere (a push, a GetTask); a direct reply
(a Message, no task made), streamed or not, is read as a completed task (`direct_reply`).
Each wire format spells them (wire_stream.py); the support agent prints each as it reads it.
"""

from __future__ import annotations

from peers.a2a.model import NEXT, Artifact, Message, Task, TaskState, ends
from peers.a2a.wire_message import message_from_wire, status_text
from transports.records import Record

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Iterable


class StatusUpdate(Record):
    """The task entered `state` (TaskStatusUpdateEvent); `final`: the stream ends here."""

    task_id: str
    context_id: str | None
    state: TaskState
    message: str | None = None
    data: dict[str, Any] | None = None
    timestamp: str | None = None
    final: bool = False


class ArtifactUpdate(Record):
    """The task made (part of) an artifact (TaskArtifactUpdateEvent)."""

    task_id: str
    context_id: str | None
    artifact: Artifact
    append: bool = False
    last_chunk: bool = False  # a whole artifact, sent once, is neither appended nor chunked


Event = Task | Message | StatusUpdate | ArtifactUpdate


class Current(Record):
    """The task as the peer says it is now, answering our asking after every update read (GetTask's answer, a
    subscription's first event): newer than all of them. A whole task from elsewhere (a push) may be older."""

    task: Task


def events_of(task: Task, since: int = 0) -> list[Event]:
    """The stream for `task` from lifecycle step `since` on: the task as it was there, then
    each later state (its artifacts just before it ends). A follow-up's stream starts
    where that turn began, so a client sees only what this turn did."""
    seen = task.lifecycle[:since + 1]
    first = task._replace(lifecycle=seen, artifacts=(), status_message=None, status_data=None,
                          timestamp=None)  # its own time is not recorded; the last state's is not its
    events: list[Event] = [first]
    later = task.lifecycle[since + 1:]
    for number, state in enumerate(later, 1):
        last = number == len(later)
        if last and state is TaskState.COMPLETED:
            events += [chunk for artifact in task.artifacts for chunk in chunks(task, artifact)]
        events.append(StatusUpdate(task.id, task.context_id, state,  # the last: its word, as GetTask says it
                                   status_text(task) if last else None, task.status_data if last else None,
                                   task.timestamp if last else None, last and ends(state)))
    return events


def chunks(task: Task, artifact: Artifact) -> list[ArtifactUpdate]:
    """An artifact's events: a one-part artifact whole, in one; one of several parts, a part
    per event, as an agent making it piece by piece sends it (the first starts it, each
    later one is appended to it, and the last says it is the last chunk)."""
    if len(artifact.parts) <= 1:
        return [ArtifactUpdate(task.id, task.context_id, artifact)]
    last = len(artifact.parts) - 1
    return [ArtifactUpdate(task.id, task.context_id, artifact._replace(parts=(part,)), append=number > 0,
                           last_chunk=number == last) for number, part in enumerate(artifact.parts)]


class Artifacts:
    """A task's artifacts while one stream's updates are folded in: a list, and where each artifactId is in it, so an
    update finds its artifact at once and the task's tuple is made once, when asked for (a scan of the artifacts and a
    new tuple per update made the 8,000 updates a 1 MiB stream holds take seconds). An update names a new artifact;
    with `append`, its parts join those of the artifact of that id; without it, that artifact as it now is (A2A: an
    artifactId is unique within its task, so an update naming one the task holds is about that artifact, made anew)."""

    def __init__(self, artifacts: tuple[Artifact, ...]) -> None:
        self._made: list[tuple[Artifact, list[Any]]] = [(artifact, []) for artifact in artifacts]  # each, parts appended
        self._at: dict[str, int] = {}
        for place, artifact in enumerate(artifacts):  # the first of an id, as a scan would find it
            self._at.setdefault(artifact.artifact_id, place)

    def add(self, update: ArtifactUpdate) -> None:
        artifact = update.artifact
        place = self._at.setdefault(artifact.artifact_id, len(self._made))
        if place == len(self._made):
            self._made.append((artifact, []))
        elif update.append:
            self._made[place][1].extend(artifact.parts)
        else:
            self._made[place] = (artifact, [])

    def fuller(self, artifacts: tuple[Artifact, ...]) -> None:
        """A task's artifacts as it was told again: each artifact held the fuller of the two (a chunk appended since
        the task was sent), one of an id not held added after them (of an id given twice, the last, as a dict keeps)."""
        for name, now in {artifact.artifact_id: artifact for artifact in artifacts}.items():
            place = self._at.setdefault(name, len(self._made))
            if place == len(self._made):
                self._made.append((now, []))
            elif len(now.parts) >= len(self._made[place][0].parts) + len(self._made[place][1]):
                self._made[place] = (now, [])

    def told(self) -> tuple[Artifact, ...]:
        return tuple(made._replace(parts=made.parts + tuple(more)) if more else made for made, more in self._made)


def may_become(state: TaskState, later: TaskState) -> bool:
    """Whether a task seen in `state` may be in `later` afterwards: the same state, or one
    the state table (model.NEXT) leads to. An update that takes a task back (to submitted,
    say) is older than what was seen: delivered late, or twice. A state the table does not
    know (0.3's unknown) may be followed by any."""
    if later is state or (state not in NEXT and not state.is_terminal):
        return True
    ahead, todo = set(), [state]
    while todo:
        for after in NEXT.get(todo.pop(), ()):
            if after not in ahead:
                ahead.add(after)
                todo.append(after)
    return later in ahead


def direct_reply(message: Message, **said: Any) -> Task:
    """A direct Message answer (no task made) as a completed task named '(reply ID)': both answers A2A allows,
    handled alike. The name is our side's, but a task's id is the peer's to choose: see `is_direct_reply`."""
    return Task(f"(reply {message.message_id})", (TaskState.COMPLETED,), context_id=message.context_id, **said)


def is_direct_reply(task: Task) -> bool:
    """Whether `task` is a direct reply: so named and completed from the start (a peer's task of that name and so
    completed takes no next turn either, and says no more than a direct reply could)."""
    return task.id.startswith("(reply ") and task.lifecycle == (TaskState.COMPLETED,)


def reply_as_task(dialect: Any, value: Any) -> Task:
    """A direct Message answer, as a result carries it in `dialect` (wire_message.py), read as a completed task."""
    reply = message_from_wire(dialect, value, "message")
    return direct_reply(reply, artifacts=(Artifact("reply", reply.parts),))


def fold(events: Iterable[Event]) -> Task | None:
    """The task a stream describes (or a direct reply as a completed task); None if it
    held no task. Events about another task id than the first are not this stream's, a
    status the task cannot come to from where it is arrived late (may_become), one in the state
    it is in enters none (its word is the news), and nothing after the state that ends the stream counts."""
    task: Task | None = None
    made: Artifacts | None = None  # the artifacts told, once an update tells one
    for event in events:
        if isinstance(event, Task) and task is None:
            task = event
            if task.state.is_terminal:  # a stream may be just the task, finished: nothing follows
                break
        elif isinstance(event, Message) and task is None:
            return direct_reply(event, status_message="".join(part.describe() for part in event.parts))
        elif task is not None and getattr(event, "task_id", None) == task.id:
            if isinstance(event, ArtifactUpdate):  # a chunk (append) joins the artifact it continues
                made = made or Artifacts(task.artifacts)
                made.add(event)
            elif isinstance(event, StatusUpdate) and may_become(task.state, event.state):  # the state it is in: its
                entered = () if event.state is task.state else (event.state,)  # word anew, no state entered again
                task = task._replace(lifecycle=task.lifecycle + entered, status_message=event.message,
                                     status_data=event.data, timestamp=event.timestamp)
                if ends(event.state):  # the stream is over, whatever a peer sends after it
                    break
    return task if made is None else task._replace(artifacts=made.told())


def folded(task: Task | None, update: Event | Current) -> Task | None:
    """`task` after one update, from any source (a stream, a push, a GetTask: peers/support/calling/follow.py). A whole
    task is the task as the peer now tells it (in the state seen, what was told since is kept, unless it is Current:
    it may be older); a status or an artifact update is added to it (`fold`'s rules); a message is the answer only
    where no task was made. An update about another task is not this one's; one taking the task back to a state it
    left arrived late. (Folding's rules: one update is a source's first and last.)"""
    folding = Folding(task)
    folding.add(update)
    return folding.task


class Folding:
    """One source's updates folded into its task as they are read (follow.py), each as `folded` says; the artifacts
    told kept as Artifacts, made the task's tuple once, when the task is asked for: each update costs what it tells,
    not what was told before it (a peer saying "working", or sending the task as it began, after each artifact had
    them all compared or indexed again, 4,000 artifacts taking seconds)."""

    def __init__(self, task: Task | None) -> None:
        self._task: Task | None = task
        self._made: Artifacts | None = None

    @property
    def task(self) -> Task | None:
        if self._made is not None and self._task is not None:
            self._task, self._made = self._task._replace(artifacts=self._made.told()), None
        return self._task

    def ended(self) -> bool:
        """Whether the task has ended or paused (model.ends): an artifact update changes no state."""
        return self._task is not None and ends(self._task.state)

    def add(self, update: Event | Current) -> None:
        task, current = self._task, isinstance(update, Current)
        whole = update.task if isinstance(update, Current) else update
        if task is None:
            self._task = fold((whole,))
        elif isinstance(whole, Task):
            if whole.id != task.id or not may_become(task.state, whole.state):
                return  # another task's, or one it has left: arrived late
            if whole.state is not task.state or current:  # as now told, whatever it no longer holds (an artifact
                self._task, self._made = whole if whole.state is not task.state else \
                    whole._replace(lifecycle=task.lifecycle), None  # made anew); in the state seen, its lifecycle
            else:  # the state seen: a snapshot that may be older than updates read since (a push delivered again,
                self._artifacts(task).fuller(whole.artifacts)  # or late: A2A 4.3.3): each artifact as fully as told
                self._task = whole._replace(lifecycle=task.lifecycle)
        elif isinstance(update, ArtifactUpdate) and update.task_id == task.id and not task.state.is_terminal:
            self._artifacts(task).add(update)
        else:  # a status, a message, another task's update: the artifacts are not read (`fold` keeps them)
            self._task = fold((task, update))

    def _artifacts(self, task: Task) -> Artifacts:
        self._made = self._made or Artifacts(task.artifacts)
        return self._made
