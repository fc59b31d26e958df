"""A task, or a ledger's effect, as JSON text and back: what the store file keeps (durable.py).

The peer's records (transports/records.py) hold tuples, enums, bytes and plain JSON values.
JSON has none of the first three, so each is written as an object naming what it was:
{"$": "Task", ...fields}, {"$state": "completed"}, {"$bytes": base64}, {"$tuple": [...]};
a list (JSON a peer was sent, kept as it came) stays a list, and a dict it was sent whose
keys start with "$" is wrapped as {"$dict": ...}, so no client's data passes for a
marker. Only the record types in RECORDS are read back: a row builds nothing else.
A task's messages (durable_schema.py) are plain JSON, [[messageId, digest], ...]; read
back, anything else is refused, as a row is.
"""
from __future__ import annotations

import base64
import json
from types import UnionType
from typing import Any, get_args, get_origin, get_type_hints

from peers.a2a.model import Artifact, Message, Part, Task, TaskState
from peers.ledger import Effect
from transports.codec import encoder

RECORDS = {cls.__name__: cls for cls in (Task, Message, Part, Artifact, Effect)}
# Each record's fields' types, as its class declares them: its annotations are text (they never load
# typing in a run), read here once, where `ill_typed` needs them; `Any` is for type checkers there.
_DECLARED = {cls: get_type_hints(cls, localns={"Any": Any}) for cls in RECORDS.values()}


# Built once (codec.encoder). No check for cycles: `_plain` has
# walked the whole record first, and a cycle would have stopped it (RecursionError). Keys in
# the order they come (a record's fields as declared): sorting them doubled the encoding.
_ENCODE = encoder(separators=(",", ":"))


def to_json(record: Any) -> str:
    return _ENCODE(_plain(record))


def from_json(text: str, kind: type = object) -> Any:
    """The record `text` holds; ValueError if it is not a `kind` (a row this peer did not write),
    or holds a NaN or an infinity, which no JSON a client may send holds, and no answer can carry."""
    value = _record(json.loads(text, parse_constant=_not_a_number, parse_float=_finite))
    if not isinstance(value, kind):
        raise ValueError(f"a row that is not a {kind.__name__}")
    return value


def message_keys(text: Any) -> list[tuple[str, str]]:
    """A task row's messages: (messageId, digest) pairs; ValueError if they are not what this peer writes."""
    pairs = json.loads(text) if type(text) is str else None
    if type(pairs) is not list or not all(type(pair) is list and len(pair) == 2 and type(pair[0]) is str
                                          and type(pair[1]) is str and _HEX.issuperset(pair[1]) and len(pair[1]) == 64
                                          for pair in pairs):
        raise ValueError("a task's messages that are not [[messageId, SHA-256 digest], ...]")
    return [(message_id, seen) for message_id, seen in pairs]


def _not_a_number(text: str) -> float:
    raise ValueError(f"a number this peer never writes ({text})")


def _finite(text: str) -> float:
    number = float(text)
    if number in (_INFINITY, -_INFINITY):  # 1e999: a float too large for a double
        raise ValueError(f"a number this peer never writes ({text[:24]})")
    return number


_INFINITY = float("inf")
_HEX = frozenset("0123456789abcdef")  # a digest as store.py's `digest` spells it
PLAIN = frozenset((str, int, float, bool, type(None)))  # exactly these types (a TaskState is a str too)
_NAMES = {cls: name for name, cls in RECORDS.items()}
# A record's fields left out of its row while they hold their default, None or (): most of a
# task's are, and a row read back gets the default again (older rows, which wrote them all, too).
_UNWRITTEN = {cls: {field: type(default) for field, default in cls._field_defaults.items() if default in (None, ())}
              for cls in RECORDS.values()}


def _plain(value: Any) -> Any:
    kind = type(value)
    if kind in PLAIN:  # most of a task's values: first, so each costs one look-up
        return value
    write = _WRITERS.get(kind)  # a record, a tuple, a state ...: one look-up, not a chain of isinstance
    return write(value) if write is not None else _plain_subclass(value)


def _record_writer(cls: type, name: str) -> Any:
    """A record of `cls` as {"$": name, its fields by name, in the order the class declares them}."""
    plan = [(field, _UNWRITTEN[cls].get(field)) for field in cls._fields]  # (field, the type it is left out as)

    def write(value: Any) -> dict[str, Any]:
        plain = {"$": name}
        for (field, unwritten), item in zip(plan, value):
            kind = type(item)
            if kind is unwritten and (item is None or item == ()):
                continue
            plain[field] = item if kind in PLAIN else _plain(item)
        return plain
    return write


def _tuple(value: tuple) -> dict[str, Any]:
    return {"$tuple": [item if type(item) in PLAIN else _plain(item) for item in value]}


def _dict(value: dict) -> dict[str, Any]:  # a dict a peer was sent: escaped if it could pass for a marker
    plain = {key: item if type(item) in PLAIN else _plain(item) for key, item in value.items()}
    return {"$dict": plain} if any(str(key).startswith("$") for key in plain) else plain


_STATES = {state: state.value for state in TaskState}
_WRITERS = {tuple: _tuple, dict: _dict, list: lambda value: [_plain(item) for item in value],
            bytes: lambda value: {"$bytes": base64.b64encode(value).decode("ascii")},
            TaskState: lambda value: {"$state": _STATES[value]},
            **{cls: _record_writer(cls, name) for cls, name in _NAMES.items()}}


def _plain_subclass(value: Any) -> Any:
    """A value of a type not in _WRITERS: a subclass of one (never made by the peer; kept as before), else itself."""
    if isinstance(value, TaskState):
        return {"$state": value.value}
    if isinstance(value, bytes):
        return {"$bytes": base64.b64encode(value).decode("ascii")}
    if isinstance(value, tuple) and type(value).__name__ in RECORDS:  # a subclass of a record's
        return {"$": type(value).__name__, **{field: _plain(item) for field, item in zip(value._fields, value)}}
    if isinstance(value, tuple):
        return _tuple(value)
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return _dict(value)
    return value


def _record(value: Any) -> Any:
    if isinstance(value, list):
        return [_record(item) for item in value]
    if not isinstance(value, dict):
        return value
    if "$dict" in value:  # a dict as it was sent, its keys not markers
        return {key: _record(item) for key, item in value["$dict"].items()}
    if "$tuple" in value:
        return tuple(_record(item) for item in value["$tuple"])
    if "$state" in value:
        return TaskState(value["$state"])
    if "$bytes" in value:
        return base64.b64decode(value["$bytes"], validate=True)
    if "$" in value:
        fields = {key: _record(item) for key, item in value.items() if key != "$"}
        return RECORDS[value["$"]](**fields)
    return {key: _record(item) for key, item in value.items()}


def ill_typed(record: Any) -> str | None:
    """The first field of `record`, or of a record within it, whose value is not of the type its
    class declares, or is a value this peer never makes (a state ours never are, a message of neither
    side: no wire spells them), named ("Task.artifacts"); None if there is none. A row this peer wrote
    has none (the codec itself reads back whatever it wrote): one that has would fail mid-request."""
    for field, item in zip(record._fields, record):
        annotation = _DECLARED[type(record)][field]
        if not _fits(item, annotation) or not _made(type(record), field, item):
            return f"{type(record).__name__}.{field}"
        for each in item if type(item) is tuple else (item,):  # the records within: a history's messages ...
            wrong = ill_typed(each) if type(each) in _NAMES else None
            if wrong is not None:
                return wrong
    return None


def _fits(value: Any, annotation: Any) -> bool:
    """Whether `value` is what a record's field declares (str, str | None, tuple[Part, ...],
    dict[str, Any] | None, Any): a row this peer wrote holds nothing else."""
    origin, inner = get_origin(annotation), get_args(annotation)
    if origin is UnionType:
        return any(_fits(value, one) for one in inner)
    if origin is tuple:  # tuple[X, ...]
        return type(value) is tuple and all(_fits(item, inner[0]) for item in value)
    if annotation is Any or origin is dict:  # JSON (a part's data, metadata): what the wire carries, no marker
        return (annotation is Any or type(value) is dict) and _carried(value)
    return type(value) is (origin or annotation)  # NoneType: None


def _carried(value: Any) -> bool:
    """Whether `value` is JSON as the peer keeps it (a tuple for an array): a state, bytes or a record read
    back inside it (a marker there, which no client's "$" key spells: `_dict`) no answer can carry."""
    kind = type(value)
    if kind is dict:
        return all(_carried(item) for item in value.values())
    return all(_carried(item) for item in value) if kind in (list, tuple) else kind in PLAIN


def _made(kind: type, field: str, value: Any) -> bool:
    """Whether a field of the right type holds a value this peer makes: its tasks are never in the
    state 0.3 calls unknown (1.0 has no name for it), and a message is the user's or the agent's."""
    if kind is Task and field == "lifecycle":
        return TaskState.UNKNOWN not in value
    return value in ("user", "agent") if kind is Message and field == "role" else True
