"""The three wire formats by name, and how to tell which one a card speaks.

A wire format is a module with the same names (see wire_essay.py). The support agent
picks the one a peer's card declares: a 1.0 card lists `supportedInterfaces`, a 0.3 card
has a top-level `protocolVersion`, and the essay's card has neither. A served peer
answers all three on one endpoint, choosing by method name, and serves the card of one.
Modules load when first needed, so the essay's run never pays for 0.3 and 1.0.
"""
from __future__ import annotations

from importlib import import_module
from types import ModuleType
from typing import Any

from transports.jsonrpc import Handler

NAMES = ("essay", "0.3", "1.0")
_MODULES = {"essay": "peers.wire_essay", "0.3": "peers.wire_v03", "1.0": "peers.wire_v10"}
# Which wire owns each JSON-RPC method name; the names never collide across versions.
METHOD_OWNERS = {"tasks/send": "essay",
                 **dict.fromkeys(["message/send", "tasks/get", "tasks/cancel", "message/stream",
                                  "tasks/resubscribe", "tasks/pushNotificationConfig/set",
                                  "tasks/pushNotificationConfig/get",
                                  "tasks/pushNotificationConfig/list",
                                  "tasks/pushNotificationConfig/delete",
                                  "agent/getAuthenticatedExtendedCard"], "0.3"),
                 **dict.fromkeys(["SendMessage", "GetTask", "CancelTask", "ListTasks",
                                  "SendStreamingMessage", "SubscribeToTask",
                                  "CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig",
                                  "ListTaskPushNotificationConfigs",
                                  "DeleteTaskPushNotificationConfig", "GetExtendedAgentCard"], "1.0")}


def wire(name: str) -> ModuleType:
    return import_module(_MODULES[name])


def declared_by(card: Any) -> ModuleType:
    if isinstance(card, dict) and "supportedInterfaces" in card:
        return wire("1.0")
    if isinstance(card, dict) and "protocolVersion" in card:
        return wire("0.3")
    return wire("essay")


class AllMethods:
    """Every wire's JSON-RPC methods for one peer, as the mapping dispatch() looks in."""

    def __init__(self, peer: Any) -> None:
        self.peer = peer
        self._tables: dict[str, dict[str, Handler]] = {}

    def get(self, method: str) -> Handler | None:
        owner = METHOD_OWNERS.get(method)
        if owner is None:
            return None
        if owner not in self._tables:  # a race here only builds the same table twice
            self._tables[owner] = wire(owner).methods(self.peer)
        return self._tables[owner].get(method)
