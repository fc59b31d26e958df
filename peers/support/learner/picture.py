"""The sequence diagram drawn as SVG: lanes side by side, each step's marks a row below the
last. diagram.py says what is drawn (the marks of each step); this says how it looks.

Lanes are spaced by their labels (a peer's name and host), so none overlaps the next. A
stop, a note or a cut says its words to the right of its lane, wrapped at WRAP characters
(or wider, where the lanes leave the room), and its row grows to hold them; an arrow's
label sits above it, never left of the picture.
The picture is as wide as its lanes and its widest label. Colours follow the reader's light
or dark setting. No fonts, images or scripts from elsewhere: it opens offline.

What this does not do: decide words or classes (diagram.py), or escape for a terminal (the
words arrive shortened and escaped); it XML-escapes everything it writes.
"""
from __future__ import annotations

from html import escape as xml_escape

from peers.support.learner.steps import short
from transports.records import Record

LEFT, GAP, TOP, ROW, LINE = 90, 130, 62, 34, 15  # first lane's x, least lane spacing, first row, row and line height
CHAR, WRAP = 7.2, 56  # width of one character of the 12px monospace labels; characters a line holds
STYLE = """:root{--bg:#fff;--fg:#1f2328;--muted:#59636e;--line:#8c959f;--soft:#f6f8fa;--hl:#fff1a8;--ask:#57606a;
--send:#0969da;--ok:#1a7f37;--warn:#9a6700;--fail:#cf222e}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--line:#6e7681;--soft:#161b22;
--hl:#4b3d00;--ask:#9198a1;--send:#58a6ff;--ok:#3fb950;--warn:#d29922;--fail:#ff7b72}}
svg text{fill:var(--fg);font:12px ui-monospace,monospace} .bg{fill:var(--bg)}
.lane rect{fill:var(--soft);stroke:var(--line)} .lane.peer rect{stroke-width:2}
.lane .name{font:600 13px system-ui,sans-serif} .lane .host{font:11px ui-monospace,monospace;fill:var(--muted)}
.life{stroke:var(--line);stroke-dasharray:4 4}
.band{fill:transparent} .tag{fill:var(--bg)} .arrow{stroke-width:1.6} .title{font:600 14px system-ui,sans-serif}
.arrow.ask{stroke:var(--ask)} .arrow.send{stroke:var(--send)} .arrow.reply{stroke:var(--send);stroke-dasharray:2 3}
.arrow.ok{stroke:var(--ok)} .arrow.warn{stroke:var(--warn)} .arrow.fail{stroke:var(--fail);stroke-dasharray:8 4}
text.fail{fill:var(--fail);font-weight:700} text.warn{fill:var(--warn)} text.ok{fill:var(--ok)}
.stop{stroke:var(--fail);stroke-width:3.5;fill:none} .cut{stroke:var(--warn);stroke-width:1.6;stroke-dasharray:8 4}
.zigzag{stroke:var(--warn);stroke-width:3.5;fill:none} .dot{stroke:var(--bg);stroke-width:2}
.dot.ok{fill:var(--ok)} .dot.warn{fill:var(--warn)} .dot.fail{fill:var(--fail)} .dot.reply{fill:var(--send)}
#tip-ask path{fill:var(--ask)} #tip-send path,#tip-reply path{fill:var(--send)} #tip-ok path{fill:var(--ok)}
#tip-warn path{fill:var(--warn)} #tip-fail path{fill:var(--fail)}"""


class Mark(Record):
    """One thing drawn on one row: an arrow from `source` to `target` (`aside`: words
    beside it, right of both lanes); a stop mark on `source` (nothing went beyond it); a
    note on `source`; or a cut between the two lanes (a connection that broke off)."""

    source: str
    target: str
    text: str
    cls: str  # ask, send, reply, ok, warn or fail
    shape: str = "arrow"  # arrow, stop, note or cut
    aside: str = ""


def wrap(text: str, width: int = WRAP, most: int = 10) -> list[str]:
    """`text` in lines of at most `width` characters, broken at spaces (each line but the
    last keeps its space, so the lines joined are the text), at most `most` lines."""
    lines: list[str] = []
    for word in text[:width * most + 1].split(" "):
        pieces = [word[at:at + width] for at in range(0, len(word), width)] or [""]
        if lines and len(lines[-1]) + len(pieces[0]) <= width:
            lines[-1] += pieces.pop(0)
        lines += pieces
        lines[-1] += " "
    lines[-1] = lines[-1][:-1]
    if len(lines) > most:
        lines = lines[:most - 1] + [lines[most - 1].rstrip()[:width - 1] + "…"]
    return lines


def tag(at: float, baseline: float, lines: list[str], cls: str, anchor: str = "middle") -> tuple[str, float]:
    """A label on a background rect, so no lifeline runs through it; and its right edge.
    Its first line is the text element's own, the others tspans below it."""
    width = max(len(line.rstrip()) for line in lines) * CHAR + 10
    left = at - width / 2 if anchor == "middle" else at - 5
    more = "".join(f'<tspan x="{at:.0f}" dy="{LINE}">{xml_escape(line)}</tspan>' for line in lines[1:])
    return (f'<rect class="tag" x="{left:.0f}" y="{baseline - 13}" width="{width:.0f}" '
            f'height="{17 + LINE * (len(lines) - 1)}" rx="3"/><text class="{cls}" x="{at:.0f}" y="{baseline}" '
            f'text-anchor="{anchor}">{xml_escape(lines[0])}{more}</text>', left + width)


def draw(mark: Mark, lane_x: dict[str, int], top: int, room: float) -> tuple[str, float, int]:
    """One mark on the row that starts at `top`: its SVG, how far right it reaches, and
    its height. Words beside a lane wrap at WRAP characters, or wider where the lanes
    leave that much `room` (the right edge of the last lane) anyway."""
    source, target = lane_x[mark.source], lane_x[mark.target]
    beside, level = max(source, target) + 18, top + 25
    said = mark.aside or (mark.text if mark.shape != "arrow" else "")
    lines = wrap(said, max(WRAP, int((room - beside - 10) / CHAR))) if said else []
    rows = ROW + LINE * max(len(lines) - 1, 0)
    if mark.shape == "arrow":
        width = len(mark.text) * CHAR + 10
        label, right = tag(max((source + target) / 2, width / 2 + 4), level - 7, [mark.text], mark.cls)
        aside, right = tag(beside, level + 5, lines, mark.cls, "start") if lines else ("", right)
        return (f'<line class="arrow {mark.cls}" x1="{source}" y1="{level}" x2="{target}" y2="{level}" '
                f'marker-end="url(#tip-{mark.cls})"/>' + label + aside, right, rows)
    if mark.shape == "cut":
        middle = (source + target) / 2
        symbol = (f'<line class="cut" x1="{source}" y1="{level}" x2="{target}" y2="{level}"/><path class="zigzag" '
                  f'd="M{middle - 9},{level - 10} L{middle + 5},{level - 2} L{middle - 5},{level + 2} '
                  f'L{middle + 9},{level + 10}"/>')
    elif mark.shape == "stop":
        symbol = (f'<path class="stop" d="M{source - 9},{level - 9} L{source + 9},{level + 9} '
                  f'M{source + 9},{level - 9} L{source - 9},{level + 9}"/>')
    else:
        symbol = f'<circle class="dot {mark.cls}" cx="{source}" cy="{level}" r="6"/>'
    label, right = tag(beside, level + 5, lines or [""], mark.cls, "start")
    return symbol + label, right, rows


def lane_width(name: str, host: str) -> float:
    return max(120, len(short(name, 24)) * 8 + 16, len(short(host, 40)) * 6.7 + 14)


def head(lane: str, name: str, host: str, centre: int, bottom: int) -> str:
    """A lane's label (its name, and a peer's host below it) and its lifeline."""
    width = lane_width(name, host)
    words = (f'<text class="name" x="{centre}" y="27" text-anchor="middle">{xml_escape(short(name, 24))}</text>'
             f'<text class="host" x="{centre}" y="43" text-anchor="middle">{xml_escape(short(host, 40))}</text>' if host
             else f'<text class="name" x="{centre}" y="35" text-anchor="middle">{xml_escape(short(name, 24))}</text>')
    return (f'<g class="lane{" peer" if lane.startswith("peer:") else ""}"><title>'
            f'{xml_escape(" at ".join(filter(None, (name, host))))}</title><line class="life" x1="{centre}" y1="52" '
            f'x2="{centre}" y2="{bottom - 4}"/><rect x="{centre - width / 2:.0f}" y="8" width="{width:.0f}" '
            f'height="44" rx="6"/>{words}</g>')


def picture(lanes: dict[str, tuple[str, str]], steps: list[list[Mark]], title: str, *, fit: bool = False) -> str:
    """The SVG document: `lanes` (lane -> name and host) left to right, then each step's
    marks, a group with data-step=N (the page highlights it); with `fit`, it shrinks to
    the width it is given, down to seven tenths of its own, and scrolls beyond that."""
    lane_x: dict[str, int] = {}
    centre, last = float(LEFT), 0.0  # each lane's centre, and the width of the one before
    for lane, (name, host) in lanes.items():
        centre += max(GAP, (last + lane_width(name, host)) / 2 + 12) if lane_x else 0
        lane_x[lane], last = round(centre), lane_width(name, host)
    top, groups, right = TOP, [], centre + last / 2
    room = right  # the last lane's right edge: words beside a lane may use the width up to it
    for number, marks in enumerate(steps, 1):
        if marks:
            drawn, row = [], top
            for mark in marks:
                shape, reach, rows = draw(mark, lane_x, row, room)
                drawn.append(shape)
                right, row = max(right, reach), row + rows
            cls = " ".join(dict.fromkeys(m.cls for m in marks))
            groups.append(f'<g class="step {cls}" data-step="{number}"><rect class="band" x="0" y="{top}" '
                          f'width="100%" height="{row - top}"/>{"".join(drawn)}</g>')
            top = row
    width, bottom = round(right + 12), top + 10
    heads = [head(lane, name, host, lane_x[lane], bottom) for lane, (name, host) in lanes.items()]
    tips = "".join(f'<marker id="tip-{c}" markerWidth="10" markerHeight="8" refX="10" refY="4" orient="auto" '
                   f'markerUnits="userSpaceOnUse"><path d="M0,0 L10,4 L0,8 z"/></marker>'
                   for c in ("ask", "send", "reply", "ok", "warn", "fail"))
    style = f' style="width:100%;height:auto;max-width:{width}px;min-width:{width * 7 // 10}px"' if fit else ""
    return (f'<svg xmlns="http://www.w3.org/2000/svg" id="diagram" width="{width}" height="{bottom}"{style} '
            f'viewBox="0 0 {width} {bottom}" role="img" aria-label="sequence diagram: {xml_escape(title)}">'
            f'<style>{STYLE}</style><defs>{tips}</defs><rect class="bg" width="100%" height="100%"/>'
            + "".join(heads) + "".join(groups) + "</svg>")
