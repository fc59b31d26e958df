"""A part made the first time it is asked for: once, whichever thread asks first.

A peer's webhooks (push.py), streams (streaming.py) and ListTasks cursors
(pages.py) are parts most runs never use: the essay's run meets none of them. Made on
first use, their code loads only in the runs that use them (bench/startup.py measures the
start). Like functools.cached_property, but locked on every Python (3.12 dropped
cached_property's lock): two requests racing to register a first webhook make one set of
webhooks, not two with one registration lost. Once made, the part is a plain attribute.
"""

from __future__ import annotations

from _thread import allocate_lock  # threading.Lock itself, without loading threading (peers/ledger.py)

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable


class made_on_first_use:  # noqa: N801 - a decorator, spelled as `property` is
    def __init__(self, make: Callable[[Any], Any]) -> None:
        self.make, self.lock, self.__doc__ = make, allocate_lock(), make.__doc__
        self.name = make.__name__

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self
        with self.lock:  # the first caller makes it; one racing it waits, then finds it made
            made = instance.__dict__.get(self.name)
            if made is None:
                made = instance.__dict__[self.name] = self.make(instance)
        return made
