"""What a person entered in the live page, checked before anything starts: each problem one
line, naming the field it is about, so the page says it beside that field (issue 35, item 6:
"inline errors next to the field that caused them, never wiping the last run").

Rules: a problem is an `Entered` (a ValueError whose `field` is the request's own name for
the value: `peer`, `secret`, `text`, `to` ...); the server answers it 400 with {error, field}
and starts nothing, so the page keeps the last run's frames. A value is never said back
whole (a secret may be in it). `run_flags` reads POST /runs (the essay's run or a lesson,
its transport, wire, any agent and how to follow it) into main()'s flags. Not here: the
door (server.py), an operation on an agent (agent.py), a proxy session (proxying.py).
"""
from __future__ import annotations

import json

from transports.base import is_http_url
from transports.codec import loads_strict

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

FOLLOW = {"": [], "stream": ["--stream"], "poll": ["--no-wait"], "push": ["--push"]}  # "": as the card allows
TRANSPORTS = ("in-process", "http")


class Entered(ValueError):
    """A problem with one value the person entered; `field` names it as the request does."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(problem)
        self.field = field


def document_of(body: bytes, limits: Any) -> Any:
    """A request's JSON body, read strictly within `limits`. A lone surrogate ("\\ud800", valid
    JSON) is no character: text holding one can be neither saved nor shown, so it is refused
    here, for every field of every request at once, rather than by the first write it breaks."""
    document = loads_strict(body or b"{}", limits)
    try:
        json.dumps(document, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        lone = exc.object[exc.start:exc.end].encode("unicode_escape").decode()[:40]
        raise ValueError(f"the request holds a lone surrogate ({lone}), which is no character: send text") from None
    return document


def field(document: Any, name: str, kind: type = str, default: Any = None) -> Any:
    """`document[name]`, of `kind` (`default` when absent); Entered when it is of another kind."""
    value = document.get(name, default) if isinstance(document, dict) else None
    if not isinstance(value, kind):
        raise Entered(name, f"{name!r} must be a {kind.__name__}")
    return value


def run_flags(document: Any, runs: set[str], wires: tuple[str, ...]) -> tuple[list[str], str, str, str]:
    """POST /runs: (main()'s flags but --allowlist, the agent's URL or "", the credential's
    scheme, its secret); `runs`: the names of the runs the page offers."""
    name, transport = field(document, "run"), field(document, "transport", str, "in-process")
    wire = field(document, "wire", str, "")
    if name != "default" and name not in runs:
        raise Entered("run", f"no run called {name[:40]!r}")
    if transport not in TRANSPORTS:
        raise Entered("transport", "transport is in-process or http")
    if wire and wire not in wires:
        raise Entered("wire", "wire is one of " + ", ".join(wires))
    peer, follow = field(document, "peer", str, ""), field(document, "follow", str, "")  # follow: as flags say
    if peer and not (len(peer) <= 2000 and is_http_url(peer)):
        raise Entered("peer", "an agent's URL is http(s): its card's, or its base URL, as --peer")
    if follow not in FOLLOW:
        raise Entered("follow", "follow is one of " + ", ".join(repr(name) for name in FOLLOW))
    argv = (["--scenario", name] if name != "default" else []) + ["--transport", transport]
    argv += (["--wire", wire] if wire else []) + (["--verbose"] if field(document, "verbose", bool, False) else [])
    argv += (["--peer", peer] if peer else []) + FOLLOW[follow]
    token = field(document, "token", str, "")  # a bearer token, as this request first took one: "bearer"
    scheme, secret = ("bearer", token) if token else (field(document, "scheme", str, ""),
                                                      field(document, "secret", str, ""))
    if (scheme or secret) and not peer:  # held for that agent's origin alone: with none, sent nowhere
        raise Entered("secret", "a credential goes only to the agent the URL field names: "
                                "enter its URL, or clear the secret")
    return argv, peer, scheme, secret
