"""Reading the support agent's data files, registry.json, allowlist.json and its tokens.

Essay: "a tiny registry so the support agent can find where a peer lives" and "an
allowlist of agents we trust". Both are plain JSON a learner edits by hand, so every
mistake is reported as one line naming the file, and the line and column or the field:
`allowlist.json:4:7: not valid JSON (Expecting ',' delimiter)`,
`registry.json: peers[1].cardUrl must be an http(s) URL`. Each file's shape is a JSON
Schema checked by the one checker (peers/a2a/schema.py); keys starting with "_" are
notes for people and are skipped; any other unknown key is an error (a typo such as
"endpont" must not silently drop a trust rule).
"""

from __future__ import annotations

import json
import os

from peers.support.calling.files import ConfigError, load, url_in, without_notes
from transports.base import parse_url
from transports.named_files import open_to_write
from transports.records import Record

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

def same_endpoint(first: str, second: str) -> bool:
    """Whether two URLs name one endpoint: as HTTP compares them, host names and schemes
    without regard to case and a default port written or not (BILLING.acme.example is
    billing.acme.example), the path exactly."""
    return first == second or (parse_url(first) or first) == (parse_url(second) or second)


class AllowEntry(Record):
    name: str  # the name on the peer's card
    endpoint: str  # the URL frames to that peer go to, as vetted
    public_key: Any = None  # the key pinned for it ("publicKey", a JWK: RSA, EC or OKP): its card must be signed by it

    def unproven(self, fetched: Any) -> str | None:
        """Why `card` is not shown to come from the peer vetted here; None if it is, or if
        this entry is not about this card. Two rules: a card is believed only from its own
        endpoint's origin (anyone can serve a copy elsewhere, altered or stale), and where
        this entry pins a key, only if that key signed it (A2A 1.0 signed cards)."""
        card = fetched.card
        if card.name != self.name or not same_endpoint(card.url, self.endpoint):
            return None
        elsewhere = from_elsewhere(fetched)
        if elsewhere or self.public_key is None:
            return elsewhere
        from peers.signing.card_signature import unproven  # only an allowlist that pins a key needs it
        return unproven(fetched.signed, self.public_key)


def from_elsewhere(fetched: Any) -> str | None:
    """Why a card is not believed about where its frames go: it was fetched from another origin
    than its endpoint's (anyone can serve a copy elsewhere, altered or stale, naming any endpoint);
    None if it came from its endpoint's own origin."""
    origin, endpoint = parse_url(fetched.fetched_from), parse_url(fetched.card.url)
    if origin is not None and endpoint is not None and origin.origin != endpoint.origin:
        return (f"has a card fetched from {origin.origin}, but its endpoint is at {endpoint.origin}: "
                "a card is believed only from its own endpoint's origin")
    return None


def unproven_card(fetched: Any, allowlist: list[AllowEntry]) -> str | None:
    """Why a fetched card is not shown to come from the peer an entry vetted at its
    endpoint, or None. Where several entries name that peer there (a key being rotated: one
    pin each), the card needs to satisfy only one of them; but where one pins a key, only those
    that pin one count (a line left unpinned beside it, in any spelling, would waive the pin)."""
    card = fetched.card
    here = [entry for entry in allowlist if entry.name == card.name and same_endpoint(entry.endpoint, card.url)]
    doubts = [entry.unproven(fetched) for entry in here
              if entry.public_key is not None or not any(other.public_key is not None for other in here)]
    return None if not doubts or None in doubts else doubts[0]


def _list_of(item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": item}


def _entry(*keys: str) -> dict[str, Any]:
    return {"type": "object", "properties": {k: {"type": "string", "minLength": 1} for k in keys},
            "required": list(keys), "additionalProperties": False}


TOKENS = {"type": "object", "properties": {"tokens": {"type": "object"}, "credentials": {"type": "object"}},
          "additionalProperties": False}
REGISTRY = {"type": "object", "properties": {"peers": _list_of(_entry("cardUrl"))},
            "required": ["peers"], "additionalProperties": False}
ALLOWED = _entry("name", "endpoint")
ALLOWED["properties"]["publicKey"] = {"type": "object"}  # optional: a JWK its card must be signed by
ALLOWLIST = {"type": "object", "properties": {"trusted": _list_of(ALLOWED)},
             "required": ["trusted"], "additionalProperties": False}


def load_registry(path: str, added: int = 0) -> list[str]:
    """The Agent Card URLs the registry lists, in order; none only if `added` (--peer) come beside them."""
    doc = load(path, REGISTRY)
    if not doc["peers"] and not added:
        raise ConfigError(f"{path}: lists no peers, and no --peer adds one, so there is nobody to delegate to")
    urls = [url_in(entry["cardUrl"], f"peers[{index}].cardUrl", path) for index, entry in enumerate(doc["peers"])]
    first: dict[Any, int] = {}
    for index, url in enumerate(urls):  # listed twice, a peer would be asked twice: one refund, two requests
        earlier = first.setdefault(card_key(url), index)
        if earlier != index:
            now, then = parse_url(url), parse_url(urls[earlier])
            again = "" if now == then else ", with another query (a query names no other agent)" if now.target != \
                then.target else ", its host written with and without the root's dot (one host in DNS)"
            raise ConfigError(f"{path}: peers[{index}].cardUrl lists the card peers[{earlier}] does{again}; "
                              "list each once")
    return urls


def card_key(url: str) -> tuple[str, str]:
    """A card is keyed by where it lives, its origin and path (8.2's well-known URL): a query (a
    key, a cache-buster) names no other agent, so ?a=1 and ?a=2 are one card; nor does a host's case,
    or the root's dot ending it (`host.` is `host` in DNS): keyed apart, one agent was asked twice.
    Not a URL: itself."""
    parsed = parse_url(url)
    return (parsed._replace(host=parsed.host.rstrip(".")).origin, parsed.path) if parsed is not None else (url, "")


def load_allowlist(path: str) -> list[AllowEntry]:
    doc = load(path, ALLOWLIST)
    return [AllowEntry(entry["name"], url_in(entry["endpoint"], f"trusted[{i}].endpoint", path),
                       _pinned(entry.get("publicKey"), f"trusted[{i}].publicKey", path))
            for i, entry in enumerate(doc["trusted"])]


def _pinned(jwk: Any, where: str, path: str) -> Any:
    if jwk is None:
        return None
    from peers.signing import algorithms  # only an allowlist that pins a key needs it
    try:
        return algorithms.public_from_jwk(jwk)  # an RSA, EC P-256 or Ed25519 key: its kind says the alg
    except algorithms.BadKey as exc:
        raise ConfigError(f"{path}: {where}: {exc}") from None


def load_credentials(options: Any) -> dict[str, Any]:
    """The support agent's own credential store, from --credentials (a file of
    {"tokens": {endpoint URL: bearer token}}, and {"credentials": {endpoint URL: {...}}}
    for the other schemes: credentials.py) and --token-env (one token for the origins of
    the --peer agents). Keyed by the audience a credential was issued for, so it is only
    ever sent there: never to another host, and never inside a JSON-RPC payload."""
    tokens = _tokens_file(options.credentials) if options.credentials else {}
    if options.token_env:
        token = os.environ[options.token_env]
        _check_token(token, f"${options.token_env}")
        tokens.update({parse_url(url).origin: token for url in options.peer})
    return tokens


def _tokens_file(path: str) -> dict[str, Any]:
    doc = without_notes(load(path, TOKENS))  # "_" keys are notes, as everywhere
    if not doc:
        raise ConfigError(f'{path}: holds neither "tokens" nor "credentials"')
    tokens = {}  # keyed by each URL's canonical spelling, as they are looked up (held.py's held_for too)
    for endpoint, token in doc.get("tokens", {}).items():
        url_in(endpoint, f"tokens[{endpoint[:60]!r}]", path)
        _check_token(token, f"{path}: the token for {endpoint}")
        if parse_url(endpoint).canonical in tokens:  # a spelling of one given already: which was meant?
            raise ConfigError(f"{path}: tokens[{endpoint[:60]!r}] names an endpoint given already, spelled otherwise")
        tokens[parse_url(endpoint).canonical] = token
    if "credentials" not in doc:
        return tokens
    from peers.support.calling.held import read_held  # only a store with more than bearer tokens needs it
    held = read_held(doc["credentials"], path)
    for endpoint, token in tokens.items():  # one endpoint in both: its bearer token joins the rest
        held[endpoint] = held[endpoint]._replace(bearer=token) if endpoint in held else token
    return held


def _check_token(token: Any, what: str) -> None:
    if not isinstance(token, str):
        raise ConfigError(f"{what} must be a string (in quotes)")
    if not token or not token.isascii() or not token.isprintable() or " " in token:
        raise ConfigError(f"{what} must be printable ASCII without spaces (it travels in a header)")


def token_for(credentials: dict[str, Any], endpoint: str, scope: str | None = None) -> str | None:
    """The support agent's own credential store: a token issued for this endpoint, or for
    its origin (--peer with --token-env), and never one issued for anywhere else. A peer
    that asks for a step-up names a scope; such a token is kept as "ENDPOINT SCOPE"."""
    if scope is not None:
        return credentials.get(f"{endpoint} {scope}")
    url = parse_url(endpoint)
    found = credentials.get(endpoint) or (credentials.get(url.canonical) or credentials.get(url.origin) if url else None)
    # A Held (credentials.py) holds more than a bearer token: only its bearer token is one,
    # never the record itself, whose other secrets are for other schemes.
    return found if found is None or isinstance(found, str) else found.bearer


def unwritable(flag: str, path: str | None) -> str | None:
    """Why the file `flag` names cannot be written, as one line (`--trace "": needs a file
    name`), or None (None too for a flag not given). Tried by opening it to append, which
    creates nothing that was not there: an empty file made by the try is removed again. A
    pipe is written only if a program reads it (named_files.py): none, and it is said."""
    if path is None:
        return None
    problem, shown = _unwritable(path), path or '""'  # an empty name, shown as typed
    return f"{flag} {shown}: {problem}" if problem else None


def written_over(written: dict[str, str | None], read: dict[str, str | None]) -> str | None:
    """A file a run would write (flag -> path) that is a file it reads, as one line; None if none: a slip
    of the keyboard would replace the trust list or the credential store with a trace or a report."""
    for flag, path in written.items():
        source = next((name for name, other in read.items() if path and other and _same_file(path, other)), None)
        if source is not None:
            return f"{flag} {path}: that is the file {source} reads; a run never writes over its own input"
    return None


def _same_file(one: str, other: str) -> bool:
    try:
        return os.path.samefile(one, other)  # a link, a relative and an absolute name alike
    except OSError:  # one not there yet, so nothing to write over: by their names
        return os.path.realpath(one) == os.path.realpath(other)


def _unwritable(path: str) -> str | None:
    if not path:
        return "needs a file name"
    if os.path.isdir(path):
        return "is a folder; give a file name"
    existed = os.path.exists(path)
    try:
        with open_to_write(path, append=True):
            pass
    except OSError as exc:
        return exc.strerror or exc.__class__.__name__
    if not existed:
        os.remove(path)
    return None


def trust_hint(fetched: Any, allowlist: list[AllowEntry]) -> str:
    """For a --peer agent (what finding its card found): the allowlist entry that would trust it, once a person
    vetted it; none for a card fetched at another origin than its endpoint's, which no entry trusts."""
    if fetched is None:
        return "[support] its card could not be read or spoken to (said above), so there is nothing to trust yet"
    card, there = fetched.card, parse_url(fetched.card.url)
    if from_elsewhere(fetched) and there is not None:
        return (f"[support] {card.name!r} names its endpoint at {there.origin}, another origin than the one its card came "
                f"from ({parse_url(fetched.fetched_from).origin}): no allowlist entry trusts a card fetched elsewhere; "
                f"ask {there.origin} for its card (--peer {there.origin})")
    if any(entry.name == card.name and same_endpoint(entry.endpoint, card.url) for entry in allowlist):
        return f"[support] {card.name!r} at {card.url} is on the allowlist"
    return (f"[support] to trust {card.name!r}, vet it, then add this to the allowlist: "
            + json.dumps({"name": card.name, "endpoint": card.url}))


