"""What the live page's server answers with, besides the runs: the door's headers, the
runs it offers (the essay's and each lesson's, in teaching order), and a finished run in
the step-through view that --diagram run.html draws (peers/support/learner/page.py).

Every answer forbids inline script and anything from elsewhere (POLICY). The step-through
view is the one page with inline script and style of its own: its policy allows exactly
those, by their hashes, so a peer's text in it stays data. Not here: the door, the routes.
"""
from __future__ import annotations

import base64
import hashlib
import os
import re
from string import Template

from peers.support.web.drawing import STYLE_PATH, style
from transports.base import HttpResponse

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
STATIC = {"/": ("live.html", "text/html"), "/live.js": ("live.js", "text/javascript"),
          "/tools.js": ("tools.js", "text/javascript"), "/proxy.js": ("proxy.js", "text/javascript"),
          **{f"/{name}.js": (f"{name}.js", "text/javascript") for name in ("controls", "talk", "diagram")},
          "/live.css": ("live.css", "text/css"), STYLE_PATH: ("", "text/css")}  # "": the diagram's own style

POLICY = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
          "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


def headers() -> dict[str, str]:
    """On every answer: the policy, no caching, no sniffing, no referrer (the token was in the URL)."""
    return {"Content-Security-Policy": POLICY, "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer", "Cross-Origin-Resource-Policy": "same-origin"}


def static(path: str) -> HttpResponse:
    """The page, its script and styles (nothing secret in them)."""
    name, media_type = STATIC[path]
    if name:
        with open(os.path.join(HERE, name), "rb") as file:
            body = file.read()
    else:
        body = style().encode()
    return HttpResponse(200, {**headers(), "Content-Type": f"{media_type}; charset=utf-8"}, body)


def steps_view(records: list[dict[str, Any]]) -> HttpResponse:
    """The step-through page (peers/support/learner/page.py) of a run, as --diagram run.html draws it.
    Its own script and style are inline; the policy allows exactly those, by their hashes,
    taken from its template (page.html) and the diagram's style (picture.STYLE), not from
    the page made: a peer's text reaches that page only as escaped JSON data and text, and
    no script or style it could smuggle in would apply."""
    from peers.support.learner import page, picture
    html = page.page(records)
    with open(page.TEMPLATE, encoding="utf-8") as file:
        template = Template(file.read()).safe_substitute()  # $$ -> $, as page() makes it; no data in these blocks
    blocks = {tag: re.findall(f"<{tag}>(.*?)</{tag}>", template, re.S) for tag in ("script", "style")}
    blocks["style"].append(picture.STYLE)  # the diagram's own colours: without them the SVG paints black
    allowed = {tag: " ".join(f"'sha256-{base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()}'"
                             for body in bodies) for tag, bodies in blocks.items()}
    policy = POLICY.replace("script-src 'self'", f"script-src {allowed['script']}").replace(
        "style-src 'self'", f"style-src {allowed['style']}")
    return HttpResponse(200, {**headers(), "Content-Security-Policy": policy, "Content-Type": "text/html; charset=utf-8"},
                        html.encode())


def lessons() -> list[dict[str, str]]:
    """The runs the page offers, in teaching order: the essay's, then each lesson's one line."""
    from peers.support.lessons import every, name_of
    return [{"name": "default", "about": "the essay's run: discover, trust or refuse, delegate"}] + [
        {"name": name_of(module.__name__), "about": module.LESSON.about} for module in every()]
