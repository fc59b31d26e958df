"""--push: the support agent's own webhook, so a peer can tell it how a task went.

A2A push notifications (1.0 sections 3.1.7 and 4.3): instead of asking again and again,
the caller gives the peer a URL and a token with the message, and the peer POSTs each
change of the task there, as a StreamResponse (the task, a status update, an artifact
update or a message). `listening(wanted)` is a receiver on 127.0.0.1 (an ephemeral port)
for one delegation, closed when the delegation's `with` block ends, however it ends.
It takes only POSTs that carry its token in X-A2A-Notification-Token (anything else
could be anyone: refused, and counted in `forged` with those cut off mid-push, never shown
as a traceback), hands each over as it arrives, as a `Push`, to
the one loop that follows the task (follow.py), and refuses bodies over 64 KiB and more
than 100 pushes waiting. It does not read what a push says (follow.py does), nor show it
(the frame printer does, as main() wired it).
"""
from __future__ import annotations

import os
import threading

from peers.a2a.model import PushConfig
from transports.records import Record

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

MAX_BODY, MAX_PUSHES = 64 * 1024, 100


class Push(Record):
    """One POST a peer made to our webhook, as it arrived."""

    url: str  # where it arrived: our webhook's URL
    headers: dict[str, str]
    body: bytes


class Receiver:
    def __init__(self) -> None:
        """Listening at once, until `close` (the `with` block of `listening` calls it)."""
        import queue  # here, not at the top: only --push listens, and http.server is heavy to load
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        self.token = os.urandom(16).hex()
        self.pushes: Any = queue.Queue(MAX_PUSHES)
        self.forged, self.counting = 0, threading.Lock()  # refused pushes; handler threads count at once
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            timeout = 2.0  # a peer that drips its push gives up its thread after this
            def do_POST(self) -> None:
                length = self.headers.get("Content-Length", "")
                size = int(length) if length.isdigit() and len(length) < 9 else MAX_BODY + 1
                if self.headers.get("X-A2A-Notification-Token") != receiver.token or size > MAX_BODY:
                    receiver.refused()
                    self.send_response(403 if size <= MAX_BODY else 413)
                else:
                    try:
                        receiver.pushes.put_nowait(Push(receiver.url, dict(self.headers), self.rfile.read(size)))
                        self.send_response(200)
                    except queue.Full:
                        self.send_response(429)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass  # the printer shows what matters
        class Server(ThreadingHTTPServer):
            def handle_error(self, request: Any, client_address: Any) -> None:  # anyone on the machine can reach it:
                receiver.refused()  # one hanging up mid-push (a reset): counted as a forged push is, not a traceback
        self.server = Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/a2a-push"
        self.config = PushConfig("", "support-agent", self.url, self.token)  # what the message registers
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True).start()
        self.closed, self.closing_lock = False, threading.Lock()

    def refused(self) -> None:
        with self.counting:
            self.forged += 1

    def next_push(self, seconds: float) -> Push | None:
        """The next push, waiting at most `seconds` for it; None if none came."""
        import queue
        try:
            return self.pushes.get(timeout=max(seconds, 0.0))
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
        self.server.shutdown()
        self.server.server_close()
