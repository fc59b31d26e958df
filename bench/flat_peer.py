#!/usr/bin/env python3
"""A yardstick, not a peer: the served billing-agent's answer to the benchmark's SendMessage, written as one function.

Issue 36 asks the served peer for at most 1.5x the floor's CPU per request. This says how much of the
distance is the work and how much the layers: it makes the same checks on the request cpu_per_request.py
sends (a bearer token, A2A-Version, the media type, the strict decode, the JSON-RPC envelope, the message's
shape, the refund's schema: its two fields, the order id's pattern, the amount's range and cents, a
message's size), keeps what the peer keeps (each messageId's content digest, so a resend gets its task and
a changed one is refused; the order in a ledger, each caller's share bounded; 1,000 tasks, the oldest
forgotten; the task at each of its three states, each stamped) and answers the same bytes, ids and times
aside (tests/test_bench_flat_peer.py holds it to that, and to refusing what the peer refuses). It does
that with dicts in one function: no records, no wire format, no method table, no store or ledger objects.
What it does not do, it refuses in one error: another method, another skill, a text or file part, a turn
of a task, a configuration, extensions, a handoff envelope, an amount a person approves, 0.3, HTTP+JSON
(and a refund the ledger holds, asked otherwise, where the peer answers a rejected task; a notification,
which it answers, where the peer answers nothing).
Nothing in the workbench imports it. Served on the workbench's own server (transports/server.py), as
the peer is: `python3 bench/flat_peer.py TOKEN` prints the line bench/loopback.py reads, and serves.
"""
from __future__ import annotations

import math
import re
import sys
from collections import OrderedDict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from peers.a2a.fields import REQUEST_LIMITS  # noqa: E402 - the served peer's decode limits
from peers.billing import APPROVAL_LIMIT  # noqa: E402
from peers.stamps import unguessable_task_ids, utc_now  # noqa: E402
from peers.store import SORTED_JSON, digest  # noqa: E402 - the same content, digest and claim spellings
from transports import digests  # noqa: E402
from transports.base import HttpRequest, HttpResponse  # noqa: E402
from transports.codec import dumps, loads_strict  # noqa: E402

ORDER_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")  # billing's REFUND_INPUT pattern
JSON = {"Content-Type": "application/json"}
PART_FIELDS = {"text", "raw", "url", "data"}


class Yardstick:
    def __init__(self, token: str, max_effects: int = 10_000, max_tasks: int = 1000) -> None:
        self.token, self.max_effects, self.max_tasks = token.encode(), max_effects, max_tasks
        self.tasks: OrderedDict[str, dict] = OrderedDict()  # id -> the task as answered, oldest first
        self.by_message: dict[str, tuple[str, str]] = {}  # messageId -> (its task, its content's digest)
        self.messages: dict[str, str] = {}  # task id -> its messageId (forgotten with it)
        self.ledger: dict[str, tuple[str, str, str]] = {}  # order -> (task, claim, what was done)
        self.new_id = unguessable_task_ids()

    def __call__(self, request: HttpRequest) -> HttpResponse:
        headers = request.headers
        if request.method != "POST" or request.url.split("?")[0].rstrip("/").rpartition("/")[2] != "a2a":
            return HttpResponse(404, JSON, b"")
        if (headers.get("content-type") or "").split(";")[0].strip().lower() not in ("application/json",
                                                                                       "application/a2a+json"):
            return HttpResponse(415, JSON, b"")
        scheme, _, token = (headers.get("authorization") or "").partition(" ")
        if scheme.lower() != "bearer" or not digests.compare_digest(token.strip(" \t").encode(), self.token):
            return HttpResponse(401, JSON, b"")
        try:
            frame = loads_strict(request.body, REQUEST_LIMITS)
        except ValueError:
            return _error(None, -32700, "not JSON, or past the limits")
        given = frame.get("id") if isinstance(frame, dict) else None
        rid = given if given is None or type(given) in (str, int) else None
        if not isinstance(frame, dict) or frame.get("jsonrpc") != "2.0" or not isinstance(frame.get("method"), str) \
                or rid is not given or not isinstance(frame.get("params"), dict):
            return _error(rid, -32600, "not a JSON-RPC 2.0 request")
        if frame["method"] != "SendMessage":
            return _error(rid, -32601, "the yardstick answers SendMessage alone")
        if (headers.get("a2a-version") or "").strip(" \t") not in ("1", "1.0"):
            return _error(rid, -32009, "A2A-Version: 1.0 is required")
        message = frame["params"].get("message")
        if frame["params"].keys() - {"message"} or not isinstance(message, dict):
            return _error(rid, -32602, "a message, and no configuration (the yardstick reads none)")
        mid, parts, metadata = message.get("messageId"), message.get("parts"), message.get("metadata")
        if message.get("role") not in ("ROLE_USER", 1) or not isinstance(mid, str) or not 0 < len(mid) <= 256 \
                or not isinstance(parts, list) or len(parts) != 1 or not isinstance(metadata, dict):
            return _error(rid, -32602, "a user's message: its id, one part, its metadata")
        if message.keys() - {"messageId", "role", "parts", "metadata"} or metadata.get("skillId") != "process_refund" \
                or "handoff" in metadata:
            return _error(rid, -32602, "process_refund, with no context, task, extensions or handoff (not here)")
        part = parts[0]
        if not isinstance(part, dict) or part.keys() & PART_FIELDS != {"data"} or part.keys() - {"data", "metadata"} \
                or not isinstance(part.get("metadata", {}), dict):
            return _error(rid, -32602, "one data part")
        refund = part["data"]
        if not isinstance(refund, dict) or refund.keys() != {"order_id", "amount"}:
            return _error(rid, -32602, "input must have order_id and amount, and nothing else")
        order, amount = refund["order_id"], refund["amount"]
        if not isinstance(order, str) or not ORDER_ID.fullmatch(order):
            return _error(rid, -32602, "input.order_id does not match the pattern")
        if type(amount) not in (int, float) or not 0 < amount <= 1_000_000:
            return _error(rid, -32602, "input.amount must be a number, more than 0, at most 1,000,000")
        quotient = amount / 0.01
        if abs(quotient - round(quotient)) > 8 * math.ulp(quotient):
            return _error(rid, -32602, "input.amount must be a multiple of 0.01")
        if amount > APPROVAL_LIMIT:
            return _error(rid, -32602, "an amount a person approves (not here)")
        content = SORTED_JSON([metadata, [{"data": refund, "filename": None, "media_type": None, "raw": None,
                                           "text": None, "url": None, **({"metadata": part["metadata"]}
                                                                         if "metadata" in part else {})}], None])
        if len(content) > 64 * 1024:
            return _error(rid, -32602, "the message is larger than a task keeps")
        said, claim = digest(content), SORTED_JSON(refund)
        seen = self.by_message.get(mid)
        if seen is not None:  # a resend: its task as it is now; the same id saying something else: refused
            if seen[1] != said:
                return _error(rid, -32602, f"messageId {mid[:80]!r} was already used for a different message")
            return _answer(rid, self.tasks[seen[0]])
        if order in self.ledger:  # done: its task, to the same request while kept; else refused
            earlier, asked, _ = self.ledger[order]
            if asked == claim and earlier in self.tasks:
                return _answer(rid, self.tasks[earlier])
            return _error(rid, -32602, f"already done by task {earlier}; nothing was done again")
        if len(self.ledger) >= self.max_effects:
            return _error(rid, -32602, "the ledger's share is full; nothing was done")
        task_id = self.new_id()
        context = f"context-{task_id}"
        turn = {"messageId": mid, "contextId": context, "taskId": task_id, "role": "ROLE_USER",
                "parts": [part], "metadata": metadata}
        if len(self.tasks) >= self.max_tasks:  # the oldest forgotten, and its messageId with it
            old, _ = self.tasks.popitem(last=False)
            del self.by_message[self.messages.pop(old)]
        self.tasks[task_id] = {"id": task_id, "contextId": context,
                               "status": {"state": "TASK_STATE_SUBMITTED", "timestamp": utc_now()}, "history": [turn]}
        self.by_message[mid], self.messages[task_id] = (task_id, said), mid
        self.ledger[order] = (task_id, claim, "being done now")
        self.tasks[task_id] = {**self.tasks[task_id], "status": {"state": "TASK_STATE_WORKING", "timestamp": utc_now()}}
        done = f"refund of ${float(amount):,.2f} issued for {order} (ref BILL-{order})"
        self.ledger[order] = (task_id, claim, done)
        words = [{"text": done}]
        task = self.tasks[task_id] = {"id": task_id, "contextId": context, "status": {
            "state": "TASK_STATE_COMPLETED", "message": {"messageId": f"{task_id}-status-3", "contextId": context,
                                                         "taskId": task_id, "role": "ROLE_AGENT", "parts": words},
            "timestamp": utc_now()}, "artifacts": [{"artifactId": f"{task_id}-result", "parts": words}],
            "history": [turn]}
        return _answer(rid, task)


def _answer(rid: object, task: dict) -> HttpResponse:
    return HttpResponse(200, JSON, dumps({"jsonrpc": "2.0", "id": rid, "result": {"task": task}}))


def _error(rid: object, code: int, why: str) -> HttpResponse:
    return HttpResponse(200, JSON, dumps({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": why}}))


if __name__ == "__main__":
    from transports.server import PeerServer
    server = PeerServer(Yardstick(sys.argv[1], max_effects=int(sys.argv[2]) if len(sys.argv) > 2 else 10_000))
    print(f"[serve] the one-function yardstick listening on {server.base_url}", flush=True)
    server.serve_forever()
