"""What a handoff never carries: the transferor's credentials (seed 004).

"What we do not send is the transcript, the receiver's persona prompt, or the
transferor's credentials. The receiver gets its own audience-bound credentials from the
platform. A bearer token sitting in a handoff payload is a permission escalation with
extra steps." Both sides apply the rule: the support agent before it sends anything (no
frame leaves), billing on any envelope it is sent (-32602 naming where the credential sits
and why). A credential is recognised by its member's name, by text that reads like an
Authorization header's value, or, for the sender, by being one of its own secrets.
Small and without imports beyond `re`: the essay's run checks what it sends too.
"""
from __future__ import annotations

import re

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

# Member names that hold a credential, compared without case, "-" or "_" (accessToken,
# access_token, API-Key ...); and how a credential reads as an Authorization header's value.
CREDENTIAL_NAMES = frozenset({"token", "accesstoken", "refreshtoken", "idtoken", "sessiontoken", "bearer",
                              "bearertoken", "authorization", "apikey", "password", "secret", "clientsecret",
                              "credential", "credentials", "cookie", "privatekey"})
# A token has a digit or a sign in it, a capital after a small letter, or is long: "Basic
# dXNlcjpwYXNz", "Bearer t0k", but not "basic plan" or "Bearer Bonds", which are words.
CREDENTIAL_TEXT = (r"(?i:bearer|basic)\s+(?=[A-Za-z0-9._~+/=-]*(?:[0-9._~+/=-]|[a-z][A-Z])|[A-Za-z]{20})"
                   r"[A-Za-z0-9._~+/=-]+")  # compiled when text that starts so is first met (reads_like)
ESCALATION = ("a bearer token sitting in a handoff payload is a permission escalation with extra steps "
              "(seed 004): credentials travel in HTTP Authorization, never in a payload")


def credential_in(value: Any, where: str, held: frozenset[str] = frozenset()) -> str | None:
    """Where in `value` a credential sits, said with why that is refused; None if nowhere.
    A credential is a member named like one, text that reads like an Authorization header's value,
    or (`held`: the sender's own secrets) any of those. Walks at most 10,000 values and 32
    levels: a value from outside may be anything, and deeper than that carries no envelope."""
    stack, budget = [(value, where, 0)], 10_000
    while stack and budget:
        budget -= 1
        item, path, depth = stack.pop()
        if isinstance(item, str):
            if reads_like_a_credential(item) or item in held:
                return f"{path} carries a credential: {ESCALATION}"
        elif depth < 32 and isinstance(item, dict):
            for key, member in item.items():
                name = f"{path}.{str(key)[:40]}"
                if "".join(c for c in str(key).lower() if c.isalnum()) in CREDENTIAL_NAMES:
                    return f"{name} is a credential: {ESCALATION}"
                stack.append((member, name, depth + 1))
        elif depth < 32 and isinstance(item, list):
            stack.extend((member, f"{path}[{index}]", depth + 1) for index, member in enumerate(item[:budget]))
    return None


def reads_like_a_credential(text: str) -> bool:
    """Whether `text` reads as an Authorization header's value ("Bearer t0k"). The pattern is
    compiled only for text that starts like one: most payloads hold none."""
    if not text[:6].lower().startswith(("bearer", "basic")):
        return False
    return re.fullmatch(CREDENTIAL_TEXT, text[:4096]) is not None  # re keeps the compiled pattern
