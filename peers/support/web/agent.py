"""The page's requests to talk to any agent: POST /agent, read and checked before a run starts.

Issue 24, item 5: for an agent the allowlist trusts, send a message (a text or a data
part), continue its task when it pauses (the same taskId and contextId), list its tasks,
get one, cancel one, followed by stream, polling or push. Each request is one run of
main() with --peer and the follow flag asked for, whose story is the one operation
(peers/support/web/outside.py): the card is fetched, checked and gated again each time, and
every frame crosses the run's printer, so the page shows it as it crosses.

Everything in the request is checked here, each problem one line (ValueError), before any
run starts: its types, sizes and ids; a data part is a JSON object read by the strict,
bounded codec. A problem with a value entered names its field (entered.py: said beside it). The credential entered (`credentials`, for these requests and POST /runs
alike) is one of SCHEMES, printable ASCII without spaces (it travels in a header), a pair
where the scheme takes one; it becomes a `Held` (credentials.py) for the agent's origin
alone, the run's whole credential store, in memory: never argv, a file, a trace or an
event. Which scheme the card asks for, and whether what was entered meets it, is the
store's to say (credentials.py), as for every run. A client certificate is files, so it
is not entered in the page (--credentials names them). Not here: the door (server.py),
what an operation sends (outside.py).
"""
from __future__ import annotations

from uuid import uuid4

from peers.a2a.model import Part
from peers.a2a.security_schemes import SCHEME_KINDS
from peers.a2a.wire_format import NAMES, card_url
from peers.support.calling.held import MAX_SECRET, Held, read_held
from peers.support.web.entered import Entered
from peers.support.web.outside import OPERATIONS, Asked
from transports.base import is_http_url, parse_url
from transports.codec import Limits, loads_strict

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

MAX_MESSAGE = 64 * 1024  # characters of one message part: a person types it
DATA_LIMITS = Limits(max_bytes=4 * MAX_MESSAGE, max_depth=16, max_containers=2_000)
MAX_ID = 200
# What the page holds, by the name it sends (peers/a2a/security_schemes.py: OAuth2 covers
# OpenID Connect, and a client certificate is files, not entered).
SCHEMES = {row.page: row for row in SCHEME_KINDS.values() if row.page}


def asked(document: Any, follow: dict[str, list[str]]) -> tuple[Asked, list[str], dict[str, Held]]:
    """The operation asked for, the flags of its run (--peer, how to follow, --wire,
    --verbose) and its credential store. Raises ValueError saying, in one line, what is
    wrong with the request."""
    if not isinstance(document, dict):
        raise ValueError("the request is a JSON object")
    peer, operation = _text(document, "peer", 2000), _text(document, "operation", 10)
    if not is_http_url(peer):
        raise Entered("peer", "the agent's URL is http(s): its card's, or its base URL, as --peer")
    if operation not in OPERATIONS:
        raise ValueError(f"operation is one of {', '.join(OPERATIONS)}")
    how, wire = _text(document, "follow", 10), _text(document, "wire", 10)
    if how not in follow:
        raise Entered("follow", f"follow is one of {', '.join(repr(name) for name in follow)}")
    task, context, skill = (_id(document, name) for name in ("task", "context", "skill"))
    if operation in ("get", "cancel") and not task:
        raise Entered("task", f"{operation} names a task: its id")
    scheme = _text(document, "scheme", 10)
    store = credentials(peer, scheme, _text(document, "secret", MAX_SECRET))
    if wire and wire not in NAMES:
        raise Entered("wire", f"wire is one of {', '.join(NAMES)}")
    verbose = document.get("verbose", False)
    if not isinstance(verbose, bool):
        raise ValueError("'verbose' must be a bool")
    if operation != "send":
        _typed_only(document)  # sent with every request, though only a send's is read
    part = _part(document) if operation == "send" else None
    flags = ["--peer", peer, *follow[how]] + (["--wire", wire] if wire else []) + (["--verbose"] if verbose else [])
    at = card_url(peer)  # as --peer reads it (flags.peer_card_urls)
    return Asked(at, operation, f"msg-{uuid4()}", part, task, context, skill, scheme), flags, store


def credentials(peer: str, scheme: str, secret: str) -> dict[str, Held]:
    """The run's credential store: what was entered for `scheme`, held for the origin of
    the agent at `peer` and nowhere else; {} when nothing was. ValueError, one line."""
    if scheme not in ("", *SCHEMES) or bool(scheme) != bool(secret):
        raise Entered("secret", f"a credential is one of {', '.join(SCHEMES)} with its secret, or none "
                         "(a client certificate is files: give them with --credentials)")
    if not secret:
        return {}
    if len(secret) > MAX_SECRET or not (secret.isascii() and secret.isprintable() and " " not in secret):
        raise Entered("secret", "a credential is printable ASCII without spaces (it travels in an HTTP header)")
    first, colon, second = secret.partition(":")
    if SCHEMES[scheme].pair and not (first and colon and second):
        raise Entered("secret", f"{SCHEMES[scheme].label}: entered as {SCHEMES[scheme].pair}, two parts, "
                         "the first without a colon")
    origin = parse_url(peer)
    if origin is None:
        raise Entered("peer", "the agent's URL is http(s): its card's, or its base URL, as --peer")
    # as --credentials would hold it: the checks above already passed, so this reads it back
    return read_held({origin.origin: {SCHEMES[scheme].credential: secret}}, "the page")


def _part(document: dict[str, Any]) -> Part:
    """The message's one part: its text, or (as "data") the JSON object that text spells."""
    text, kind = _text(document, "text", MAX_MESSAGE), _text(document, "part", 10) or "text"
    if kind not in ("text", "data") or not text.strip():
        raise Entered("text", "a message is a text, or (part: data) a JSON object, and not empty")
    if kind == "text":
        return Part(text=text)
    try:
        data = loads_strict(text.encode(), DATA_LIMITS)
    except ValueError as exc:
        raise Entered("text", f"the data part is not JSON the workbench reads: {str(exc)[:200]}") from None
    if not isinstance(data, dict):
        raise Entered("text", "a data part is a JSON object")
    return Part(data=data, media_type="application/json")


def _typed_only(document: dict[str, Any]) -> None:
    """Another operation sends no message, but the page sends the message field with every
    request: of the right kinds, whatever it holds (a long draft is no problem of a list)."""
    _text(document, "text", 1 << 62)
    if _text(document, "part", 10) not in ("", "text", "data"):
        raise Entered("text", "a message's part is text or data")


def _text(document: dict[str, Any], name: str, longest: int) -> str:
    value = document.get(name, "")
    if not isinstance(value, str):
        raise Entered(name, f"{name!r} must be a str")
    if len(value) > longest:
        raise Entered(name, f"{name!r} is longer than {longest:,} characters")
    return value


def _id(document: dict[str, Any], name: str) -> str:
    value = _text(document, name, MAX_ID).strip()
    if not value.isprintable():
        raise Entered(name, f"{name!r} must be printable")
    return value
