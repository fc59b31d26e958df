"""The one input checker: does a JSON value fit a (small) JSON Schema? Used by billing for
its refund payload, by the support agent for its own copy of that contract, by the model
step for the model's answer, and by the support agent's config files.

Seed 000's Handoff Contract: "a typed payload (what's transferred)". A skill's input is
declared as a JSON Schema and carried on 1.0 and 0.3 cards by a card extension
(`INPUT_SCHEMA_EXTENSION`), since A2A's AgentSkill has no schema field. `check` returns
the first problem as one sentence naming the field, or None. It never raises, whatever
the value: a number too large for a float, an unhashable key, a deep structure.

Subset: type (object, array, string, number, integer, boolean), properties, required,
additionalProperties: false, items, minItems, minLength, maxLength, pattern,
exclusiveMinimum, minimum, maximum, multipleOf. `problems` lists every way a value does
not fit (a card with three faults names all three); `check` gives the first. A schema a
peer publishes is itself hostile input: `unreadable` judges its shape first, so `check`
only ever runs a schema whose keywords have the types it expects.
"""
from __future__ import annotations

import math
import re
from typing import Any, Iterator

INPUT_SCHEMA_EXTENSION = "urn:a2a-delegation-workbench:skill-input-schema:v1"
RESULTS_EXTENSION = "urn:a2a-delegation-workbench:skill-results:v1"  # wire_card.py

_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool}
_ARTICLES = {"object": "an object", "array": "an array", "string": "a string",
             "boolean": "true or false", "number": "a number", "integer": "an integer"}


def check(value: Any, schema: dict[str, Any], path: str = "input") -> str | None:
    """None if `value` fits `schema`, else why not, naming the field (`input.amount ...`)."""
    return next(_problems(value, schema, path), None)


def problems(value: Any, schema: dict[str, Any], path: str = "", *, most: int = 10) -> list[str]:
    """Every way `value` does not fit `schema` (up to `most`), each naming its field."""
    found = []
    for problem in _problems(value, schema, path):
        found.append(problem)
        if len(found) == most:
            break
    return found


_NUMBERS = ("exclusiveMinimum", "minimum", "maximum", "multipleOf")
_COUNTS = ("minItems", "minLength", "maxLength")
MAX_PATTERN = 1000


def unreadable(schema: Any, path: str = "schema", depth: int = 0) -> str | None:
    """Why `schema` is not one `check` can run (naming where), or None. Keywords outside
    the subset are ignored, as JSON Schema ignores unknown keywords."""
    if not isinstance(schema, dict):
        return f"{path} must be an object"
    if depth > 8:
        return f"{path} is nested deeper than 8 levels"
    if not isinstance(schema.get("type", "object"), str) or schema.get("type", "object") not in _ARTICLES:
        return f"{path}.type must be one of {sorted(_ARTICLES)}"
    for name in _NUMBERS + _COUNTS:
        value = schema.get(name, 0)
        if isinstance(value, bool) or not isinstance(value, int if name in _COUNTS else (int, float)) \
                or not -1e15 < value < 1e15 or (name in _COUNTS + ("multipleOf",) and value < 0):
            return f"{path}.{name} must be a {'count' if name in _COUNTS else 'number'} in range"
    pattern = schema.get("pattern", "")
    if not isinstance(pattern, str) or len(pattern) > MAX_PATTERN:
        return f"{path}.pattern must be text of at most {MAX_PATTERN} characters"
    try:
        re.compile(_ecma(pattern), re.ASCII)
    except (re.error, RecursionError, OverflowError):
        return f"{path}.pattern is not a regular expression"
    required, properties = schema.get("required", []), schema.get("properties", {})
    if not isinstance(required, list) or not all(isinstance(name, str) for name in required):
        return f"{path}.required must be a list of names"
    if not isinstance(properties, dict) or not isinstance(schema.get("additionalProperties", True), bool):
        return f"{path}.properties must be an object, additionalProperties true or false"
    inner = [(f"{path}.properties.{name[:40]}", item) for name, item in properties.items()]
    inner += [(f"{path}.items", schema["items"])] if "items" in schema else []
    return next((found for where, item in inner if (found := unreadable(item, where, depth + 1))), None)


def _problems(value: Any, schema: dict[str, Any], path: str) -> Iterator[str]:
    kind = schema.get("type")
    if kind in ("number", "integer"):
        problem = _check_number(value, schema, path, integer=kind == "integer")
        if problem:
            yield problem
        return
    if kind in _TYPES and (not isinstance(value, _TYPES[kind]) or
                           (kind != "boolean" and isinstance(value, bool))):
        yield f"{path or 'the document'} must be {_ARTICLES[kind]}"
        return
    if kind == "string":
        if not schema.get("minLength", 0) <= len(value) <= schema.get("maxLength", 1 << 30):
            yield f"{path} must be {schema.get('minLength', 0)} to {schema.get('maxLength')} characters"
        elif "pattern" in schema and not re.search(_ecma(schema["pattern"]), value, re.ASCII):
            yield f"{path} {value[:60]!r} does not match {schema['pattern'][:80]}"
    if kind == "array":
        if len(value) < schema.get("minItems", 0):
            yield f"{path} must hold at least {schema['minItems']} item(s)"
        for index, item in enumerate(value if "items" in schema else ()):
            yield from _problems(item, schema["items"], f"{path}[{index}]")
    if kind == "object":
        yield from _object_problems(value, schema, path)


def _object_problems(value: dict[str, Any], schema: dict[str, Any], path: str) -> Iterator[str]:
    properties = schema.get("properties", {})
    if schema.get("additionalProperties", True) is False:  # a typo first: "endpont", not "endpoint missing"
        unknown = next((name for name in value if name not in properties), None)
        if unknown is not None:
            yield (f"{path or 'the document'} has an unknown field {unknown[:60]!r} "
                   f"(expected {sorted(properties)})")
            return
    for name in schema.get("required", []):
        if name not in value:
            yield f"{_join(path, name)} is missing"
    for name, item in value.items():
        if name in properties:
            yield from _problems(item, properties[name], _join(path, name))


def _check_number(value: Any, schema: dict[str, Any], path: str, *, integer: bool) -> str | None:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return f"{path} must be {'an integer' if integer else 'a number'}"
    try:
        number = float(value)
    except OverflowError:  # an integer beyond any float: 10**400
        return f"{path} is out of range"
    if not math.isfinite(number):  # NaN or infinity, from a lenient JSON parser
        return f"{path} must be a finite number"
    if integer and not number.is_integer():
        return f"{path} must be an integer"
    if "exclusiveMinimum" in schema and not number > schema["exclusiveMinimum"]:
        return f"{path} must be more than {schema['exclusiveMinimum']}"
    if "minimum" in schema and number < schema["minimum"]:
        return f"{path} must be at least {schema['minimum']}"
    if "maximum" in schema and number > schema["maximum"]:
        return f"{path} must be at most {schema['maximum']:,}"
    step = schema.get("multipleOf")
    quotient = number / step if step else 0.0
    # A few units in the last place of the quotient: what decimal-to-binary rounding
    # leaves on 180.10 / 0.01, and far less than 5000.000000001 is off by (whole cents).
    if step and (not math.isfinite(quotient) or abs(quotient - round(quotient)) > 8 * math.ulp(quotient)):
        return f"{path} must be a multiple of {step}"
    return None


def _ecma(pattern: str) -> str:
    """JSON Schema patterns are ECMA-262 regular expressions, where `$` is the end of the
    text; Python's `$` also matches before a final newline ("ORD-1\\n" would pass). And
    ECMA's \\d is 0-9 only: callers pass re.ASCII, or "٢٠٢٠" would be a year."""
    return pattern[:-1] + r"\Z" if pattern.endswith("$") and not pattern.endswith("\\$") else pattern


def _join(path: str, name: str) -> str:
    name = name if len(name) <= 60 else name[:60] + "..."  # a name from a peer's schema, too
    return f"{path}.{name}" if path else name
