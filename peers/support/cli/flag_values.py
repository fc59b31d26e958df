"""What each flag's value must be: one check per kind of value, a bad one one line.

Used by flags.py as argparse `type=` functions: each returns the value, or raises
argparse's ArgumentTypeError with a sentence saying what was expected, which argparse
prints as one line (and exit status 2); --scenario's returns the lesson it names, found.
argparse is imported only when a value is bad.
A mistyped lesson or flag is answered with the nearest name there is (difflib), as git does.
"""
from __future__ import annotations

from types import ModuleType


def seconds(text: str) -> float:
    # Digits and a point, as a person writes seconds: float() alone takes " 5", "1_0", "1e-300".
    plain = text.isascii() and text.replace(".", "", 1).isdigit()
    value = float(text) if plain else -1.0
    if not 0 < value <= 3600:  # 0 would be no time at all: no exchange could finish
        raise _bad(f"{text!r} is not a number of seconds more than 0 and at most 3600")
    return value


def port(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) > 65535:
        raise _bad(f"{text!r} is not a port number (0-65535)")
    return int(text)


def count(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or len(text) > 6:
        raise _bad(f"{text!r} is not a whole number from 0 to 999999")
    return int(text)


def base_url(text: str) -> str:
    from transports.base import is_http_url
    if not is_http_url(text):
        raise _bad(f"{text!r} is not an http(s) base URL such as http://billing.internal:8001")
    return text


def extension_uri(text: str) -> str:
    """A URI a caller can name in A2A-Extensions: visible ASCII, no comma (the header's separator)."""
    if not text or not text.isascii() or not text.isprintable() or any(c in text for c in ", \t"):
        raise _bad(f"{text[:80]!r} is not an extension URI a caller could send in A2A-Extensions "
                   "(visible ASCII, no comma or space)")
    return text


def served_base(text: str) -> str:
    """The base URL a served card advertises: its endpoints are this and a path, so no query."""
    if "?" in base_url(text) or "#" in text:
        raise _bad(f"{text!r} has a query or a fragment: the URL a card advertises is a base its paths are "
                   "added to (BASE/a2a, BASE/.well-known/agent-card.json)")
    return text


def origin(text: str) -> str:
    """An agent's origin, as proxy --to takes it (peers/support/proxy/run.py says why)."""
    from peers.support.proxy.run import not_an_origin
    problem = not_an_origin(text)
    if problem:
        raise _bad(problem)
    return text


def token(text: str) -> str:
    if not text or not text.isascii() or not text.isprintable() or " " in text:
        raise _bad("a token is printable ASCII without spaces (it travels in an HTTP header)")
    if len(text) > MOST_TOKEN:
        raise _bad(f"a token is at most {MOST_TOKEN:,} characters (it travels in an HTTP header)")
    return text


def host(text: str) -> str:
    """An address to bind: never empty, which would bind every interface (`--host "$HOST"` unset)."""
    if not text.strip() or not text.isascii() or not text.isprintable() or " " in text:
        raise _bad("name an address: 127.0.0.1 (this machine only), or 0.0.0.0 for every interface; "
                   "an empty one would listen on every interface")
    return text


def file_name(text: str) -> str:
    """A file's name: never empty (`--replay "$TRACE"` with TRACE unset), which read as the flag not given would
    put a default in its place (a live run for a replay, the default allowlist, the demo certificate)."""
    if not text:  # (spaces alone are a file's name, if an odd one)
        raise _bad("needs a file name (an empty one names no file)")
    return text


def host_name(text: str) -> str:
    """A DNS name a request's Host may give (lower-cased: names are read so): letters, digits, dots and hyphens."""
    from transports.base import parse_url  # the one URL check reads host names
    name = text.strip().lower().rstrip(".")
    url = parse_url(f"http://{name}/") if name else None
    if url is None or url.host != name:  # a port, a path, a character no host name has
        raise _bad("name a host as an /etc/hosts line gives it (letters, digits, dots and hyphens), without a port")
    return name


def lesson(text: str) -> ModuleType:
    """The lesson module called `text`: found here, once, for the whole run (settings.lesson)."""
    from peers.support.lessons import every, find, name_of  # only a run that names a lesson looks for one
    found = find(text)
    if found is None:
        guess = _nearest([text[:40]], [name_of(module.__name__) for module in every()])
        raise _bad(f"{text[:40]!r} is not a lesson{guess} (--list-scenarios lists them)")
    return found


def near_flag(message: str, flags: list[str]) -> str:
    """For argparse's "unrecognized arguments: ..." the nearest flags there are: "; did you
    mean --transport?" ("" for any other message, or nothing near)."""
    if not message.startswith("unrecognized arguments: "):
        return ""
    return _nearest([word.split("=", 1)[0] for word in message.split(": ", 1)[1].split() if word.startswith("--")],
                    flags)


def _nearest(typed: list[str], known: list[str]) -> str:
    import difflib
    near = [match for word in typed for match in difflib.get_close_matches(word, known, n=1)]
    return f"; did you mean {' '.join(dict.fromkeys(near))}?" if near else ""


MOST_TOKEN = 4096  # characters: a header line of our server holds no more than 8 KiB


def _bad(message: str) -> Exception:
    import argparse
    return argparse.ArgumentTypeError(message)
