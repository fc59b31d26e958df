"""Seeded hostile JSON-RPC frames for the peers: every method of every wire format, its
params mutated one value at a time (wrong types, unhashable values, huge numbers and
strings, control characters, deep nesting), plus byte-level damage to the whole frame.
Used by tests/test_fuzz.py (a few thousand cases) and bench/fuzz.py (as many as asked)."""
import json
import random

HOSTILE = [None, True, 0, -1, 2.5, 10**39, "", "²", "\x1b[2K", "x" * 5000, [], {}, [[]], {"a": []},
           [1, "two"], "TASK_STATE_WORKING", "ROLE_USER", "user", "9" * 30]
MESSAGE_V10 = {"messageId": "m-1", "role": "ROLE_USER", "metadata": {"skillId": "process_refund"},
               "parts": [{"data": {"order_id": "ORD-1", "amount": 1.0}, "mediaType": "application/json"}]}
MESSAGE_V03 = {"kind": "message", "messageId": "m-1", "role": "user", "metadata": {"skillId": "process_refund"},
               "parts": [{"kind": "data", "data": {"order_id": "ORD-1", "amount": 1.0}}]}
VALID = [  # (method, params, needs A2A-Version: 1.0)
    ("tasks/send", {"skill": "process_refund", "input": {"order_id": "ORD-1", "amount": 1.0}}, False),
    ("message/send", {"message": MESSAGE_V03, "configuration": {"blocking": True}}, False),
    ("tasks/get", {"id": "task-1", "historyLength": 1}, False),
    ("tasks/cancel", {"id": "task-1"}, False),
    ("message/stream", {"message": MESSAGE_V03}, False),
    ("tasks/pushNotificationConfig/set", {"taskId": "task-1", "pushNotificationConfig": {"url": "https://x/"}}, False),
    ("SendMessage", {"message": MESSAGE_V10}, True),
    ("GetTask", {"id": "task-1", "historyLength": 2}, True),
    ("CancelTask", {"id": "task-1"}, True),
    ("ListTasks", {"status": "TASK_STATE_COMPLETED", "pageSize": 10, "pageToken": "", "contextId": "c"}, True),
    ("SubscribeToTask", {"id": "task-1"}, True),
    ("GetExtendedAgentCard", {}, True),
]


DELETE = object()  # as a replacement: remove the value instead


def paths(value, prefix=()):
    """Every place in a JSON document that holds a value, as a tuple of keys/indexes."""
    yield prefix
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        yield from paths(item, prefix + (key,))


def mutated(document, path, replacement):
    copy = json.loads(json.dumps(document))
    if not path:
        return replacement
    *parents, last = path
    holder = copy
    for key in parents:
        holder = holder[key]
    if replacement is DELETE:
        del holder[last]
    else:
        holder[last] = replacement
    return copy


def cases(seed: int, count: int):
    """`count` (frame bytes, headers) pairs, the same ones for the same seed."""
    rng = random.Random(seed)
    for _ in range(count):
        method, params, v1 = rng.choice(VALID)
        frame = {"jsonrpc": "2.0", "id": rng.choice([1, "a", None, 2.5, True, [1]]), "method": method,
                 "params": params}
        target = rng.choice(list(paths(frame)))
        frame = mutated(frame, target, rng.choice(HOSTILE))
        body = json.dumps(frame).encode()
        damage = rng.random()
        if damage < 0.1:  # cut short
            body = body[:rng.randrange(len(body))]
        elif damage < 0.2:  # a byte replaced by another
            spot = rng.randrange(len(body))
            body = body[:spot] + bytes([rng.randrange(256)]) + body[spot + 1:]
        elif damage < 0.25:  # deep nesting where a value was
            body = body.replace(b'"ORD-1"', b"[" * 200 + b"]" * 200, 1)
        headers = {"Content-Type": "application/json", "Authorization": "Bearer t0k"}
        if v1 or rng.random() < 0.1:
            headers["A2A-Version"] = rng.choice(["1.0", "1.0", "0.3", "", "²"])
        yield body, headers
