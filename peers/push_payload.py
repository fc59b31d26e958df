"""What a webhook is told of each change to its task: the push notification's body and headers.

Spec: A2A 1.0.1 section 4.3.3 (a push is a StreamResponse, "allowing push notifications
to deliver the same event types as real-time streams", POSTed with `Content-Type:
application/a2a+json` and the config's authentication); 0.3 POSTs the task itself, as
application/json. The official SDKs (a2a-sdk 1.3.0, @a2a-js/sdk 1.3.0) both POST each
event of a 1.0 task as the StreamResponse kind it is: the task, then status and artifact
updates; the JS SDK as application/a2a+json, the Python SDK as application/json. A webhook
registered over 0.3 gets the whole task each time from the JS SDK, as 0.3 defines. So:
- a 1.0 webhook is told what a subscription to its task would be (peers/a2a/stream.py
  `events_of`, the events streams send): the task as it is the first time, then each
  state the task enters and each artifact it makes, as application/a2a+json;
- `serve --push-payload task` tells a 1.0 webhook the whole task each time (`{"task": ...}`),
  for a receiver that wants every push to stand on its own; `serve --push-media-type
  application/json` labels 1.0 pushes as the Python SDK does, for a receiver that parses
  JSON only under that name;
- a 0.3 webhook gets the whole task, as application/json, whatever the settings: its wire
  says what a push may carry there (PUSH_EVENTS, PUSH_MEDIA_TYPES).
A push config cannot ask for one or the other: A2A's TaskPushNotificationConfig has no
field for it. So the wire it was registered in, and the server's settings, decide.
Not here: when and where a push is sent, and how often it is tried (push.py).
"""

from __future__ import annotations

from peers.a2a.model import PushConfig, Task
from transports.jsonrpc import InvalidParams
from transports.records import Record

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any
    from peers.a2a.stream import Event

PAYLOADS = ("events", "task")  # each change as the kind of StreamResponse it is; the whole task each time
MEDIA_TYPES = ("application/a2a+json", "application/json")  # section 4.3.3's; plain JSON's


class PushSettings(Record):
    """How a server's pushes are spelled, as `serve` was asked (--push-payload, --push-media-type)."""

    payload: str = "events"
    media_type: str = "application/a2a+json"


class Telling:
    """How one webhook is told: in its wire's spelling, with the media type its wire and
    the settings give, and, for events, the task as it was last told, since what a change
    tells is what changed after it. Used under the webhooks' lock: changes of one task are
    told in the order they were made."""

    def __init__(self, wire: Any, settings: PushSettings) -> None:
        self.spell = wire.stream_result  # an event (or the task) -> its StreamResponse on this wire
        self.events = settings.payload == "events" and wire.PUSH_EVENTS
        self.media_type = settings.media_type if settings.media_type in wire.PUSH_MEDIA_TYPES \
            else wire.PUSH_MEDIA_TYPES[0]
        self.last: Task | None = None

    def told(self, task: Task) -> "list[Event]":
        """What the change that left `task` as it is tells this webhook: the task, the first
        time (as a subscription starts) and each time with --push-payload task; else the
        states entered and artifacts made since it was last told (none, where a change left
        its state as it was: a follow-up's turn joining its history, say, as on a stream)."""
        from peers.a2a.stream import events_of  # streams' own events: loaded once a webhook is told
        last = self.last
        if last is not None and (task == last or _progress(task) < _progress(last)):
            return []  # told already, or read before a change it was told of: nothing new, never a step back
        self.last = task
        if last is None or not self.events:
            return [task]
        return events_of(task, len(last.lifecycle) - 1)[1:]

    def headers(self, config: PushConfig) -> dict[str, str]:
        """The push's headers: its media type, and the config's token and authentication."""
        headers = {"Content-Type": self.media_type}
        if config.token:
            headers["X-A2A-Notification-Token"] = config.token
        said = authorization(config)
        if said is not None:
            headers["Authorization"] = said
        return headers


def authorization(config: PushConfig) -> str | None:
    """The Authorization header a push carries: the webhook's first scheme and the credentials it was
    given; None without credentials (nothing to send)."""
    if not config.authentication or config.authentication[1] is None:
        return None
    schemes, credentials = config.authentication
    return f"{schemes[0]} {credentials}"


def _progress(task: Task) -> tuple[int, int, int]:
    """How far a task has come: each of these only grows (a snapshot behind another in one is older)."""
    return len(task.lifecycle), len(task.history), len(task.artifacts)


def header_safe(value: str | None, what: str) -> None:
    """A token or credentials go in an HTTP header: visible ASCII only, or never sent."""
    if value is not None and not (value.isascii() and value.isprintable()):
        raise InvalidParams(f"the push config's {what} must be visible ASCII characters")
