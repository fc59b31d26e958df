"""Tenants: one served agent hosting several partitions behind one endpoint.

Spec: a2a.proto's AgentInterface.tenant ("an opaque string used for routing requests to a
specific agent or tenant when multiple agents are served behind a single A2A endpoint";
the server interprets it), the `tenant` field of every request message, A2A 1.0 section
8.3.2 rule 4 (a client sends exactly the tenant of the interface it chose) and section 11's
`/{tenant}/...` routes. A peer's 1.0 card lists its interfaces once per tenant it serves
(wire_v10.card_to_wire); a card without interfaces (the essay's, 0.3's) serves none.
How a tenant is kept apart: a task's owner, as the store keeps it, is the caller within
the tenant it named (`in_tenant`), and so is a ledger's effect key. Everything keyed by the
owner (tasks, the messages seen, ListTasks's cursors, push configs, streams, what the change
feed tells) is then a partition of its own, with no second set of tables, and one feed. A
caller's shares of streams, of webhooks and their deliveries, and of the store's room are
counted across tenants (streaming.py, push_limits.caller, store.py's `held`), as those bounds
on the whole agent are a few shares; its other shares (paused tasks, the ledger) are per tenant,
so one caller naming several tenants holds at most MAX_TENANTS times one of those.
The default partition (no tenant) keeps the keys it always had, so a store file written
before tenants reads the same. A tenant is refused unless the served card declares it,
and a request naming none is refused by a card that declares only tenants (`partition`).
Not here: where a request carries its tenant (params: JSON-RPC; the path: peers/rest.py).
"""
from __future__ import annotations

import re

from transports.jsonrpc import InvalidParams

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

PREFIX = "tenant:"  # a key within a tenant: "tenant:acme:" + the key; the default's has none
MAX_TENANTS = 20  # a card lists three interfaces for each
# What `serve --tenant NAME` takes: URL-unreserved characters only (RFC 3986 2.3), as a
# card file's tenant (card_files.py), so a tenant is one path segment as it is and never
# holds the ':' that ends it in a key. Not "." or "..", which clients resolve away (RFC
# 3986 5.2.4), and not the first segment of a route (`refused`), which reads as that route.
NAME = r"[A-Za-z0-9._~-]{1,200}"  # compiled on first use: only `serve --tenant` asks


def in_tenant(tenant: str, key: str) -> str:
    """`key` (an owner, an effect) within `tenant`; the default's keys are as they always
    were, save one that would read as a tenant's, which gets the empty tenant's prefix."""
    return f"{PREFIX}{tenant}:{key}" if tenant or key.startswith(PREFIX) else key


def split(key: str) -> tuple[str, str]:
    """(the tenant, the key) an `in_tenant` key was made of."""
    if not key.startswith(PREFIX):
        return "", key
    tenant, _, rest = key[len(PREFIX):].partition(":")
    return tenant, rest


def declared(card: Any) -> frozenset[str]:
    """The tenants a served card's interfaces name ("": an interface naming none; a card
    listing no interfaces serves the default only)."""
    interfaces = card.get("supportedInterfaces") if isinstance(card, dict) else None
    return frozenset(interface.get("tenant", "") for interface in interfaces or [{}])


def partition(params: Any, owner: str, served: frozenset[str]) -> str:
    """The owner of the tasks a request may reach: `owner` within the tenant its params
    name, if the card declares it. Refused with InvalidParams (-32602; HTTP+JSON: 400
    INVALID_ARGUMENT) otherwise. Why that error: the spec defines none for tenants, and
    a2a.proto says a request's tenant must match an interface's; a value the contract
    rules out for a field is an invalid argument, whatever the operation (TaskNotFound
    would be wrong for SendMessage and ListTasks, which name no task)."""
    tenant = params.get("tenant") if isinstance(params, dict) else None
    if tenant is None:  # proto3: absent, null and "" are all unset
        tenant = ""
    if not isinstance(tenant, str):
        raise InvalidParams("tenant must be a string")
    if tenant not in served:
        names = sorted(name for name in served if name)
        listed = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "") + (" and none" if "" in served else "")
        raise InvalidParams(
            "this agent serves no tenants (its card's interfaces name none): send no tenant" if not names else
            f"tenant {tenant[:80]!r} is not one this agent serves; its card's interfaces name {listed}" if tenant
            else f"name a tenant: this agent serves tenants only, as its card's interfaces say ({listed})")
    return in_tenant(tenant, owner)


def refused(names: list[str]) -> str | None:
    """Why `serve --tenant` cannot serve these names, or None ("" is the default partition)."""
    from peers.a2a.routes import ROUTES  # loaded only to serve tenants
    firsts = {route.path.split("/")[0] for route in ROUTES}  # tasks, extendedAgentCard, message:send ...
    not_names = sorted({".", ".."} | {first for first in firsts if ":" not in first})
    bad = next((name for name in names if name and (not re.fullmatch(NAME, name) or name in not_names)), None)
    if bad is not None:
        return (f"{bad[:40]!r} is not a tenant name: 1 to 200 letters, digits and . _ ~ -, "
                f"and not {', '.join(not_names)}")
    if len(set(names)) != len(names):
        return "each tenant is named once"
    if len(names) > MAX_TENANTS:
        return f"at most {MAX_TENANTS} tenants"
    return None
