"""The agent's card as the proxy serves it: each interface on the agent's origin moved to the proxy.

A client that reads the card through the proxy must stay on it, so the URLs a card gives
for its bindings (A2A 1.0: `supportedInterfaces[].url`; 0.3: `url` and
`additionalInterfaces[].url`) are rewritten from the agent's origin to the proxy's, path
kept (the agent's origin by either name of this machine's loopback address: a peer told
`localhost` lists localhost:8002 where --to says 127.0.0.1:8002). Only those strings
change: each is replaced where it stands in the served bytes, so the rest of the card (its
layout, its other fields) is the agent's byte for byte. A URL on another origin is left alone
(the proxy forwards to --to only) and said. A signed card (`signatures`) cannot be rewritten
without breaking its signature (spec 8.4): `--keep-card` serves it unchanged. Not here:
checking the card (that is `check`'s).
"""
from __future__ import annotations

import json
import re

from transports.base import Url, parse_url
from transports.codec import LIMITS, loads_strict
from transports.records import Record

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any


_URL_MEMBER = re.compile(r'("url"\s*:\s*)("(?:[^"\\]|\\.)*")')  # a "url" member and its string, as written


class Rewrite(Record):
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
    changes, elsewhere = [], []
    agent = _loopback_as_one(parse_url(agent_origin))
    for field, url in interface_urls(document):
        parsed = parse_url(url)
        if parsed is None or parsed.origin != agent_origin and _loopback_as_one(parsed) != agent:
            elsewhere.append(f"{field}: {str(url)[:200]}")
            continue
        changes.append((field, url, proxy_origin + parsed.target))
    signatures = document.get("signatures")
    signed = isinstance(signatures, list) and bool(signatures)
    if not changes:
        return Rewrite(body, changes, elsewhere, signed)
    moved = {json.dumps(before): json.dumps(after) for _, before, after in changes}
    # One pass over each "url" member's string (a card may list thousands): the rest of the bytes stay.
    served = _URL_MEMBER.sub(lambda found: found[1] + moved.get(found[2], found[2]), body.decode("utf-8")).encode()
    for field, _, after in changes:
        _set(document, field, after)
    try:
        same = loads_strict(served, LIMITS._replace(max_bytes=len(served))) == document  # moved, it may be longer
    except ValueError:  # grown past the size limit: judged by its rewriting instead
        same = False
    if not same:
        # Spelled otherwise (escaped slashes, \u escapes), or the same URL under another "url"
        # (a provider's): the card is written anew with the interfaces moved, and nothing else.
        served = json.dumps(document, indent=2).encode("utf-8")
    return Rewrite(served, changes, elsewhere, signed)


def _loopback_as_one(url: Url | None) -> tuple[str, str, int] | None:
    """(scheme, host, port), `localhost` spelled 127.0.0.1: one address, which only its name tells apart."""
    return None if url is None else (url.scheme, "127.0.0.1" if url.host == "localhost" else url.host, url.port)


def unreadable(body: bytes) -> str:
    """Why rewrite() gave None: what keeps the body from being a JSON object we read."""
    try:
        loads_strict(body)
    except ValueError as exc:
        return str(exc)[:120]
    return "not a JSON object"


def _set(document: dict[str, Any], field: str, value: str) -> None:
    """document[field] = value, field as interface_urls names it ("url", "supportedInterfaces[2].url")."""
    if field == "url":
        document["url"] = value
    else:
        name, index = field.split("[")[0], int(field.split("[")[1].split("]")[0])
        document[name][index]["url"] = value


def diff(changes: list[tuple[str, str, str]], most: int = 10) -> list[str]:
    """The rewrite as a short diff, one pair of lines per URL moved (the first `most`, then a count)."""
    lines = [line for field, before, after in changes[:most] for line in (f"  - {field}: {before}", f"  + {field}: {after}")]
    return lines + ([f"  ... and {len(changes) - most} more interface URL(s) moved the same way"] if len(changes) > most else [])


def listed(items: list[str], most: int = 10) -> str:
    """Items joined with "; ", the first `most` of them, then how many more."""
    return "; ".join(items[:most]) + (f"; ... and {len(items) - most} more" if len(items) > most else "")
