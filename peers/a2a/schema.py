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
exclusiveMinimum, minimum, maximum, multipleOf, enum (of strings, numbers, booleans or
null: compared as JSON compares them, so true is not 1), and default. `problems` lists
every way a value does not fit (a card with three faults names all three); `check` gives
the first. A schema a peer publishes is itself hostile input: `unreadable` judges its
shape first, so `check` only ever runs a schema whose keywords have the types it expects,
and it refuses a schema that uses a JSON Schema keyword outside the subset (`const`,
`oneOf`, `maxItems` ...): ignored, it would let through what its author meant to refuse.

`default` (seed 000's contract, as Zod's `.default`): the receiver fills it in. The
sender may leave an optional field out; the receiver checks what arrived, then
`with_defaults` gives the value with each missing optional field's default (peers/skill.py
does this for a skill's input). Never before the check, so a default cannot stand in for
a required field; and a schema whose default does not fit its own field, or that gives a
required field a default, is unreadable.
"""
from __future__ import annotations

import itertools
import math
import re

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
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
    return list(itertools.islice(_problems(value, schema, path), most))


_NUMBERS = ("exclusiveMinimum", "minimum", "maximum", "multipleOf")
_COUNTS = ("minItems", "minLength", "maxLength")
MAX_PATTERN = 1000
MAX_ENUM = 1000  # members: a list of allowed values, not a database
# JSON Schema's assertions and applicators this checker does not read: a schema using one is
# refused, not half-applied. (Annotations such as title, description, examples or format
# assert nothing by default, and other names are no keyword at all: both are ignored.)
UNREAD = ("const", "exclusiveMaximum", "maxItems", "uniqueItems", "contains", "minContains", "maxContains",
          "prefixItems", "additionalItems", "unevaluatedItems", "minProperties", "maxProperties",
          "patternProperties", "propertyNames", "dependentRequired", "dependentSchemas", "dependencies",
          "unevaluatedProperties", "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "$ref", "$dynamicRef")


def unreadable(schema: Any, path: str = "schema", depth: int = 0) -> str | None:
    """Why `schema` is not one `check` can run (naming where), or None. A JSON Schema
    keyword outside the subset (UNREAD) is refused; a name that is no keyword (an
    annotation, a vendor's x-...) is ignored, as JSON Schema ignores unknown keywords."""
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
    unread = next((name for name in UNREAD if name in schema), None)
    if unread is not None:
        return f"{path} uses {unread!r}, which this checker does not read, so it would let through what it refuses"
    if "enum" in schema and _bad_enum(schema["enum"]):
        return (f"{path}.enum must be a list of 1 to {MAX_ENUM} strings, finite numbers, booleans or nulls "
                "(this checker compares no objects or lists)")
    inner = [(f"{path}.properties.{name[:40]}", item) for name, item in properties.items()]
    inner += [(f"{path}.items", schema["items"])] if "items" in schema else []
    found = next((found for where, item in inner if (found := unreadable(item, where, depth + 1))), None)
    if found is None and "default" in schema:  # its own field's rules, checked once they are readable
        problem = check(schema["default"], {k: v for k, v in schema.items() if k != "default"}, f"{path}.default")
        found = f"{problem}: a default must fit its own field" if problem else None
    defaulted = next((name for name in required if isinstance(properties.get(name), dict)
                      and "default" in properties[name]), None)
    if found is None and defaulted is not None:
        found = (f"{path}.properties.{defaulted[:40]} is required and has a default: a default fills in only a "
                 "missing optional field")
    return found


def _bad_enum(members: Any) -> bool:
    return not isinstance(members, list) or not 1 <= len(members) <= MAX_ENUM or not all(
        member is None or isinstance(member, (str, bool, int))
        or (isinstance(member, float) and math.isfinite(member)) for member in members)


def same_scalar(value: Any, member: Any) -> bool:
    """JSON equality of scalars (an enum's members, two claims' leaves: skill.py): true is not 1, 1 is 1.0."""
    if isinstance(value, bool) or isinstance(member, bool) or value is None or member is None:
        return value is member
    if isinstance(value, (int, float)) and isinstance(member, (int, float)):
        return value == member  # exact for int and float alike, and never raises
    return type(value) is type(member) is str and value == member


def with_defaults(value: Any, schema: dict[str, Any]) -> Any:
    """`value` (which fits `schema`) with each missing optional field's default filled in,
    in objects at any depth; a new value, so the schema's defaults are never shared."""
    if isinstance(value, dict) and isinstance(schema.get("properties"), dict):
        filled = dict(value)  # in the value's order, then each default in the schema's
        for name, item in schema["properties"].items():
            if name in filled and isinstance(item, dict) and ("properties" in item or "items" in item):
                filled[name] = with_defaults(filled[name], item)  # an object or array within: filled in too
            elif name not in filled and isinstance(item, dict) and "default" in item:
                import copy  # here: only a schema with a default needs it, and the essay's run has none
                filled[name] = copy.deepcopy(item["default"])
        return filled
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [with_defaults(item, schema["items"]) for item in value]
    return value


def _problems(value: Any, schema: dict[str, Any], path: str) -> Iterator[str]:
    problem = _value_problem(value, schema, path)
    if problem is not None:
        yield problem
        return
    kind = schema.get("type")
    if kind == "array" and len(value) < schema.get("minItems", 0):
        yield f"{path} must hold at least {schema['minItems']} item(s)"
    for index, item in enumerate(value if kind == "array" and "items" in schema else ()):
        yield from _problems(item, schema["items"], f"{path}[{index}]")
    if kind == "object":
        yield from _object_problems(value, schema, path)


def _value_problem(value: Any, schema: dict[str, Any], path: str) -> str | None:
    """What is wrong with a value as a whole (enum, type, a number's or a string's bounds), not
    the items or fields within it: a call, not a generator (most values are strings and numbers)."""
    kind = schema.get("type")
    if "enum" in schema and not any(same_scalar(value, member) for member in schema["enum"]):
        shown = ", ".join(repr(member)[:40] for member in schema["enum"][:8])
        more = f" and {len(schema['enum']) - 8} more" if len(schema["enum"]) > 8 else ""
        return f"{path or 'the document'} {_shown(value)} is not one of {shown}{more}"
    if kind in ("number", "integer"):
        return _check_number(value, schema, path, integer=kind == "integer")
    if kind in _TYPES and (not isinstance(value, _TYPES[kind]) or (kind != "boolean" and isinstance(value, bool))):
        return f"{path or 'the document'} must be {_ARTICLES[kind]}"
    if kind == "string":
        if not schema.get("minLength", 0) <= len(value) <= schema.get("maxLength", 1 << 30):
            least, most = schema.get("minLength", 0), schema.get("maxLength")
            return f"{path} must be " + (f"{least} to {most} characters" if most is not None else
                                         f"at least {least} character{'s' * (least != 1)}")
        if "pattern" in schema and not _pattern(schema["pattern"]).search(value):
            return f"{path} {value[:60]!r} does not match {schema['pattern'][:80]}"
    return None


def _object_problems(value: dict[str, Any], schema: dict[str, Any], path: str) -> Iterator[str]:
    properties = schema.get("properties", {})
    if schema.get("additionalProperties", True) is False and not value.keys() <= properties.keys():
        unknown = next(name for name in value if name not in properties)  # a typo first: "endpont",
        yield (f"{path or 'the document'} has an unknown field {unknown[:60]!r} "  # not "endpoint missing"
               f"(expected {sorted(properties)})")
        return
    for name in schema.get("required", []):
        if name not in value:
            yield f"{_join(path, name)} is missing"
    for name, item in value.items():
        inner = properties.get(name)
        if inner is None:
            continue
        if inner.get("type") in ("array", "object"):
            yield from _problems(item, inner, _join(path, name))
        else:  # a string, a number, a boolean, an enum: no generator
            problem = _value_problem(item, inner, _join(path, name))
            if problem is not None:
                yield problem


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


_PATTERNS: dict[str, re.Pattern[str]] = {}  # compiled once each; a peer's schemas cannot grow it past 256


def _pattern(pattern: str) -> re.Pattern[str]:  # one `unreadable` has found to compile
    compiled = _PATTERNS.get(pattern)
    if compiled is None:
        if len(_PATTERNS) >= 256:
            _PATTERNS.clear()
        compiled = _PATTERNS[pattern] = re.compile(_ecma(pattern), re.ASCII)
    return compiled


def _ecma(pattern: str) -> str:
    """JSON Schema patterns are ECMA-262 regular expressions, where `$` is the end of the
    text; Python's `$` also matches before a final newline ("ORD-1\\n" would pass). And
    ECMA's \\d is 0-9 only: callers pass re.ASCII, or "٢٠٢٠" would be a year."""
    return pattern[:-1] + r"\Z" if pattern.endswith("$") and not pattern.endswith("\\$") else pattern


def _shown(value: Any) -> str:
    """A value from outside, short, in one line: for a message that names it."""
    if isinstance(value, (dict, list)):
        return "(an object)" if isinstance(value, dict) else "(a list)"
    return repr(value)[:60]


def _join(path: str, name: str) -> str:
    name = name if len(name) <= 60 else name[:60] + "..."  # a name from a peer's schema, too
    return f"{path}.{name}" if path else name
