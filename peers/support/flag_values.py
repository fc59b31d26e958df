"""What each flag's value must be: one check per kind of value, a bad one one line.

Used by flags.py as argparse `type=` functions: each returns the value, or raises
argparse's ArgumentTypeError with a sentence saying what was expected, which argparse
prints as one line (and exit status 2). argparse is imported only when a value is bad.
"""
from __future__ import annotations


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
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


def token(text: str) -> str:
    if not text or not text.isascii() or not text.isprintable() or " " in text:
        raise _bad("a token is printable ASCII without spaces (it travels in an HTTP header)")
    return text


def lesson(text: str) -> str:
    from peers.support.lessons import find  # only a run that names a lesson looks for one
    if find(text) is None:
        raise _bad(f"{text[:40]!r} is not a lesson (--list-scenarios lists them)")
    return text


def _bad(message: str) -> Exception:
    import argparse
    return argparse.ArgumentTypeError(message)
