"""Reading a data file a learner edits by hand: every mistake one line, naming the file.

A file is JSON, read with limits (transports/json_file.py), its shape a JSON Schema
checked by the one checker (peers/a2a/schema.py); keys starting with "_" are notes for
people and are skipped. The registry, the allowlist (config.py) and the credential
store (held.py) are read through here. Not here: what any of them means.
"""

from __future__ import annotations

from peers.a2a.schema import check
from transports.base import is_http_url
from transports.json_file import JsonFileError, load_json_file

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

MAX_FILE_CHARS = 1 << 20  # a registry of thousands of peers is still far smaller


class ConfigError(Exception):
    """A data file is missing or wrong. The message is one line, fit to show the user."""


def load(path: str, schema: dict[str, Any]) -> dict[str, Any]:
    try:
        doc = load_json_file(path, MAX_FILE_CHARS)
    except JsonFileError as exc:
        raise ConfigError(str(exc)) from None
    problem = check(without_notes(doc), schema, "")
    if problem:
        raise ConfigError(f"{path}: {problem}")
    return doc


def without_notes(value: Any) -> Any:
    """The document without its "_" keys, which are notes for people."""
    if isinstance(value, dict):
        return {k: without_notes(v) for k, v in value.items() if not k.startswith("_")}
    if isinstance(value, list):
        return [without_notes(v) for v in value]
    return value


def url_in(value: str, where: str, path: str) -> str:
    if not is_http_url(value):
        raise ConfigError(f"{path}: {where} must be an http(s) URL, not {value[:80]!r}")
    return value
