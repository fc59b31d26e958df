"""--push: the support agent's own webhook, so a peer can tell it how a task went.

A2A push notifications (section 4.3): instead of asking again and again (polling.py),
the caller gives the peer a URL and a token with the message, and the peer POSTs each
change of the task there. `webhook_for` starts a receiver on 127.0.0.1 (an ephemeral
port) for one delegation, where the card offers push notifications; `settle` in
polling.py waits on it. It takes only POSTs that carry its token in
X-A2A-Notification-Token (anything else could be anyone: dropped and counted), hands
each body over as it arrives, and refuses bodies over 64 KiB and more than 100 pushes.
"""
from __future__ import annotations

import os
import threading
from typing import Any

from peers.a2a.model import AgentCard, PushConfig
from peers.a2a.wire_format import method_for

MAX_BODY, MAX_PUSHES = 64 * 1024, 100


class Receiver:
    def __init__(self, lifetime: float = 60.0) -> None:
        """Listening at once; closed by `close`, or by itself after `lifetime` seconds (if the
        delegation failed before anyone waited on it, nobody else would close it)."""
        import queue  # here, not at the top: only --push listens, and http.server is heavy to load
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        self.token = os.urandom(16).hex()
        self.pushes: Any = queue.Queue(MAX_PUSHES)
        self.forged = 0
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            timeout = 2.0  # a peer that drips its push gives up its thread after this
            def do_POST(self) -> None:
                length = self.headers.get("Content-Length", "")
                size = int(length) if length.isdigit() and len(length) < 9 else MAX_BODY + 1
                if self.headers.get("X-A2A-Notification-Token") != receiver.token or size > MAX_BODY:
                    receiver.forged += 1
                    self.send_response(403 if size <= MAX_BODY else 413)
                else:
                    try:
                        receiver.pushes.put_nowait(self.rfile.read(size))
                        self.send_response(200)
                    except queue.Full:
                        self.send_response(429)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass  # the printer shows what matters
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/a2a-push"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True).start()
        self.closed, self.closing_lock = False, threading.Lock()
        self.closing = threading.Timer(lifetime, self.close)
        self.closing.daemon = True
        self.closing.start()

    def next_push(self, seconds: float) -> bytes | None:
        import queue
        try:
            return self.pushes.get(timeout=max(seconds, 0.0))
        except queue.Empty:
            return None

    def close(self) -> None:
        self.closing.cancel()
        with self.closing_lock:  # once, whether the waiter or the timer comes first
            if self.closed:
                return
            self.closed = True
        self.server.shutdown()
        self.server.server_close()


def webhook_for(agent: Any, card: AgentCard) -> PushConfig | None:
    """With --push and a card that offers push notifications: a receiver for this
    delegation (kept on the agent until `settle` is done with it) and the config that
    names it; else None, and the task is asked about instead."""
    if agent.no_wait != "push" or not card.push_notifications or method_for(agent.format_of[card.url], "push-set") is None:
        return None
    agent.receiver = Receiver(lifetime=agent.patience + 5)
    return PushConfig("", "support-agent", agent.receiver.url, agent.receiver.token)
