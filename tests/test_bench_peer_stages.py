"""bench/peer_stages.py measures what it says: each stage's step, run on its prepared inputs,
does a SendMessage's work (a new completed task, or its part of one), so a change to the
peer that broke a stage would fail here rather than bench a refusal. Not a timing."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import peer_stages  # noqa: E402


@pytest.mark.parametrize("stage", peer_stages.STAGES)
def test_each_stage_does_a_send_messages_work_on_new_inputs(stage):
    work, inputs = peer_stages.prepared(stage, 3, filled=2)
    answers = [work(one) for one in inputs]
    assert len(answers) == 3
    if stage in ("app", "binding"):
        assert all(a.status == 200 and b"TASK_STATE_COMPLETED" in a.body for a in answers)
    elif stage in ("operation", "result"):
        assert all(a["task"]["status"]["state"] == "TASK_STATE_COMPLETED" for a in answers)
    elif stage == "peer":
        assert len({task.id for task in answers}) == 3 and all(task.state.value == "completed" for task in answers)
    elif stage == "request":
        assert len({request.effect for request in answers}) == 3
    elif stage == "decode":
        assert [a["method"] for a in answers] == ["SendMessage"] * 3
    elif stage == "message":
        assert len({asked.message.message_id for asked in answers}) == 3
    else:  # encode
        assert all(a.startswith(b'{"jsonrpc": "2.0", "id": ') and b"TASK_STATE_COMPLETED" in a for a in answers)
