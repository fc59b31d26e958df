"""The live page's sequence diagram: the very SVG `--diagram run.svg` draws
(peers/support/learner/diagram.py and picture.py), drawn again from the run's records as
each frame crosses, so the page and the file can never disagree.

Issue 35, item 1; essay: every section (Fig 2 is this diagram). A drawing is one event on
the run's event stream: the SVG, and for each step (the SVG's `g.step` with data-step=N is the Nth)
the printer's number of the frame it draws, or None, so the page can show an arrow's
frame when it is clicked. Its style is not inline (the page's policy forbids inline
style): the page links it as /diagram.css, served from the same STYLE (`STYLE_PATH`).
Everything a peer controls arrives in the SVG already shortened and XML-escaped by the
drawing code; the page still puts it into the DOM through a parser that keeps only the
SVG elements the drawing code writes. Not here: when a run redraws (runs.py).
"""
from __future__ import annotations

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Sequence

STYLE_PATH = "/diagram.css"
MOST_RECORDS = 4000  # past this a run is redrawn only when it ends: each drawing reads every record


def drawing(records: list[dict[str, Any]], frame_seqs: Sequence[int]) -> dict[str, Any]:
    """The "diagram" event: the SVG of `records`, and the frame (by the printer's number,
    from `frame_seqs`, in the order the frames crossed, the newest last) each step draws."""
    from peers.support.learner import diagram, picture
    run, marks = diagram.marked(records)
    svg = diagram.svg(records, drawn=(run, marks)).replace(f"<style>{picture.STYLE}</style>", "", 1)
    ordinal = {id(record): number for number, record in
               enumerate(record for record in records if record.get("kind") == "frame")}
    # A long run's records are its newest (keeping.py): its frames are the last of those that crossed, not the first
    seqs = list(frame_seqs)[max(0, len(frame_seqs) - len(ordinal)):]
    steps = [ordinal.get(id(step.record)) for step in run.steps]  # the SVG's data-step=N is steps[N - 1]
    return {"type": "diagram", "svg": svg, "frames": [seqs[n] if n is not None and n < len(seqs) else None for n in steps]}


def style() -> str:
    """The diagram's colours, light and dark, as picture.py draws them."""
    from peers.support.learner import picture
    return picture.STYLE
