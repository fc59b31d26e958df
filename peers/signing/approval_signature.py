"""A person's approval, signed: evidence about one specific action, from one key (seed 004:
non-delegable decisions; "an approval is evidence about one specific action rather than
a standing permission").

An approval a peer asks for is its exact proposal (order, amount, currency). Anyone who
holds the caller's token can send that proposal back as data, so on its own it proves only
that an agent said yes. Signed, it proves that the holder of the approver's key said yes
to exactly this: the signature is a detached JWS (RS256, as card_signature.py makes)
over the RFC 8785 canonical form of {"approval": proposal, "audience": endpoint, "taskId":
task} - the proposal, the agent it is addressed to (its A2A endpoint) and the task it is
for, so the same signature can release no other amount, at no other agent, for no other
task: a task goes on once, so the approval is used once. The peer pins the approver's
public key, out of band; a `kid` or `jwk` in the header is never used to choose a key.

Not here: who holds the key (a person keeps it, as they keep any secret), or when the
proposal was made (the peer's task says that).
"""
from __future__ import annotations

from peers.signing.jcs import canonical
from transports.codec import loads_strict

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any
    from peers.signing import rs256

ALGORITHM = "RS256"


def signed_content(proposal: Any, audience: str, task_id: str) -> bytes:
    """The bytes an approval's signature covers: the proposal, the agent and the task it is for, JCS."""
    return canonical({"approval": proposal, "audience": audience, "taskId": task_id})


def sign(proposal: dict[str, Any], audience: str, task_id: str, key: rs256.PrivateKey) -> dict[str, str]:
    """The approver's signature of `proposal`, addressed to the agent at `audience` (its A2A
    endpoint), for its task `task_id`: {"protected", "signature"}."""
    from peers.signing import rs256
    protected = rs256.b64url(canonical({"alg": ALGORITHM, "kid": key.public.jwk()["kid"], "typ": "JOSE"}))
    signing_input = f"{protected}.{rs256.b64url(signed_content(proposal, audience, task_id))}".encode("ascii")
    return {"protected": protected, "signature": rs256.b64url(rs256.sign(key, signing_input))}


def unproven(proposal: Any, audience: str, task_id: str, signature: Any, pinned: rs256.PublicKey) -> str | None:
    """Why `signature` does not show that the holder of `pinned` approved exactly `proposal`
    at the agent `audience` for task `task_id`; None if it does. Each reason is one line a
    caller can act on."""
    from peers.signing import rs256
    kid = pinned.jwk()["kid"]
    if signature is None:
        return (f"the approval is unsigned: an agent's say-so is not a person's; it must be signed by the "
                f"approver key the peer pins (kid {kid[:12]}...)")
    header = None
    if isinstance(signature, dict) and isinstance(signature.get("protected"), str) \
            and isinstance(signature.get("signature"), str):
        try:
            header = loads_strict(rs256.from_b64url(signature["protected"]))
        except ValueError:
            header = None
    if not isinstance(header, dict) or header.get("alg") != ALGORITHM or "crit" in header:
        return f'the approval\'s "signature" is not an {ALGORITHM} JWS ({{"protected", "signature"}})'
    if header.get("kid") != kid:  # refused by its label, unchecked: the label is all that is known
        return (f"the approval's signature names another key (kid {str(header.get('kid'))[:12]!r}), not the "
                f"approver key the peer pins (kid {kid[:12]}...)")
    try:
        raw = rs256.from_b64url(signature["signature"])
        content = signed_content(proposal, audience, task_id)
    except ValueError:
        raw, content = b"", b""
    if not rs256.verify(pinned, f"{signature['protected']}.{rs256.b64url(content)}".encode("ascii"), raw):
        return ("the signature does not verify under the approver key the peer pins, for this proposal for this "
                "task at this agent (altered after it was signed, or signed for another task or agent: an approval "
                "is used once, for one task; or signed by another key claiming the approver's kid)")
    return None
