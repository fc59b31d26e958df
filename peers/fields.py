"""Reading JSON a peer we do not own sent: each helper checks one thing and, when it is
wrong, raises ValueError naming the field (`skills[0].id must be a string`). Shared by
the three wire formats; fields nobody asked for are ignored, as the A2A spec says."""
from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

MISSING = object()
_NAMES = {str: "a string", list: "an array", dict: "an object", bool: "true or false"}


def obj(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"{path} must be an object")
    return value


def field(source: dict[str, Any], key: str, kind: type, prefix: str = "",
          default: Any = MISSING) -> Any:
    if key not in source and default is not MISSING:
        return default
    value = source.get(key)
    if (isinstance(value, bool) and kind is not bool) or not isinstance(value, kind):
        raise ValueError(f"{prefix}{key} must be {_NAMES[kind]}")
    return value


def strings(values: list[Any], path: str) -> list[str]:
    if not all(isinstance(v, str) for v in values):
        raise ValueError(f"{path} must hold strings")
    return values


def url(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"url {value!r} must be an http(s) URL")
    return value
