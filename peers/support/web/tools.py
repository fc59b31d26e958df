"""The page's tools beside its runs: check an agent, propose an allowlist entry (with the diff
of the file), copy a request frame as curl, and compare two saved runs.

Issue 35, items 3 to 5. `route` answers the paths below once the door (server.py) has let a
request in, as (status, JSON document), or None for a path that is not a tool's:
- POST /check {peer, scheme, secret, deep}: check's report (checking.py);
- POST /allowlist/entry {text, name, endpoint}: the allowlist text with that entry added, the
  entry, a unified diff from the text given, and the file a confirmed save writes. Nothing
  is written here: the page saves (POST /allowlist, save) only when the person confirms;
- GET /runs/ID/curl?frame=N: the run's Nth frame (from 0, as the trace keeps them), if it is
  a request, as a curl command. Every header the printer masked is a shell variable named
  for it ("$A2A_AUTHORIZATION"), never its value; a body's masked secrets stay masked;
- POST /traces/diff {a, b}: two saved runs' frames compared (trace_diff.py);
- POST /proxy {to, faults, seed, step, webhook, verbose}: a proxy session, watched as a run (proxying.py).
Every value here came from outside (a peer's frame, a file): it goes back as JSON data, and
the page shows it as text. Not here: the door, the runs, the checks themselves.
"""
from __future__ import annotations

import difflib
import json
import re
import shlex
import threading
from urllib.parse import parse_qs, urlsplit

from peers.support.calling.config import same_endpoint
from peers.support.web import allowlist, checking, proxying, trace_diff
from peers.support.web.entered import Entered, document_of, field
from transports.base import HttpRequest, is_http_url
from transports.codec import Limits, loads_strict

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

LIMITS = Limits(max_bytes=1 << 20, max_depth=16, max_containers=10_000)  # two traces; the server bounds the body
LEFT_TO_CURL = {"host", "content-length", "connection", "accept-encoding", "transfer-encoding"}
CHECKS = threading.BoundedSemaphore(2)  # checks at once: each may take check's whole budget (40 s)
MASKED = re.compile(r"\*\*\*\*(#[0-9a-f]{4})?")  # a secret as the printer shows it (transports/masking.py)


def route(request: HttpRequest, path: str, allowlist_path: str, runs: Any) -> tuple[int, dict[str, Any]] | None:
    if request.method == "POST" and path == "/check":
        body = _body(request)
        if not CHECKS.acquire(blocking=False):
            return 429, {"error": "two checks are going already; wait for one to end"}
        try:
            answer = checking.report(_text(body, "peer"), _text(body, "scheme"), _text(body, "secret"),
                                     field(body, "deep", bool, False))
        finally:
            CHECKS.release()
        return (502 if "error" in answer else 200), answer
    if request.method == "POST" and path == "/proxy":  # a proxy session, watched as a run (proxying.py)
        return proxying.start(_body(request), runs)
    if request.method == "POST" and path == "/allowlist/entry":
        body = _body(request)
        return 200, entry(_text(body, "text"), _text(body, "name"), _text(body, "endpoint"), allowlist_path)
    if request.method == "POST" and path == "/traces/diff":
        body = _body(request)
        first = trace_diff.records_of(_text(body, "a"), "the first trace")
        second = trace_diff.records_of(_text(body, "b"), "the second trace")
        return 200, {"rows": trace_diff.diff(first, second)}
    parts = path.strip("/").split("/")
    if request.method == "GET" and len(parts) == 3 and parts[0] == "runs" and parts[2] == "curl":
        run = runs.get(parts[1])
        asked = parse_qs(urlsplit(request.url).query).get("frame", [""])[0]
        if run is None or not (asked.isascii() and asked.isdigit() and len(asked) < 7):
            return 404, {"error": "no such run, or no frame number (?frame=N)"}
        found = trace_diff.frames(run.records())
        if int(asked) >= len(found) or found[int(asked)].get("direction") != "-->":
            return 404, {"error": f"frame {asked} of this run is not a request it sent"}
        return 200, {"curl": curl(found[int(asked)])}
    return None


def entry(text: str, name: str, endpoint: str, path: str) -> dict[str, Any]:
    """The allowlist `text` with {name, endpoint} added: the entry, the new text, its diff."""
    if not name or len(name) > 200 or not name.isprintable() or not (len(endpoint) <= 2000 and is_http_url(endpoint)):
        raise ValueError("an entry is a printable name and an http(s) endpoint, as the refusal named them")
    problem, entries = allowlist.check(text)
    if problem:
        raise ValueError(f"the allowlist in the page must load before an entry is added: {problem}")
    document = loads_strict(text.encode())
    added = {"name": name, "endpoint": endpoint}
    vetted = next((each for each in entries if each["name"] == name and same_endpoint(each["endpoint"], endpoint)), None)
    if vetted is not None:  # as spelled, or another spelling (BILLING.acme.example, :443): one more would unpin a key
        raise ValueError(f"{name!r} at {vetted['endpoint']} is on the allowlist already: a refusal there is of its "
                         "card (where it came from, or what signed it), which no entry changes")
    new = _written({**document, "trusted": [*document.get("trusted", []), added]})
    now = allowlist.read(path)  # the diff is of the file as it is, and as confirming would leave it
    lines = difflib.unified_diff(now.splitlines(), new.splitlines(), f"{path} (now)", f"{path} (confirmed)", lineterm="")
    named = "the repository's own allowlist.json" if path == allowlist.DEFAULT else "the file this page was started with"
    edited = "" if text == now else ", with the page's edit not saved yet"
    return {"entry": json.dumps(added, ensure_ascii=False), "text": new, "diff": "\n".join(lines), "path": path,
            "which": f"Confirming writes {path} ({named}, --allowlist{edited}); nothing is written until then"}


def curl(frame: dict[str, Any]) -> str:
    """A request frame as a curl command; each masked header a variable to set, never the secret. A frame may
    come from a trace anyone wrote (POST /traces): each value is the value of its own option (--url, never a
    word curl could read as an option), and the body goes as it was (--data-raw: --data-binary's @FILE sends
    a file of the machine that runs it)."""
    lines = [f"curl -X {shlex.quote(str(frame.get('http_method') or 'POST'))} --url {shlex.quote(str(frame.get('url')))}"]
    variables = []
    headers = frame.get("headers") if isinstance(frame.get("headers"), dict) else {}
    for name, value in headers.items():
        if str(name).lower() in LEFT_TO_CURL:
            continue
        text = f"{name}: {value}"
        if MASKED.search(text):  # quoted as a whole, the variable's name outside the single quotes
            variable = "A2A_" + re.sub(r"[^A-Z0-9]", "_", str(name).upper())
            variables.append(variable)
            text = MASKED.sub("\0", text)
            lines.append("-H " + shlex.quote(text).replace("\0", "'\"${" + variable + "}\"'"))
        else:
            lines.append(f"-H {shlex.quote(text)}")
    body = frame.get("body")
    if isinstance(body, str) and body:
        lines.append(f"--data-raw {shlex.quote(body)}")
    said = [f"# set {variable} to the secret first (the workbench never shows it)" for variable in variables]
    return "\n".join(said + [" \\\n  ".join(lines)])


def _written(document: dict[str, Any]) -> str:
    """The allowlist as the repository writes it: a member a line, each trusted entry a line."""
    members = []
    for key, value in document.items():
        if key == "trusted" and isinstance(value, list):
            inner = ",\n".join(f"    {json.dumps(item, ensure_ascii=False)}" for item in value)
            members.append(f'  "trusted": [\n{inner}\n  ]')
        else:
            members.append(f"  {json.dumps(key, ensure_ascii=False)}: {json.dumps(value, ensure_ascii=False)}")
    return "{\n" + ",\n".join(members) + "\n}\n"


def _body(request: HttpRequest) -> dict[str, Any]:
    document = document_of(request.body, LIMITS)
    if not isinstance(document, dict):
        raise ValueError("the request is a JSON object")
    return document


def _text(document: dict[str, Any], name: str) -> str:
    value = document.get(name, "")
    if not isinstance(value, str):
        raise Entered(name, f"{name!r} must be a str")
    return value
