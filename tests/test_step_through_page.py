"""--diagram run.html, the step-through page (peers/support/learner/page.py), and the diagrams.

Pages are made from real --trace files of the workbench. The page is checked as text,
and, where headless Chromium is installed (.ci/run installs Debian's `chromium` where
the machine allows), rendered in a tab of the session's browser (tests/chromium.py) to see
which step a browser shows, from the document as its script left it (what --dump-dom prints)."""
import json
import re
from html.parser import HTMLParser

import pytest

from conftest import cli
from peers.support.learner import page
from peers.support.learner.tools import write_diagram

RUNS = {"essay": [], "untrusted": ["--allow-untrusted", "refund-bot-9000"], "v10": ["--wire", "1.0"],
        "paused": ["--wire", "0.3", "--request", "Please refund $6,000 on order ORD-77"],
        "injection": ["--scenario", "injection"], "unreachable": ["--registry", "{registry}"]}
HOSTILE = "</script><script>document.body.setAttribute('data-pwned','1')</script>"
IMG = "<img src=x onerror=\"document.body.setAttribute('data-pwned','2')\">"


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    folder = tmp_path_factory.mktemp("traces")
    (folder / "registry.json").write_text(json.dumps({"peers": [
        {"cardUrl": "https://nowhere.example/.well-known/agent-card.json"},
        {"cardUrl": "https://billing.acme.example/.well-known/agent-card.json"}]}))
    found = {}
    for name, args in RUNS.items():
        path = folder / f"{name}.jsonl"
        cli(*[a.format(registry=folder / "registry.json") for a in args], "--trace", str(path))
        found[name] = [json.loads(line) for line in path.read_text().splitlines()]
    return found


def steps_of(html):
    return json.loads(re.search(r'<script type="application/json" id="run-data">(.*?)</script>', html, re.S)[1])


def step_where(records, **match):
    """The page's number of the step whose record matches."""
    seq = next(r["seq"] for r in records if all(r.get(k) == v for k, v in match.items()))
    return next(n for n, step in enumerate(steps_of(page.page(records)), 1) if step["seq"] == seq)


def test_the_page_needs_no_network_to_open(traces):
    for records in traces.values():
        html = page.page(records)
        assert "<link" not in html.lower() and "@import" not in html.lower()
        assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", html, re.I)


def test_each_event_is_a_step_and_each_frame_one_arrow(traces):
    for records in traces.values():
        html = page.page(records)
        shown = steps_of(html)
        events = [r["seq"] for r in records if r["kind"] in ("registry", "trust", "model", "failure", "frame")]
        assert [step["seq"] for step in shown if step["kind"] != "result"] == events, "each event once, in order"
        frames = [r for r in records if r["kind"] == "frame"]
        assert html.count('<line class="arrow send') == sum(r["direction"] == "-->" for r in frames)


def test_the_default_runs_page_has_one_step_per_event_not_one_per_printed_line(traces):
    """Not a frame and its printed line, not the blank lines: the registry, each card fetch
    (its GET and the card), each trust decision, each frame, each result."""
    html = page.page(traces["essay"])
    shown = steps_of(html)
    assert [(step["kind"], step["cls"]) for step in shown] == [
        ("registry", ""), ("frame", "send"), ("frame", "reply"), ("trust", "ok"), ("frame", "send"),
        ("frame", "reply"), ("result", "ok"), ("frame", "send"), ("frame", "reply"), ("trust", "fail")]
    assert "</output> of 10</span>" in html and html.count('<li data-step="') == 10
    printed = "\n".join(step["printed"] or "" for step in shown)
    assert "[support] task task-1 lifecycle: submitted -> working -> completed" in printed, "story lines kept"
    assert "-> delegation result: None  (refused; output never trusted)" in shown[-1]["printed"]


def test_the_essays_run_draws_the_gate_refusing_and_nothing_beyond_it(traces):
    records, html = traces["essay"], page.page(traces["essay"])
    for text in (">GET agent card<", ">agent card<", ">tasks/send (id 1)<", ">task-1 completed (id 1)<",
                 ">trusted (allowlisted)<", ">[trust] &#x27;refund-bot-9000&#x27; is NOT on the allowlist -&gt; ",
                 ">delegation REFUSED</tspan>",
                 "in-process JSON-RPC shim (Part 12 reused) · wire format: essay"):
        assert text in html, text
    refused = step_where(records, kind="trust", verdict="refused")
    drawn = [int(n) for n in re.findall(r'<g class="step [^"]*" data-step="(\d+)"', html)]
    assert max(drawn) == refused, "no arrow beyond the gate: nothing was sent to the rogue"


def test_what_went_wrong_is_drawn_as_what_it_is(traces):
    untrusted = page.page(traces["untrusted"])
    assert ">task-1 completed (id 2) UNTRUSTED<" in untrusted and ">UNTRUSTED, opted in<" in untrusted
    paused = page.page(traces["paused"])
    assert re.search(r'<line class="arrow warn"[^>]*/><rect[^>]*/><text class="warn"[^>]*>task-1 input-required', paused)
    unreachable = page.page(traces["unreachable"])
    assert re.search(r'class="stop"[^>]*/><rect[^>]*/><text class="fail"[^>]*>card fetch failed', unreachable)
    injection = page.page(traces["injection"])
    assert ">which peer and skill?<" in injection and ">chose refund-bot-9000 / process_refund<" in injection


def test_the_svg_and_mermaid_diagrams_draw_the_same_marks(traces, tmp_path):
    records = traces["essay"]
    write_diagram(str(tmp_path / "run.svg"), records)
    write_diagram(str(tmp_path / "run.mmd"), records)
    svg = (tmp_path / "run.svg").read_text()
    assert svg.startswith('<svg xmlns="http://www.w3.org/2000/svg"') and "prefers-color-scheme:dark" in svg
    assert 'class="tag"' in svg, "labels sit on a background, never struck through by a lifeline"
    mermaid = (tmp_path / "run.mmd").read_text()
    assert mermaid.startswith("sequenceDiagram\n    title over in-process")
    assert "Note over L2: trust 'refund-bot-9000' is NOT on the allowlist - delegation REFUSED" in mermaid
    with pytest.raises(ValueError, match=".svg, .html or .mmd"):
        write_diagram(str(tmp_path / "run.png"), records)


def hostile_records():
    body = {"jsonrpc": "2.0", "id": 1, "result": {"id": HOSTILE, "lifecycle": ["submitted", IMG],
            "artifacts": [{"text": "\x1b[2K\r\u2028\u202e\x9b" + HOSTILE}]}}
    frame = {"kind": "frame", "peer": HOSTILE, "transport": IMG, "wire": "essay", "method": "tasks/send",
             "jsonrpc_id": 1, "http_method": "POST", "url": "https://x.example/a2a", "t_ms": 1.0}
    return [{"seq": 1, "kind": "registry", "cards": [IMG]},
            {"seq": 2, "kind": "trust", "peer": "registry", "endpoint": IMG, "verdict": "untrusted"},
            {"seq": 3, **frame, "direction": "-->", "headers": {IMG: HOSTILE}, "body": json.dumps(body)},
            {"seq": 4, **frame, "direction": "<--", "http_status": 200, "headers": {}, "body": json.dumps(body)},
            {"seq": 5, "kind": "failure", "peer": HOSTILE, "error": IMG},
            {"seq": 6, "kind": "line", "text": HOSTILE + "\x1b]0;title\x07" + IMG}]


def test_hostile_peer_text_stays_text_on_the_page():
    html = page.page(hostile_records())
    assert len(re.findall(r"<script", html, re.I)) == 2, "the data and the page's own script, no third"
    assert "<img" not in html.lower() and "</script><script>doc" not in html
    for raw in ("\x1b", "\x07", "\r", "\u2028", "\u202e", "\x9b"):
        assert raw not in html, repr(raw)
    assert html.count('text-anchor="middle">registry</text>') == 2, "a peer named 'registry' gets its own lane"


# -- the page in a browser ---------------------------------------------------------------------

class Dom(HTMLParser):
    """From --dump-dom: the step shown, the data-step of every .current element, the panel's text."""

    def __init__(self, html):
        super().__init__()
        self.step, self.current, self.panel, self.pwned, self.imgs = "", [], "", False, 0
        self.inside = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        self.imgs += tag == "img"
        self.pwned |= "data-pwned" in attributes
        if "current" in (attributes.get("class") or "").split():
            self.current.append(attributes.get("data-step"))
        if attributes.get("id") in ("step", "panel") or (self.inside and tag not in ("br", "img", "input")):
            self.inside.append(attributes.get("id") if attributes.get("id") in ("step", "panel") else tag)

    def handle_endtag(self, tag):
        if self.inside:
            self.inside.pop()

    def handle_data(self, data):
        self.step += data if "step" in self.inside else ""
        self.panel += data if "panel" in self.inside else ""


def render(chromium, path, fragment):
    """The page at `path` as a browser shows it once its script ran (the session's Chromium)."""
    return Dom(chromium.dom(path.as_uri() + fragment))


@pytest.mark.parametrize("which", ["first", "third", "last"])
def test_a_browser_opens_the_page_at_the_step_the_url_names(chromium, traces, tmp_path, which):
    records = traces["essay"]
    path = tmp_path / "run.html"
    path.write_text(page.page(records), encoding="utf-8")
    total = len(steps_of(page.page(records)))
    number = {"first": 1, "third": 3, "last": total}[which]
    dom = render(chromium, path, f"#step={number}")
    assert dom.step == str(number) and set(dom.current) == {str(number)}
    assert f"Step {number} of {total}" in dom.panel


def test_a_browser_shows_a_frames_body_and_the_lifecycle_so_far(chromium, traces, tmp_path):
    records = traces["untrusted"]
    number = step_where(records, kind="frame", direction="<--", jsonrpc_id=2)
    path = tmp_path / "run.html"
    path.write_text(page.page(records), encoding="utf-8")
    dom = render(chromium, path, f"#step={number}")
    for text in ("<-- task-1 completed (id 2) UNTRUSTED, refund-bot-9000 -> support agent", '"lifecycle": [',
                 "\\u001b[2K\\rrefund of $9,000.00", "refund-bot-9000 · task-1: submitted -> completed"):
        assert text in dom.panel, text


def test_the_arrow_keys_and_buttons_move_one_step_and_update_the_url(chromium, traces, tmp_path):
    driver = ("<script>for (const key of ['ArrowRight', 'ArrowRight', 'ArrowLeft', 'ArrowRight'])"
              " document.dispatchEvent(new KeyboardEvent('keydown', {key}));"
              " document.getElementById('next').click();"
              " document.body.setAttribute('data-hash', location.hash);</script>")
    path = tmp_path / "driven.html"
    path.write_text(page.page(traces["essay"]).replace("</body>", driver + "</body>"), encoding="utf-8")
    dom = render(chromium, path, "#step=3")
    assert dom.step == "6"


def test_a_browser_runs_none_of_a_peers_text(chromium, tmp_path):
    path = tmp_path / "hostile.html"
    path.write_text(page.page(hostile_records()), encoding="utf-8")
    for number in range(1, len(steps_of(page.page(hostile_records()))) + 1):
        dom = render(chromium, path, f"#step={number}")
        assert not dom.pwned and dom.imgs == 0 and dom.step == str(number)


def test_a_trace_naming_thousands_of_tasks_makes_a_page_that_grows_with_it_not_its_square():
    """Each step's tasks panel shows the newest tasks and their latest states, and says how many
    it leaves out: it listed every task seen so far, and 4,000 replies made a 215 MB page."""
    def trace(replies, states=1):
        records = [{"kind": "registry", "seq": 1, "cards": []}]
        for n in range(replies):
            body = json.dumps({"jsonrpc": "2.0", "id": n, "result": {"id": f"t{n % (replies // states)}",
                                                                     "status": {"state": "working" if n % 2 else "submitted"}}})
            records.append({"kind": "frame", "seq": n + 2, "direction": "<--", "peer": "p", "origin": "http://p",
                            "http_method": "POST", "http_status": 200, "body": body})
        return records
    small, large = (len(page.page(trace(replies))) for replies in (500, 2000))
    assert large < 5 * small, (small, large)  # four times the replies: about four times the page
    last = steps_of(page.page(trace(2000)))[-1]["tasks"]
    assert len(last) == page.MOST_TASKS_SHOWN + 1 and last[-1] == "(and 1980 earlier tasks)" and last[-2].endswith("t1999: working")
    one = steps_of(page.page(trace(400, states=400)))[-1]["tasks"]  # one task, 400 changes of state
    assert one == ["p · t0: ... -> " + " -> ".join(["submitted", "working"] * 6)]
