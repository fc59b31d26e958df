"""--diagram run.html: one self-contained page that steps through a run, as the essay's
Fig 2 does: the sequence diagram (diagram.py), the list of events, and a panel with the
current event in full: a frame's pretty-printed body, method, URL, status and masked
headers; a trust decision; a failure; the task lifecycle seen so far.

Previous/Next and the Left/Right keys move one event; `run.html#step=N` opens at event N,
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
from html import escape as html_escape
from string import Template
from typing import Any

from peers.support.diagram import VERDICTS, Mark, body_of, marks_of, short, svg, task_states, title
from transports.printer import escape

EVENTS = ("registry", "trust", "model", "failure", "frame", "line")
TEMPLATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "page.html")
MEANINGS = {"trusted": "trusted: on the allowlist, so the support agent delegates",
            "untrusted": "UNTRUSTED: not on the allowlist, delegated anyway (--allow-untrusted); "
                         "its output is tagged UNTRUSTED",
            "refused": "REFUSED: not on the allowlist; nothing is sent to it"}


def describe(record: dict[str, Any], marks: list[Mark]) -> dict[str, Any]:
    """What the panel shows for one event, and its one-line summary in the event list;
    a frame is named as its arrow is (`marks`), UNTRUSTED included."""
    kind, peer = record["kind"], escape(str(record.get("peer")))
    if kind == "registry":
        cards = record.get("cards") if isinstance(record.get("cards"), list) else []
        return {"title": "The support agent reads the registry",
                "summary": f"registry: {len(cards)} card URL{'' if len(cards) == 1 else 's'}",
                "fields": [["Card URLs", "\n".join(escape(str(card)) for card in cards)]]}
    if kind == "trust":
        said, cls = VERDICTS.get(str(record.get("verdict")), (short(record.get("verdict")), "warn"))
        return {"title": f"Trust gate: {short(peer, 80)} is {said}", "peer": peer, "cls": cls,
                "summary": f"trust gate: {short(peer, 40)} -> {short(record.get('verdict'), 20)}",
                "fields": [["Peer", peer], ["Endpoint", escape(str(record.get("endpoint")))],
                           ["Verdict", MEANINGS.get(str(record.get("verdict")), said)]]}
    if kind == "model":
        return {"title": f"The model chose {short(peer, 60)} / {short(record.get('skill'), 40)}",
                "peer": peer, "cls": "warn", "summary": f"model chose {short(peer, 40)}",
                "fields": [["Chosen peer", peer], ["Skill", escape(str(record.get("skill")))],
                           ["What happens next", "the trust gate decides, in code: the model cannot pass it"]]}
    if kind == "failure":
        return {"title": f"Failed: {short(peer, 60)}", "peer": peer, "cls": "fail",
                "summary": f"failed: {short(record.get('error'), 80)}",
                "fields": [["Peer", peer], ["What went wrong", escape(str(record.get("error")))]]}
    if kind == "frame":
        return _describe_frame(record, peer, marks[0])
    text = escape(str(record.get("text", "")), keep_newlines=True)
    return {"title": "A printed line", "body": text or "(an empty line)",
            "summary": short(" ".join(part.strip() for part in text.split("\n") if part.strip()), 110)
            or "(an empty line)"}


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


def page(records: list[dict[str, Any]]) -> str:
    events = [r for r in records if isinstance(r, dict) and r.get("kind") in EVENTS]
    verdicts: dict[str, str] = {}
    marks = [marks_of(record, verdicts) for record in events]
    tasks: dict[str, dict[str, list[str]]] = {}  # peer -> task id -> the states seen so far
    items, steps = [], []
    for number, record in enumerate(events, 1):
        step = {"kind": record["kind"], "fields": [], "body": None, "peer": None, "cls": "",
                **describe(record, marks[number - 1])}
        if record["kind"] == "frame" and record.get("direction") == "<--":
            task_id, states, whole = task_states(body_of(record))
            if states:
                seen = tasks.setdefault(step["peer"], {}).setdefault(task_id, [])
                if whole:  # the essay's wire sends the whole history each time
                    seen[:] = states
                elif not seen or seen[-1] != states[-1]:
                    seen.append(states[-1])
        step["tasks"] = [f"{short(peer, 40)} · {task_id}: {' -> '.join(states)}"
                         for peer in ([step["peer"]] if step["peer"] else tasks)
                         for task_id, states in tasks.get(peer, {}).items()]
        items.append(f'<li data-step="{number}" class="{step["kind"]} {step["cls"]}"><span class="n">'
                     f'{number}</span> {html_escape(step.pop("summary"))}</li>')
        steps.append(step)
    data = json.dumps(steps, ensure_ascii=True)  # U+2028, U+2029 and all non-ASCII become \u escapes
    data = data.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
    with open(TEMPLATE, encoding="utf-8") as file:
        template = Template(file.read())
    return template.substitute(title=html_escape(title(events)), svg=svg(events, steps=marks),
                               items="\n".join(items), total=len(steps), data=data)
