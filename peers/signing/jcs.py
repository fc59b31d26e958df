"""RFC 8785, the JSON Canonicalization Scheme (JCS): one byte string for one JSON value.

A2A 1.0 section 8.4 signs a card over its canonical form, so signer and verifier must
write the same bytes for the same card, whatever their JSON libraries do. The rules:
no whitespace; object members sorted by their names' UTF-16 code units (not by code
points: an emoji sorts before U+FB33); strings escaped as ECMAScript's JSON.stringify
does (only '"', '\\' and control characters; everything else as UTF-8); numbers as
ECMAScript writes an IEEE 754 double (the shortest digits that read back the same,
an exponent outside 1e-7 .. 1e21); true, false, null. NaN, infinities, lone surrogates
and non-string member names are not JSON values and raise ValueError, as does nesting
deeper than MAX_DEPTH. Not here: what is signed, or how (card_signature.py, rs256.py).
"""
from __future__ import annotations

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

MAX_DEPTH = 64
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def canonical(value: Any) -> bytes:
    """`value` (dicts, lists, strings, numbers, booleans, None) in its RFC 8785 form."""
    return "".join(_parts(value, 0)).encode("utf-8")


def _parts(value: Any, depth: int) -> list[str]:
    if value is None or isinstance(value, bool):
        return [{None: "null", True: "true", False: "false"}[value]]
    if isinstance(value, (int, float)):
        return [number(value)]
    if isinstance(value, str):
        return [string(value)]
    if depth >= MAX_DEPTH:
        raise ValueError(f"nested deeper than {MAX_DEPTH}")
    if isinstance(value, (list, tuple)):
        items = [_parts(item, depth + 1) for item in value]
        return ["[", ",".join("".join(item) for item in items), "]"]
    if isinstance(value, dict):
        if not all(isinstance(name, str) for name in value):
            raise ValueError("an object member's name is not a string")
        names = sorted(value, key=lambda name: name.encode("utf-16-be", "surrogatepass"))
        members = [string(name) + ":" + "".join(_parts(value[name], depth + 1)) for name in names]
        return ["{", ",".join(members), "}"]
    raise ValueError(f"{type(value).__name__} is not a JSON value")


def string(text: str) -> str:
    """A string as ECMAScript writes it: '"', '\\' and control characters escaped."""
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in text):
        raise ValueError("a string holds a lone surrogate, which no UTF-8 text can")
    return '"' + "".join(_ESCAPES.get(ch) or (f"\\u{ord(ch):04x}" if ch < " " else ch) for ch in text) + '"'


def number(value: int | float) -> str:
    """ECMAScript's Number::toString for the double `value` (RFC 8785 section 3.2.2.3)."""
    value = float(value)  # JSON numbers are doubles: an integer beyond 2**53 is rounded, as JS would
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError("NaN and infinities are not JSON numbers")
    if value == 0:
        return "0"  # -0 too
    if value < 0:
        return "-" + number(-value)
    mantissa, _, exponent = repr(value).partition("e")  # repr: the shortest round-trip digits
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    # value = 0.DIGITS x 10**point (ECMAScript's n; its k is len(digits))
    point = len(whole) + int(exponent or 0) - (len(whole + fraction) - len((whole + fraction).lstrip("0")))
    digits = digits.rstrip("0")
    if len(digits) <= point <= 21:
        return digits + "0" * (point - len(digits))
    if 0 < point <= 21:
        return digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return "0." + "0" * -point + digits
    sign = "+" if point - 1 > 0 else "-"
    return (digits[0] + ("." + digits[1:] if len(digits) > 1 else "")) + f"e{sign}{abs(point - 1)}"
