"""The support agent's credential store: what it holds for each endpoint, read from its file.

Spec section 7: the proof of who we are comes from the caller's own store, never from
a card. The store (--credentials) is keyed by the endpoint a credential was issued for,
as bearer tokens always were: a plain string (the essay's bearer token) or a `Held`,
with any of a bearer token, an API key, a Basic user and password, OAuth2 client
credentials, a client certificate. Every entry is checked as the file is read; a
mistake is one line naming the file and the entry. Holding nothing a card asks for is
`Unheld`. Not here: which credential a card's scheme takes (credentials.py); fetching
OAuth2 tokens (oauth_tokens.py).
"""

from __future__ import annotations

from peers.support.calling.files import ConfigError
from transports.base import parse_url
from transports.errors import PeerError
from transports.records import Record

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

MAX_SECRET = 4096  # characters of any one secret in the file: more is a mistake, not a key
KINDS = ("bearer", "apiKey", "basic", "oauth2", "tokenUrl", "clientCertificate")  # a file entry's keys


class Held(Record):
    """What our store holds for one endpoint (a plain string in the store: a bearer token)."""

    bearer: str | None = None
    api_key: str | None = None
    basic: tuple[str, str] | None = None  # user, password
    client: tuple[str, str] | None = None  # OAuth2 client id, client secret
    token_url: str | None = None  # the token endpoint the client secret may go to, when not the agent's origin
    certificate: tuple[str, str] | None = None  # the client certificate's PEM file and its key's

    def secrets(self) -> tuple[str, ...]:
        """What must never be shown, masked wherever a frame or line holds it: each secret,
        and the Basic credentials made of a pair (an Authorization value said back)."""
        import base64
        from urllib.parse import quote_plus
        pairs = [f"{self.basic[0]}:{self.basic[1]}"] if self.basic else []
        pairs += [f"{quote_plus(self.client[0])}:{quote_plus(self.client[1])}"] if self.client else []
        said = (self.bearer, self.api_key, self.basic and self.basic[1], self.client and self.client[1])
        return tuple(filter(None, (*said, *(base64.b64encode(pair.encode()).decode() for pair in pairs))))


class Unheld(PeerError):
    """The card asks for a credential our store does not hold: nothing was sent."""

    def retry_advice(self) -> str:
        return "nothing was sent; add the credential to --credentials and run again"


def held_for(store: dict[str, Any], endpoint: str) -> Held:
    """What the store holds for `endpoint` (or its origin): a bearer token alone is a string."""
    url = parse_url(endpoint)  # the store is keyed by each URL's canonical spelling (read_held, config._tokens_file)
    found = store.get(endpoint) or (store.get(url.canonical) or store.get(url.origin) if url else None)
    return found if isinstance(found, Held) else Held(bearer=found if isinstance(found, str) else None)


def read_held(entries: dict[str, Any], path: str) -> dict[str, Any]:
    """The file's "credentials" object: endpoint URL -> {"bearer", "apiKey", "basic":
    "USER:PASSWORD", "oauth2": "CLIENT-ID:CLIENT-SECRET", "tokenUrl", "clientCertificate":
    {"certificate": FILE, "key": FILE}} (any of them), each checked, as Held; ConfigError, one line."""
    store = {}
    for endpoint, entry in entries.items():
        where = f"{path}: credentials[{endpoint[:60]!r}]"
        if parse_url(endpoint) is None:
            raise ConfigError(f"{where} must be keyed by an http(s) URL")
        if parse_url(endpoint).canonical in store:  # a spelling of one already given: which was meant?
            raise ConfigError(f"{where} names an endpoint given already, spelled otherwise")
        if not isinstance(entry, dict) or not entry:
            raise ConfigError(f"{where} must be an object of some of {', '.join(KINDS)}")
        unknown = next((kind for kind in entry if kind not in KINDS), None)
        if unknown is not None:  # a misspelling, as "apikey", named: the kinds are case-sensitive
            raise ConfigError(f"{where} has an unknown field {unknown[:40]!r}: each is one of {', '.join(KINDS)}")
        texts = {kind: _secret(entry[kind], f"{where}.{kind}") for kind in KINDS[:5] if kind in entry}
        store[parse_url(endpoint).canonical] = Held(
            texts.get("bearer"), texts.get("apiKey"), _pair(texts.get("basic"), f"{where}.basic", "USER:PASSWORD"),
            _pair(texts.get("oauth2"), f"{where}.oauth2", "CLIENT-ID:CLIENT-SECRET"),
            _token_url(texts.get("tokenUrl"), endpoint, where),
            _certificate(entry.get("clientCertificate"), f"{where}.clientCertificate"))
    return store


def _secret(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{where} must be a string (in quotes)")
    if not 0 < len(value) <= MAX_SECRET or not value.isascii() \
            or not value.isprintable() or value != value.strip():
        raise ConfigError(f"{where} must be printable ASCII of 1 to {MAX_SECRET} characters, not padded "
                          "(it travels in a header)")
    return value


def _pair(value: str | None, where: str, form: str) -> tuple[str, str] | None:
    if value is None:
        return None
    first, colon, second = value.partition(":")
    if not colon or not first or not second:
        raise ConfigError(f"{where} must be {form}: two parts, the first without a colon")
    return first, second


def _token_url(value: str | None, endpoint: str, where: str) -> str | None:
    if value is not None and (parse_url(value) is None or parse_url(value).origin == parse_url(endpoint).origin
                              and parse_url(value).path == parse_url(endpoint).path):
        raise ConfigError(f"{where}.tokenUrl must be an http(s) URL other than the endpoint itself")
    return value


def _certificate(value: Any, where: str) -> tuple[str, str] | None:
    """The PEM files of a client certificate and its key, tried now, so a wrong file, or a
    certificate outside its dates, is one line before any frame rather than a failed handshake
    later, in the server's words."""
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) != {"certificate", "key"} or not all(
            isinstance(name, str) and name for name in value.values()):
        raise ConfigError(f'{where} must be {{"certificate": FILE, "key": FILE}} (PEM files)')
    import ssl  # only a store that holds a client certificate needs it
    from transports.named_files import on_disk
    try:
        on_disk(value["certificate"], value["key"])
        from transports.tls import no_passphrase, within_dates  # an encrypted key: refused, never a prompt that waits
        ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).load_cert_chain(value["certificate"], value["key"], no_passphrase)
        within_dates(value["certificate"])
    except (OSError, ssl.SSLError) as exc:
        from transports.tls import reason_of
        raise ConfigError(f"{where}: cannot use {_named(value['certificate'])} with {_named(value['key'])}: "
                          f"{reason_of(exc)}") from None
    return value["certificate"], value["key"]


def _named(path: str) -> str:
    """A file's path, its end kept where it is long: the end names the file (its start was cut, and
    with it the name of a file deep in a folder)."""
    return path if len(path) <= 80 else "..." + path[-77:]
