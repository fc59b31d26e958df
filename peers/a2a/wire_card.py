"""What A2A 0.3 and 1.0 cards share: skills, capabilities (with the extensions that carry
each skill's contract), security schemes. The versions differ in the card's outer shape,
which wire_v03.py and wire_v10.py write and read; these parts they spell alike.

A2A's AgentSkill has no field for the input a skill takes or the results it ends in, so
a card publishes them as extensions declared in its capabilities (spec: "Extensions"),
each with a URI that carries its version: `INPUT_SCHEMA_EXTENSION` (JSON Schema of each
skill's input) and `RESULTS_EXTENSION` (each skill's result variants: the task states it
ends in, and what each means). A card's contract the reader cannot read is refused,
not half applied. Reading raises `WireError` naming the field.
"""
from __future__ import annotations

from peers.a2a.fields import WireError, field, obj, strings, url
from peers.a2a.model import PAUSED, TERMINAL, AgentCard, AgentSkill, SecurityScheme
from peers.a2a.schema import INPUT_SCHEMA_EXTENSION, RESULTS_EXTENSION, check, unreadable
from peers.a2a.security_schemes import BEARER, WRAPPED, kind_of

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

# A skill's result variants, as a card may declare them: the A2A task states, each with
# a sentence saying what that ending means for this skill.
RESULTS_SCHEMA = {"type": "object", "additionalProperties": False, "properties": {
    state.value: {"type": "string", "minLength": 1, "maxLength": 300} for state in TERMINAL | PAUSED}}


def card_schema(required: list[str], where: dict[str, Any]) -> dict[str, Any]:
    """A card's required fields as JSON Schema, for the one checker: every problem is named.
    `where` adds what only this version has (1.0's supportedInterfaces, 0.3's url)."""
    text = {"type": "string"}
    words = {"type": "array", "items": text}
    skill = {"type": "object", "required": ["id", "name", "description", "tags"],
             "properties": {"id": {"type": "string", "minLength": 1}, "name": text,
                            "description": text, "tags": words}}
    return {"type": "object", "required": required,
            "properties": {"name": {"type": "string", "minLength": 1}, "description": text,
                           "version": text, "capabilities": {"type": "object"},
                           "defaultInputModes": words, "defaultOutputModes": words,
                           "skills": {"type": "array", "items": skill}, **where}}


def skills_to_wire(card: AgentCard, version: str) -> list[dict[str, Any]]:
    """Each skill as `version` ("1.0" or "0.3") spells it: its own modes (which override the
    card's defaults: what this skill takes and answers), its examples, and what it asks of
    a caller beyond the card (1.0 securityRequirements, 0.3 security)."""
    skills = []
    for each in card.skills:
        skill: dict[str, Any] = {"id": each.id, "name": each.name or each.id, "description": each.description,
                                 "tags": list(each.tags), "inputModes": list(each.input_modes),
                                 "outputModes": list(each.output_modes)}
        if each.examples:
            skill["examples"] = list(each.examples)
        if each.security_requirements:
            skill.update(_requirements(each.security_requirements, version))
        skills.append(skill)
    return skills


def _requirements(required: tuple[dict[str, tuple[str, ...]], ...], version: str) -> dict[str, Any]:
    if version == "1.0":
        return {"securityRequirements": [{"schemes": {name: {"list": list(scopes)} for name, scopes in each.items()}}
                                         for each in required]}
    return {"security": [{name: list(scopes) for name, scopes in each.items()} for each in required]}


def about_to_wire(card: AgentCard) -> dict[str, Any]:
    """Who runs the agent and where its documentation and icon are, as both versions spell
    them; each left out when the card has none."""
    about: dict[str, Any] = {}
    if card.provider:
        about["provider"] = {"organization": card.provider.organization, "url": card.provider.url}
    if card.documentation_url:
        about["documentationUrl"] = card.documentation_url
    if card.icon_url:
        about["iconUrl"] = card.icon_url
    return about


def capabilities_to_wire(card: AgentCard) -> dict[str, Any]:
    caps: dict[str, Any] = {"streaming": card.streaming, "pushNotifications": card.push_notifications}
    if card.extended_card:  # 1.0's place for it (0.3 says supportsAuthenticatedExtendedCard)
        caps["extendedAgentCard"] = True
    # AgentSkill has no field for either contract: extensions on the card carry them. An
    # extension's `required` is written only when true: false is its default, which proto3
    # JSON leaves out, so a card signed here verifies in the official SDK and back.
    extensions = []
    schemas = {s.id: s.input_schema for s in card.skills if s.input_schema}
    if schemas:
        extensions.append({"uri": INPUT_SCHEMA_EXTENSION, **_required(INPUT_SCHEMA_EXTENSION, card),
                           "description": "JSON Schema of each skill's input, by skill id", "params": schemas})
    results = {s.id: s.results for s in card.skills if s.results}
    if results:
        extensions.append({"uri": RESULTS_EXTENSION, **_required(RESULTS_EXTENSION, card),
                           "description": "the task states each skill ends in, and what each means",
                           "params": results})
    # Any other extension the card requires: declared with no params, as only its URI is known.
    written = {INPUT_SCHEMA_EXTENSION} if schemas else set()
    written |= {RESULTS_EXTENSION} if results else set()
    extensions += [{"uri": uri, "required": True} for uri in card.required_extensions if uri not in written]
    if extensions:
        caps["extensions"] = extensions
    return caps


def _required(uri: str, card: AgentCard) -> dict[str, bool]:
    return {"required": True} if uri in card.required_extensions else {}


def _extension(extensions: list[Any], uri: str) -> dict[str, Any]:
    """The params of the card's extension `uri`, if it declares it with an object; else {}."""
    return next((e["params"] for e in extensions if isinstance(e, dict) and e.get("uri") == uri
                 and isinstance(e.get("params"), dict)), {})


def skills_from_wire(card: dict[str, Any]) -> tuple[AgentSkill, ...]:
    caps = card.get("capabilities") if isinstance(card.get("capabilities"), dict) else {}
    extensions = caps.get("extensions") if isinstance(caps.get("extensions"), list) else []
    schemas, results = _extension(extensions, INPUT_SCHEMA_EXTENSION), _extension(extensions, RESULTS_EXTENSION)
    defaults = {key: strings(field(card, card_key, list, default=[]), card_key)
                for key, card_key in (("inputModes", "defaultInputModes"), ("outputModes", "defaultOutputModes"))}
    skills = []
    for index, value in enumerate(field(card, "skills", list)):
        skill, where = obj(value, f"skills[{index}]"), f"skills[{index}]."
        skill_id = field(skill, "id", str, where)
        schema = schemas.get(skill_id)
        if schema is not None and (problem := unreadable(schema, f"the input schema of {skill_id[:40]!r}")):
            raise WireError(problem)  # a contract we cannot read is refused, not half-applied
        ends = results.get(skill_id)
        if ends is not None:
            problem = check(ends, RESULTS_SCHEMA, f"the result variants of {skill_id[:40]!r}")
            if problem:
                raise WireError(problem)
        # A skill's modes override the card's defaults; an empty list is no override: in
        # proto3 it cannot be told from an unset one, and SDKs write [] for "not set".
        modes = {key: strings(field(skill, key, list, where, default=[]), where + key) or defaults[key]
                 for key in ("inputModes", "outputModes")}
        skills.append(AgentSkill(skill_id, field(skill, "description", str, where, default=""),
                                 name=field(skill, "name", str, where, default=""),
                                 input_modes=tuple(modes["inputModes"]),  # its own, else the card's defaults
                                 output_modes=tuple(modes["outputModes"]),
                                 tags=tuple(strings(field(skill, "tags", list, where, default=[]),
                                                    where + "tags")),
                                 input_schema=schema, results=ends))
    return tuple(skills)


def security_from_wire(card: dict[str, Any], version: str) -> dict[str, Any]:
    """The card's securitySchemes and what it requires of them, read back as
    `security_to_wire` writes them ("1.0": the proto's oneof wrappers and
    securityRequirements; "0.3": OpenAPI's, and security), as AgentCard's fields:
    `auth_schemes` ("bearer" for HTTP Bearer; ("none",) for none), `security_schemes`
    and `security_requirements` (each a scheme name -> the scopes it lists). A scheme of
    a kind we do not know is kept, typed "unknown", so a caller can say what it would
    need; a wrong type raises WireError."""
    declared = []
    for name, value in obj(card.get("securitySchemes", {}), "securitySchemes").items():
        where = f"securitySchemes.{name[:40]}."
        scheme = obj(value, where[:-1])
        declared.append((_scheme_from_v10 if version == "1.0" else _scheme_from_v03)(name[:100], scheme, where))
    key = "securityRequirements" if version == "1.0" else "security"
    required = []
    for index, requirement in enumerate(field(card, key, list, default=[])):
        where = f"{key}[{index}]"
        schemes = obj(requirement, where)
        if version == "1.0":  # {"schemes": {name: {"list": [scope, ...]}}}; 0.3: {name: [scope, ...]}
            schemes = obj(schemes.get("schemes", {}), f"{where}.schemes")
        # The scopes are kept: they, not every scope a flow declares, are what a token is asked for
        # (a signature covers a listed scope; a flow's scope described by "" it does not: oauth_tokens.py).
        required.append({name[:100]: _listed(scopes, version, f"{where}.{name[:40]}")
                         for name, scopes in schemes.items()})
    bearer = [scheme.name for scheme in declared if kind_of(scheme) is BEARER]
    return {"auth_schemes": tuple(BEARER.kind if s.name in bearer else s.name for s in declared) or ("none",),
            "security_schemes": tuple(declared), "security_requirements": tuple(required)}


def _listed(scopes: Any, version: str, where: str) -> tuple[str, ...]:
    """One scheme's scopes in a requirement: 1.0's {"list": [...]} (protobuf writes {} for none), 0.3's list."""
    listed = field(obj(scopes, where), "list", list, where + ".", default=[]) if version == "1.0" else scopes
    if not isinstance(listed, list):
        raise WireError(f"{where} must be an array", where)
    return tuple(strings(listed, where))


def _scheme_from_v10(name: str, scheme: dict[str, Any], where: str) -> SecurityScheme:
    kind = next((key for key in WRAPPED if key in scheme), None)
    inner = obj(scheme[kind], where + kind) if kind else {}
    return _scheme(name, WRAPPED.get(kind, "unknown"), inner, f"{where}{kind}.", inner.get("flows"))


def _scheme_from_v03(name: str, scheme: dict[str, Any], where: str) -> SecurityScheme:
    kind = scheme.get("type")
    return _scheme(name, kind if kind in WRAPPED.values() else "unknown", scheme, where, scheme.get("flows"))


def _scheme(name: str, kind: str, inner: dict[str, Any], where: str, flows: Any) -> SecurityScheme:
    """One scheme's fields, each checked; an OAuth2 scheme without a client credentials
    flow keeps no token URL (the only flow a program acting for itself can use)."""
    if kind == "http":
        return SecurityScheme(name, kind, field(inner, "scheme", str, where))
    if kind == "apiKey":
        return SecurityScheme(name, kind, key_name=field(inner, "name", str, where),
                              location=field(inner, "location" if "location" in inner else "in", str, where))
    if kind == "oauth2":
        flow = obj(obj(flows, where + "flows").get("clientCredentials", {}), where + "flows.clientCredentials")
        scopes = obj(flow.get("scopes", {}), where + "flows.clientCredentials.scopes")
        token_url = url(field(flow, "tokenUrl", str, where), where + "tokenUrl") if flow else ""
        return SecurityScheme(name, kind, token_url=token_url, scopes=tuple((s, str(m)) for s, m in scopes.items()))
    if kind == "openIdConnect":
        return SecurityScheme(name, kind, open_id_connect_url=url(field(inner, "openIdConnectUrl", str, where),
                                                                  where + "openIdConnectUrl"))
    return SecurityScheme(name, kind)


def security_to_wire(card: AgentCard, version: str) -> dict[str, Any]:
    """The card's securitySchemes and its requirement of them, as `version` ("1.0": the
    proto's oneof wrappers and securityRequirements; "0.3": OpenAPI's, and security)."""
    declared = card.security_schemes or ((BEARER.declared(BEARER.kind),)
                                         if BEARER.kind in card.auth_schemes else ())
    if not declared:
        return {}
    schemes = {scheme.name: (_scheme_v10 if version == "1.0" else _scheme_v03)(scheme) for scheme in declared}
    # The card's requirements as they are, so a card written and read back is the card; the
    # essay's (bearer named, no scheme spelled out) requires that bearer token, with no scope.
    required = card.security_requirements if card.security_schemes else ({BEARER.kind: ()},)
    return {"securitySchemes": schemes, **(_requirements(required, version) if required else {})}


def _scheme_v10(scheme: SecurityScheme) -> dict[str, Any]:
    if scheme.type == "http":
        return {"httpAuthSecurityScheme": {"scheme": scheme.scheme}}
    if scheme.type == "apiKey":
        return {"apiKeySecurityScheme": {"location": scheme.location, "name": scheme.key_name}}
    if scheme.type == "oauth2":
        return {"oauth2SecurityScheme": {"flows": {"clientCredentials": {
            "tokenUrl": scheme.token_url, "scopes": dict(scheme.scopes)}}}}
    if scheme.type == "openIdConnect":
        return {"openIdConnectSecurityScheme": {"openIdConnectUrl": scheme.open_id_connect_url}}
    row = kind_of(scheme)  # a kind with no fields of its own (mutual TLS); one we do not know, as read
    return {row.wrapper: {}} if row else {}


def _scheme_v03(scheme: SecurityScheme) -> dict[str, Any]:
    if scheme.type == "http":
        return {"type": "http", "scheme": scheme.scheme.lower()}
    if scheme.type == "apiKey":
        return {"type": "apiKey", "in": scheme.location, "name": scheme.key_name}
    if scheme.type == "oauth2":
        return {"type": "oauth2", "flows": {"clientCredentials": {
            "tokenUrl": scheme.token_url, "scopes": dict(scheme.scopes)}}}
    if scheme.type == "openIdConnect":
        return {"type": "openIdConnect", "openIdConnectUrl": scheme.open_id_connect_url}
    return {"type": scheme.type}  # a kind with no fields of its own (mutual TLS); one we do not know, as read
