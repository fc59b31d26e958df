"""Reading the support agent's two data files, registry.json and allowlist.json, strictly.

Essay: "a tiny registry so the support agent can find where a peer lives" and "an
allowlist of agents we trust". Both are plain JSON a learner edits by hand, so every
mistake is reported as one line naming the file, and the line and column or the field:
`allowlist.json:4:7: not valid JSON (Expecting ',' delimiter)`,
`registry.json: peers[1].cardUrl must be an http(s) URL`. Keys starting with "_" are
notes for people and are skipped; any other unknown key is an error (a typo such as
"endpont" must not silently drop a trust rule).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import urlsplit


class ConfigError(Exception):
    """A data file is missing or wrong. The message is one line, fit to show the user."""


class RegistryEntry(NamedTuple):
    card_url: str  # where the peer's Agent Card is served: https://host/.well-known/agent-card.json


class AllowEntry(NamedTuple):
    name: str  # the name on the peer's card
    endpoint: str  # the URL frames to that peer go to, as vetted


def load_registry(path: str | Path) -> list[RegistryEntry]:
    doc = _load(path, required="peers")
    entries = _list(doc, "peers", path)
    return [RegistryEntry(_url(_entry(e, f"peers[{i}]", path, {"cardUrl"}), "cardUrl",
                               f"peers[{i}]", path))
            for i, e in enumerate(entries)]


def load_allowlist(path: str | Path) -> list[AllowEntry]:
    doc = _load(path, required="trusted")
    entries = _list(doc, "trusted", path)
    allowed = []
    for i, e in enumerate(entries):
        entry = _entry(e, f"trusted[{i}]", path, {"name", "endpoint"})
        name = entry["name"]
        if not isinstance(name, str) or not name:
            raise ConfigError(f"{path}: trusted[{i}].name must be a non-empty string")
        allowed.append(AllowEntry(name, _url(entry, "endpoint", f"trusted[{i}]", path)))
    return allowed


def _load(path: str | Path, *, required: str) -> dict[str, Any]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read it ({exc.__class__.__name__}: {exc})") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg})") from None
    if not isinstance(doc, dict):
        raise ConfigError(f"{path}: must be a JSON object with a {required!r} list")
    _no_unknown_keys(doc, {required}, "top level", path)
    if required not in doc:
        raise ConfigError(f"{path}: missing the {required!r} list")
    return doc


def _list(doc: dict[str, Any], key: str, path: str | Path) -> list[Any]:
    if not isinstance(doc[key], list):
        raise ConfigError(f"{path}: {key!r} must be a list")
    return doc[key]


def _entry(value: Any, where: str, path: str | Path, keys: set[str]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: {where} must be an object with {sorted(keys)}")
    _no_unknown_keys(value, keys, where, path)
    for key in sorted(keys):
        if key not in value:
            raise ConfigError(f"{path}: {where} is missing {key!r}")
    return value


def _no_unknown_keys(obj: dict[str, Any], keys: set[str], where: str, path: str | Path) -> None:
    for key in obj:
        if key not in keys and not key.startswith("_"):
            raise ConfigError(f"{path}: {where} has an unknown key {key!r} "
                              f"(expected {sorted(keys)}; keys starting with '_' are notes)")


def _url(entry: dict[str, Any], key: str, where: str, path: str | Path) -> str:
    value = entry[key]
    parts = urlsplit(value) if isinstance(value, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{path}: {where}.{key} must be an http(s) URL, not {value!r}")
    return value


def load_credentials(path: str | Path) -> dict[str, str]:
    """The support agent's own credential store: {"tokens": {endpoint URL: bearer token}}.

    Keyed by the exact endpoint a token was issued for (its audience), so a token is only
    ever sent to that endpoint: never to another host, and never inside a JSON-RPC payload.
    """
    doc = _load(path, required="tokens")
    tokens = doc["tokens"]
    if not isinstance(tokens, dict):
        raise ConfigError(f"{path}: 'tokens' must be an object of endpoint URL -> token")
    for endpoint, token in tokens.items():
        _url({"endpoint": endpoint}, "endpoint", f"tokens[{endpoint!r}]", path)
        if not isinstance(token, str) or not token or any(c.isspace() for c in token):
            raise ConfigError(f"{path}: the token for {endpoint} must be a non-empty string "
                              "without spaces")
    return dict(tokens)
