"""Masking: how a credential is shown wherever a frame is printed, traced or sent to the page.

Spec: none; the essay's rule is that a learner sees every frame and never a secret. A
header that carries a credential (Authorization keeps its scheme word) and a body's secret
fields (a webhook's token, an OAuth2 answer's tokens, a token request's client_secret) are
shown masked, and so is every secret the support agent holds, wherever it stands in a body.
A masked secret is '****#' and 4 hex digits of its SHA-256: two credentials are told apart
on screen. Not here: printing (printer.py), what is held (peers/support/calling/credentials.py).
"""
import re
from functools import lru_cache

from transports.digests import sha256

AUTHORIZATION = {"authorization", "proxy-authorization"}  # "Scheme credentials": the scheme is no secret
SECRET_HEADERS = {"authorization", "proxy-authorization", "cookie", "x-api-key", "x-a2a-notification-token"}
# An API key travels in whatever header a card names: one whose name says it is secret is masked too
# (the support agent sends a key in no other: credentials.py). A challenge says what to send, no secret.
SECRET_WORDS = ("auth", "key", "token", "secret", "password", "credential", "cookie", "session")
NOT_SECRET = {"www-authenticate", "proxy-authenticate", "authentication-info", "access-control-allow-credentials"}
# The same secrets inside a body (a webhook's token, a push config's credentials, an OAuth2
# token answer's tokens): shown masked; and in a form (a token request's client_secret).
SECRET_FIELDS = ("token", "credentials", "X-A2A-Notification-Token", "access_token", "refresh_token", "id_token",
                 "client_secret", "password")
SECRET_FORM_FIELDS = ("client_secret", "password", "access_token", "refresh_token", "client_assertion",
                      "token", "api_key", "apikey", "apiKey", "key")  # and a query's: an API key may ride there (4.5)
FORM = "application/x-www-form-urlencoded"
MOST_KEPT = 8192  # characters of a secret whose masked form is kept: a long JWT's, not a peer's whole body
MIN_HELD = 8  # characters: a held secret shorter than this is masked only where a header or field names it
# (matched anywhere, a short one would mask ordinary words, and where it did would give it away)
MOST_HELD = 64  # credentials a printer learns from what it sends (`hold`), beyond those it was given
MOST_SAID = 16  # secret fields' values of one body looked for elsewhere in it
_MASKED = r"\*{4}(?:#[0-9a-f]{4})?"  # a value shown masked already (a trace read back): kept as it is
_JSON_SECRET = r'("(?:%s)"\s*:\s*")((?:[^"\\]|\\.)*)"' % "|".join(SECRET_FIELDS)
# A form's field, a URL query's: its value runs to what no query holds unescaped (RFC 3986 3.4), so a
# line's "]" or '"' after it is not taken for part of the secret (one secret, one fingerprint).
_FORM_SECRET = r"(?<![^&?\s])((?:%s)=)([^&#\s\[\]\"<>`{}|\\^]*)" % "|".join(SECRET_FORM_FIELDS)
_QUOTED = tuple(f'"{name}"' for name in SECRET_FIELDS)  # what a secret field's JSON name looks like in a body
_ASSIGNED = tuple(f"{name}=" for name in SECRET_FORM_FIELDS)  # and a form field's




@lru_cache(maxsize=1024)  # a proxy asks this of every header of every frame; names repeat, and a cache is bounded
def is_secret_header(name: str) -> bool:
    """Whether a header carries a credential: Authorization, an API key, a token, a cookie."""
    lowered = name.lower()  # an idempotency key names an operation ("order-12345"), no secret
    return lowered in SECRET_HEADERS or (lowered not in NOT_SECRET and "idempotency" not in lowered
                                         and any(word in lowered for word in SECRET_WORDS))


def mask(headers: dict[str, str]) -> dict[str, str]:
    """Hide credentials but keep an Authorization header's scheme: 'Bearer s3cret' -> 'Bearer ****#1ec1';
    any other secret header (an API key, a cookie) is all secret, spaces and all (masked(), below)."""
    def hidden(name: str, value: str) -> str:
        scheme, _, secret = value.partition(" ")
        return f"{scheme} {masked(secret)}" if secret and name.lower() in AUTHORIZATION else masked(value)
    return {k: hidden(k, v) if is_secret_header(k) else v for k, v in headers.items()}


def mask_body(text: str, held: tuple[str, ...] = ()) -> str:
    """A body's text with the values of its secret fields, JSON or form, shown masked
    (masked()), and every secret in `held` (what our credential store holds) wherever it
    stands: a token endpoint may echo our client secret in an error's description. A secret
    field's value is masked wherever else the body says it too (an access token, echoed)."""
    said: list[str] = []  # secret fields' values, masked wherever else the body says them (the first MOST_SAID:
    # each is looked for in the whole body, and a body of 20,000 such fields took seconds a frame)

    def hidden(found: re.Match[str], closing: str = "") -> str:
        if re.fullmatch(_MASKED, found.group(2)):
            return found.group(0)
        if len(said) < MOST_SAID and found.group(2) not in said:
            said.append(found.group(2))
        return found.group(1) + masked(found.group(2)) + closing
    # Looked for first, matched only then: most bodies hold none, and a run need not compile these
    if '"' in text and any(name in text for name in _QUOTED):  # a JSON string value: "name": "..."
        text = re.sub(_JSON_SECRET, lambda found: hidden(found, '"'), text)
    if "=" in text and any(name in text for name in _ASSIGNED):  # a form's field: name=...&
        text = re.sub(_FORM_SECRET, hidden, text)
    for secret in (*held, *said):
        spellings = _spellings(secret) if len(secret) >= MIN_HELD else ()
        if any(spelling in text for spelling in spellings):
            for spelling in sorted(spellings, key=len, reverse=True):
                text = text.replace(spelling, masked(secret))
    return text


@lru_cache(maxsize=256)
def _spellings(secret: str) -> frozenset[str]:
    """How a secret may stand in a body or a header: as itself, escaped inside a JSON string
    (a "/" as "\\/" too), or percent-encoded in a form or a URL, in either case of hex digit
    (most tokens are written the same in all of them)."""
    if all(c.isascii() and (c.isalnum() or c in "-._~") for c in secret):
        return frozenset((secret,))
    import json
    from urllib.parse import quote, quote_plus
    escaped = json.dumps(secret)[1:-1]
    encoded = {quote_plus(secret), quote(secret, safe=""), quote(secret)}
    lowered = {re.sub("%[0-9A-F]{2}", lambda found: found.group().lower(), text) for text in encoded}
    return frozenset({secret, escaped, escaped.replace("/", "\\/"), *encoded, *lowered} - {""})


def hold(held: list[str], headers: dict[str, str]) -> None:
    """Add to `held` each credential `headers` carry (an Authorization header's, past its scheme; an
    API key's): a token fetched during a run is masked from then on wherever it is said back, as
    the credential store's are. At most MOST_HELD: each is looked for in every body shown."""
    for name, value in headers.items():
        secret = value.partition(" ")[2] if name.lower() in AUTHORIZATION else value
        if _held_past_its_line(name, secret) and len(secret) >= MIN_HELD and secret not in held \
                and len(held) < MOST_HELD:
            held.append(secret)


def _held_past_its_line(name: str, value: str) -> bool:
    """Whether a secret header's value is masked in every frame after, not only in its own line:
    each but a short plain word (held, "application" would be masked in every Content-Type, and
    so given away: it is masked where a header or a field names it)."""
    return is_secret_header(name) and not _plain_word(value)


def _plain_word(secret: str) -> bool:
    return len(secret) < 16 and secret.isalpha()


def carried(headers: dict[str, str], body: bytes = b"") -> list[str]:
    """The secrets a client's request carries, to be masked wherever they are said back: each
    secret header's (an Authorization's past its scheme word, and for Basic what it encodes, which
    an agent may echo decoded), and its body's secret fields' values (the first MOST_SAID; a body
    is looked in only where it names such a field); none over MOST_KEPT, nor a short plain word."""
    found = []
    for name, value in headers.items():
        lowered = name.lower()
        if is_secret_header(name):
            scheme, _, secret = value.partition(" ")
            found.append(secret if secret and lowered in AUTHORIZATION else value)
            if lowered in AUTHORIZATION and scheme.lower() == "basic":
                found += _basic(secret)
    text = body[:1 << 20].decode("utf-8", "replace") if body else ""
    if '"' in text and any(name in text for name in _QUOTED):
        found += [value for _, value in re.findall(_JSON_SECRET, text)[:MOST_SAID] if not re.fullmatch(_MASKED, value)]
    if "=" in text and any(name in text for name in _ASSIGNED):
        found += [value for _, value in re.findall(_FORM_SECRET, text)[:MOST_SAID] if not re.fullmatch(_MASKED, value)]
    return [secret for secret in dict.fromkeys(found)  # a huge one, a plain word: masked where named
            if secret and len(secret) <= MOST_KEPT and not _plain_word(secret)]


def _basic(encoded: str) -> list[str]:
    """What a Basic credential encodes: user:password, and the password alone."""
    import base64
    import binascii
    try:
        pair = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return []
    return [pair, pair.partition(":")[2]]


def mask_held(headers: dict[str, str], held: tuple[str, ...]) -> dict[str, str]:
    """`headers` with every held secret masked in every value, whatever the header's name
    (a token endpoint may say a secret back in WWW-Authenticate or a header of its own)."""
    if not held:
        return headers
    # Most frames' headers hold no secret at all: looked for in all values at once, each masked only then.
    joined = "\n".join(headers.values())
    if '"' not in joined and "=" not in joined and not any(
            spelling in joined for secret in held if len(secret) >= MIN_HELD for spelling in _spellings(secret)):
        return headers
    return {name: mask_body(value, held) for name, value in headers.items()}


# A URL's userinfo password (RFC 3986 3.2.1, deprecated: "user:password@"), as a client may still send one.
# Each URL scanned once: the user holds no ":", and the password is taken whole in a lookahead, never
# given back a character at a time (a lazy user took 3 s over an 8 KiB run of colons, a greedy password 10 ms).
_USERINFO = re.compile(r"(?i)(\bhttps?://[^/?#@\s\":]*:)(?=([^/?#@\s\"]+))\2(@)")


# A query's field in a request line: its name, and its value up to the next field or the line's end.
_QUERY_FIELD = r"(?<=[?&;])([^=?&;#\s]+=)([^&;#\s]*)"  # a name holds no "?": a line of them is linear


def mask_line(text: str) -> str:
    """A line a log keeps of what a client sent (its request line): the password of a URL's
    userinfo and a query's secret fields shown masked, as a frame's would be; and any field
    a header of that name would be masked as (`X-API-Key`, `Authorization`, any case or
    percent-encoding): a client putting the key where the card says a header went in whole."""
    if "@" in text and "://" in text:
        text = _USERINFO.sub(lambda found: found[1] + masked(found[2]) + found[3], text)
    if "?" not in text:
        return text
    from urllib.parse import unquote

    def hidden(found: re.Match[str]) -> str:
        secret = is_secret_header(unquote(found[1][:-1])[:200]) and not re.fullmatch(_MASKED, found[2])
        return found[1] + masked(found[2]) if secret else found[0]
    return re.sub(_QUERY_FIELD, hidden, mask_body(text))


def masked(secret: str) -> str:
    """A secret as it is shown: '****#' and the first 4 hex digits of its SHA-256, so two
    credentials are told apart on screen (a step-up token is not the first token). 16 bits
    cannot recover a secret, and narrow a guess at it only 65,536-fold: a random token has
    far more to guess than that; a password a person chose may not. Empty: '****'."""
    if not secret:
        return "****"
    # Every frame of a session shows the same few credentials: theirs are kept (a bounded cache), but
    # not a peer's own text in a secret field, up to a MiB each (256 of those would be 256 MiB, or 1 GiB).
    return _fingerprint(secret) if len(secret) <= MOST_KEPT else _fingerprint.__wrapped__(secret)


@lru_cache(maxsize=256)
def _fingerprint(secret: str) -> str:
    return "****#" + sha256(secret.encode("utf-8", errors="surrogatepass")).hexdigest()[:4]


def query_secrets(urls: list[str]) -> tuple[str, ...]:
    """What URLs' queries carry under a name a secret header could have (X-API-Key, API_KEY, any case or encoding):
    a card's API key goes in the query under a name of its choosing (A2A 4.5), and a key typed into a URL we are
    given (--peer, a registry's, check's) is the user's. To be held as a store's secrets are: masked wherever said."""
    queries = [query for url in urls if (query := url.split("#", 1)[0].partition("?")[2])]
    if not queries:  # nearly every run's: urllib.parse (and the warnings it loads) is not loaded for them
        return ()
    from urllib.parse import unquote_plus
    held: list[str] = []  # as headers' secrets are (`hold`): not a short plain word, nor past MOST_HELD
    for field in (field for query in queries for field in query.split("&")):
        name, _, value = field.partition("=")
        # As the URL spells it (a base64 key's "+", a "%2D"), which decoded it is not, and decoded, as a peer says it
        # back. A key too short or too plain to be looked for alone is masked with its name, where the URL names it.
        before = len(held)
        for secret in (value, unquote_plus(value)):
            hold(held, {unquote_plus(name): secret})
        if len(held) == before and value:
            hold(held, {unquote_plus(name): field})
    return tuple(held)
