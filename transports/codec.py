"""The strict JSON codec every byte from outside passes through: frames, cards, replies.

A peer we do not own may send anything. Python's json module alone would accept NaN,
keep the last of two equal keys (a second "amount" could hide behind the first), turn
1e999 into infinity, read a 5,000-digit number, and recurse on deep nesting until it
runs out of stack. So every decode is bounded (`Limits`: size, depth, arrays and objects
in all, one number's length), each bound is checked in time linear in the input, and
anything accepted can be encoded back. Used by JSON-RPC (`jsonrpc.py`), the support
agent and the config files. Spec: RFC 8259 (JSON), section 4's duplicate names.
"""

from __future__ import annotations

import json
import re

from transports.records import Record

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

MAX_FRAME_BYTES = 1 << 20  # 1 MiB: a delegation frame is a few hundred bytes

class Limits(Record):
    """What one JSON document may hold: low enough that anything accepted can also be
    encoded back and kept in memory without amplification."""

    max_bytes: int = MAX_FRAME_BYTES
    max_depth: int = 32  # nested arrays/objects; a delegation frame needs about 6
    max_containers: int = 10_000  # arrays and objects in all: 1 MiB of `[],` would be 350,000
    max_number_chars: int = 40  # one number's characters: 10**400 is not an amount
    # A "\ud800" escape with no pair is valid JSON (RFC 8259 8.2: its meaning is unpredictable) but no
    # text: UTF-8 cannot hold it. Kept (True) where what was sent is shown as sent (the proxy); refused
    # (False) where it would be kept and answered to others, whose parsers may refuse the whole answer.
    unpaired_surrogates: bool = True


LIMITS = Limits()


class LimitExceeded(ValueError):
    """Well-formed JSON, but more than `Limits` allow: refused, never half-kept."""


class DuplicateKey(ValueError):
    """One object naming a key twice (RFC 8259 4: its meaning is unpredictable): refused."""


class NotText(ValueError):
    """JSON that decodes, but holds a string no UTF-8 text can carry (an unpaired surrogate), where
    `Limits` refuse one: `document` is what it decoded to, for a reader to say who sent it (an id)."""

    def __init__(self, why: str, document: Any) -> None:
        super().__init__(why)
        self.document = document


def _no_constants(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _bounded_int(text: str) -> int:
    if len(text) > LIMITS.max_number_chars:
        raise LimitExceeded(f"a number longer than {LIMITS.max_number_chars} characters")
    return int(text)


def _finite_float(text: str) -> float:
    value = float(text)
    if len(text) > LIMITS.max_number_chars or value in (float("inf"), float("-inf")):
        raise LimitExceeded(f"the number {text[:20]} is out of range")
    return value


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):  # rare: then find the first repeated key, in one pass
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKey(f"duplicate key {key[:40]!r}")
            seen.add(key)
    return obj


# Brackets outside strings: a string is skipped whole, escapes included. A string left
# open runs to the end of the text, so no start position is ever scanned twice.
_STRUCTURE = r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)|[\[\]{}]'  # compiled on first use: large frames only


def _check_structure(text: str, limits: Limits) -> None:
    """Depth and container count, before the decoder recurses into them. A quick count
    of brackets settles small frames; only a large one is scanned token by token."""
    if text.count("[") + text.count("{") <= limits.max_depth:
        return
    depth = containers = 0
    for match in re.finditer(_STRUCTURE, text):
        token = match.group()
        if token in "[{":
            depth += 1
            containers += 1
            if depth > limits.max_depth:
                raise LimitExceeded(f"nested deeper than {limits.max_depth} levels")
            if containers > limits.max_containers:
                raise LimitExceeded(f"more than {limits.max_containers} arrays and objects")
        elif token in "]}":
            depth -= 1


# Built once: json.loads with options would build a new decoder for every frame.
_DECODER = json.JSONDecoder(parse_constant=_no_constants, object_pairs_hook=_no_duplicates,
                            parse_int=_bounded_int, parse_float=_finite_float)


def encoder(*, sort_keys: bool = False, separators: tuple[str, str] = (", ", ": "),
            default: Any = None, allow_nan: bool = True) -> Any:
    """`json.JSONEncoder(...).encode` for these options, as a function built once. No check
    for cycles (it costs a tenth of a served answer's encoding, a dict entry per object):
    what we encode was decoded from JSON or built from records, and neither can hold a
    cycle; one would still stop, at the recursion limit, and never reach the wire.
    Where CPython's C encoder is there, it is called directly: `encode` would build it
    anew for every document, which cost a tenth of a served answer's encoding too."""
    made = json.JSONEncoder(sort_keys=sort_keys, separators=separators, default=default,
                            allow_nan=allow_nan, check_circular=False)
    make_c = getattr(json.encoder, "c_make_encoder", None)
    if make_c is None:
        return made.encode
    try:  # the arguments JSONEncoder.iterencode gives it (Python 3.6 to 3.14)
        chunks = make_c(None, made.default, json.encoder.encode_basestring_ascii, None, made.key_separator,
                        made.item_separator, sort_keys, False, allow_nan)
    except TypeError:  # a Python whose C encoder takes other arguments: the public way
        return made.encode
    join = "".join
    return lambda value: join(chunks(value, 0))


_ENCODE = encoder(allow_nan=False)


def loads_strict(data: bytes | str, limits: Limits = LIMITS) -> Any:
    """Parse JSON as a peer we do not own may send it. Raises ValueError with the reason
    (`LimitExceeded` when it is valid JSON but too big, deep or long; `NotText` when `limits`
    refuse an unpaired surrogate, which only an escape in the text can make: bytes are UTF-8)."""
    if len(data) > limits.max_bytes:
        raise LimitExceeded(f"larger than {limits.max_bytes} bytes")
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError:
        raise ValueError("not UTF-8") from None
    _check_structure(text, limits)
    try:
        value = _DECODER.decode(text)
    except RecursionError:  # unreachable within max_depth; kept so no input can crash us
        raise LimitExceeded("nested too deeply") from None
    if not limits.unpaired_surrogates and "\\u" in text and re.search(r"\\u[dD][89a-fA-F]", text) and _unpaired(text):
        raise NotText("a string holds an unpaired surrogate (a \\ud800 escape without its pair), which is "
                      "no text: UTF-8 cannot carry it", value)
    return value


# Whether a text is JSON at all, read by the C scanner hooked so that only what is not JSON fails it: NaN and
# Infinity refused, a number's digits never converted (int() refuses 4,300 of them), no object's keys checked in
# Python, so about half a strict read's cost (the proxy asks it of every answer it forwards).
_SYNTAX = json.JSONDecoder(parse_constant=_no_constants, parse_int=len, parse_float=len)
# One token, after any white space: an opening bracket, a closing one, a comma or colon, a string, any other value.
_TOKEN = re.compile(r'[ \t\n\r]*(?:([\[{])|([\]}])|([,:])|("[^"\\\x00-\x1f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})'
                    r'[^"\\\x00-\x1f]*)*")|(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null))')


def is_json(data: bytes) -> bool:
    """Whether `data` is JSON text (RFC 8259, UTF-8), whatever our reading limits: a deep document, a long
    number or a name given twice is JSON still, and what follows a limit is read all the same (a card shown
    line by line on this word must begin no line as ours). The C scanner where the document holds no more
    containers than a strict read takes (the scanner builds them all) and nests within its recursion; else
    the grammar, token by token."""
    try:
        text = data.decode("utf-8")
        if data.count(b"{") + data.count(b"[") <= LIMITS.max_containers:
            _SYNTAX.decode(text)
            return True
    except ValueError:  # not UTF-8, or not JSON
        return False
    except RecursionError:  # nested deeper than the scanner goes
        pass
    return _grammatical(text)


def _grammatical(text: str) -> bool:
    """Whether `text` follows JSON's grammar: its tokens read in a loop, the open containers on a stack, so
    that no depth recurses and no length is too long (only `is_json`'s rare documents come here)."""
    closing: list[str] = []  # the bracket that closes each container open, innermost last
    wants, at = "value", 0  # value, key, colon, next (a comma or the close), end; "value]" and "key}" may close
    while (token := _TOKEN.match(text, at)) is not None:
        at = token.end()
        opening, close, mark, string, scalar = token.groups()
        if string is not None and wants in ("key", "key}"):
            wants = "colon"
        elif opening or string is not None or scalar:
            if wants not in ("value", "value]"):
                return False
            if opening:
                closing.append("]" if opening == "[" else "}")
            wants = ("value]" if opening == "[" else "key}") if opening else "next" if closing else "end"
        elif close:
            if not closing or close != closing[-1] or wants not in ("next", "value" + close, "key" + close):
                return False
            closing.pop()
            wants = "next" if closing else "end"
        elif wants == "colon" and mark == ":":
            wants = "value"
        elif wants == "next" and mark == ",":
            wants = "value" if closing[-1] == "]" else "key"
        else:
            return False
    return wants == "end" and not text[at:].strip(" \t\n\r")


def _unpaired(text: str) -> bool:
    """Whether JSON text (valid: every backslash in it begins an escape) holds a surrogate escape the
    decoder cannot pair: with each escaped backslash made a plain letter (not taken out: that would
    join the escapes on either side of it), then each high-low pair too, any left is unpaired.
    Three passes in C over the text, in about the decode's time, whatever its shape."""
    text = re.sub(r"\\\\", "_", text)  # JSON's \\ud800 is a backslash, then the letters ud800
    text = re.sub(r"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}", "_", text)
    return re.search(r"\\u[dD][89a-fA-F]", text) is not None


def dumps_as_text(obj: Any) -> bytes:
    """Compact JSON whose non-ASCII text stays itself in UTF-8, as a client most likely sent it
    (a body re-encoded after a change). A document holding a lone surrogate, which UTF-8
    cannot hold, is written all in ASCII instead (\\u escapes, the surrogate's as it came)."""
    try:
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(obj, separators=(",", ":")).encode("utf-8")


def dumps(obj: Any) -> bytes:
    """The one encoding used on the wire: `json.dumps` defaults, as the essay prints frames."""
    return _ENCODE(obj).encode("utf-8")
