"""Reading JSON that a party we do not own sent: each helper checks one thing and, when it
is wrong, raises `WireError` naming the field (`skills[0].id must be a string`).

Shared by the wire formats and so by both sides: a peer turns a WireError into -32602
for its caller; the support agent turns it into a ProtocolViolation about its peer.
Nothing here trusts a type: a value may be a list where a string belongs, an object
where a number belongs, or anything unhashable, so each value is checked with
isinstance before it is used as a key or compared. Fields nobody asked for are
ignored, as the A2A spec says (section 5.7).
"""
from __future__ import annotations

import re
import time

from transports.base import is_http_url
from transports.codec import LIMITS

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

MISSING = object()
# What a served peer reads a request under: the codec's limits, and no unpaired surrogate. A proto3
# string is UTF-8 (spec 5.5): one kept with a task would be answered to every client that reads it,
# and the official SDK's parser refuses the whole answer (ListTasks, for every task of that caller).
REQUEST_LIMITS = LIMITS._replace(unpaired_surrogates=False)
_NAMES = {str: "a string", list: "an array", dict: "an object", bool: "true or false",
          int: "an integer"}


class WireError(ValueError):
    """What was received does not have the shape the protocol gives it; `field`, where one field is
    wrong, its path as the request spells it (`params.message.parts[0].text`), else ""."""

    def __init__(self, message: str, field: str = "") -> None:
        super().__init__(message)
        self.field = field


def obj(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise WireError(f"{path} must be an object", path)
    return value


def json_names(value: Any) -> Any:
    """A request object with proto field names (`history_length`) read as their JSON names
    (`historyLength`): proto3 JSON parsers accept both, and A2A 1.0 is defined in proto.
    Where both are given, the JSON name wins. Anything but an object is left as it is."""
    if not isinstance(value, dict):
        return value
    try:  # asked of every request's params, ten times: one join, not a loop in Python
        if "_" not in "".join(value):
            return value
    except TypeError:  # a key that is not a string (never from JSON): read the slow way below
        pass
    renamed = {}
    for key, item in value.items():
        if isinstance(key, str) and "_" in key:
            head, *rest = key.split("_")
            renamed.setdefault(head + "".join(word[:1].upper() + word[1:] for word in rest), item)
    return {**renamed, **{key: item for key, item in value.items() if not (isinstance(key, str) and "_" in key)}}


def proto_json(value: Any) -> Any:
    """A 1.0 request object as ProtoJSON reads it: proto names as JSON names (`json_names`), and a
    field given as null as absent (null is every field's default). Not 0.3's: its schema has no null."""
    value = json_names(value)
    if isinstance(value, dict) and None in value.values():
        value = {key: item for key, item in value.items() if item is not None}
    return value


def field(source: dict[str, Any], key: str, kind: type, prefix: str = "",
          default: Any = MISSING) -> Any:
    """source[key], which must be of `kind` (bool is never an int), or `default` if absent (a 1.0
    request's null is absent too: `proto_json`)."""
    if key not in source and default is not MISSING:
        return default
    value = source.get(key)
    if (isinstance(value, bool) and kind is not bool) or not isinstance(value, kind):
        raise WireError(f"{prefix}{key} must be {_NAMES[kind]}", prefix + key)
    return value


def optional(source: dict[str, Any], key: str, kind: type, prefix: str = "") -> Any:
    """source[key] if it is given (absent or null: None), which must then be of `kind`."""
    return None if source.get(key) is None else field(source, key, kind, prefix)


def request_metadata(params: Any) -> dict[str, Any] | None:
    """A request's own metadata, which no peer of ours reads: a Struct (1.0's SendMessage and CancelTask,
    0.3's every params but a push config's set), so an object if given, as every method checks it here."""
    return optional(obj(params, "params"), "metadata", dict, "params.")


def int32(value: Any) -> int | None:
    """An int32 as ProtoJSON reads one: a number with no fraction, or its decimal digits in a
    string ("5", as a proto3 JSON writer may send it), within -2**31 .. 2**31-1; None otherwise."""
    if type(value) is str and value[:1] in _DIGITS_START and re.fullmatch(_INT32_TEXT, value):  # a name: at once
        value = int(value)
    elif type(value) is float and value.is_integer() and abs(value) < 2 ** 31:
        value = int(value)
    return value if type(value) is int and -2 ** 31 <= value < 2 ** 31 else None


_INT32_TEXT, _DIGITS_START = r"-?[0-9]{1,10}", "-0123456789"  # compiled by re at a first enum sent in digits


def count(source: dict[str, Any], key: str, least: int, most: int, prefix: str = "") -> int | None:
    """source[key], a whole number from `least` to `most` (int32), or None if absent or null."""
    given = source.get(key)
    value = None if given is None else int32(given)
    if given is not None and (value is None or not least <= value <= most):
        raise WireError(f"{prefix}{key} must be a whole number from {least} to {most:,}", prefix + key)
    return value


def page_size(source: dict[str, Any], default: int | None) -> int | None:
    """A list request's pageSize, 1 to 100; absent or null (proto JSON's default): `default`."""
    size = count(source, "pageSize", 1, 100)
    return default if size is None else size


def optional_strings(source: dict[str, Any], key: str, prefix: str = "") -> tuple[str, ...]:
    """An optional array of strings (extension URIs, task ids), as a tuple; absent: ()."""
    if source.get(key) is None:  # nearly always, on every message read
        return ()
    return tuple(strings(optional(source, key, list, prefix) or [], prefix + key))


def optional_str(source: dict[str, Any], key: str) -> str | None:
    """A string if the field holds one; anything else is treated as absent."""
    value = source.get(key)
    return value if isinstance(value, str) else None


def strings(values: list[Any], path: str) -> list[str]:
    if not all(isinstance(v, str) for v in values):
        raise WireError(f"{path} must hold strings", path)
    return values


def one_of(value: Any, spellings: dict[Any, Any], path: str) -> Any:
    """The meaning of an enum's spelling (a state, a role): a string, or where the dialect spells its
    enums by number too (1.0: ProtoJSON), a number, or one in digits ("3"); never a bool or a float."""
    key = enum_key(value)
    if type(value) not in (str, int) or key not in spellings:
        shown = repr(value) if isinstance(value, (str, int, float, type(None))) else \
            f"({_NAMES.get(type(value), type(value).__name__)})"  # (an array), (an object): JSON's words
        raise WireError(f"{path} {shown[:60]} is not one of {sorted(k for k in spellings if type(k) is str)}", path)
    return spellings[key]


def enum_key(value: Any) -> Any:
    """An enum's number written in digits ("3") as the number, as ProtoJSON's parsers read it (int32's rule)."""
    number = int32(value) if type(value) is str else None
    return value if number is None else number


def url(value: Any, path: str = "url") -> str:
    if not is_http_url(value):  # any value: a field no schema checked may be a number, an array, or absent
        shown = repr(value[:80]) if isinstance(value, str) else f"({_NAMES.get(type(value), 'no string')})"
        raise WireError(f"{path} {shown} must be an http(s) URL")
    return value


# An offset's pattern, compiled (re's cache) only when one is first read: the essay's run reads none.
_OFFSET = r"([+-])([01][0-9]|2[0-3]):([0-5][0-9])\Z"  # ASCII digits: "٠٢" is no hour


def instant(timestamp: str | None) -> str | None:
    """An RFC 3339 timestamp ("2026-11-30T12:00:00.5Z", or with an offset, "...+02:00", as proto
    JSON's Timestamp takes it) as the UTC moment it names, in a form that sorts as text in time
    order (the fraction padded to nine digits); None if it is not one."""
    if not isinstance(timestamp, str) or len(timestamp) > 40:
        return None
    offset, zone = 0, None if timestamp.endswith("Z") else re.search(_OFFSET, timestamp)  # "+02:00": two hours east
    if zone is not None:
        sign, hours, minutes = zone.groups()
        offset, timestamp = (-1 if sign == "-" else 1) * (int(hours) * 60 + int(minutes)), timestamp[:zone.start()] + "Z"
    if not timestamp.endswith("Z"):
        return None
    whole, dot, fraction = timestamp[:-1].partition(".")
    digits = whole.replace("-", "").replace("T", "").replace(":", "")
    shape = len(whole) == 19 and whole[4] + whole[7] + whole[10] + whole[13] + whole[16] == "--T::"
    if not (shape and digits.isascii() and digits.isdigit() and len(digits) == 14
            and len(fraction) <= 9 and (not dot or (fraction.isascii() and fraction.isdigit()))):
        return None
    try:  # the shape is right; the month, day and time must be real too (a leap second is 60: strptime takes 61)
        parsed = time.strptime(whole, "%Y-%m-%dT%H:%M:%S")
    except ValueError:
        return None
    if parsed.tm_sec > 60:
        return None
    if offset:  # the same moment in UTC (calendar loads datetime: only for a timestamp that needs it)
        import calendar
        parsed = time.gmtime(calendar.timegm(parsed) - offset * 60)  # its year written in four digits below:
        whole = "%04d-%02d-%02dT%02d:%02d:%02d" % parsed[:6]  # strftime's %Y writes year 999 as 999
    return f"{whole}.{fraction:0<9}" if 1 <= parsed.tm_year <= 9999 else None  # past year 9999, or before 1: none
