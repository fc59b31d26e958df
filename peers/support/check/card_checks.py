"""The card family: the Agent Card fetched, its caching headers, its fields, its dialects,
its signatures.

Spec: A2A 1.0 section 8 (discovery 8.2, interfaces 8.3, signatures 8.4, caching 8.6) and
4.4-4.5 (the card's fields, its security). The card is judged against the version it
declares (peers/a2a/wire_format.declared_by): a 1.0 card against 1.0's required fields,
a 0.3 card against 0.3's, and a card that is not 1.0's is one SHOULD finding, not a crash.
Each dialect the calling side recognises (card_dialects.py) is named as a finding. A
signature is verified only with a key given to the checker (--card-key): a header's `jku`
or `jwk` is never trusted to say whose key signed the card. Not here: the protocol.
"""
from __future__ import annotations

import re

from peers.a2a.schema import problems
from peers.a2a.wire_format import declared_by
from peers.support.check.probe import SKIP, Answer, Probe, Verdict, verdict
from transports.base import ClientRequest, parse_url
from transports.printer import Frame

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

MEDIA_TYPE = re.compile(r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}/(?:\*|[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126})"
                        r"(?:\s*;.*)?|\*/\*")


STALE_TAG = '"wb-check-no-such-tag"'  # a tag no card has: a 304 to it is a 304 to any


def fetched(probe: Probe, card_url: str) -> tuple[Answer, tuple[Frame, ...]]:
    """The card, asked for as a client discovering the agent would."""
    return probe.send(ClientRequest("GET", card_url, {"Accept": "application/json"}))


def card_of(answer: Answer) -> dict[str, Any] | None:
    """The card document, if what came back is one to read at all."""
    return answer.document if answer.status == 200 and isinstance(answer.document, dict) else None


def checks(probe: Probe, card_url: str, answer: Answer, frames: tuple[Frame, ...],
           card_key: Any = None) -> list[Verdict]:
    document = card_of(answer)
    found = [verdict("CARD-DISC-001", document is not None and answer.content_type.endswith("json"),
                     f"{answer.said()}, Content-Type {answer.content_type or '(none)'}", frames, answer=answer)]
    if document is None:
        return found
    said = answer.said()
    spoken = declared_by(document)
    interfaces = document.get("supportedInterfaces")
    versions = [each.get("protocolVersion") for each in interfaces if isinstance(each, dict)] \
        if isinstance(interfaces, list) else []
    found.append(verdict("WB-CARD-VERSION-001", any(str(v).split(".")[:2] == ["1", "0"] for v in versions),
                         f"the card is {spoken.NAME}'s" + (f", its interfaces' versions {versions[:4]}" if versions else ""),
                         frames))
    missing = problems(document, spoken.CARD_SCHEMA, "card", most=5)
    found.append(verdict("CARD-STRUCT-001", not missing, "; ".join(missing) or f"every field {spoken.NAME} requires",
                         frames))
    found += _interfaces(interfaces, spoken.NAME, frames)
    if spoken.NAME == "0.3":  # CARD-PROTO-002's rule, of the interfaces a 0.3 card declares as 0.3 does
        found[-1] = _interfaces_03(document, frames)
    found += _modes_and_skills(document, frames)
    found += _security(document, spoken.NAME, frames)
    found += _signatures(document, card_key, frames)
    found += _caching(probe, card_url, answer, frames, said)
    return found


def _interfaces(interfaces: Any, version: str, frames: tuple[Frame, ...]) -> list[Verdict]:
    if version != "1.0":
        fields = "url, preferredTransport and additionalInterfaces" if version == "0.3" else "url"
        return [Verdict(id, SKIP, f"a {version} card declares its interfaces in its {fields}, which 1.0's "
                        "supportedInterfaces replaced: this rule is 1.0's", frames)
                for id in ("CARD-PROTO-001", "CARD-PROTO-002")]
    listed = interfaces if isinstance(interfaces, list) else []
    known = [each.get("protocolBinding") for each in listed if isinstance(each, dict)]
    bad = [f"supportedInterfaces[{index}]" for index, each in enumerate(listed)
           if not isinstance(each, dict) or parse_url(each.get("url")) is None
           or not all(isinstance(each.get(name), str) and each.get(name) for name in ("protocolBinding", "protocolVersion"))]
    return [verdict("CARD-PROTO-001", any(name in ("JSONRPC", "HTTP+JSON", "GRPC") for name in known),
                    f"bindings listed: {known[:6]}", frames),
            verdict("CARD-PROTO-002", bool(listed) and not bad,
                    f"{', '.join(bad[:4])} lack an http(s) url, a protocolBinding or a protocolVersion" if bad
                    else f"{len(listed)} interface(s), each complete", frames)]


def _interfaces_03(document: dict[str, Any], frames: tuple[Frame, ...]) -> Verdict:
    """A 0.3 card's interfaces: its url, then additionalInterfaces, each {url, transport} (0.3 section 5.6).
    One of those with no http(s) url is left out, here (reach.offered) and by the calling side, which
    says so in one line and still asks the card's url; a card whose own url is none, it refuses."""
    more = document.get("additionalInterfaces")
    listed = more if isinstance(more, list) else []
    bad = [f"additionalInterfaces[{index}]" for index, each in enumerate(listed) if not isinstance(each, dict)
           or parse_url(each.get("url")) is None or not isinstance(each.get("transport"), str) or not each["transport"]]
    own = parse_url(document.get("url")) is not None
    said = ("" if own else "its url is no http(s) URL: the calling side refuses the card; ") + (
        f"{', '.join(bad[:4])} lack an http(s) url or a transport: none is asked; the calling side asks one "
        "JSON-RPC interface of the rest, the card's url first"
        if bad else f"its url and {len(listed)} additional interface(s), each complete")
    return verdict("CARD-PROTO-002", own and not bad, said, frames)


def _modes_and_skills(document: dict[str, Any], frames: tuple[Frame, ...]) -> list[Verdict]:
    skills = document.get("skills") if isinstance(document.get("skills"), list) else []
    modes = [(f"{field}", mode) for field in ("defaultInputModes", "defaultOutputModes")
             for mode in (document.get(field) if isinstance(document.get(field), list) else [])]
    modes += [(f"skills[{index}].{field}", mode) for index, skill in enumerate(skills) if isinstance(skill, dict)
              for field in ("inputModes", "outputModes")
              for mode in (skill.get(field) if isinstance(skill.get(field), list) else [])]
    wrong = [f"{where}: {str(mode)[:40]!r}" for where, mode in modes
             if not isinstance(mode, str) or not MEDIA_TYPE.fullmatch(mode)]
    ids = [skill.get("id") for skill in skills if isinstance(skill, dict)]
    repeated = sorted({str(each)[:40] for each in ids if ids.count(each) > 1})
    empty = [index for index, each in enumerate(ids) if not isinstance(each, str) or not each]
    return [verdict("WB-CARD-MODES-001", not wrong, "; ".join(wrong[:4]) or f"{len(modes)} mode(s), each a media type",
                    frames),
            verdict("WB-CARD-SKILLS-001", not repeated and not empty,
                    (f"skill ids used twice: {repeated[:4]}" if repeated else f"skills {empty[:4]} have no id")
                    if repeated or empty else f"{len(ids)} skill(s), ids unique", frames)]


def _security(document: dict[str, Any], version: str, frames: tuple[Frame, ...]) -> list[Verdict]:
    found: list[Verdict] = []
    card = document
    if version == "1.0":
        from peers.support.calling.card_dialects import in_spec_form
        dialects: list[str] = []
        card = in_spec_form(document, False, dialects.append)
        found.append(verdict("WB-CARD-DIALECT-001", not dialects,
                             dialects[0].split(" is not in A2A 1.0's form: ", 1)[-1].removesuffix(
                                 " (--strict-cards refuses such a card)") if dialects else "security in 1.0's own form",
                             frames))
    else:
        found.append(Verdict("WB-CARD-DIALECT-001", SKIP, f"the {version} card: 1.0's security form does not apply", frames))
    declared = card.get("securitySchemes") if isinstance(card.get("securitySchemes"), dict) else {}
    named = _named(card, version) + [name for skill in (card.get("skills") if isinstance(card.get("skills"), list) else [])
                                     if isinstance(skill, dict) for name in _named(skill, version)]
    undeclared = sorted({name[:40] for name in named if name not in declared})
    found.append(verdict("WB-CARD-SCHEMES-001", not undeclared,
                         f"named but not declared: {undeclared[:4]}" if undeclared
                         else f"{len(set(named))} scheme(s) required, each declared", frames))
    return found


def _named(holder: dict[str, Any], version: str) -> list[str]:
    """The scheme names a card's (or a skill's) requirements name."""
    listed = holder.get("securityRequirements" if version == "1.0" else "security")
    names = []
    for each in listed if isinstance(listed, list) else []:
        schemes = each.get("schemes") if version == "1.0" and isinstance(each, dict) else each
        names += [name for name in schemes] if isinstance(schemes, dict) else []
    return names


def _signatures(document: dict[str, Any], card_key: Any, frames: tuple[Frame, ...]) -> list[Verdict]:
    if document.get("signatures") in (None, []):  # an empty list too: proto3 JSON's way of saying none
        return [Verdict(id, SKIP, "the card is not signed", frames) for id in ("CARD-SIGN-003", "CARD-SIGN-001")]
    from peers.signing import rs256
    from peers.signing.card_signature import signed_content, unproven
    from transports.codec import loads_strict
    signed = signed_content(document)
    headers = []
    for entry in signed.signatures:
        try:
            header = loads_strict(rs256.from_b64url(entry["protected"]))
        except (ValueError, TypeError, KeyError):
            header = None
        headers.append(header if isinstance(header, dict) else None)
    lacking = [index for index, header in enumerate(headers) if header is None
               or not all(isinstance(header.get(name), str) for name in ("alg", "kid"))]
    found = [verdict("CARD-SIGN-003", bool(headers) and not lacking,
                     f"signatures {lacking[:4]} have no readable protected header naming alg and kid" if lacking
                     else f"{len(headers)} signature(s), each header naming alg and kid", frames)]
    if card_key is None:
        found.append(Verdict("CARD-SIGN-001", SKIP, "no key to verify with: give --card-key JWK (a header's jku or "
                             "jwk is never trusted to say whose key signed the card)", frames))
    else:
        problem = unproven(signed, card_key)
        found.append(verdict("CARD-SIGN-001", problem is None, f"by --card-key, the agent {problem}" if problem
                             else "a signature verifies with --card-key's key", frames))
    return found


def _caching(probe: Probe, card_url: str, answer: Answer, frames: tuple[Frame, ...], said: str) -> list[Verdict]:
    headers = {name.lower(): value for name, value in answer.headers.items()}
    control, etag = headers.get("cache-control"), headers.get("etag")
    found = [verdict("CARD-CACHE-001", bool(control), f"Cache-Control: {control}" if control else "no Cache-Control",
                     frames),
             verdict("CARD-CACHE-002", bool(etag), f"ETag: {etag}" if etag else "no ETag", frames),
             verdict("CARD-CACHE-003", "last-modified" in headers,
                     f"Last-Modified: {headers['last-modified']}" if "last-modified" in headers else "no Last-Modified",
                     frames)]
    if etag:  # 304 for its tag, carrying it (RFC 9110 15.4.5), and the card for another (13.1.2): a cache
        # answered 304 whatever tag it sent keeps a stale card for good
        again, more = probe.send(ClientRequest("GET", card_url, {"Accept": "application/json", "If-None-Match": etag}))
        tag = next((value for name, value in again.headers.items() if name.lower() == "etag"), "(none)")
        matched = again.status == 304 and tag.removeprefix("W/") == etag.removeprefix("W/")
        other, most = probe.send(ClientRequest("GET", card_url, {"Accept": "application/json",
                                                                 "If-None-Match": STALE_TAG})) if matched else (again, ())
        said = f"If-None-Match {etag[:40]}: {again.said()}" + (
            f" with ETag {tag[:40]}, not the card's {etag[:40]}" if again.status == 304 and not matched else "") + (
            f"; If-None-Match {STALE_TAG}: {other.said()}" + ("" if other.status == 200 else ", not the card")
            if most else "")
        found.append(verdict("WB-CARD-CACHE-004", matched and other.status == 200, said, more + most, answer=other))
    else:
        found.append(Verdict("WB-CARD-CACHE-004", SKIP, "no ETag to send back", frames))
    head, more = probe.send(ClientRequest("HEAD", card_url, {"Accept": "application/json"}))
    same = head.status == answer.status and head.content_type == answer.content_type and not head.body
    body = f", {len(head.body)} bytes of body after its head" if head.body else ""  # which HEAD's answer never has
    found.append(verdict("WB-CARD-HEAD-001", same, f"HEAD: {head.said()}, Content-Type {head.content_type or '(none)'}"
                         f"{body}; GET: {said}, Content-Type {answer.content_type}", more, answer=head))
    return found

