"""Pushes to our --push webhook from a peer that does not play fair: two kinds in one body,
the wrong kind for the wire, updates about a task we never sent, a body over the limit,
the same push delivered twice, pushes out of order, and seeded shuffles of all of those.
A2A 1.0.1 section 4.3.3: a push is exactly one kind of StreamResponse, the receiver MUST
check the task is one it expects, and SHOULD take a push delivered twice once. Each runs
our support agent against a peer of the test's own (test_push.pushing_peer) that POSTs
to our webhook over real HTTP on 127.0.0.1; the one loop that follows a task (follow.py)
reads what arrives, as it reads a stream."""
import random
import time

import pytest

from peers.a2a import wire_v03, wire_v10
from peers.a2a.model import Artifact, Part, Task, TaskState
from peers.a2a.stream import ArtifactUpdate, StatusUpdate, may_become
from peers.support.calling.webhook import MAX_BODY
from test_push import pushed_to
from transports.codec import MAX_FRAME_BYTES

WORKING, COMPLETED, SUBMITTED = TaskState.WORKING, TaskState.COMPLETED, TaskState.SUBMITTED


def status(wire, state, task_id="t-1"):
    return wire.stream_result(StatusUpdate(task_id, "c-1", state, final=state is COMPLETED))


def artifact(wire, text="refund issued", task_id="t-1", append=False):
    return wire.stream_result(ArtifactUpdate(task_id, "c-1", Artifact("a-1", (Part(text=text),)), append=append))


def task(wire, state, task_id="t-1"):
    return wire.stream_result(Task(task_id, (state,), context_id="c-1"))


def told(*updates):
    """What the peer pushes, each with the right token."""
    return lambda token: [(update, token) for update in updates]


def test_a_push_holding_two_kinds_fails_the_delegation_in_one_line_and_at_once():
    both = {**task(wire_v10, COMPLETED), **status(wire_v10, WORKING)}
    outcome, _, answered, took = pushed_to(wire_v10, told(both), patience=5)
    assert answered == [200] and took < 3
    assert "holds task and statusUpdate: a StreamResponse is exactly one of them" in outcome.error
    assert outcome.error.startswith("delegation failed: a push ") and "\n" not in outcome.error


@pytest.mark.parametrize("wire, spoken_by_the_other", [(wire_v10, wire_v03), (wire_v03, wire_v10)],
                         ids=["0.3's kind tag to a 1.0 webhook", "1.0's wrapper to a 0.3 webhook"])
def test_a_push_in_another_wires_spelling_is_no_update_of_this_one(wire, spoken_by_the_other):
    outcome, _, _, took = pushed_to(wire, told(status(spoken_by_the_other, COMPLETED)), patience=5)
    assert outcome.error.startswith("delegation failed: a push ") and "none of" in outcome.error and took < 3


@pytest.mark.parametrize("wire", [wire_v10, wire_v03])
def test_updates_about_a_task_we_never_sent_change_nothing_of_ours(wire):
    strangers = [status(wire, COMPLETED, "t-other"), task(wire, TaskState.FAILED, "t-other"),
                 artifact(wire, "not ours", "t-other")]
    outcome, _, answered, _ = pushed_to(wire, told(status(wire, WORKING), *strangers, artifact(wire),
                                                   status(wire, COMPLETED)))
    assert outcome.error is None and [state.value for state in outcome.task.lifecycle] == [
        "submitted", "working", "completed"]
    assert outcome.result == "refund issued" and answered == [200] * 6


def test_a_push_over_the_limit_is_refused_413_and_the_task_is_still_followed():
    huge = status(wire_v10, WORKING)
    huge["statusUpdate"]["metadata"] = {"padding": "x" * MAX_BODY}
    outcome, _, answered, _ = pushed_to(wire_v10, told(huge, status(wire_v10, WORKING), artifact(wire_v10),
                                                      status(wire_v10, COMPLETED)))
    assert answered == [413, 200, 200, 200] and outcome.error is None and outcome.result == "refund issued"


@pytest.mark.parametrize("wire", [wire_v10, wire_v03])
def test_a_push_delivered_twice_is_read_once(wire):
    chunk = artifact(wire, " (ref 7)", append=True)
    outcome, printer, answered, _ = pushed_to(wire, told(status(wire, WORKING), status(wire, WORKING), artifact(wire),
                                                         chunk, chunk, artifact(wire), status(wire, COMPLETED)))
    assert [state.value for state in outcome.task.lifecycle] == ["submitted", "working", "completed"]
    assert outcome.result == "refund issued (ref 7)", "each chunk once, however often it came"
    assert answered == [200] * 7 and len([f for f in printer.frames if f.sender]) == 7, "each shown as it arrived"


@pytest.mark.parametrize("wire", [wire_v10, wire_v03])
def test_an_update_that_takes_the_task_back_arrived_late_and_changes_nothing(wire):
    late = [task(wire, SUBMITTED), status(wire, SUBMITTED)]
    outcome, _, _, _ = pushed_to(wire, told(status(wire, WORKING), *late, artifact(wire), status(wire, COMPLETED)))
    assert [state.value for state in outcome.task.lifecycle] == ["submitted", "working", "completed"]
    assert outcome.result == "refund issued"


@pytest.mark.parametrize("seed", range(8))
def test_seeded_shuffles_and_repeats_of_a_tasks_pushes_never_take_it_back_nor_repeat_a_chunk(seed):
    chance = random.Random(seed)
    wire = chance.choice([wire_v10, wire_v03])
    pushes = [status(wire, WORKING), task(wire, WORKING), artifact(wire), artifact(wire, "!", append=True),
              status(wire, TaskState.INPUT_REQUIRED), task(wire, SUBMITTED), status(wire, COMPLETED, "t-other"),
              status(wire, COMPLETED)]
    pushes += [chance.choice(pushes) for _ in range(chance.randrange(4))]  # some delivered again
    chance.shuffle(pushes)
    outcome, _, answered, took = pushed_to(wire, told(*pushes), patience=3)
    assert outcome.error is None and took < 4
    assert set(answered) <= {200, "closed"}, "each taken, until the task ended or paused and our webhook with it"
    lifecycle = outcome.task.lifecycle
    assert all(may_become(before, after) for before, after in zip(lifecycle, lifecycle[1:])), lifecycle
    assert lifecycle[-1] in (TaskState.INPUT_REQUIRED, COMPLETED), "it stopped where the task stopped or paused"
    texts = [part.text for found in outcome.task.artifacts for part in found.parts]
    assert texts.count("!") <= 1 and texts.count("refund issued") <= 1, texts


@pytest.mark.parametrize("seed", range(4))
def test_the_same_updates_pushed_or_streamed_leave_the_task_the_same(seed):
    """One loop follows a task whatever brings its updates (follow.follow): what a shuffle of
    pushes leaves is what the same events, read from a stream, leave."""
    import time
    from peers.support.calling.follow import follow
    chance = random.Random(seed)
    wire = chance.choice([wire_v10, wire_v03])
    pushes = [status(wire, WORKING), task(wire, SUBMITTED), artifact(wire), status(wire, COMPLETED, "t-other"),
              artifact(wire, "!", append=True), status(wire, COMPLETED)]
    chance.shuffle(pushes)
    outcome, _, _, _ = pushed_to(wire, told(*pushes), patience=3)
    streamed = (wire.event_from_result(push) for push in pushes)
    assert follow(streamed, Task("t-1", context_id="c-1"), time.monotonic() + 3) == outcome.task


def test_pushes_past_what_one_stream_may_carry_are_refused_413_and_fail_the_delegation_at_once():
    """A peer pushing without end (here 40 chunks of 60 KB, appended to one artifact) would grow the task, and
    the frames kept of it, for as long as it was followed: a hostile round's 550 MB in 5 s. One delegation's
    pushes hold at most what one stream's reply may (1 MiB); past it each is refused, and that is the peer's fault."""
    chunks = [artifact(wire_v10, f"{n:02}" + "x" * 60_000, append=n > 0) for n in range(40)]
    outcome, printer, answered, took = pushed_to(wire_v10, told(status(wire_v10, WORKING), *chunks,
                                                               status(wire_v10, COMPLETED)), patience=10)
    pushed = sum(len(frame.body) for frame in printer.frames if frame.sender is not None)
    assert pushed <= MAX_FRAME_BYTES and answered[0] == 200 and 413 in answered and took < 5, (pushed, answered)
    assert outcome.error.startswith("delegation failed: the pushes to our webhook are over the 1048576-byte limit")
    assert "\n" not in outcome.error


@pytest.mark.parametrize("wire", [wire_v10, wire_v03])
def test_the_task_pushed_again_after_its_artifact_was_told_loses_none_of_what_was_told(wire):
    """A2A 4.3.3: a push may be delivered again, and pushes come in any order. The task as first pushed (working,
    nothing made yet), arriving after the artifact made since, is older than what was read, not news: the refund's
    confirmation must not be lost from the task that completes. A hostile round's finding: it was, and the
    delegation's result was empty."""
    chunk = artifact(wire, " (ref 7)", append=True)
    outcome, _, answered, _ = pushed_to(wire, told(status(wire, WORKING), artifact(wire), chunk, task(wire, WORKING),
                                                   status(wire, COMPLETED)))
    assert answered == [200] * 5 and outcome.error is None
    assert outcome.result == "refund issued (ref 7)" and len(outcome.task.artifacts) == 1
    assert [state.value for state in outcome.task.lifecycle] == ["submitted", "working", "completed"]


def test_pushes_refused_429_while_the_follower_is_behind_count_nothing_toward_the_limit():
    """A push refused 429 (100 waiting, the follower behind) was not taken: a peer sending it again (its right, as
    for any refusal it may retry) must not find the limit of what one delegation takes spent by bytes never taken."""
    from peers.support.calling.follow import listening
    from peers.support.calling.webhook import MAX_PUSHES
    from transports.network import HttpTransport
    with listening(True) as receiver:
        http, headers = HttpTransport(timeout=5), {"X-A2A-Notification-Token": receiver.token}
        try:
            waiting = [http.post(receiver.url, b"{}", headers).status for _ in range(MAX_PUSHES)]
            refused = [http.post(receiver.url, b"x" * (MAX_BODY - 1), headers).status for _ in range(20)]
            taken = [receiver.next_push(1) for _ in range(MAX_PUSHES)]
            later = http.post(receiver.url, b"{}", headers).status
        finally:
            http.close()
    assert waiting == [200] * MAX_PUSHES and refused == [429] * 20 and None not in taken
    assert later == 200 and not receiver.over, later


def test_pushes_going_past_the_limit_while_100_wait_fail_the_follower_once_it_has_read_them_not_at_its_deadline():
    """Past the limit with 100 pushes waiting, the word that the rest were refused finds no room in the queue: the
    follower, once it has read the pushes taken, must be told at once, not wait out its patience for another push."""
    from peers.support.calling.follow import listening
    from peers.support.calling.webhook import MAX_PUSHES, MAX_TAKEN
    from transports.network import HttpTransport
    with listening(True) as receiver:
        http, headers = HttpTransport(timeout=5), {"X-A2A-Notification-Token": receiver.token}
        try:
            body = b"x" * (MAX_TAKEN // MAX_PUSHES - 100)  # 100 of them fit, just
            waiting = [http.post(receiver.url, body, headers).status for _ in range(MAX_PUSHES)]
            over = http.post(receiver.url, b"x" * (MAX_BODY - 1), headers).status
            taken = [receiver.next_push(1) for _ in range(MAX_PUSHES)]
            started = time.monotonic()
            after = receiver.next_push(5)
            took = time.monotonic() - started
        finally:
            http.close()
    assert waiting == [200] * MAX_PUSHES and over == 413 and None not in taken and receiver.over
    assert after is None and took < 1, f"the follower waited {took:.1f} s for a push after the limit"


@pytest.mark.parametrize("wire", [wire_v10, wire_v03])
def test_a_task_pushed_holding_two_artifacts_of_one_id_fails_the_delegation_in_one_line(wire):
    """An artifactId is unique within its task: a task holding two of one id cannot be told faithfully (an update
    to that id would name neither). Folded in the state seen, the first of them was lost, and the result with it."""
    twice = wire.stream_result(Task("t-1", (WORKING,), (Artifact("a-1", (Part(text="refund issued"),)),
                                                        Artifact("a-1", (Part(text=" (ref 7)"),))), context_id="c-1"))
    outcome, _, answered, took = pushed_to(wire, told(status(wire, WORKING), twice, status(wire, COMPLETED)), patience=5)
    assert answered[:2] == [200, 200] and took < 3 and outcome.task is None, (answered, outcome.result)
    assert outcome.error.startswith("delegation failed: a push is malformed: ") and "\n" not in outcome.error
    assert "artifacts[1].artifactId 'a-1' is an earlier artifact's" in outcome.error, outcome.error
