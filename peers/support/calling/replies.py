"""Where what a peer sent becomes an object, or the peer's ProtocolViolation.

Essay: Delegation over JSON-RPC, read from the caller's side. The support agent reads a
card and a result in two steps: the bytes as JSON, strictly (transports/codec.py), then
the JSON as a card or a task, by the peer's wire format (peers/a2a/). Whatever shape a
peer sends, a wrong type, a missing field, a state that does not exist, nesting deeper
than any card needs, each step ends either with the object or with a ProtocolViolation
naming what was wrong: never with our traceback. A card is read on from here by
card_reading.py.
"""
from __future__ import annotations

from peers.a2a.fields import WireError
from transports.codec import loads_strict
from transports.errors import ProtocolViolation

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable


def read_json(body: bytes, what: str) -> Any:
    """A peer's bytes as JSON, within the codec's limits, or a ProtocolViolation."""
    try:
        return loads_strict(body)
    except ValueError as exc:
        raise ProtocolViolation(f"{what} is not usable JSON ({exc})") from None


def read(reader: Callable[[Any], Any], value: Any, what: str) -> Any:
    """`value` read by a wire format's reader, or a ProtocolViolation naming the field."""
    try:
        return reader(value)
    except WireError as exc:
        raise ProtocolViolation(f"{what} is malformed: {exc}") from None


def continued(message: Any, task: Any) -> Any:
    """`task`, the answer to `message`, if it is the task `message` is the next turn of (A2A 1.0 3.1.1: a taskId names
    the task, which keeps its context): a peer answering with another task, or in another context, did something else
    than asked, and we cannot say what. A direct reply (a Message: no task) names none, and is read as it is
    (stream.is_direct_reply)."""
    if not message.task_id:
        return task
    from peers.a2a.stream import is_direct_reply  # only a next turn asks: the essay's run loads no stream
    if is_direct_reply(task):
        return task
    if task.id != message.task_id:
        raise ProtocolViolation(f"continued task {message.task_id[:80]!r}, the peer answered with task {task.id[:80]!r}")
    if message.context_id and task.context_id and task.context_id != message.context_id:
        raise ProtocolViolation(f"continued task {message.task_id[:80]!r} in context {message.context_id[:80]!r}, "
                                f"the peer answered in context {task.context_id[:80]!r}")
    return task
