"""--push: the support agent's own webhook, so a peer can tell it how a task went.

A2A push notifications (1.0 sections 3.1.7 and 4.3): instead of asking again and again,
the caller gives the peer a URL and a token with the message, and the peer POSTs each
change of the task there, as a StreamResponse (the task, a status update, an artifact
update or a message). `listening(wanted)` is a receiver on 127.0.0.1 (an ephemeral port)
for one delegation, closed when the delegation's `with` block ends, however it ends.
It takes only POSTs that carry its token in X-A2A-Notification-Token (anything else
could be anyone: refused, and counted in `forged`; one cut off mid-push is closed by the
server, never shown as a traceback), hands each over as it arrives, as a `Push` (its header
names lower-cased, as every app of ours gets them), to the one loop that follows the task
(follow.py), and refuses bodies over 64 KiB, more than 100 pushes waiting, and any push once
those taken hold 1 MiB (a peer pushing without end would grow the task, and the frames kept,
for as long as it was followed; a stream's reply is held to the same). It does not read
what a push says (follow.py does), nor show it (the frame printer does, as main() wired it).
"""
from __future__ import annotations

import os
import threading

from peers.a2a.model import PushConfig
from transports.base import HttpRequest, HttpResponse
from transports.codec import MAX_FRAME_BYTES
from transports.digests import compare_digest
from transports.records import Record

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

MAX_BODY, MAX_PUSHES, PATH = 64 * 1024, 100, "/a2a-push"
REQUEST_SECONDS, MAX_CONNECTIONS = 2.0, 64  # a push arrives whole within this; connections open at once
MAX_TAKEN = MAX_FRAME_BYTES  # bytes of pushes one delegation takes: what one stream's reply may hold


class Push(Record):
    """One POST a peer made to our webhook, as it arrived."""

    url: str  # where it arrived: our webhook's URL
    headers: dict[str, str]
    body: bytes


class Receiver:
    most_taken = MAX_TAKEN  # said by the follower when a peer's pushes come past it

    def __init__(self) -> None:
        """Listening at once, until `close` (the `with` block of `listening` calls it)."""
        import queue  # here, not at the top: only --push listens
        from transports.server import PeerServer
        self.token = os.urandom(16).hex()
        self.pushes: Any = queue.Queue(MAX_PUSHES)
        self.forged, self.counting = 0, threading.Lock()  # refused pushes; the server's workers count at once
        self.taken, self.over = 0, False  # bytes of pushes taken; whether one came past MAX_TAKEN (then no more are)
        # The project's own server, not http.server's thread per connection: anyone on the machine can reach
        # us, so an idle or dripping connection is a socket, not a thread; a request must arrive whole within
        # REQUEST_SECONDS however it is dripped (408); past MAX_CONNECTIONS the one that made least progress
        # is closed for a newcomer; a body over MAX_BODY is 413 before a byte of it is read.
        self.server = PeerServer(self._answer, "127.0.0.1", 0, idle_timeout=REQUEST_SECONDS, max_body=MAX_BODY,
                                 request_timeout=REQUEST_SECONDS, max_connections=MAX_CONNECTIONS, max_workers=4)
        self.url = self.server.base_url + PATH
        self.config = PushConfig("", "support-agent", self.url, self.token)  # what the message registers
        self.server.start()
        self.closed, self.closing_lock = False, threading.Lock()

    def _answer(self, request: HttpRequest) -> HttpResponse:
        """A push taken (200), or refused: no token or another (403), too many waiting (429)."""
        import queue
        offered = (request.header("X-A2A-Notification-Token") or "").encode("utf-8", "surrogateescape")
        # compare_digest: the time taken must not say how much of a guess was right
        if request.method != "POST" or not compare_digest(offered, self.token.encode()):
            self.refused()
            return HttpResponse(403, {"Content-Length": "0"})
        with self.counting:  # all one delegation's pushes may hold, as a stream's reply may: past it, none is taken
            self.over = self.over or self.taken + len(request.body) > MAX_TAKEN
            try:  # None: the follower's word that the rest were refused, after the pushes taken before
                self.pushes.put_nowait(None if self.over else Push(self.url, dict(request.headers), request.body))
            except queue.Full:  # over, and the follower not yet come to the pushes before: it stops once it has
                return HttpResponse(413 if self.over else 429, {"Content-Length": "0"})
            self.taken += 0 if self.over else len(request.body)  # counted once taken: a 429 sent again is no more
        return HttpResponse(413 if self.over else 200, {"Content-Length": "0"})

    def refused(self) -> None:
        with self.counting:
            self.forged += 1

    def next_push(self, seconds: float) -> Push | None:
        """The next push, waiting at most `seconds` for it; None if none came, or the pushes came past MAX_TAKEN."""
        import queue
        try:  # past it, none waits: the word that the rest were refused found no room if 100 were waiting
            return self.pushes.get_nowait() if self.over else self.pushes.get(timeout=max(seconds, 0.0))
        except queue.Empty:
            return None

    def __enter__(self) -> "Receiver":
        return self

    def __exit__(self, *exc_info: Any) -> None:  # however the delegation ended: no receiver outlives it
        self.close()

    def close(self) -> None:
        with self.closing_lock:  # once, however often it is called
            if self.closed:
                return
            self.closed = True
        self.server.stop()
