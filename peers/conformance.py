"""conformance-agent: a third servable peer that acts out the official A2A conformance
kit's scripted behaviours, so anyone can run the kit against the workbench's own server.

The kit (github.com/a2aproject/a2a-tck, `scenarios/*.feature`) chooses what the agent
under test does by the prefix of each message's `messageId`; the longest prefix that
matches wins. Everything else a conforming server must do (task ids, contextId rules,
history, GetTask, ListTasks, CancelTask, the error codes) is the same peer core and app
billing runs on: this module only scripts the skill. Not a story peer: the essay's run
never meets it. Serve it with `python3 a2a_delegation.py serve conformance-agent --wire 1.0`.
"""
from __future__ import annotations

import time

from peers.a2a.model import Message, Part, Task
from peers.card_files import load_card
from peers.pause import NeedsInput, Refusal
from peers.peer import Peer
from peers.skill import Skill, refuse_unaccepted
from peers.store import TaskStore

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable

def _text_artifact(text: str) -> Callable[[], tuple[Part, ...]]:
    return lambda: (Part(text=text),)


# messageId prefix -> what the task ends with (the feature files' "Then ..." lines).
BEHAVIOURS: dict[str, Callable[[], Any]] = {
    "tck-complete-task": _text_artifact("Hello from TCK"),
    "tck-artifact-text": _text_artifact("Generated text content"),
    "tck-artifact-file": lambda: (Part(raw=b"tck", filename="output.txt", media_type="text/plain"),),
    "tck-artifact-file-url": lambda: (Part(url="https://example.com/output.txt", filename="output.txt",
                                           media_type="text/plain"),),
    "tck-artifact-data": lambda: (Part(data={"key": "value", "count": 42}),),
    # Streamed (SendStreamingMessage): working, the artifact, completed.
    "tck-stream-001": _text_artifact("Stream hello from TCK"),
    "tck-stream-002": _text_artifact("Stream completed"),
    "tck-stream-003": _text_artifact("Stream task lifecycle"),
    "tck-stream-ordering-001": _text_artifact("Ordered output"),
    "tck-stream-artifact-text": _text_artifact("Streamed text content"),
    "tck-stream-artifact-file": lambda: (Part(raw=b"tck", filename="output.txt", media_type="text/plain"),),
    # One artifact of two parts: streamed a part per event, the second appended, the last chunk.
    "tck-stream-artifact-chunked": lambda: (Part(text="chunk-1 "), Part(text="chunk-2")),
    # A long task, for SubscribeToTask: working, a pause (the kit's two streaming timeouts),
    # then completed, with no artifact.
    "test-resubscribe-message-id": lambda: time.sleep(RESUBSCRIBE_PAUSE) or (),
}
RESUBSCRIBE_PAUSE = 4.0  # seconds
DIRECT_REPLY, ASKS_INPUT, REJECTS = "tck-message-response", "tck-input-required", "tck-reject-task"
DEFAULT = _text_artifact("Hello from TCK")  # any other messageId: complete, as the kit's SUT does


def behaviour(message_id: str) -> Callable[[], Any]:
    """The longest prefix of `message_id` with a behaviour; the default otherwise."""
    matching = [prefix for prefix in BEHAVIOURS if message_id.startswith(prefix)]
    return BEHAVIOURS[max(matching, key=len)] if matching else DEFAULT


def act(message: Message) -> Any:
    """The skill: what the message's id asks for. Its input is the message itself."""
    if (message.message_id or "").startswith(ASKS_INPUT):
        raise NeedsInput("input required: send the next turn of this task",
                         answered=lambda answer: act(answer))
    return behaviour(message.message_id or "")()


def admit(message: Message, metadata: dict[str, Any]) -> str | Refusal | None:
    """tck-reject-task: the agent will not attempt it (a rejected task, before any work)."""
    return "rejected" if (message.message_id or "").startswith(REJECTS) else None


def read(message: Message) -> Message:
    """The skill's input: the message itself (the kit's scripts key on its messageId), so a
    part of any kind, files too, is taken as it came if its media type is one of the skill's
    inputModes (checked before, skill.refuse_unaccepted); what the task does is the messageId's."""
    return message


class ConformancePeer(Peer):
    """The peer core, with three documented differences: the skill's input is the whole
    message (`read`); a tck-message-response message is answered with a Message and
    makes no task, as A2A allows; and every message is new (its default store remembers
    no messageId), because the kit sends different messages under one messageId within a
    run (billing would refuse those with -32602, and answers a true resend with its first task)."""

    def __init__(self, *args: Any, store: TaskStore | None = None, **options: Any) -> None:
        super().__init__(*args, store=store or TaskStore(options.get("max_tasks", 1000), remember_messages=False),
                         **options)

    def send_message(self, message: Message, *, owner: str = "", **options: Any) -> Task | Message:
        if message.task_id is None and (message.message_id or "").startswith(DIRECT_REPLY):
            refuse_unaccepted(next(iter(self.skills.values())), message)  # the same content-type rules first
            reply = f"{message.message_id}-reply"  # a server's message names its context, a new one if none was sent
            return Message(reply, "agent", (Part(text="Direct message response"),), message.context_id or f"context-{reply}")
        return super().send_message(message, owner=owner, **options)


# The shapes the kit needs a card in (serve flags: peers/demo.py SHAPE_FLAGS): some of its
# tests run only against an agent that does not stream, sends no pushes, has an extended
# card (or declares one it has not configured), or requires an extension of every caller.
EXTENDED_NOTE = " Extended card: shown only to callers who authenticate (GetExtendedAgentCard)."


def conformance_agent(base_url: str | None = None, *, no_streaming: bool = False, no_push: bool = False,
                      extended_card: str | None = None, require_extension: str | None = None,
                      **options: Any) -> Peer:
    """conformance-agent with the card in peers/cards/conformance-agent.json, in the shape
    asked: `extended_card` "served" (one, shown only to a caller who authenticates) or
    "unconfigured" (declared, none configured); `require_extension` a URI every caller must
    activate. `options` go to Peer."""
    card = load_card("conformance-agent", base_url)._replace(
        streaming=not no_streaming, push_notifications=not no_push,  # the file's format cannot say push
        extended_card=extended_card is not None,
        required_extensions=(require_extension,) if require_extension else ())
    extended = card._replace(description=card.description + EXTENDED_NOTE) if extended_card == "served" else None
    return ConformancePeer(card, [Skill(card.skills[0], act, admit=admit, read=read)], extended_card=extended,
                           **options)
