"""Run with a Python that has the official `a2a-sdk` installed (tests/test_interop_push.py does).

A push-notification webhook made of the official Python SDK's own parts, as a client built
with it would keep its tasks: each push is parsed as the SDK's StreamResponse (strictly: a
field the SDK does not know, or two kinds in one body, is refused with 400) and folded into
its task by the SDK's TaskManager. The SDK ships no webhook, so this is the nearest thing.
It binds 127.0.0.1 (a free port) and prints "listening on URL"; then, for each push, one line
"push TASK_ID CONTENT_TYPE KIND STATE TEXTS" (KIND as the SDK names the StreamResponse field;
STATE and TEXTS, a JSON list of the artifacts' texts, of the task as folded so far), or
"refused REASON". A push without TOKEN in X-A2A-Notification-Token gets 403. One push at a
time, in the order they arrive. Usage: python sdk_push_receiver.py TOKEN
"""
import asyncio
import json
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

from a2a.server.context import ServerCallContext
from a2a.server.tasks import InMemoryTaskStore, TaskManager
from a2a.types import StreamResponse, TaskState
from google.protobuf.json_format import Parse

TOKEN = sys.argv[1]
LOOP = asyncio.new_event_loop()
MANAGERS: dict = {}  # task id -> the SDK's TaskManager folding its pushes


def fold(payload) -> str:
    """The task the SDK makes of the pushes so far: "STATE TEXTS"."""
    task_id = payload.id if payload.DESCRIPTOR.name == "Task" else payload.task_id
    manager = MANAGERS.setdefault(task_id, TaskManager(InMemoryTaskStore(), ServerCallContext(), None, None, None))
    LOOP.run_until_complete(manager.process(payload))
    task = LOOP.run_until_complete(manager.get_task())
    texts = [part.text for artifact in task.artifacts for part in artifact.parts if part.text]
    return f"{task_id} {TaskState.Name(task.status.state)} {json.dumps(texts)}"


class Webhook(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        status = 200
        if self.headers.get("X-A2A-Notification-Token") != TOKEN:
            status = 403
        else:
            try:
                pushed = Parse(body, StreamResponse())
                kind = pushed.WhichOneof("payload")
                folded = fold(getattr(pushed, kind))
                task_id, rest = folded.split(" ", 1)
                print("push", task_id, self.headers.get("Content-Type"), kind, rest, flush=True)
            except Exception as exc:  # noqa: BLE001 - whatever the SDK refuses, said in one line
                print("refused", type(exc).__name__, str(exc).replace("\n", " ")[:300], flush=True)
                status = 400
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


if __name__ == "__main__":
    server = HTTPServer(("127.0.0.1", 0), Webhook)
    print(f"listening on http://127.0.0.1:{server.server_address[1]}/webhook", flush=True)
    server.serve_forever()
