"""--diagram run.html: one self-contained page that steps through a run, as the essay's
Fig 2 does: the sequence diagram (diagram.py), the list of steps, and a panel with the
current step in full: a frame's pretty-printed body, method, URL, status and masked
headers; a trust decision with its reason; a failure with its error; a result; what the
terminal printed with it, word for word; the task lifecycle seen so far.

One step per event (steps.py says which records are events and which printed lines go
with each): a frame is one step, not a frame and its printed line; blank lines are none.
Previous/Next and the Left/Right keys move one step; `run.html#step=N` opens at step N,
and the step shown is in `<output id="step">`. No network: no fonts, no scripts from
elsewhere; it opens from a file with the machine offline. The HTML, CSS and script are
in page.html beside this file.

Everything a peer controls is hostile. It reaches the page only as escaped SVG text, or
inside `<script type="application/json">` with < > & escaped, from where the script puts
it into the DOM with textContent, never as markup.
"""
from __future__ import annotations

import json
import os
from itertools import islice
from html import escape as html_escape
from string import Template

from peers.support.learner.diagram import VERDICTS, Mark, body_of, marked, on_two_lanes, svg, task_states, title
from peers.support.learner.steps import Step, short
from transports.escaping import escape

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

TEMPLATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "page.html")
# A step's tasks panel, as of that step: the newest tasks, and each one's latest states. Every step
# carried every task and state seen so far: a trace naming thousands made a page of gigabytes.
MOST_TASKS_SHOWN, MOST_STATES_SHOWN = 20, 12
MEANINGS = {"trusted": "trusted: the support agent delegates to it",
            "untrusted": "UNTRUSTED: delegated anyway (--allow-untrusted); its output is tagged UNTRUSTED",
            "refused": "REFUSED: nothing is sent to it"}  # what each verdict does; the reason is the record's


def describe(step: Step, marks: list[Mark], who: str | None = None) -> dict[str, Any]:
    """What the panel shows for one step, and its one-line summary in the list; a frame is
    named as its arrow is (`marks`), UNTRUSTED included, its peer as `who` (with its host
    where another lane bears the same name). A decision, a failure or a result is titled
    with what the terminal printed for it, or the record's own reason."""
    record, kind = step.record, step.kind
    peer = escape(str(record.get("peer")))
    who = who or peer
    if kind == "registry":
        cards = record.get("cards") if isinstance(record.get("cards"), list) else []
        return {"title": "The support agent reads the registry",
                "summary": f"registry: {len(cards)} card URL{'' if len(cards) == 1 else 's'}",
                "fields": [["Card URLs", "\n".join(escape(str(card)) for card in cards)]]}
    if kind == "trust":
        verdict = str(record.get("verdict"))
        answer, cls = VERDICTS.get(verdict, (short(verdict), "warn"))
        reason = escape(str(record["reason"])) if isinstance(record.get("reason"), str) else answer
        return {"title": f"Trust gate: {short(peer, 80)} {short(reason, 300)}", "peer": peer, "cls": cls,
                "summary": f"trust gate: {short(peer, 40)} {reason}",
                "fields": [["Peer", peer], ["Endpoint", escape(str(record.get("endpoint")))],
                           ["Verdict", MEANINGS.get(verdict, answer)], ["Reason", reason]]}
    if kind == "model":
        return {"title": f"The model chose {short(peer, 60)} / {short(record.get('skill'), 40)}",
                "peer": peer, "cls": "warn", "summary": f"model chose {short(peer, 40)}",
                "fields": [["Chosen peer", peer], ["Skill", escape(str(record.get("skill")))],
                           ["What happens next", "the trust gate decides, in code: the model cannot pass it"]]}
    if kind == "failure":
        error = escape(str(record.get("error")))
        return {"title": step.said or f"{short(peer, 60)}: {short(error, 300)}", "peer": peer, "cls": "fail",
                "summary": step.said or f"{peer}: {error}", "fields": [["Peer", peer], ["What went wrong", error]]}
    if kind in ("broken", "resumed", "result"):
        cls = marks[0].cls if marks else ""
        what = {"broken": "The stream broke off", "resumed": "Subscribed again: what was missed"}.get(kind, "Result")
        fields = [["Peer", peer], ["Task", escape(str(record.get("task")))]] if kind != "result" else []
        return {"title": step.said or what, "peer": peer if kind != "result" else None, "cls": cls,
                "summary": step.said or what, "fields": fields}
    return _describe_frame(record, who, marks[0])


def _describe_frame(record: dict[str, Any], peer: str, mark: Mark) -> dict[str, Any]:
    body = body_of(record)
    text, cls = mark.text, mark.cls
    sent = record.get("direction") == "-->"
    arrow, who = ("-->", f"support agent -> {short(peer, 60)}") if sent else \
        ("<--", f"{short(peer, 60)} -> support agent")
    headers = record.get("headers") if isinstance(record.get("headers"), dict) else {}
    took = "" if record.get("elapsed_ms") is None else f", took {escape(str(record['elapsed_ms']))} ms"
    shown = (record["body"] if body is None else json.dumps(body, indent=2, ensure_ascii=False)) \
        if record.get("body") else "(no body)"
    return {"title": f"{arrow} {text}, {who}", "peer": peer, "cls": cls,
            "summary": f"{arrow} {text} {'to' if sent else 'from'} {short(peer, 40)}",
            "fields": [["Direction", f"{arrow} {'sent by the support agent' if sent else 'answered by ' + short(peer, 60)}"],
                       ["HTTP", f"{escape(str(record.get('http_method')))} {escape(str(record.get('url')))}"],
                       ["Status", "(request)" if sent else escape(str(record.get("http_status")))],
                       ["Wire format", escape(str(record.get("wire")))],
                       ["Time", f"at {escape(str(record.get('t_ms')))} ms{took}"],
                       ["Headers", "\n".join(f"{escape(str(k))}: {escape(str(v))}" for k, v in headers.items())]],
            "body": escape(str(shown), keep_newlines=True)}


def tasks_as_of(tasks: dict[str, dict[str, list[str]]], peers: list[str]) -> list[str]:
    """The panel's lines: each of `peers`' newest tasks (MOST_TASKS_SHOWN of them in all) and its
    latest states, in the order they were first seen; a line more says how many are left out."""
    listed, left = [], sum(len(tasks.get(peer, {})) for peer in peers) - MOST_TASKS_SHOWN
    for peer in peers:  # each peer's newest, walked from the last (reversed(dict)): no further than shown
        newest = list(islice(reversed(tasks.get(peer, {})), MOST_TASKS_SHOWN - len(listed)))
        for task_id in reversed(newest):
            states = tasks[peer][task_id]
            more = "... -> " if len(states) > MOST_STATES_SHOWN else ""
            listed.append(f"{short(peer, 40)} · {task_id}: {more}{' -> '.join(states[-MOST_STATES_SHOWN:])}")
    return listed + ([f"(and {left} earlier task{'s' * (left > 1)})"] if left > 0 else [])


def page(records: list[Any]) -> str:
    run, marks = marked(records)
    twice = on_two_lanes(run.lanes)
    who = {lane: f"{name} at {host}" if name in twice else name for lane, (name, host) in run.lanes.items()}
    tasks: dict[str, dict[str, list[str]]] = {}  # peer -> task id -> the states seen so far
    items, steps = [], []
    for number, step in enumerate(run.steps, 1):
        record = step.record
        shown = {"kind": step.kind, "seq": record.get("seq"), "fields": [], "body": None, "peer": None, "cls": "",
                 "printed": escape("\n".join(step.printed), keep_newlines=True) or None,
                 **describe(step, marks[number - 1], who.get(step.lane or ""))}
        if step.kind == "frame" and record.get("direction") == "<--":
            task_id, states, whole = task_states(body_of(record))
            if states:
                seen = tasks.setdefault(shown["peer"], {}).setdefault(task_id, [])
                if whole:  # the essay's wire sends the whole history each time
                    seen[:] = states
                elif not seen or seen[-1] != states[-1]:
                    seen.append(states[-1])
        shown["tasks"] = tasks_as_of(tasks, [shown["peer"]] if shown["peer"] else list(tasks))
        items.append(f'<li data-step="{number}" class="{step.kind} {shown["cls"]}"><span class="n">'
                     f'{number}</span> {html_escape(short(shown.pop("summary"), 200))}</li>')
        steps.append(shown)
    data = json.dumps(steps, ensure_ascii=True)  # U+2028, U+2029 and all non-ASCII become \u escapes
    data = data.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
    with open(TEMPLATE, encoding="utf-8") as file:
        template = Template(file.read())
    return template.substitute(title=html_escape(title(records)), svg=svg(records, drawn=(run, marks), fit=True),
                               items="\n".join(items), total=len(steps), data=data)
