"""Folding a stream's artifact updates without a scan per update (stream.Artifacts, Folding) gives, for every stream,
the task the fold before it gave: a scan of the artifacts told and a new task per update. That fold is kept here as it
was, the oracle; seeded streams of every kind of update (artifacts new, appended, made anew, of another task; states
ahead, back, the same; whole tasks, Current, messages) are folded both ways, by `fold` and as follow.py folds them."""
import random

from peers.a2a.model import Artifact, Message, Part, Task, TaskState, ends
from peers.a2a.stream import ArtifactUpdate, Current, Folding, StatusUpdate, direct_reply, fold, folded, may_become


def old_appended(artifacts, update):
    same = next((n for n, artifact in enumerate(artifacts) if artifact.artifact_id == update.artifact.artifact_id), None)
    if same is None:
        return artifacts + (update.artifact,)
    now = artifacts[same]._replace(parts=artifacts[same].parts + update.artifact.parts) if update.append else \
        update.artifact
    return artifacts[:same] + (now,) + artifacts[same + 1:]


def old_fold(events):
    task = None
    for event in events:
        if isinstance(event, Task) and task is None:
            task = event
            if task.state.is_terminal:
                break
        elif isinstance(event, Message) and task is None:
            return direct_reply(event, status_message="".join(part.describe() for part in event.parts))
        elif task is not None and getattr(event, "task_id", None) == task.id:
            if isinstance(event, ArtifactUpdate):
                task = task._replace(artifacts=old_appended(task.artifacts, event))
            elif isinstance(event, StatusUpdate) and may_become(task.state, event.state):
                entered = () if event.state is task.state else (event.state,)
                task = task._replace(lifecycle=task.lifecycle + entered, status_message=event.message,
                                     status_data=event.data, timestamp=event.timestamp)
                if ends(event.state):
                    break
    return task


def old_folded(task, update):
    current, update = isinstance(update, Current), update.task if isinstance(update, Current) else update
    if task is None:
        return old_fold((update,))
    if isinstance(update, Task):
        if update.id != task.id or not may_become(task.state, update.state):
            return task
        if update.state is not task.state:
            return update
        if current:
            return update._replace(lifecycle=task.lifecycle)
        told, kept = {artifact.artifact_id: artifact for artifact in update.artifacts}, []
        for seen in task.artifacts:
            now = told.pop(seen.artifact_id, seen)
            kept.append(now if len(now.parts) >= len(seen.parts) else seen)
        return update._replace(lifecycle=task.lifecycle, artifacts=tuple(kept) + tuple(told.values()))
    return old_fold((task, update))


STATES = [TaskState.SUBMITTED, TaskState.WORKING, TaskState.WORKING, TaskState.WORKING, TaskState.INPUT_REQUIRED,
          TaskState.COMPLETED, TaskState.FAILED, TaskState.UNKNOWN]


def seeded_stream(rng, length):
    """A stream of `length` updates, mostly artifact updates of a few ids, drawn from `rng`."""
    def artifact():
        return Artifact(rng.choice("abcd"), tuple(Part(text=f"{rng.random():.3f}") for _ in range(rng.randint(0, 2))),
                        name=rng.choice([None, "n"]))

    def task():
        return Task(rng.choice(["t", "t", "t", "u"]), (rng.choice(STATES),), tuple(artifact() for _ in range(
            rng.randint(0, 3))), status_message=rng.choice([None, "said"]))
    events = []
    for _ in range(length):
        roll = rng.random()
        if roll < 0.6:
            events.append(ArtifactUpdate(rng.choice(["t", "t", "t", "u"]), "c", artifact(), append=rng.random() < 0.5))
        elif roll < 0.8:
            events.append(StatusUpdate(rng.choice(["t", "t", "u"]), "c", rng.choice(STATES), message=f"{roll:.2f}"))
        elif roll < 0.9:
            events.append(Current(task()) if rng.random() < 0.5 else task())
        else:
            events.append(Message("m", "agent", (Part(text="hi"),), task_id=rng.choice([None, "t"])))
    return events


def test_fold_gives_the_task_a_scan_per_artifact_update_gave_for_every_seeded_stream():
    rng = random.Random(20261205)
    for _ in range(1500):
        events = seeded_stream(rng, rng.randint(0, 30))
        first = [Task("t", (rng.choice(STATES),), (Artifact("a", (Part(text="0"),)),))] if rng.random() < 0.8 else []
        assert fold(first + events) == old_fold(first + events), events


def test_following_a_stream_gives_the_task_folding_each_update_in_turn_gave_for_every_seeded_stream():
    rng = random.Random(5)
    for _ in range(1500):
        events = seeded_stream(rng, rng.randint(0, 30))
        start = rng.choice([None, Task("t", (TaskState.WORKING,), (Artifact("a", (Part(text="0"),)),)), Task(
            "t", (TaskState.WORKING,), tuple(Artifact(name, (Part(text=name),)) for name in "aab"))])  # (by hand: twice)
        folding, task = Folding(start), start
        for event in events:
            folding.add(event)
            assert folded(task, event) == old_folded(task, event), (task, event)
            task = old_folded(task, event)
            assert folding.ended() == (task is not None and ends(task.state))
            if rng.random() < 0.2:  # the task asked for midway (follow.py asks at its end), then folded on
                assert folding.task == task, events
        assert folding.task == task, events
