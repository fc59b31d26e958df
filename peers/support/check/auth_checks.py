"""The auth family, without --deep: the declared scheme enforced, and the extended card
behind it.

Spec: A2A 1.0 section 7.4 (a server authenticates every request), 3.1.11 (the extended
card, to authenticated callers), 3.3.4 (refused where the card does not declare one);
RFC 9110 11.6.1 (a 401 names its challenge). Each judgement rides on a request with no
effect, GetTask on an id no agent made, so the answer itself tells a refusal (401, or an
auth error) from a request read and processed (TaskNotFoundError). The right credential
is our store's (--credentials), attached by the calling side (reach.py); a wrong one is
made here, of the same shape. A client certificate (mTLS) is presented in the handshake,
not in a header: "not measured". Not here: what a caller may see of another's tasks (--deep).
"""
from __future__ import annotations

import base64

from peers.a2a.security_schemes import kind_of
from peers.a2a.wire_format import method_for
from peers.support.check.probe import NOT_MEASURED, SKIP, Answer, Probe, Verdict, verdict
from peers.support.check.protocol_checks import TASK_NOT_FOUND, UNKNOWN, unauthenticated
from peers.support.check.reach import UNREADABLE, Reach
from transports.printer import Frame

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

WRONG = "wb-check-wrong-credential"
UNSUPPORTED_OPERATION = -32004
AUTH_IDS = ("AUTH-SERVER-002", "WB-AUTH-WRONG-001", "WB-AUTH-RIGHT-001", "WB-AUTH-CHALLENGE-001")


def checks(probe: Probe, reaches: list[Reach], document: dict[str, Any]) -> list[Verdict]:
    spoken = [reach for reach in reaches if reach.binding is not None]
    if not spoken:
        return []
    found: list[Verdict] = []
    for reach in spoken:
        found += _enforced(probe, reach)
    return found + _extended_card(probe, spoken[0], document)


def _ask(probe: Probe, reach: Reach, operation: str, params: Any, credential: dict[str, str] | None
         ) -> tuple[Answer, tuple[Frame, ...]]:
    request, _ = reach.binding.request(reach.endpoint, method_for(reach.wire, operation), params,
                                       {**reach.wire.HEADERS, **(credential or {})}, probe.next_id())
    return probe.send(request)


def refused(answer: Answer, right: Answer | None = None) -> bool:
    """Turned away before the request was read: an HTTP 401 or 403, or an error other than the
    TaskNotFoundError a processed request gets, and other than what the `right` credential gets
    (an agent that answers the same with any credential or none checks none)."""
    return answer.status in (401, 403) or (answer.code is not None and answer.code != TASK_NOT_FOUND
                                           and answer.status is not None and answer.status != 404
                                           and (right is None or (answer.status, answer.code) != (right.status, right.code)))


def _enforced(probe: Probe, reach: Reach) -> list[Verdict]:
    name = reach.name
    if not reach.schemes:
        return [Verdict(id, SKIP, reach.why or "the card declares no security scheme", (), name) for id in AUTH_IDS]
    if all(kind_of(scheme) is not None and kind_of(scheme).in_handshake for scheme in reach.schemes):
        return [Verdict(id, NOT_MEASURED, "a client certificate (mTLS) is presented in the TLS handshake", (), name)
                for id in AUTH_IDS]
    right, rights = _ask(probe, reach, "get", {"id": UNKNOWN}, reach.credential) if reach.credential else (None, ())
    bare, frames = _ask(probe, reach, "get", {"id": UNKNOWN}, None)
    found = [verdict("AUTH-SERVER-002", refused(bare, right), f"no credential: {bare.said()}", frames, name, bare)]
    challenge = next((value for key, value in bare.headers.items() if key.lower() == "www-authenticate"), None)
    found.append(verdict("WB-AUTH-CHALLENGE-001", bare.status != 401 or bool(challenge),
                         f"WWW-Authenticate: {challenge[:80]}" if challenge else f"{bare.said()}, no WWW-Authenticate",
                         frames, name, bare) if bare.status == 401 else
                 Verdict("WB-AUTH-CHALLENGE-001", SKIP, f"no 401 to judge ({bare.said()})", frames, name))
    wrong, frames = _ask(probe, reach, "get", {"id": UNKNOWN}, wrong_credential(reach))
    found.append(verdict("WB-AUTH-WRONG-001", refused(wrong, right), f"a wrong credential: {wrong.said()}", frames,
                         name, wrong))
    if right is None:
        found.append(Verdict("WB-AUTH-RIGHT-001", SKIP, reach.why or "no credential held", (), name))
    else:
        found.append(verdict("WB-AUTH-RIGHT-001", right.code == TASK_NOT_FOUND,
                             f"our credential: {right.said()}", rights, name, right))
    return found


def wrong_credential(reach: Reach) -> dict[str, str]:
    """A credential of the shape the card asks for, with a value no agent issued."""
    if reach.credential:
        return {key: (value.split(" ", 1)[0] + " " + _wrong(value) if " " in value else WRONG)
                for key, value in reach.credential.items()}
    headers: dict[str, str] = {}
    for scheme in reach.schemes:
        if scheme.type == "apiKey" and scheme.location == "header" and scheme.key_name:
            headers[scheme.key_name] = WRONG
        elif scheme.type == "http" and scheme.scheme.lower() == "basic":
            headers["Authorization"] = "Basic " + base64.b64encode(f"{WRONG}:{WRONG}".encode()).decode()
        else:
            headers.setdefault("Authorization", f"Bearer {WRONG}")
    return headers


def _wrong(value: str) -> str:
    scheme = value.split(" ", 1)[0].lower()
    return base64.b64encode(f"{WRONG}:{WRONG}".encode()).decode() if scheme == "basic" else WRONG


def _extended_card(probe: Probe, reach: Reach, document: dict[str, Any]) -> list[Verdict]:
    capabilities = document.get("capabilities") if isinstance(document.get("capabilities"), dict) else {}
    ids = ("CARD-EXT-001", "WB-CARD-EXT-003", "CORE-CAP-003")
    if reach.wire.NAME != "1.0":
        return [Verdict(id, SKIP, f"the {reach.wire.NAME} card: judged on 1.0's GetExtendedAgentCard", (), reach.name)
                for id in ids]
    if capabilities.get("extendedAgentCard") is not True:
        answer, frames = _ask(probe, reach, "extended-card", {}, reach.credential)
        return [Verdict(ids[0], SKIP, "the card declares no extended card", (), reach.name),
                Verdict(ids[1], SKIP, "the card declares no extended card", (), reach.name),
                unauthenticated(ids[2], answer, frames, reach) or verdict(
                    ids[2], answer.code == UNSUPPORTED_OPERATION, f"GetExtendedAgentCard: {answer.said()}",
                    frames, reach.name, answer)]
    if reach.why.startswith(UNREADABLE):  # its schemes unknown: a refusal cannot be judged against them
        return [Verdict(id, SKIP, reach.why, (), reach.name) for id in ids[:2]] + \
            [Verdict(ids[2], SKIP, "the card declares an extended card", (), reach.name)]
    bare, frames = _ask(probe, reach, "extended-card", {}, None)
    found = [verdict(ids[0], bool(reach.schemes) and refused(bare),
                     f"without a credential: {bare.said()}" + ("" if reach.schemes else
                                                               "; the card declares no scheme to authenticate with"),
                     frames, reach.name, bare)]
    if reach.credential is None:
        found.append(Verdict(ids[1], SKIP, reach.why or "no credential held", (), reach.name))
    else:
        answer, frames = _ask(probe, reach, "extended-card", {}, reach.credential)
        card = answer.document.get("result", answer.document) if isinstance(answer.document, dict) else None
        is_card = answer.code is None and isinstance(card, dict) and isinstance(card.get("name"), str)
        found.append(verdict(ids[1], is_card, f"with our credential: {answer.said()}"
                             + ("" if is_card else ", not a card"), frames, reach.name, answer))
    found.append(Verdict(ids[2], SKIP, "the card declares an extended card", (), reach.name))
    return found
