"""What a broken stream missed: said to the learner, and folded into what was seen.

Essay: Delegation over JSON-RPC. Spec: A2A 1.0 section 3.1.6 (SubscribeToTask: its first
event is the task as it is now). When the support agent joins a task's stream again
(follow.py), the task it finds is compared with the last one it saw: `missed` says what
changed meanwhile (states entered, artifacts made), and `continued` is the task as found,
its lifecycle and artifacts continuing what was seen: Current, newer than what was seen,
whatever it no longer holds. Values in, values out: no I/O.
"""

from __future__ import annotations

from peers.a2a.model import Task
from peers.a2a.stream import Current

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any


def missed(seen: Task, now: Any) -> str:
    """What changed between the last event read and the task as we found it again."""
    if not isinstance(now, Task):
        return "unknown: the peer did not say how the task was when we came back"
    states = now.lifecycle[1:] if now.lifecycle[:1] == seen.lifecycle[-1:] else now.lifecycle
    known = {artifact.artifact_id for artifact in seen.artifacts}
    made = [repr(artifact.artifact_id) for artifact in now.artifacts if artifact.artifact_id not in known]
    changes = ([f"the task became {' -> '.join(state.value for state in states)}"] if states else []) \
        + ([f"artifact {', '.join(made)}"] if made else [])
    return "; ".join(changes) or "nothing: the task is as it was"


def continued(seen: Task, later: Task) -> Current:
    """The task as we found it again, its lifecycle and artifacts continuing what was seen
    before (an artifact sent again replaces the copy we had, however few parts it has now)."""
    states = later.lifecycle[1:] if later.lifecycle[:1] == seen.lifecycle[-1:] else later.lifecycle
    fresh = {artifact.artifact_id for artifact in later.artifacts}
    artifacts = tuple(a for a in seen.artifacts if a.artifact_id not in fresh) + later.artifacts
    return Current(later._replace(lifecycle=seen.lifecycle + states, artifacts=artifacts))
