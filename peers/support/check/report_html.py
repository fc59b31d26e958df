"""The report of a check as one self-contained HTML page: no script, nothing fetched.

The same rows as the text report, failures first, each failure with its frames (secrets
masked) and its fix. The page carries a Content-Security-Policy meta as strict as the live
page's (peers/support/web/pages.py): nothing from anywhere, no script at all, and its one
style block allowed by its hash, so an agent's text in the page (a card's name, a frame's
body, all escaped) stays text.
"""
from __future__ import annotations

import base64
import hashlib
from html import escape as html

from peers.support.check.probe import FAIL
from peers.support.check.report import Report, frame_line, said, summary_line
from transports.escaping import escape

STYLE = ("body{font:14px/1.4 system-ui,sans-serif;margin:2em;max-width:70em}table{border-collapse:collapse;width:100%}"
         "td{border-top:1px solid #ddd;padding:.3em .5em;vertical-align:top}.fail{color:#b00}.pass{color:#070}"
         ".skip,.not{color:#666}pre{white-space:pre-wrap;word-break:break-all;background:#f6f6f6;padding:.5em}")


def policy() -> str:
    digest = base64.b64encode(hashlib.sha256(STYLE.encode()).digest()).decode()
    return (f"default-src 'none'; style-src 'sha256-{digest}'; script-src 'none'; img-src 'none'; "
            "base-uri 'none'; form-action 'none'")


def shown(text: str) -> str:
    """An agent's text in the page: its invisible characters made visible as the terminal's are
    (a lone surrogate, which no UTF-8 page can hold, among them), then HTML-escaped."""
    return html(escape(text))


def page(report: Report) -> str:
    rows = []
    for row in report.graded:
        requirement, outcome = row.requirement, row.outcome
        details = "".join(f"<div>{shown((v.binding + ': ') if v.binding else '')}{html(v.outcome)}: "
                          f"{shown(said(v.detail, report.held))}</div>" for v in row.verdicts)
        if outcome == FAIL:
            frames = "\n".join(frame_line(frame, report.held) for v in row.verdicts if v.outcome == FAIL
                               for frame in v.frames[:4])
            details += (f"<pre>{html(frames)}</pre>" if frames else "") + f"<div>fix: {html(requirement.fix)}</div>"
        rows.append(f'<tr><td class="{outcome.split()[0]}">{html(outcome)}</td><td>{requirement.level}</td>'
                    f"<td>{html(requirement.id)}<br>[{html(requirement.section)}]</td>"
                    f"<td>{html(requirement.title)}{details}</td></tr>")
    card = report.card
    return (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{policy()}">'
            f"<title>check {shown(report.target)}</title><style>{STYLE}</style></head><body>"
            f"<h1>check {shown(str(card['name']))}</h1><p>{shown(report.target)} (A2A {html(str(card['version']))}; "
            f"bindings {shown(', '.join(card['bindings']) or 'none')}). Checking is not delegating: the allowlist "
            + ("was not consulted; --deep sent messages, which may have caused effects.</p>" if report.deep else
               "was not consulted, and no message that could cause an effect was sent.</p>")
            + 
            f"<p>{html(summary_line(report))}</p><table>{''.join(rows)}</table></body></html>")
