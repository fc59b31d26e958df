"""--diagram FILE: the run as a sequence diagram, drawn from the --trace records.

Lanes: the support agent, the registry, the trust gate, the model (when one chose), and
each peer in order of appearance. Each event becomes marks: an arrow per frame,
labelled by what it carried (`tasks/send (id 1)`, `task-1 completed (id 1)`, `error
-32001`, `HTTP 401`, a push to our webhook as `task-1 working (pushed)`), a task by its
id, so the turns of one task read as one task (`SendMessage (id 3): next turn of
task-1`); the gate's question and answer; a stop mark where the gate refused (no arrow
beyond it) or where an exchange failed. A reply from a peer that is not
trusted is marked UNTRUSTED. Each mark has a class that says how it went: ask, send,
reply, ok, warn, fail. The same marks make the standalone `.svg`, the Mermaid `.mmd`,
and the diagram of the step-through page (`.html`, page.py).

Everything a peer controls is hostile: names, bodies, lines. It is shortened, its
invisible characters written out, and XML-escaped before it is drawn.
"""
from __future__ import annotations

import os
from html import escape as xml_escape
from typing import Any, NamedTuple

from peers.support.trace import PUSH
from transports import sse
from transports.codec import loads_strict
from transports.printer import escape

SUPPORT, REGISTRY, GATE, MODEL = "support agent", "registry", "trust gate", "model"
LEFT, GAP, TOP, ROW = 96, 140, 84, 34  # first lane's x, lane spacing, first row's y, row height
CHAR = 7.2  # width of one character of the 12px monospace labels
VERDICTS = {"trusted": ("trusted (allowlisted)", "ok"), "untrusted": ("UNTRUSTED, opted in", "warn"),
            "refused": ("REFUSED: nothing sent", "fail")}
STYLE = """:root{--bg:#fff;--fg:#1f2328;--line:#8c959f;--soft:#f6f8fa;--hl:#fff1a8;--ask:#57606a;
--send:#0969da;--ok:#1a7f37;--warn:#9a6700;--fail:#cf222e}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--line:#6e7681;--soft:#161b22;
--hl:#4b3d00;--ask:#9198a1;--send:#58a6ff;--ok:#3fb950;--warn:#d29922;--fail:#ff7b72}}
svg text{fill:var(--fg);font:12px ui-monospace,monospace} .bg{fill:var(--bg)}
.lane rect{fill:var(--soft);stroke:var(--line)} .lane.peer rect{stroke-width:2}
.lane text{font:600 13px system-ui,sans-serif} .life{stroke:var(--line);stroke-dasharray:4 4}
.band{fill:transparent} .tag{fill:var(--bg)} .arrow{stroke-width:1.6} .title{font:600 14px system-ui,sans-serif}
.arrow.ask{stroke:var(--ask)} .arrow.send{stroke:var(--send)} .arrow.reply{stroke:var(--send);stroke-dasharray:2 3}
.arrow.ok{stroke:var(--ok)} .arrow.warn{stroke:var(--warn)} .arrow.fail{stroke:var(--fail);stroke-dasharray:8 4}
text.fail{fill:var(--fail);font-weight:700} text.warn{fill:var(--warn)}
.stop{stroke:var(--fail);stroke-width:3.5;fill:none}
#tip-ask path{fill:var(--ask)} #tip-send path,#tip-reply path{fill:var(--send)} #tip-ok path{fill:var(--ok)}
#tip-warn path{fill:var(--warn)} #tip-fail path{fill:var(--fail)}"""


class Mark(NamedTuple):
    """One thing drawn: an arrow from `source` to `target`, or a stop mark on `source`."""

    source: str
    target: str
    text: str
    cls: str  # ask, send, reply, ok, warn or fail
    stop: bool = False


def short(value: Any, limit: int = 48) -> str:
    text = escape(str(value))
    return text if len(text) <= limit else text[:limit - 1] + "…"


def body_of(record: dict[str, Any]) -> Any:
    """A frame's body as JSON, read like any peer input (bounded), or None. A stream (Server-
    Sent Events) is drawn as its last event: where the task got to."""
    body = record.get("body")
    if isinstance(body, str) and body.startswith("data:"):
        events = sse.decode(body.encode())
        body = events[-1].decode(errors="replace") if events else ""
    try:
        return loads_strict(body) if isinstance(body, str) and body else None
    except ValueError:
        return None


def task_states(body: Any) -> tuple[str, list[str], bool]:
    """(task id, states, whether they are the whole history) from a reply: the essay's wire
    lists result.lifecycle; 1.0 has result.task.status.state; 0.3 result.status.state."""
    result = body.get("result") if isinstance(body, dict) else None
    if not isinstance(result, dict):
        return "", [], False
    wrapped = next((result[key] for key in ("task", "statusUpdate", "artifactUpdate")
                    if isinstance(result.get(key), dict)), None)
    task = wrapped if wrapped is not None else result  # a stream's status event names its task too
    status = task.get("status")
    if isinstance(result.get("lifecycle"), list):
        states, whole = result["lifecycle"], True
    elif isinstance(status, dict) and status.get("state"):
        states, whole = [status["state"]], False
    else:
        states, whole = [], False
    names = [short(state, 40) for state in states]  # 1.0 says TASK_STATE_INPUT_REQUIRED
    names = [n[11:].lower().replace("_", "-") if n.startswith("TASK_STATE_") else n for n in names]
    return short(task.get("id", task.get("taskId", "task")), 40), names, whole


def frame_label(record: dict[str, Any], body: Any) -> tuple[str, str]:
    """What a frame's arrow says, and its class."""
    rid = f" (id {short(record['jsonrpc_id'], 20)})" if record.get("jsonrpc_id") is not None else ""
    status = record.get("http_status")
    if record.get("direction") == "-->":  # a message naming its task is that task's next turn
        params = body.get("params") if isinstance(body, dict) else None
        message = params.get("message") if isinstance(params, dict) else None
        task = message.get("taskId") if isinstance(message, dict) else None
        turn = f": next turn of {short(task, 40)}" if isinstance(task, str) else ""
        return short(record.get("method") or record.get("http_method")) + rid + turn, "send"
    if record.get("binding") == "HTTP+JSON":  # the result is the whole body; an error, its status
        if not isinstance(status, int) or not 200 <= status < 300:
            error = body.get("error") if isinstance(body, dict) and isinstance(body.get("error"), dict) else {}
            return f"HTTP {short(status, 12)} {short(error.get('status', ''), 30)}".rstrip(), "fail"
        body, status = {"result": body}, 200
    elif record.get("http_method") == "GET":
        return ("agent card", "reply") if status == 200 else (f"HTTP {short(status, 12)}", "fail")
    if status != 200:
        return f"HTTP {short(status, 12)}{rid}", "fail"
    if record.get("method") == PUSH and body is not None:  # a StreamResponse: read as a stream's event is
        body, rid = {"result": body}, " (pushed)"
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return f"error {short(body['error'].get('code'), 12)}{rid}", "fail"
    task_id, states, _ = task_states(body)
    result = body.get("result") if isinstance(body, dict) else None
    if isinstance(result, dict) and ("artifactUpdate" in result or result.get("kind") == "artifact-update"):
        return f"{task_id} artifact{rid}", "reply"  # 1.0 wraps it, 0.3 tags it
    if not states:
        return (f"not JSON{rid}", "fail") if body is None else (f"result{rid}", "reply")
    ended = {"failed": "fail", "rejected": "fail", "canceled": "warn", "input-required": "warn",
             "auth-required": "warn"}
    return f"{task_id} {states[-1]}{rid}", ended.get(states[-1], "reply")  # one task, by its id, across turns


def marks_of(record: dict[str, Any], verdicts: dict[str, str]) -> list[Mark]:
    """The marks one record draws; `verdicts` (peer -> the gate's verdict) is kept up to date."""
    kind, peer = record.get("kind"), short(record.get("peer"), 60)
    lane = f"peer:{peer}"  # a peer calling itself "registry" gets a lane of its own
    if kind == "registry":
        cards = record.get("cards") if isinstance(record.get("cards"), list) else []
        return [Mark(SUPPORT, REGISTRY, f"read registry ({len(cards)} peer{'' if len(cards) == 1 else 's'})",
                     "ask")]
    if kind == "model":
        return [Mark(SUPPORT, MODEL, "which peer and skill?", "ask"),
                Mark(MODEL, SUPPORT, f"chose {short(peer, 32)} / {short(record.get('skill'), 24)}", "warn")]
    if kind == "trust":
        verdicts[peer] = str(record.get("verdict"))
        said, cls = VERDICTS.get(verdicts[peer], (short(record.get("verdict")), "warn"))
        ask = Mark(SUPPORT, GATE, f"trust {short(peer, 32)}?", "ask")
        if verdicts[peer] == "refused":
            return [ask, Mark(GATE, GATE, f"REFUSED {short(peer, 32)}: nothing sent", "fail", stop=True)]
        return [ask, Mark(GATE, SUPPORT, said, cls)]
    if kind == "failure":
        error = str(record.get("error", ""))
        where = SUPPORT if error.startswith("not sent") else lane
        return [Mark(where, where, short(error, 60), "fail", stop=True)]
    if kind == "frame":
        text, cls = frame_label(record, body_of(record))
        if record.get("direction") == "-->":
            return [Mark(SUPPORT, lane, text, cls)]
        if verdicts.get(peer) == "untrusted" and record.get("http_method") == "POST":
            text, cls = f"{text} UNTRUSTED", "warn" if cls != "fail" else cls
        return [Mark(lane, SUPPORT, text, cls)]
    return []


def lanes(records: list[dict[str, Any]]) -> list[str]:
    peers = [short(r.get("peer"), 60) for r in records if r.get("kind") in ("trust", "frame", "failure")]
    model = [MODEL] if any(r.get("kind") == "model" for r in records) else []
    return [SUPPORT, REGISTRY, GATE, *model] + [f"peer:{p}" for p in dict.fromkeys(peers)]


def title(records: list[dict[str, Any]]) -> str:
    frames = [r for r in records if r.get("kind") == "frame"]
    transport = short(frames[0].get("transport"), 90) if frames else "no frames"
    formats = [w for w in dict.fromkeys(short(r.get("wire")) for r in frames) if w not in ("card", "None")]
    return f"over {transport} · " + (f"wire format: {', '.join(formats)}" if formats else "no delegation sent")


def tag(left_x: float, row_y: float, text: str, cls: str, anchor: str = "middle") -> str:
    """A label on a background rect, so no lifeline runs through it."""
    width = len(text) * CHAR + 10
    left = left_x - width / 2 if anchor == "middle" else left_x - 5
    return (f'<rect class="tag" x="{left:.0f}" y="{row_y - 13}" width="{width:.0f}" height="17" rx="3"/>'
            f'<text class="{cls}" x="{left_x:.0f}" y="{row_y}" text-anchor="{anchor}">{xml_escape(text)}</text>')


def draw(mark: Mark, lane_x: dict[str, int], row_y: int) -> str:
    source, target = lane_x[mark.source], lane_x[mark.target]
    if mark.stop:
        return (f'<path class="stop" d="M{source - 9},{row_y - 9} L{source + 9},{row_y + 9} '
                f'M{source + 9},{row_y - 9} L{source - 9},{row_y + 9}"/>'
                + tag(source + 18, row_y + 5, mark.text, mark.cls, "start"))
    return (f'<line class="arrow {mark.cls}" x1="{source}" y1="{row_y}" x2="{target}" y2="{row_y}" '
            f'marker-end="url(#tip-{mark.cls})"/>' + tag((source + target) / 2, row_y - 7, mark.text, mark.cls))


def svg(records: list[dict[str, Any]], *, steps: list[list[Mark]] | None = None) -> str:
    """The diagram as one SVG document. With `steps` (the marks of each event, from the
    page), each event's marks are a group with data-step=N, so the page can highlight it."""
    verdicts: dict[str, str] = {}
    steps = steps if steps is not None else [marks_of(r, verdicts) for r in records]
    names = lanes(records)
    lane_x = {name: LEFT + i * GAP for i, name in enumerate(names)}
    rows, groups = 0, []
    for number, marks in enumerate(steps, 1):
        if marks:
            drawn = "".join(draw(mark, lane_x, TOP + (rows + i) * ROW) for i, mark in enumerate(marks))
            cls = " ".join(dict.fromkeys(m.cls for m in marks))
            groups.append(f'<g class="step {cls}" data-step="{number}"><rect class="band" x="0" '
                          f'y="{TOP + rows * ROW - 25}" width="100%" height="{ROW * len(marks)}"/>{drawn}</g>')
            rows += len(marks)
    width, height = LEFT + GAP * (len(names) - 1) + 76, TOP + rows * ROW + 10
    heads = [f'<g class="lane{" peer" if name.startswith("peer:") else ""}"><title>{xml_escape(name)}</title>'
             f'<line class="life" x1="{cx}" y1="44" x2="{cx}" y2="{height - 4}"/>'
             f'<rect x="{cx - 66}" y="12" width="132" height="32" rx="6"/><text x="{cx}" y="33" '
             f'text-anchor="middle">{xml_escape(short(name.removeprefix("peer:"), 16))}</text></g>'
             for name, cx in lane_x.items()]
    tips = "".join(f'<marker id="tip-{c}" markerWidth="10" markerHeight="8" refX="10" refY="4" orient="auto" '
                   f'markerUnits="userSpaceOnUse"><path d="M0,0 L10,4 L0,8 z"/></marker>'
                   for c in ("ask", "send", "reply", "ok", "warn", "fail"))
    return (f'<svg xmlns="http://www.w3.org/2000/svg" id="diagram" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img" aria-label="sequence diagram: {xml_escape(title(records))}">'
            f'<style>{STYLE}</style><defs>{tips}</defs><rect class="bg" width="100%" height="100%"/>'
            + "".join(heads) + "".join(groups) + "</svg>")


def mermaid(records: list[dict[str, Any]]) -> str:
    verdicts: dict[str, str] = {}
    ids = {name: f"L{i}" for i, name in enumerate(lanes(records))}

    def clean(text: str) -> str:  # Mermaid's syntax has few safe characters
        return "".join(c for c in text if c.isalnum() or c in " -_.,()?:'/").strip()
    out = ["sequenceDiagram", f"    title {clean(title(records))}"]
    out += [f"    participant {i} as {clean(name.removeprefix('peer:'))}" for name, i in ids.items()]
    for record in records:
        for mark in marks_of(record, verdicts):
            source, target = ids[mark.source], ids[mark.target]
            if mark.stop:
                out.append(f"    Note over {source}: {clean(mark.text)}")
            else:
                arrow = "->>" if mark.source == SUPPORT else "-->>"
                out.append(f"    {source}{arrow}{target}: {clean(mark.text)}")
    return "\n".join(out) + "\n"


def wrote(path: str) -> str:
    """What is said once the diagram is written: where it is, and how to look at it."""
    how = "open it in a browser" if path.lower().endswith((".html", ".svg")) else "paste it into a Mermaid viewer"
    return f"[diagram] wrote {os.path.abspath(path)}: {how}"


def write(path: str, records: list[dict[str, Any]]) -> None:
    suffix = os.path.splitext(path)[1].lower()
    if suffix == ".html":
        from peers.support import page
        text = page.page(records)
    elif suffix in (".svg", ".mmd"):
        text = svg(records) if suffix == ".svg" else mermaid(records)
    else:
        raise ValueError(f"{path}: the diagram is written as .svg, .html or .mmd")
    with open(path, "w", encoding="utf-8") as out:
        out.write(text)
