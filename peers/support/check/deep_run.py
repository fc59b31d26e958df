"""--deep, in order: on each binding the card declares, the task family, streams and push
configs, and (with --other-caller) caller B against caller A's task; then the same task
over both bindings. Without --deep, each of those requirements is a skip saying why.

Spec: A2A 1.0 sections 3.1, 3.4, 3.5, 5.1, 13.1 (each family's module names its own).
Caller B's credential comes from the second store, attached by the same calling side as
A's (reach.py), so B differs from A only in who it proves to be. Not here: the checks
themselves (task_checks, stream_checks, caller_checks).
"""
from __future__ import annotations

from peers.a2a.bindings import JSONRPC
from peers.support.check import caller_checks, stream_checks, task_checks
from peers.support.check.deep_asking import Deep
from peers.support.check.probe import SKIP, Verdict
from peers.support.check.reach import Reach
from peers.support.check.requirements import DEEP

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

NOT_DEEP = "not asked: it needs --deep, which sends messages that may cause effects (point it at a test instance)"


def skipped() -> list[Verdict]:
    """Every --deep requirement, skipped: the run was not deep (nor was --other-caller given:
    without --deep it is a usage error, cli/command_line.py)."""
    return [Verdict(row.id, SKIP, NOT_DEEP) for row in DEEP]


def checks(probe: Any, reaches: list[Reach], others: list[Reach] | None, document: dict[str, Any]) -> list[Verdict]:
    """Every --deep verdict; `others`: caller B's reaches (None: no --other-caller)."""
    capabilities = document.get("capabilities") if isinstance(document.get("capabilities"), dict) else {}
    streaming, push = capabilities.get("streaming") is True, capabilities.get("pushNotifications") is True
    found: list[Verdict] = []
    deeps, tasks = [], {}
    for reach in reaches:
        if reach.binding is None:
            continue
        deep = Deep(probe, reach, document)
        deeps.append(deep)
        made, task = task_checks.checks(deep)
        found += made
        tasks[reach.name] = task
        found += stream_checks.streams(deep, streaming)
        found += stream_checks.pushes(deep, push, task)
        found += caller_checks.checks(deep, *_theirs(probe, reach, others, document), streaming)
    found += task_checks.compared(deeps, tasks.get(JSONRPC.name))
    return found


def _theirs(probe: Any, reach: Reach, others: list[Reach] | None, document: dict[str, Any]) -> tuple[Deep | None, str]:
    if others is None:
        return None, "not asked: give --other-caller FILE, a second caller's credential store"
    other = next((each for each in others if each.name == reach.name), None)
    if other is None or other.credential is None:
        return None, f"--other-caller holds no credential for {reach.endpoint[:80]}" + (
            f" ({other.why})" if other is not None and other.why else "")
    if other.credential == reach.credential:
        return None, "--other-caller holds the same credential as --credentials: one caller, not two"
    return Deep(probe, other, document), ""
