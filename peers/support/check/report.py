"""The report of a check: each requirement's verdict, failures first, with its frames and fix,
as text (about a screen), JSON (a stable schema, below), or JUnit XML (for CI); HTML is
report_html.py's.

A requirement judged on two bindings is one line: it fails if it failed on either (each
binding's verdict stays listed under it). A MAY the agent does not do never fails: it is a
skip whose line begins NOT_DONE ("NOT DONE" in the text report, counted as not done). A
requirement no check reached is a skip with the reason the run gives (no card to read, no
binding we speak). The frames shown are the
printer's records: headers masked there, bodies masked here against what our store holds.
The exit status: 1 when a MUST failed or went unasked because the agent stalled (`unasked`), 0 otherwise
(2, a usage error, never gets here).

The JSON schema (SCHEMA; "schema": "a2a-workbench-check/1", changed only by a new number):
{"schema", "target", "card": {"name", "version", "bindings"}, "deep": false,
 "allowlist": "not consulted", "exit_status": 0|1,
 "summary": {"MUST"|"SHOULD"|"MAY": {"pass", "fail", "skip", "not measured": counts}},
 "requirements": [{"id", "section", "level", "title", "fix", "outcome",
   "verdicts": [{"binding": str|null, "outcome", "detail",
     "frames": [{"direction": "-->"|"<--", "method", "url", "status": int|null, "headers", "body"}]}]}]}
A frame's body is kept to KEPT_BODY characters and its URL to SHOWN_LINE, each cut saying
how much more there was ("... (N more characters)").
"""

from __future__ import annotations

import json
from collections import Counter

from peers.support.check.probe import FAIL, NOT_MEASURED, PASS, SKIP, STALLED, Verdict
from peers.support.check.requirements import LEVELS, REQUIREMENTS, Requirement
from transports.escaping import escape
from transports.masking import mask_body
from transports.printer import Frame
from transports.records import Record

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

FOLDED = 3  # skips saying one reason this often are one line (28 need --deep): a line each filled a screen with one reason
ORDER = {FAIL: 0, PASS: 1, SKIP: 2, NOT_MEASURED: 3}
NOT_DONE = "not done, which a MAY leaves to the agent: "  # how a MAY's unmet verdict begins (a skip, never a fail)
SHOWN_BODY = 240  # characters of a body in the text report (--verbose printed every frame whole)
SHOWN_LINE = 400  # characters of a verdict's line, or a URL, in any report: an agent's value it quotes may be any size
KEPT_BODY = 16 << 10  # characters of a body in the JSON report: enough to read, and a report stays small
                      # when an agent answers every probe with a megabyte (one frame is quoted by many verdicts)
_STRING, _ENUM = {"type": "string"}, {"type": "string", "enum": [PASS, FAIL, SKIP, NOT_MEASURED]}
_FRAME = {"type": "object", "required": ["direction", "method", "url", "status", "headers", "body"],
          "properties": {"direction": {"type": "string", "enum": ["-->", "<--"]}, "method": _STRING, "url": _STRING,
                         "headers": {"type": "object"}, "body": _STRING}}
SCHEMA = {"type": "object", "required": ["schema", "target", "card", "deep", "allowlist", "exit_status", "summary",
                                         "requirements"],
          "properties": {"schema": {"type": "string", "enum": ["a2a-workbench-check/1"]}, "target": _STRING,
                         "card": {"type": "object", "required": ["name", "version", "bindings"]},
                         "deep": {"type": "boolean"}, "allowlist": _STRING,
                         "exit_status": {"type": "integer", "enum": [0, 1]}, "summary": {"type": "object"},
                         "requirements": {"type": "array", "items": {
                             "type": "object", "required": ["id", "section", "level", "title", "fix", "outcome",
                                                            "verdicts"],
                             "properties": {"id": _STRING, "level": {"type": "string", "enum": list(LEVELS)},
                                            "outcome": _ENUM, "verdicts": {"type": "array", "items": {
                                                "type": "object", "required": ["binding", "outcome", "detail", "frames"],
                                                "properties": {"outcome": _ENUM, "detail": _STRING,
                                                               "frames": {"type": "array", "items": _FRAME}}}}}}}}}


class Graded(Record):
    requirement: Requirement
    outcome: str
    verdicts: tuple[Verdict, ...]


class Report(Record):
    target: str
    card: dict[str, Any]  # name, version, bindings (what the card says, for the heading)
    graded: tuple[Graded, ...]  # failures first
    held: tuple[str, ...]  # our store's secrets: masked wherever a body shows one
    deep: bool = False  # --deep: messages were sent, which may have caused effects

    @property
    def exit_status(self) -> int:
        """1 where a MUST failed, or went unasked because the agent stalled (`unasked`): a gate passes no agent
        that lets its requests run past their deadlines, whatever the MUSTs it was never asked would say. One slow
        but on time, that spends the run's budget (8 --timeouts, at most 40 s), leaves its MUSTs not judged."""
        return 1 if self.failed or self.unasked else 0

    @property
    def failed(self) -> bool:
        return any(g.outcome == FAIL and g.requirement.level == "MUST" for g in self.graded)

    @property
    def unasked(self) -> int:
        """MUSTs left unjudged because the agent stalled: requests in a row past their deadline (STALLED)."""
        return sum(1 for g in self.graded if went_unasked(g))


def went_unasked(row: Graded) -> bool:
    """A MUST skipped, unasked, because the agent let its requests run past their deadline: the exit status
    fails it (`Report.exit_status`), and a JUnit report says it as an error, so a dashboard agrees."""
    return row.requirement.level == "MUST" and row.outcome == SKIP and any(
        v.detail.startswith(STALLED) for v in row.verdicts)


def graded(verdicts: list[Verdict], unreached: str) -> tuple[Graded, ...]:
    """Each requirement with its verdicts and one outcome, failures first, then the table's order."""
    rows = []
    for requirement in REQUIREMENTS:
        mine = tuple(_optional(v, requirement) for v in verdicts if v.id == requirement.id)
        outcomes = {v.outcome for v in mine}
        outcome = next((each for each in (FAIL, PASS, NOT_MEASURED, SKIP) if each in outcomes), SKIP)
        rows.append(Graded(requirement, outcome, mine or (Verdict(requirement.id, SKIP, unreached),)))
    return tuple(sorted(rows, key=lambda row: (ORDER[row.outcome], LEVELS.index(row.requirement.level)
                                               if row.outcome == FAIL else 0)))


def _optional(verdict: Verdict, requirement: Requirement) -> Verdict:
    """A MAY the agent does not do is no failure: it is said as not done, and skipped."""
    if requirement.level != "MAY" or verdict.outcome != FAIL:
        return verdict
    return verdict._replace(outcome=SKIP, detail=NOT_DONE + verdict.detail)


def not_done(row: Graded) -> bool:
    return row.outcome == SKIP and any(v.detail.startswith(NOT_DONE) for v in row.verdicts)


def said(detail: str, held: tuple[str, ...]) -> str:
    """A verdict's line as a report shows it: an agent may echo our credential into a value the
    line quotes (a task id, a contextId), so what our store holds is masked here too; and cut
    short, as the value may be a megabyte (the report stays a screen)."""
    return _cut(mask_body(detail, held), SHOWN_LINE)


def _cut(text: str, limit: int) -> str:
    return f"{text[:limit]} ... ({len(text) - limit} more characters)" if len(text) > limit else text


def frame_line(frame: Frame, held: tuple[str, ...], limit: int | None = SHOWN_BODY) -> str:
    """A frame as the printer shows it: direction, request line or status, the body (masked)."""
    body = mask_body(frame.body.decode("utf-8", "backslashreplace"), held).replace("\n", " ")
    if limit is not None:
        body = _cut(body, limit)
    head = f"{frame.http_method} {_cut(mask_body(frame.url, held), SHOWN_LINE)}" if frame.direction == "-->" else f"{frame.status}"
    return escape(f"{frame.direction} {head} {body}".rstrip())


def text(report: Report, verbose: bool = False) -> str:
    card = report.card
    lines = [escape(f"check {report.target}: {card['name']!s:.60} (A2A {card['version']}; bindings "
                    f"{', '.join(card['bindings']) or 'none'})"),
             "Checking is not delegating: the allowlist was not consulted; --deep sent messages, which may have "
             "caused effects (point it at a test instance)." if report.deep else
             "Checking is not delegating: the allowlist was not consulted, and no message that could cause "
             "an effect was sent (--deep would send some)."]
    reasons = {} if verbose else {row.requirement.id: said(row.verdicts[0].detail, report.held)
                                  for row in report.graded if row.outcome == SKIP and not not_done(row)}
    shared, folded = Counter(reasons.values()), set()
    for row in report.graded:
        requirement = row.requirement
        reason = reasons.get(requirement.id)
        if shared[reason] >= FOLDED:  # one line for them all, where the first would stand: the report stays a screen
            lines += [] if reason in folded else [_folded(report, reason, reasons)]
            folded.add(reason)
            continue
        outcome = "NOT DONE" if not_done(row) else row.outcome.upper()
        lines.append(f"{outcome:12} {requirement.level:6} {requirement.id:22} {requirement.title} [{requirement.section}]")
        if row.outcome == FAIL or verbose:
            for each in row.verdicts:
                lines.append(escape(f"    {each.binding + ': ' if each.binding else ''}{each.outcome}: "
                                    f"{said(each.detail, report.held)}"))
                if each.outcome == FAIL:
                    lines += [f"      {frame_line(frame, report.held)}" for frame in each.frames[:4]]
            if row.outcome == FAIL:
                lines.append(f"    fix: {requirement.fix}")
        elif row.outcome in (SKIP, NOT_MEASURED):
            lines[-1] += escape(f": {said(row.verdicts[0].detail, report.held)}")
    lines.append(summary_line(report))
    return "\n".join(lines)


def _folded(report: Report, reason: str, reasons: dict[str, str]) -> str:
    """Skips that say one reason, as one line: how many, of which levels, why, and their ids."""
    rows = [row.requirement for row in report.graded if reasons.get(row.requirement.id) == reason]
    levels = ", ".join(f"{sum(r.level == level for r in rows)} {level}" for level in LEVELS
                       if any(r.level == level for r in rows))
    return escape(f"{'SKIP':12} {len(rows)} requirements ({levels}), each {reason}: "
                  f"{', '.join(r.id for r in rows)} (--verbose lists each)")


def counts(report: Report) -> dict[str, dict[str, int]]:
    return {level: {outcome: sum(1 for g in report.graded if g.requirement.level == level and g.outcome == outcome)
                    for outcome in (PASS, FAIL, SKIP, NOT_MEASURED)} for level in LEVELS}


def summary_line(report: Report) -> str:
    found = counts(report)
    undone = {level: 0 for level in LEVELS}  # MAYs only: skipped, never failed
    undone["MAY"] = sum(1 for row in report.graded if not_done(row))
    said = "; ".join(f"{level}: {found[level][PASS]} pass, " + (f"{undone[level]} not done, " if level == "MAY" else
                                                                 f"{found[level][FAIL]} fail, ")
                     + f"{found[level][SKIP] + found[level][NOT_MEASURED] - undone[level]} not judged" for level in LEVELS)
    unjudged = found["MUST"][SKIP] + found["MUST"][NOT_MEASURED]
    verdict = "a MUST failed" if report.failed else f"{report.unasked} MUST(s) never asked: the agent let its " \
        "requests run past their deadline (each says so)" if report.unasked else "every MUST passes" if not unjudged else \
        f"no MUST failed ({unjudged} not judged: each says why)"
    return f"{said}. Exit status {report.exit_status}: {verdict}."


def as_json(report: Report) -> str:
    return json.dumps({
        "schema": "a2a-workbench-check/1", "target": report.target, "card": report.card, "deep": report.deep,
        "allowlist": "not consulted", "exit_status": report.exit_status, "summary": counts(report),
        "requirements": [{**{field: getattr(g.requirement, field) for field in ("id", "section", "level", "title", "fix")},
                          "outcome": g.outcome, "verdicts": [
                              {"binding": v.binding, "outcome": v.outcome, "detail": said(v.detail, report.held),
                               "frames": [_frame(frame, report.held) for frame in v.frames]} for v in g.verdicts]}
                         for g in report.graded]}, indent=2, ensure_ascii=True)


def _frame(frame: Frame, held: tuple[str, ...]) -> dict[str, Any]:
    return {"direction": frame.direction, "method": frame.http_method, "url": _cut(mask_body(frame.url, held), SHOWN_LINE),
            "status": frame.status, "headers": dict(frame.headers),
            "body": _cut(mask_body(frame.body.decode("utf-8", "backslashreplace"), held), KEPT_BODY)}


def junit(report: Report) -> str:
    from xml.sax.saxutils import escape as xml, quoteattr
    failures = sum(1 for g in report.graded if g.outcome == FAIL)
    errors = sum(1 for g in report.graded if went_unasked(g))
    skipped = sum(1 for g in report.graded if g.outcome in (SKIP, NOT_MEASURED)) - errors
    cases = []
    for row in report.graded:
        requirement = row.requirement
        name = quoteattr(escape(f"{requirement.id} {requirement.title}"))
        inner = ""
        if row.outcome == FAIL:
            seen = "\n".join(escape(f"{v.binding or ''} {v.outcome}: {said(v.detail, report.held)}") for v in row.verdicts)
            frames = "\n".join(frame_line(f, report.held) for v in row.verdicts if v.outcome == FAIL for f in v.frames[:4])
            message = quoteattr(escape(said(row.verdicts[0].detail, report.held))[:300])
            inner = f"<failure message={message}>{xml(seen + chr(10) + frames + chr(10) + 'fix: ' + requirement.fix)}</failure>"
        elif went_unasked(row):
            inner = f"<error message={quoteattr(escape(said(row.verdicts[0].detail, report.held))[:300])}/>"
        elif row.outcome in (SKIP, NOT_MEASURED):
            inner = f"<skipped message={quoteattr(escape(row.outcome + ': ' + said(row.verdicts[0].detail, report.held))[:300])}/>"
        cases.append(f'  <testcase classname="{requirement.level}.{requirement.family}" name={name}>{inner}</testcase>')
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name={quoteattr(escape("a2a check " + report.target))} '
            f'tests="{len(report.graded)}" failures="{failures}" errors="{errors}" skipped="{skipped}">\n' + "\n".join(cases)
            + "\n</testsuite>\n")
