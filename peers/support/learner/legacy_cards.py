"""--legacy-card-path: an agent that still serves its card where A2A 0.2 put it.

A2A 0.3 and 1.0 serve the Agent Card at /.well-known/agent-card.json (1.0 section 8.2,
registered with IANA); A2A 0.1 to 0.2.6 used /.well-known/agent.json. The support
agent asks only at the new path unless told otherwise: an old path found by guessing
would be a second place to plant a card. Asked (this flag), a card that is not at the
new path (404) is fetched from the old one, with a warning, and then checked like any
other card. Both fetches are printed frames: this wraps the printer, and asks it twice.
"""
from __future__ import annotations

from peers.a2a.wire_format import CARD_PATH
from transports.base import HttpResponse, Transport

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable

LEGACY_PATH = "/.well-known/agent.json"


class LegacyCardPath:
    """A transport around the printer that, for a card missing at 1.0's path (404), asks at
    0.2's path too, saying so through `warn` (a hook): both fetches are frames. Anything else
    asked of it is the printer's: a lesson speaks beneath the printer (`beneath`, its `inner`)
    through whatever the support agent speaks through, so this keeps no `inner` of its own."""

    def __init__(self, printer: Transport, warn: Callable[[str], None] = lambda line: None) -> None:
        self.printer, self.warn, self.label = printer, warn, printer.label
        self.post, self.stream, self.send = printer.post, printer.stream, printer.send  # all but a card: the printer's

    def __getattr__(self, name: str) -> Any:  # only what this does not have itself
        if name == "printer":  # not made yet (a copy being made): never a search for it in itself
            raise AttributeError(name)
        return getattr(self.printer, name)

    def get(self, url: str, headers: dict[str, str], **how: Any) -> HttpResponse:
        response = self.printer.get(url, headers, **how)
        if response.status != 404 or not url.endswith(CARD_PATH):
            return response
        legacy = url[:-len(CARD_PATH)] + LEGACY_PATH
        self.warn(f"no card at {url}; trying {legacy}, the path of A2A 0.2 and earlier (--legacy-card-path)")
        return self.printer.get(legacy, headers, **how)
