"""What --deep's messages carry: what the card's first skill accepts, a data part made from
the input schema the card publishes for it (the workbench's skill-input-schema extension),
else a text part (a data part where the skill takes JSON and not text). The card is the
agent's, so anything: read leniently, never a traceback. Not here: sending (deep_asking.py).
"""
from __future__ import annotations

import secrets

from peers.a2a.model import Part

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

SCHEMA_EXTENSION = "urn:a2a-delegation-workbench:skill-input-schema:v1"
RUN = secrets.token_hex(4)  # this run's: messageIds of two runs never collide, nor their example values


def part_for(document: dict[str, Any], count: int) -> Part:
    """What the card's first skill takes: an example of the input schema the card publishes
    for it (each required field, of its type), else a line of text."""
    skills = document.get("skills") if isinstance(document.get("skills"), list) else []
    skill = skills[0].get("id") if skills and isinstance(skills[0], dict) else None
    capabilities = document.get("capabilities") if isinstance(document.get("capabilities"), dict) else {}
    extensions = capabilities.get("extensions") if isinstance(capabilities.get("extensions"), list) else []
    schemas = next((each.get("params") for each in extensions if isinstance(each, dict)
                    and each.get("uri") == SCHEMA_EXTENSION and isinstance(each.get("params"), dict)), {})
    schema = schemas.get(skill) if isinstance(skill, str) else None
    if isinstance(schema, dict) and schema.get("type") == "object" and isinstance(schema.get("properties"), dict):
        required = schema.get("required") if isinstance(schema.get("required"), list) else []  # the agent's data
        example = {name: _example(schema["properties"].get(name), count) for name in required if isinstance(name, str)}
        return Part(data=example)
    modes = skills[0].get("inputModes") if skills and isinstance(skills[0], dict) else None
    modes = modes if isinstance(modes, list) and modes else document.get("defaultInputModes")
    if isinstance(modes, list) and "text/plain" not in modes and "application/json" in modes:
        return Part(data={"text": f"hello from a2a-workbench check ({count})"})  # JSON, where text is not taken
    return Part(text=f"hello from a2a-workbench check ({count})")


def _example(schema: Any, count: int) -> Any:
    kind = schema.get("type") if isinstance(schema, dict) else None  # the agent's, so anything
    kind = next((each for each in kind if each != "null"), None) if isinstance(kind, list) else kind  # ["number", "null"]
    return {"number": 1.0, "integer": 1, "boolean": False, "array": [], "object": {}}.get(
        kind if isinstance(kind, str) else None, f"WB-CHECK-{RUN}-{count}")
