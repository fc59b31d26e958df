"""--diagram FILE: the run as a sequence diagram, from the --trace records.

Lanes: the support agent, the registry, the trust gate, and each peer in order of
appearance. One arrow per frame (class "frame"), labelled with its method and JSON-RPC
id; the gate's question and answer (class "gate"); a refusal is a stop mark on the gate's
lane (class "stop") with no arrow beyond it, because nothing was sent. `.svg` and `.html`
are self-contained (no external assets) and follow the reader's light or dark theme;
`.mmd` is Mermaid text for pasting into docs. Peer-controlled names are escaped.
"""
from __future__ import annotations

import os
from typing import Any, NamedTuple
from xml.sax.saxutils import escape as xml_escape

from transports.codec import loads_strict
from transports.printer import escape

SUPPORT, REGISTRY, GATE = "support agent", "registry", "trust gate"
STYLE = """.bg{fill:#ffffff}text{fill:#1f2328;font:13px system-ui,sans-serif}
.lane rect{fill:none;stroke:#8c959f}.life{stroke:#8c959f;stroke-dasharray:4 4}
.frame{stroke:#0969da}.gate,.registry{stroke:#1a7f37}.stop{stroke:#cf222e;stroke-width:3;fill:none}
.stop-label{fill:#cf222e;font-weight:600}#head path{fill:#1f2328}
@media (prefers-color-scheme:dark){.bg{fill:#0d1117}text{fill:#e6edf3}#head path{fill:#e6edf3}
.lane rect,.life{stroke:#6e7681}.frame{stroke:#58a6ff}.gate,.registry{stroke:#3fb950}
.stop{stroke:#f85149}.stop-label{fill:#f85149}}"""


class Step(NamedTuple):
    source: str
    target: str
    label: str
    kind: str  # "frame", "gate", "registry" or "stop"


def steps(records: list[dict[str, Any]]) -> list[Step]:
    out = []
    for record in records:
        if record["kind"] == "registry":
            peers = len(record.get("cards", []))
            out.append(Step(SUPPORT, REGISTRY, f"read registry ({peers} peers)", "registry"))
        elif record["kind"] == "trust":
            peer, verdict = _safe(record.get("peer")), record.get("verdict")
            out.append(Step(SUPPORT, GATE, f"trust {peer}?", "gate"))
            if verdict == "refused":
                out.append(Step(GATE, GATE, f"REFUSED {peer}: nothing sent", "stop"))
            else:
                out.append(Step(GATE, SUPPORT, "allowlisted" if verdict == "trusted" else
                                "NOT allowlisted: opted in, output UNTRUSTED", "gate"))
        elif record["kind"] == "frame":
            peer = _safe(record.get("peer"))
            out.append(Step(SUPPORT, peer, _label(record), "frame") if record.get("direction") == "-->"
                       else Step(peer, SUPPORT, _label(record), "frame"))
    return out


def _label(record: dict[str, Any]) -> str:
    rid = f" (id {record['jsonrpc_id']})" if record.get("jsonrpc_id") is not None else ""
    if record.get("direction") == "-->":
        return _safe(record.get("method") or record.get("http_method")) + rid
    if record.get("http_method") == "GET":
        return "agent card" if record.get("http_status") == 200 else f"HTTP {record.get('http_status')}"
    try:
        body = loads_strict(record.get("body") or "")  # a peer's body: bounded, like any
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return f"error {body['error'].get('code')}{rid}"
    status = record.get("http_status")
    return ("result" if status == 200 else f"HTTP {status}") + rid


def _safe(text: Any) -> str:
    return escape(str(text))[:60]


def lanes(all_steps: list[Step]) -> list[str]:
    names = [SUPPORT, REGISTRY, GATE]
    for step in all_steps:
        for lane in (step.source, step.target):
            if lane not in names:
                names.append(lane)
    return names


def svg(records: list[dict[str, Any]]) -> str:
    all_steps = steps(records)
    names = lanes(all_steps)
    lane_x = {name: 100 + i * 190 for i, name in enumerate(names)}
    height = 110 + 40 * len(all_steps)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{100 + 190 * len(names)}" '
             f'height="{height}" viewBox="0 0 {100 + 190 * len(names)} {height}">',
             f"<style>{STYLE}</style>",
             '<defs><marker id="head" markerWidth="10" markerHeight="8" refX="9" refY="4" '
             'orient="auto"><path d="M0,0 L10,4 L0,8 z"/></marker></defs>',
             '<rect class="bg" width="100%" height="100%"/>']
    for name in names:
        parts.append(f'<g class="lane"><rect x="{lane_x[name] - 80}" y="16" width="160" height="30" rx="6"/>'
                     f'<text x="{lane_x[name]}" y="36" text-anchor="middle">{xml_escape(name)}</text>'
                     f'<line class="life" x1="{lane_x[name]}" y1="46" x2="{lane_x[name]}" '
                     f'y2="{height - 10}"/></g>')
    for row, step in enumerate(all_steps):
        row_y = 80 + 40 * row
        label = xml_escape(step.label)
        if step.kind == "stop":
            cx = lane_x[GATE]
            parts.append(f'<path class="stop" d="M{cx - 8},{row_y - 8} L{cx + 8},{row_y + 8} '
                         f'M{cx + 8},{row_y - 8} L{cx - 8},{row_y + 8}"/>'
                         f'<text class="stop-label" x="{cx + 14}" y="{row_y + 4}">{label}</text>')
            continue
        x1, x2 = lane_x[step.source], lane_x[step.target]
        parts.append(f'<line class="{step.kind}" x1="{x1}" y1="{row_y}" x2="{x2 + (-8 if x2 > x1 else 8)}" '
                     f'y2="{row_y}" marker-end="url(#head)"/>'
                     f'<text x="{(x1 + x2) / 2}" y="{row_y - 6}" text-anchor="middle">{label}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def html(records: list[dict[str, Any]]) -> str:
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<title>A2A delegation: sequence</title>"
            "<style>body{margin:24px;background:Canvas;color:CanvasText}"
            ":root{color-scheme:light dark}</style></head><body>\n"
            + svg(records) + "\n</body></html>\n")


def mermaid(records: list[dict[str, Any]]) -> str:
    all_steps = steps(records)
    ids = {name: f"L{i}" for i, name in enumerate(lanes(all_steps))}
    def clean(text: str) -> str:  # Mermaid's syntax has few safe characters
        return "".join(c for c in text if c.isalnum() or c in " -_.,()?:'/").strip()
    out = ["sequenceDiagram"] + [f"    participant {i} as {clean(name)}" for name, i in ids.items()]
    for step in all_steps:
        if step.kind == "stop":
            out.append(f"    Note over {ids[GATE]}: {clean(step.label)}")
        else:
            arrow = "-->>" if step.source != SUPPORT else "->>"
            out.append(f"    {ids[step.source]}{arrow}{ids[step.target]}: {clean(step.label)}")
    return "\n".join(out) + "\n"


def write(path: str, records: list[dict[str, Any]]) -> None:
    suffix = os.path.splitext(path)[1].lower()
    render = {".svg": svg, ".html": html, ".mmd": mermaid}.get(suffix)
    if render is None:
        raise ValueError(f"{path}: the diagram is written as .svg, .html or .mmd")
    with open(path, "w", encoding="utf-8") as out:
        out.write(render(records))
