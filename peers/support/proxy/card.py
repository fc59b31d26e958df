"""The agent's card as the proxy serves it: each interface on the agent's origin moved to the proxy.

A client that reads the card through the proxy must stay on it, so the URLs a card gives
for its bindings (A2A 1.0: `supportedInterfaces[].url`; 0.3: `url` and
`additionalInterfaces[].url`) are rewritten from the agent's origin to the proxy's, path
kept. Only those strings change: each is replaced where it stands in the served bytes, so
the rest of the card (its layout, its other fields) is the agent's byte for byte. A URL on
another origin is left alone (the proxy forwards to --to only) and said. A signed card
(`signatures`) cannot be rewritten without breaking its signature (spec 8.4): `--keep-card`
serves it unchanged. Not here: checking the card (that is `check`'s).
"""
from __future__ import annotations

import json
from typing import Any, NamedTuple

from transports.base import parse_url
from transports.codec import loads_strict


class Rewrite(NamedTuple):
    body: bytes  # the card as served through the proxy
    changes: list[tuple[str, str, str]]  # (field, the agent's URL, the proxy's)
    elsewhere: list[str]  # interface URLs on another origin: not moved, so traffic to them bypasses the proxy
    signed: bool


def interface_urls(document: dict[str, Any]) -> list[tuple[str, Any]]:
    """(field, value) of every URL a client is told to send to, in either version's spelling."""
    found = [("url", document["url"])] if "url" in document else []
    for field in ("supportedInterfaces", "additionalInterfaces"):
        entries = document.get(field)
        for index, entry in enumerate(entries if isinstance(entries, list) else []):
            if isinstance(entry, dict) and "url" in entry:
                found.append((f"{field}[{index}].url", entry["url"]))
    return found


def rewrite(body: bytes, agent_origin: str, proxy_origin: str) -> Rewrite | None:
    """The card moved to the proxy; None when the body is not a JSON object (served as is)."""
    try:
        document = loads_strict(body)
    except ValueError:
        return None
    if not isinstance(document, dict):
        return None
    changes, elsewhere, text = [], [], body.decode("utf-8")
    for field, url in interface_urls(document):
        parsed = parse_url(url)
        if parsed is None or parsed.origin != agent_origin:
            elsewhere.append(f"{field}: {str(url)[:200]}")
            continue
        moved = proxy_origin + parsed.target
        changes.append((field, url, moved))
        text = text.replace(json.dumps(url), json.dumps(moved))  # quoted: never a longer URL it begins
    served = text.encode("utf-8")
    now = dict(interface_urls(loads_strict(served)))
    if any(now.get(field) != after for field, _, after in changes):
        # Spelled otherwise (escaped slashes, \u escapes): the card is written anew, the URLs moved.
        for field, _, after in changes:
            _set(document, field, after)
        served = json.dumps(document, indent=2).encode("utf-8")
    signatures = document.get("signatures")
    return Rewrite(served, changes, elsewhere, isinstance(signatures, list) and bool(signatures))


def _set(document: dict[str, Any], field: str, value: str) -> None:
    """document[field] = value, field as interface_urls names it ("url", "supportedInterfaces[2].url")."""
    if field == "url":
        document["url"] = value
    else:
        name, index = field.split("[")[0], int(field.split("[")[1].split("]")[0])
        document[name][index]["url"] = value


def diff(changes: list[tuple[str, str, str]]) -> list[str]:
    """The rewrite as a short diff, one pair of lines per URL moved."""
    return [line for field, before, after in changes for line in (f"  - {field}: {before}", f"  + {field}: {after}")]
