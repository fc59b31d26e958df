"""A task's row (durable_codec.py) reads back as the very record written: seeded random
Tasks, Messages, Parts, Artifacts and Effects, their fields holding what a row leaves out
(None, ()) where the default is something else, and what a client may send (dicts whose
keys pass for the row's markers, lists, bytes, states, nested parts), compared by type as
well as value: a tuple read back as a list, or () as None, is a different record."""
import random

from peers.a2a.model import Artifact, Message, Part, Task, TaskState
from peers.durable_codec import from_json, to_json
from peers.ledger import Effect

KEYS = ("$", "$dict", "$tuple", "$state", "$bytes", "$$", "a", "", "id", "lifecycle")


def value(rnd, depth=0):
    pick = rnd.randrange(12 if depth < 3 else 6)
    if pick < 6:
        return [None, rnd.choice([True, False, 0, -5, 2 ** 70, 1.5]), rnd.choice(["", "$", "$tuple", "\u2028"]),
                b"\x00\xff" * rnd.randrange(3), rnd.choice(list(TaskState)), ()][pick]
    if pick < 8:
        return {rnd.choice(KEYS): value(rnd, depth + 1) for _ in range(rnd.randrange(4))}
    if pick == 8:
        return [value(rnd, depth + 1) for _ in range(rnd.randrange(4))]
    if pick == 9:
        return tuple(value(rnd, depth + 1) for _ in range(rnd.randrange(4)))
    return part(rnd, depth + 1) if pick == 10 else {}


def maybe(rnd, make):
    return make() if rnd.random() < 0.5 else rnd.choice([None, ()])


def part(rnd, depth=0):
    return Part(*(maybe(rnd, lambda: value(rnd, depth)) for _ in Part._fields))


def record(rnd):
    parts = tuple(part(rnd) for _ in range(rnd.randrange(3)))
    uris = tuple(rnd.choice(["urn:x", "$"]) for _ in range(rnd.randrange(3)))
    message = Message(maybe(rnd, lambda: "m-1"), "user", parts, maybe(rnd, lambda: "c"), maybe(rnd, lambda: "t"),
                      maybe(rnd, lambda: value(rnd)), maybe(rnd, lambda: uris), maybe(rnd, lambda: uris))
    artifact = Artifact("a-1", parts, maybe(rnd, lambda: "n"), maybe(rnd, lambda: "d"),
                        maybe(rnd, lambda: value(rnd)), maybe(rnd, lambda: uris))
    lifecycle = tuple(rnd.choice(list(TaskState)) for _ in range(rnd.randrange(4))) if rnd.random() < 0.9 else None
    task = Task("task-1", lifecycle, maybe(rnd, lambda: (artifact,)), maybe(rnd, lambda: value(rnd)),
                maybe(rnd, lambda: "c"), maybe(rnd, lambda: (message,)), maybe(rnd, lambda: "ts"),
                maybe(rnd, lambda: value(rnd)), maybe(rnd, lambda: value(rnd)))
    effect = Effect(*(maybe(rnd, lambda: value(rnd)) for _ in Effect._fields))
    return rnd.choice([task, message, artifact, parts[0] if parts else part(rnd), effect])


def shape(item):
    if isinstance(item, (tuple, list)):
        return type(item).__name__, [shape(each) for each in item]
    if isinstance(item, dict):
        return "dict", {key: shape(each) for key, each in item.items()}
    return type(item).__name__, repr(item)


def test_every_record_reads_back_as_written_types_and_all():
    for seed in range(1500):
        written = record(random.Random(seed))
        assert shape(from_json(to_json(written))) == shape(written), seed
