"""`a2a_delegation.py check URL`: from its settings to the report and the exit status.

The agent at URL (its base URL or its card's) is graded by the table of requirements
(requirements.py): its card (card_checks), the protocol on each binding its card declares
(protocol_checks), its authentication (auth_checks). Every frame crosses our own network
transport under a deadline and is recorded by the printer, secrets masked; --verbose
shows each as it crosses. Checking is not delegating: the allowlist is not read. Exit
status 0 when no MUST fails, 1 when one fails or goes unasked because the agent stalled (report.py's
`unasked`), 2 for a usage error (a flag, a file, a
URL that is not one, an agent that cannot be reached at all, or a --binding its card declares
none of that we can ask), said in one line.
With --deep it also sends messages, which may cause effects (deep_run: the task, stream,
push and, with --other-caller's second credential store, callers families); the report says
so. Not here: the checks themselves (each family's module).
"""
from __future__ import annotations

from peers.a2a.wire_format import CARD_PATH, card_url, declared_by, names_a_card
from peers.support.check import auth_checks, card_checks, deep_run, protocol_checks
from peers.support.check.probe import Budgeted, Probe
from peers.support.check.reach import origin_of, pin_card_host, reaches
from peers.support.check.report import Report, as_json, graded, junit, said, text
from peers.support.output import Kind
from transports.base import parse_url
from transports.masking import mask_body, query_secrets
from transports.printer import FramePrinter

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

BUDGET = 40.0  # seconds for the whole run: an agent slow at every answer costs this, not a deadline per check
PER_TIMEOUT = 8  # and at most this many --timeouts: a short --timeout shortens the whole run with it


def check(settings: Any, console: Any) -> int:
    """The report, printed or written to --out; the exit status."""
    ready = _ready(settings)
    if isinstance(ready, str):
        console.say(f"check: {ready}", Kind.ERROR)
        return 2
    console.held = ready[3]  # a key in the URL's query too, said back by a line saying it cannot be reached
    quiet_stdout = settings.format != "text" and not settings.out  # a JSON or XML report owns stdout
    report = examine(settings, *ready, console.frame if settings.verbose and not quiet_stdout else None)
    if isinstance(report, str):
        console.say(f"check: {report}", Kind.ERROR)
        return 2
    written = {"json": as_json, "junit": junit}.get(settings.format, lambda made: text(made, settings.verbose))(report) \
        if settings.format != "html" else _html(report)
    if settings.out:
        try:  # checked writable before the run; the disk may still be full, or the folder gone
            from transports.named_files import open_to_write
            with open_to_write(settings.out) as file:
                file.write(written + "\n")
        except OSError as exc:
            console.say(f"check: --out {settings.out}: {exc.strerror or exc}", Kind.ERROR)
            return 2
        console.say(f"check: the report is in {settings.out}")
        console.say(f"check: {_summary(report)}")
    else:
        print(written)
    return report.exit_status


def examine(settings: Any, store: dict[str, Any], other_store: dict[str, Any] | None, card_key: Any,
            held: tuple[str, ...], show: Any = None) -> Report | str:
    """The report of the agent at settings.url (each frame to `show` as it crosses, if given),
    or the one line saying it cannot be reached. The live page calls this too, with the
    credential it holds (web/checking.py)."""
    from transports.network import HttpTransport
    printer = FramePrinter(HttpTransport(timeout=settings.timeout, max_body=1 << 20), show,
                           verbose=settings.verbose, held=held)
    probe = Probe(printer, settings.timeout, min(BUDGET, PER_TIMEOUT * settings.timeout))
    target, moved = card_at(settings.url)
    pin_card_host(target, printer.inner.pinned, probe.deadline)
    answer, frames = card_checks.fetched(probe, target)
    if answer.status is None and not answer.reached:
        printer.inner.close()
        return f"{settings.url[:200]} cannot be reached: {answer.failure}"
    verdicts = card_checks.checks(probe, target, answer, frames, card_key)
    if moved:  # said where the card was looked for, and why not where the URL's path would put it
        verdicts[0] = verdicts[0]._replace(detail=f"{moved}: {verdicts[0].detail}")
    document = card_checks.card_of(answer)
    found, unreached = [], "no card was read, so nothing past it was asked"
    if document is not None:
        found = reaches(document, target, store, Budgeted(probe), settings.binding, printer.inner.pinned, probe.deadline)
        if settings.binding and all(reach.binding is None for reach in found):  # asked for one, and none measured
            printer.inner.close()
            return _unasked(settings.binding.upper(), found, declared_by(document).NAME)
        unmeasured = [reach.name for reach in found if reach.binding is None]
        unreached = ("the card declares no interface in its own version to ask" if not found else
                     f"not asked: its binding is not declared, or not measured ({', '.join(unmeasured)}: "
                     "WB-BIND-MEASURED-001 says why)" if unmeasured else
                     f"not asked: --binding {settings.binding} asked for that binding alone" if settings.binding else
                     "not asked: the card declares no binding it applies to")
        verdicts += protocol_checks.checks(probe, found, _push_declared(document))
        verdicts += auth_checks.checks(probe, found, document)
    if document is not None and settings.deep:
        others = reaches(document, target, other_store, Budgeted(probe), settings.binding, printer.inner.pinned,
                         probe.deadline) \
            if other_store is not None else None
        verdicts += deep_run.checks(probe, found, others, document)
    else:
        verdicts += deep_run.skipped()
    printer.inner.close()
    card = {"name": said(document["name"], held) if document is not None and isinstance(document.get("name"), str)
            else "?",  # cut, as every value the agent controls is in a report (a card may be a megabyte of name)
            "version": declared_by(document).NAME if document is not None else "?",
            "bindings": [reach.name + ("" if origin_of(reach.endpoint) == origin_of(target) else
                                       f" (at {origin_of(reach.endpoint)}, not the card's origin)") for reach in found]}
    return Report(mask_body(target, held), card, graded(verdicts, unreached), held, settings.deep)  # a key in its query


def card_at(url: str) -> tuple[str, str]:
    """Where the agent at `url` serves its card, and what to say of it: a card's URL is its own;
    a base URL's card is at its origin's root (8.2: https://{server_domain}/.well-known/agent-card.json,
    RFC 8615), whatever path the base URL has; that path moved from is said ("" when there is none)."""
    parsed = parse_url(url)
    if names_a_card(url) or parsed is None or parsed.path == "/":
        return card_url(url), ""
    _, mark, query = url.split("#", 1)[0].partition("?")
    return (card_url(parsed.origin + mark + query), f"asked at the origin's root, where 8.2 puts the well-known "
            f"card, not under {parsed.path[:80]} (give the card's own URL if it is served elsewhere)")


def _unasked(binding: str, found: list[Any], version: str) -> str:
    """Why a run asked for one binding (--binding) measured none: exit status 2, not a report of nothing."""
    if not found:
        return f"--binding {binding.lower()}: the A2A {version} card declares no {binding} interface; nothing was asked"
    return (f"--binding {binding.lower()}: the A2A {version} card declares {binding} at {found[0].endpoint[:80]}, "
            f"{found[0].not_asked or 'not measured: not a binding this checker speaks'}; nothing was asked")


def _summary(report: Report) -> str:
    from peers.support.check.report import summary_line
    return summary_line(report)


def _html(report: Report) -> str:
    from peers.support.check.report_html import page
    return page(report)


def _push_declared(document: dict[str, Any]) -> bool:
    capabilities = document.get("capabilities")
    return isinstance(capabilities, dict) and capabilities.get("pushNotifications") is True


def _ready(settings: Any) -> tuple[dict[str, Any], dict[str, Any] | None, Any, tuple[str, ...]] | str:
    """What the run needs, read before any frame is sent; or the one line saying what is wrong."""
    from peers.support.calling.config import load_credentials, unwritable, written_over
    from peers.support.calling.files import ConfigError
    parsed = parse_url(settings.url)
    if parsed is None:
        return f"{settings.url[:200]!r} is not an http(s) URL (give the agent's base URL or its card's, ...{CARD_PATH})"
    problem = unwritable("--out", settings.out) or written_over({"--out": settings.out}, {
        "--credentials": settings.credentials, "--other-caller": settings.other_caller, "--card-key": settings.card_key})
    if problem:
        return problem
    try:
        store = load_credentials(_Options(settings.credentials)) if settings.credentials else {}
        other_store = load_credentials(_Options(settings.other_caller)) if settings.other_caller else None
        card_key = _card_key(settings.card_key) if settings.card_key else None
    except (ConfigError, ValueError) as exc:
        return str(exc)
    held = tuple(secret for entry in (*store.values(), *(other_store or {}).values())
                 for secret in ((entry,) if isinstance(entry, str) else entry.secrets())) + query_secrets((settings.url,))
    return store, other_store, card_key, held


class _Options:
    """What load_credentials reads of a run's settings: the file, and no --token-env or --peer."""

    def __init__(self, credentials: str) -> None:
        self.credentials, self.token_env, self.peer = credentials, None, ()


def _card_key(path: str) -> Any:
    """--card-key FILE: the public JWK a signed card's signature is checked with."""
    from peers.signing.algorithms import public_from_jwk
    from peers.support.calling.files import ConfigError
    from transports.codec import loads_strict
    try:
        from transports.named_files import read_named
        text = read_named(path, 1 << 16)
        if len(text) > 1 << 16:  # read no further: a JWK is a few hundred bytes; cut, it would be misread as broken JSON
            raise ConfigError(f"--card-key {path}: larger than 65,536 bytes; is it a public JWK?")
        return public_from_jwk(loads_strict(text))
    except OSError as exc:
        raise ConfigError(f"--card-key {path}: {exc.strerror or exc}") from None
    except ValueError as exc:  # not JSON, or not a public key we can check with (BadKey is a ValueError?)
        raise ConfigError(f"--card-key {path}: {exc}") from None
