"""The input a skill takes, and checking a payload against it before any frame carries it.

Seed 000's Handoff Contract: "a typed payload (what's transferred)". A skill's input is
declared as a small JSON Schema (the subset below), carried on 1.0 and 0.3 cards by a
card extension (`INPUT_SCHEMA_EXTENSION`), since A2A's AgentSkill has no schema field.
The essay's card cannot carry it, so the support agent also keeps its own copy of the
contracts it relies on. `check` returns the first problem as one sentence, or None.

Subset: type object/string/number/integer/boolean, properties, required,
additionalProperties: false, minLength/maxLength, pattern, exclusiveMinimum, maximum.
"""
from __future__ import annotations

import re
from typing import Any

INPUT_SCHEMA_EXTENSION = "urn:a2a-delegation-workbench:skill-input-schema:v1"

REFUND_INPUT = {
    "type": "object",
    "properties": {
        "order_id": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"},
        "amount": {"type": "number", "exclusiveMinimum": 0, "maximum": 1000000},
    },
    "required": ["order_id", "amount"],
    "additionalProperties": False,
}

_TYPES = {"object": dict, "string": str, "array": list, "boolean": bool}


def check(value: Any, schema: dict[str, Any], path: str = "input") -> str | None:
    """None if `value` fits `schema`, else why not (naming the field)."""
    kind = schema.get("type")
    if kind in ("number", "integer"):
        is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not is_number or (kind == "integer" and not float(value).is_integer()):
            return f"{path} must be {'an integer' if kind == 'integer' else 'a number'}"
        if "exclusiveMinimum" in schema and not value > schema["exclusiveMinimum"]:
            return f"{path} must be more than {schema['exclusiveMinimum']}"
        if "maximum" in schema and value > schema["maximum"]:
            return f"{path} must be at most {schema['maximum']}"
        return None
    if kind in _TYPES and (not isinstance(value, _TYPES[kind]) or
                           (kind != "boolean" and isinstance(value, bool))):
        return f"{path} must be {'an' if kind[0] in 'ao' else 'a'} {kind}"
    if kind == "string":
        if len(value) < schema.get("minLength", 0) or len(value) > schema.get("maxLength", 1 << 30):
            return f"{path} has the wrong length"
        if "pattern" in schema and not re.search(schema["pattern"], value):
            return f"{path} {value!r} does not match {schema['pattern']}"
    if kind == "object":
        properties = schema.get("properties", {})
        for name in schema.get("required", []):
            if name not in value:
                return f"{path}.{name} is missing"
        for name, item in value.items():
            if name not in properties:
                if schema.get("additionalProperties", True) is False:
                    return f"{path}.{name} is not a field of this skill's input"
                continue
            problem = check(item, properties[name], f"{path}.{name}")
            if problem:
                return problem
    return None
