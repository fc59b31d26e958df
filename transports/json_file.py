"""A JSON file a person wrote: read strictly, and each mistake said as one line that
points at it, `allowlist.json:4:7: not valid JSON (Expecting ',' delimiter)`.

Every data file the workbench reads (the registry, the allowlist, the credentials, the
demo peers' card files) passes here, so each says its mistakes the same way: the file,
the line and column where that is known, and what to do. The bytes go through the
strict codec (codec.py): no duplicate keys, no NaN, bounded depth. Nothing here knows
what the document means; its caller checks its shape.
"""
from __future__ import annotations

import json
import os
import re

from transports.codec import DuplicateKey, loads_strict
from transports.named_files import read_named

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any


class JsonFileError(ValueError):
    """A JSON file that cannot be used: one line, naming the file and where it broke."""


def load_json_file(path: str, max_chars: int) -> Any:
    """The JSON document in `path`, or JsonFileError saying where and why it is not one."""
    try:
        data = read_named(path, 4 * max_chars)  # a data file, not /dev/zero: UTF-8 is at most 4 bytes a character
    except FileNotFoundError:
        raise JsonFileError(f"{path}: file not found") from None
    except IsADirectoryError:
        raise JsonFileError(f"{path}: is a folder; give the file's name") from None
    except OSError as exc:
        raise JsonFileError(f"{path}: cannot read it ({exc.strerror or exc.__class__.__name__})") from None
    if not data.strip():  # "1:1: not valid JSON (Expecting value)" says less
        import stat  # the error's path alone: what kind of file gave nothing
        piped = stat.S_ISFIFO(os.stat(path).st_mode)
        raise JsonFileError(f"{path}: is empty{' (a pipe nothing was written to)' if piped else ''}; "
                            "it should hold a JSON document")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, column = _line_and_column(data[:exc.start].decode("utf-8", "replace"))
        raise JsonFileError(f"{path}:{line}:{column}: not UTF-8 (byte 0x{data[exc.start]:02x}); "
                            "save the file as UTF-8") from None
    if len(text) > max_chars:
        raise JsonFileError(f"{path}: larger than {max_chars:,} characters; is it the right file?")
    if text.startswith("\ufeff"):
        raise JsonFileError(f"{path}: starts with a byte order mark; save it as UTF-8 without one")
    try:
        return loads_strict(text)
    except json.JSONDecodeError as exc:
        raise JsonFileError(f"{path}:{_where_json_broke(exc)}") from None
    except ValueError as exc:  # a duplicate key, or nesting deeper than any data file needs
        where = _second_of_a_key(text) if isinstance(exc, DuplicateKey) else None
        raise JsonFileError(f"{path}:{'%d:%d:' % where if where else ''} not usable JSON ({exc})") from None


# A string (a key when a colon follows it), or a bracket: enough to tell which object a key is in.
# Compiled when a file has a duplicate key, not at start-up (a compile is most of a start-up's margin).
_TOKENS = r'"(?:[^"\\]|\\.)*"(\s*:)?|[\[\]{}]'


def _second_of_a_key(text: str) -> tuple[int, int] | None:
    """Where the duplicate key the strict codec named is (it said only which key): found again
    in one pass, in the decoder's order: an object is judged as it closes, so of two objects
    with a repeated key, the one that closes first (an inner one) is the one named."""
    keys: list[tuple[set[str], list[int]] | None] = []  # per open bracket: an object's keys, where one came again
    for token in re.finditer(_TOKENS, text):
        found = token.group()
        if found in "[{":
            keys.append((set(), []) if found == "{" else None)
        elif found in "]}":
            closed = keys.pop() if keys else None
            if closed is not None and closed[1]:
                return _line_and_column(text[:closed[1][0]])
        elif token.group(1) and keys and keys[-1] is not None:
            seen, again = keys[-1]
            key = json.loads(found[:found.rindex('"') + 1])
            if key in seen and not again:
                again.append(token.start())
            seen.add(key)
    return None


def _line_and_column(before: str) -> tuple[int, int]:
    return before.count("\n") + 1, len(before) - (before.rfind("\n") + 1) + 1


def _where_json_broke(exc: json.JSONDecodeError) -> str:
    """line:column: why. A trailing comma is named, at the comma, in the same words on
    every Python: before 3.13 json reports `[1, 2,]` at the "]" ("Expecting value"),
    3.13 at the comma itself ("Illegal trailing comma ...")."""
    before = exc.doc[:exc.pos].rstrip()
    if exc.doc[exc.pos:exc.pos + 1] == "," and exc.doc[exc.pos + 1:].lstrip()[:1] in ("]", "}"):
        before = exc.doc[:exc.pos + 1]
    if before.endswith(",") and exc.doc[len(before):].lstrip()[:1] in ("]", "}"):
        line = before.count("\n") + 1
        column = len(before) - (before.rfind("\n") + 1)
        return f"{line}:{column}: not valid JSON (a trailing comma: JSON allows none)"
    return f"{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg})"
