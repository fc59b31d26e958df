"""Two saved runs (--trace files) compared frame by frame: which frames one has and the other
lacks, and, of the frames both have, which fields changed (an allowlist edit before and after,
two SDKs answering the same message).

Issue 35, item 5. Each trace is read by trace.load, as --replay reads it (the page's text is
written to a private temporary file for that, then removed). Frames are matched by what they
are (direction, A2A method, HTTP method, peer), in order, as many as can be (`matched`):
a frame only in the second run is "added", only in the first "removed"; a matched pair is
"changed" when a field differs (its status, URL, a header, or a body's JSON member, named by
its path), else "same". Times (t_ms, elapsed_ms) and the Date header always differ, so they
are not compared. Values are cut to SHOWN characters: a trace is hostile and may be huge.
Not here: drawing the differences (the page's tools.js, as text); the door.
"""
from __future__ import annotations

import json
import os
import tempfile

from peers.support.learner import trace
from transports.codec import loads_strict

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

SHOWN = 300  # characters of one value shown in a difference
MOST_FIELDS = 200  # differences listed for one pair of frames; more are counted, not listed
IGNORED = {"date"}  # headers that differ from one run to the next whatever happened


def records_of(text: str, called: str) -> list[dict[str, Any]]:
    """A trace's records, read as --replay reads a file; ValueError naming `called` and the line."""
    handle, path = tempfile.mkstemp(prefix="a2a-web-trace-", suffix=".jsonl")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        return trace.load(path)
    except ValueError as exc:
        raise ValueError(str(exc).replace(path, called)) from None
    finally:
        os.unlink(path)


def frames(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [record for record in records if record.get("kind") == "frame"]


def label(frame: dict[str, Any]) -> str:
    """A frame in one line: direction, method, peer, and status for an answer."""
    status = f" HTTP {frame.get('http_status')}" if frame.get("direction") == "<--" else ""
    return _cut(f"{frame.get('direction')} {frame.get('method') or frame.get('http_method')} "
                f"{frame.get('peer')}{status}")


def diff(first: list[dict[str, Any]], second: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each frame of either run once, in order: {"change", "a", "b" (its index in each run's
    frames, or None), "label", "fields": [{"field", "a", "b"}], "more": fields not listed}."""
    ones, twos = frames(first), frames(second)
    rows: list[dict[str, Any]] = []
    removed: list[int] = []
    added: list[int] = []
    for one, two in [*matched([_key(frame) for frame in ones], [_key(frame) for frame in twos]), (None, None)]:
        if one is None and two is not None:
            added.append(two)
        elif two is None and one is not None:
            removed.append(one)
        else:  # a pair both have (or the end): the frames only one had before it, the first run's first
            rows += [_only("removed", ones[index], index, None) for index in removed]
            rows += [_only("added", twos[index], None, index) for index in added]
            removed, added = [], []
            if one is not None and two is not None:
                rows.append(_pair(ones[one], twos[two], one, two))
    return rows


def matched(ones: list[str], twos: list[str]) -> list[tuple[int | None, int | None]]:
    """The longest common subsequence of `ones` and `twos`, in order: (first, second) for
    ones[first] matched with twos[second], (first, None) for one alone, (None, second) for
    one of twos alone. Bit-parallel (Hyyro 2004): each of ones is a few operations on one
    integer of len(twos) bits, so two traces of thousands of frames take milliseconds whatever
    they hold. (difflib's SequenceMatcher, without its junk heuristic, took cubic time on one
    frame repeated against two alternating: 35 s for 1,000 frames, hours for the 12,000 a
    request may carry.)"""
    where: dict[str, int] = {}
    for second, key in enumerate(twos):
        where[key] = where.get(key, 0) | 1 << second
    every = (1 << len(twos)) - 1
    rows = [every]  # rows[first]: its zero bits below `second` count the common part of ones[:first], twos[:second]
    for key in ones:
        row, found = rows[-1], rows[-1] & where.get(key, 0)
        rows.append(((row + found) | (row - found)) & every)

    def common(first: int, second: int) -> int:
        return second - (rows[first] & ((1 << second) - 1)).bit_count()
    first, second, backwards = len(ones), len(twos), []
    while first or second:
        if first and second and ones[first - 1] == twos[second - 1]:
            first, second = first - 1, second - 1
            backwards.append((first, second))
        elif first and (not second or common(first - 1, second) >= common(first, second - 1)):
            first -= 1
            backwards.append((first, None))
        else:
            second -= 1
            backwards.append((None, second))
    return backwards[::-1]


def _key(frame: dict[str, Any]) -> str:
    return json.dumps([str(frame.get(name)) for name in ("direction", "method", "http_method", "peer")])


def _only(change: str, frame: dict[str, Any], first: int | None, second: int | None) -> dict[str, Any]:
    return {"change": change, "a": first, "b": second, "label": label(frame), "fields": [], "more": 0}


def _pair(one: dict[str, Any], two: dict[str, Any], first: int, second: int) -> dict[str, Any]:
    fields = [(name, one.get(name), two.get(name)) for name in ("http_status", "url", "transport", "wire")]
    for name in sorted(set(_dict(one.get("headers"))) | set(_dict(two.get("headers")))):
        if name.lower() not in IGNORED:
            fields.append((f"header {name}", _dict(one.get("headers")).get(name), _dict(two.get("headers")).get(name)))
    ours, theirs = _flat(_parsed(one.get("body"))), _flat(_parsed(two.get("body")))
    fields += [(f"body{path}", ours.get(path), theirs.get(path)) for path in sorted(set(ours) | set(theirs))]
    changed = [{"field": _cut(name), "a": _shown(left), "b": _shown(right)}
               for name, left, right in fields if left != right]
    return {"change": "changed" if changed else "same", "a": first, "b": second, "label": label(one),
            "fields": changed[:MOST_FIELDS], "more": max(0, len(changed) - MOST_FIELDS)}


def _parsed(body: Any) -> Any:
    """A body's JSON, or the text itself when it is not JSON (a card's bytes cut, an HTML page)."""
    if not isinstance(body, str):
        return body
    try:
        return loads_strict(body.encode("utf-8", "surrogatepass"))
    except ValueError:
        return body


def _flat(value: Any, path: str = "", out: dict[str, Any] | None = None) -> dict[str, Any]:
    """{path: leaf} of a JSON value (".result.status.state", "[0]"); loads_strict bounded its depth."""
    out = {} if out is None else out
    if isinstance(value, dict) and value:
        for name, inner in value.items():
            _flat(inner, f"{path}.{name}", out)
    elif isinstance(value, list) and value:
        for index, inner in enumerate(value):
            _flat(inner, f"{path}[{index}]", out)
    else:
        out[path] = value
    return out


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _shown(value: Any) -> str | None:
    return None if value is None else _cut(json.dumps(value, ensure_ascii=False))  # "7" is not 7: as JSON


def _cut(text: str) -> str:
    return text if len(text) <= SHOWN else text[:SHOWN] + f"... ({len(text):,} characters)"
