"""The page's "Check this agent": `check URL` run as a library (check/run.py's examine), with
the credential the page holds, and its report as check's own JSON (report.py's schema).

Issue 35, item 3. The report is the same one `check --format json` writes, so the page and
the terminal cannot disagree; the page draws it from that JSON, every string as text. Without
`deep` nothing is sent that could cause an effect; with it the deep checks send messages, as
--deep does, and the report says so. The credential is held for the agent's origin alone
(agent.credentials) and masked in every frame and detail the report quotes. Checking is not
delegating: the allowlist is not read. Not here: the checks (peers/support/check/), the door.
"""
from __future__ import annotations

import json
import shlex

from peers.support.web.agent import credentials
from peers.support.web.entered import Entered
from transports.base import is_http_url
from transports.records import Record

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

TIMEOUT = 5.0  # seconds for one exchange, check's own default; the run's budget bounds the whole


class Settings(Record):
    """What check's examine() reads of a run's settings, as the page asks it."""
    url: str
    deep: bool = False
    timeout: float = TIMEOUT
    binding: str | None = None
    verbose: bool = False
    other_caller: str | None = None


def report(peer: str, scheme: str, secret: str, deep: bool) -> dict[str, Any]:
    """{"report": check's JSON document, "summary": its one line, "command": the terminal's
    equivalent}, or {"error": one line} when the agent cannot be reached. ValueError, one
    line, for a URL or credential the page should not have sent."""
    if not (len(peer) <= 2000 and is_http_url(peer)):
        raise Entered("peer", "the agent's URL is http(s): its card's, or its base URL, as check takes it")
    store = credentials(peer, scheme, secret)  # ValueError for a credential that is not one
    held = tuple(value for entry in store.values() for value in entry.secrets())
    from peers.support.check.report import as_json, summary_line
    from peers.support.check.run import examine
    made = examine(Settings(peer, deep), store, None, None, held)
    if isinstance(made, str):
        return {"error": f"check: {made}"}
    command = ["python3", "a2a_delegation.py", "check", peer] + (["--deep"] if deep else [])
    return {"report": json.loads(as_json(made)), "summary": summary_line(made),
            "command": " ".join(shlex.quote(part) for part in command) +
            (" --credentials FILE (the credential you entered, in a credential store)" if store else "")}
