"""The step-through page and the diagrams say what the terminal said: each refusal with the
reason the gate printed, each failure with its error, a pause as it was printed; a lane per
endpoint, so a look-alike host is not billing's lane; labels that fit; a broken stream marked
where it broke and where it was joined again.

Every page is made by a real run of the workbench (`--diagram`), and read, where headless
Chromium is installed, as a browser shows it: the document after the page's script ran (what
--dump-dom prints), in a tab of the session's browser, and, for the geometry, a copy of the
page with a script that measures what is drawn."""
import contextlib
import io
import json
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from html import unescape
from html.parser import HTMLParser

import pytest

import a2a_delegation as story
from conftest import ROOT, cli
from test_step_through_page import steps_of

SVG = "{http://www.w3.org/2000/svg}"
REFUSED = re.compile(r"\[trust\] '([^']*)' (.*) -> delegation REFUSED")
LOOK_ALIKES = ["billing.acme.example", "billing-acme.example", "billing.acme-payments.example", "acme-billing.example"]
MEASURE = """<script>
const box = document.querySelector('.diagram').getBoundingClientRect(), svg = document.getElementById('diagram');
const outer = svg.getBoundingClientRect(), cut = [];
for (const text of svg.querySelectorAll('text')) {
  const r = text.getBoundingClientRect();
  if (r.right > Math.min(box.right, outer.right) + 0.5 || r.left < Math.max(box.left, outer.left) - 0.5)
    cut.push(text.textContent);
}
document.body.setAttribute('data-cut', JSON.stringify(cut));
document.body.setAttribute('data-scale', String(outer.width / Number(svg.getAttribute('width'))));
</script></body>"""


class Shown(HTMLParser):
    """From --dump-dom: the step shown, and the text a reader sees in the panel, in the
    diagram's current step and in the list's current item; the body's attributes."""

    VOID = {"br", "img", "input", "meta", "link", "hr", "wbr"}

    def __init__(self, html):
        super().__init__()
        self.text = {"step": "", "panel": "", "drawn": "", "item": ""}
        self.body, self.open = {}, []  # per open element: the regions it opens
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        self.body = attributes if tag == "body" else self.body
        if tag not in self.VOID:
            classes = (attributes.get("class") or "").split()
            self.open.append([region for region, inside in (
                ("step", attributes.get("id") == "step"), ("panel", attributes.get("id") == "panel"),
                ("drawn", tag == "g" and "current" in classes), ("item", tag == "li" and "current" in classes))
                if inside])

    def handle_endtag(self, tag):
        if tag not in self.VOID and self.open:
            self.open.pop()

    def handle_data(self, data):
        for regions in self.open:
            for region in regions:
                self.text[region] += data


def browse(chromium, path, fragment="", width=1280, height=900):
    """The page as a `width` x `height` browser window shows it once its script ran."""
    return Shown(chromium.dom(path.as_uri() + fragment, width, height))


@pytest.fixture(scope="module")
def moved_card(tmp_path_factory):
    """A copy of the workbench whose billing card sends frames to another host."""
    copy = tmp_path_factory.mktemp("moved") / "workbench"
    skipped = shutil.ignore_patterns(".git", "__pycache__", ".pytest_cache", "*.db", ".venv", ".sdk", ".js-sdk",
                                     "tests", "bench")
    shutil.copytree(ROOT, copy, ignore=skipped)
    path = copy / "peers" / "cards" / "billing-agent.json"
    card = json.loads(path.read_text())
    card["url"] = "https://billing.acme-payments.example/a2a"
    path.write_text(json.dumps(card, indent=2))
    return copy


LIVE: dict = {}  # the flags of a run -> (the run, its trace): each run once, drawn as often as asked


def run(tmp_path, name, *args, workbench=None):
    """The workbench run with `--diagram NAME`; the run and the file. A run of the checkout is
    made once, with --trace, and each drawing of it made from that trace by --replay, which
    draws from the same records (so the slow lessons are not run again for each picture). The
    run is a real process; the drawing is main() itself, in this process, as `web` runs it."""
    path = tmp_path / name
    if workbench is None:
        if args not in LIVE:
            trace = tmp_path / f"live-{len(LIVE)}.jsonl"
            LIVE[args] = (cli(*args, "--trace", str(trace)), trace)
        done, trace = LIVE[args]
        printed, errors = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(errors):
            status = story.main(["--replay", str(trace), "--diagram", str(path)])
        assert status == 0 and "Traceback" not in errors.getvalue(), errors.getvalue()
    else:
        done = subprocess.run([sys.executable, "a2a_delegation.py", *args, "--diagram", str(path)], cwd=workbench,
                              capture_output=True, text=True, timeout=30)
    assert done.returncode in (0, 1, 2) and "Traceback" not in done.stderr, done.stderr  # 2: a peer unreachable
    return done, path


def drawn(html, number):
    """The words the diagram draws for step `number`, each label as one line of text."""
    group = re.search(rf'<g class="step [^"]*" data-step="{number}">(.*?)</g>', html, re.S)[1]
    return unescape(re.sub(r"<[^>]+>", "", group.replace("</text>", "\n")))


@pytest.mark.parametrize("lesson, refusals", [("signed-card", 2), ("spoof", 3), ("moved-card", 2)])
def test_a_browser_shows_each_refusal_with_the_reason_the_terminal_printed(chromium, tmp_path, moved_card, lesson,
                                                                           refusals):
    args, workbench = (["--scenario", lesson], None) if lesson != "moved-card" else ([], moved_card)
    done, path = run(tmp_path, "run.html", *args, workbench=workbench)
    said = [line for line in done.stdout.splitlines() if REFUSED.fullmatch(line)]
    html = path.read_text()
    numbers = [n for n, step in enumerate(steps_of(html), 1) if step["kind"] == "trust" and step["cls"] == "fail"]
    assert len(said) == len(numbers) == refusals, said
    for number, line in zip(numbers, said):
        name, reason = REFUSED.fullmatch(line).groups()
        shown = browse(chromium, path, f"#step={number}")
        assert shown.text["step"] == str(number)
        assert line in shown.text["panel"] and line in shown.text["drawn"].replace("\n", ""), (line, shown.text)
        assert f"trust gate: {name} {reason}" in shown.text["item"]
        if "NOT on the allowlist" not in line:  # the fixed sentence the page used to say for every refusal
            assert "not on the allowlist" not in (shown.text["panel"] + shown.text["drawn"]).lower()


@pytest.mark.parametrize("args, said", [
    (["--scenario", "contract"], lambda line: ": not sent: " in line),
    (["--wire", "0.3", "--request", "Please refund $6,000 on order ORD-77"], lambda line: "(interrupted)" in line),
    (["--scenario", "approval"], lambda line: line.startswith("[support] billing refused it"))],
    ids=["refused-before-sending", "paused", "refused-by-the-peer"])
def test_each_failure_pause_and_refusal_by_a_peer_is_drawn_in_the_words_the_terminal_printed(tmp_path, args, said):
    done, path = run(tmp_path, "run.html", *args)
    lines = [line for line in done.stdout.splitlines() if said(line)]
    html = path.read_text()
    titled = {step["title"]: number for number, step in enumerate(steps_of(html), 1)}
    assert lines and all(line in titled for line in lines), (lines, list(titled))
    for line in lines:
        assert line in drawn(html, titled[line]).replace("\n", ""), line


def test_a_failed_card_fetch_is_drawn_on_its_own_lane_with_its_error(tmp_path):
    registry = tmp_path / "registry.json"
    registry.write_text(json.dumps({"peers": [{"cardUrl": "https://nowhere.example/.well-known/agent-card.json"}]}))
    done, path = run(tmp_path, "run.mmd", "--registry", str(registry))
    error = done.stderr.split("agent-card.json: ", 1)[1].splitlines()[0]
    assert error.startswith("card fetch failed: nothing serves https://nowhere.example")
    notes = [line.strip() for line in path.read_text().splitlines() if line.strip().startswith("Note over L3: ")]
    assert notes == ["Note over L3: " + "".join(c for c in error if c.isalnum() or c in " -_.,()?:'/").strip()]


def test_a_look_alike_host_is_a_lane_of_its_own_labelled_with_its_name_and_host(tmp_path):
    _, svg = run(tmp_path, "spoof.svg", "--scenario", "spoof")
    _, mmd = run(tmp_path, "spoof.mmd", "--scenario", "spoof")
    root = ET.parse(svg).getroot()
    lanes = {}
    for group in root.iter(f"{SVG}g"):
        if "peer" in (group.get("class") or "").split():
            words = {text.get("class"): text.text for text in group.iter(f"{SVG}text")}
            lanes[words["host"]] = (words["name"], float(next(group.iter(f"{SVG}line")).get("x1")))
    assert list(lanes) == LOOK_ALIKES and {name for name, _ in lanes.values()} == {"billing-agent"}
    fetched = [float(line.get("x2")) for line in root.iter(f"{SVG}line") if line.get("class") == "arrow send"]
    assert fetched == [lanes[host][1] for host in LOOK_ALIKES], "each card fetched on the lane of its host"
    participants = [line.strip() for line in mmd.read_text().splitlines() if " as billing-agent" in line]
    assert participants == [f"participant L{n} as billing-agent at {host}" for n, host in enumerate(LOOK_ALIKES, 3)]


@pytest.mark.parametrize("args", [["--scenario", "signed-card"], ["--scenario", "spoof"], ["--scenario", "contract"],
                                  ["--scenario", "broken-stream"],
                                  ["--wire", "0.3", "--request", "refund $6,000 on ORD-7"]])
def test_the_svg_is_as_wide_as_its_widest_label(tmp_path, args):
    _, path = run(tmp_path, "run.svg", *args)
    root = ET.parse(path).getroot()
    for text in root.iter(f"{SVG}text"):
        if text.get("text-anchor") == "start":
            widest = max(len(line.rstrip()) for line in [text.text or ""] + [t.text or "" for t in text])
            assert float(text.get("x")) + widest * 7.2 <= float(root.get("width")), "".join(text.itertext())


@pytest.mark.parametrize("lesson", ["injection", "signed-card", "spoof", "broken-stream"])
def test_at_1280_pixels_every_label_of_the_diagram_is_in_view_and_readable(chromium, tmp_path, lesson):
    """The injection lesson's rogue lane used to show as `refun`, a refusal as `REFUSED
    billing-agent: noth`: now the diagram shrinks to its column, to no less than 7/10."""
    _, path = run(tmp_path, "run.html", "--scenario", lesson)
    measured = tmp_path / "measured.html"
    measured.write_text(path.read_text().replace("</body>", MEASURE), encoding="utf-8")
    shown = browse(chromium, measured, width=1280, height=900)
    assert json.loads(shown.body["data-cut"]) == [] and float(shown.body["data-scale"]) >= 0.69, shown.body
    if lesson == "injection":
        assert ">refund-bot-9000</text>" in path.read_text()


def test_the_broken_streams_diagram_marks_where_it_broke_and_where_it_was_joined_again(tmp_path):
    done, path = run(tmp_path, "run.html", "--scenario", "broken-stream")
    _, mmd = run(tmp_path, "run.mmd", "--scenario", "broken-stream")
    broke = next(line for line in done.stdout.splitlines() if line.startswith("[support] the stream broke off ("))
    missed = next(line for line in done.stdout.splitlines() if line.startswith("[support] missed while not listening"))
    html = path.read_text()
    steps = steps_of(html)
    kinds = [(step["kind"], step["title"].split(",")[0]) for step in steps]
    at = kinds.index(("broken", broke.split(",")[0]))
    # Joined again: the subscription refused (the task completed while the stream was down),
    # the task asked for, and what was missed said.
    assert [kind for kind, _ in kinds[at - 1:at + 6]] == ["frame", "broken", "frame", "frame", "frame", "frame",
                                                          "resumed"]
    assert kinds[at + 1][1].startswith("--> SubscribeToTask") and kinds[at + 3][1].startswith("--> GetTask")
    assert steps[at + 5]["title"] == missed
    assert 'class="zigzag"' in re.search(rf'data-step="{at + 1}">(.*?)</g>', html, re.S)[1]
    assert broke in drawn(html, at + 1).replace("\n", "") and missed in drawn(html, at + 6).replace("\n", "")
    notes = [line.strip() for line in mmd.read_text().splitlines() if line.strip().startswith("Note over")]
    assert any(note.startswith("Note over L3,L0: support the stream broke off") for note in notes), notes
    assert any(note.startswith("Note over L0: support missed while not listening") for note in notes), notes


def test_a_hostile_trace_is_drawn_without_an_error_and_without_a_raw_control_character():
    """Seeded, bounded: 300 traces of records as a file could hold them (wrong types, control
    characters, huge and empty values, events without their lines) are read, drawn and paged."""
    import random

    from peers.support.learner import diagram, page
    rng = random.Random(21)
    values = [None, 0, -1, 1.5, True, [], {}, ["x"], {"a": 1}, "", " ", "\n", "\x1b[2J\x07\u202e", "x" * 5000,
              "https://billing.acme.example/a2a", "https://[::1]:8/a", "data: {}\n\n", '{"result": {"id": 1}}',
              "-->", "<--", "refused", "trusted", "untrusted", "push to our webhook", "\nclosing"]
    kinds = ["registry", "trust", "model", "failure", "frame", "broken", "resumed", "line", "other", 7]
    fields = ["peer", "endpoint", "verdict", "reason", "error", "direction", "method", "http_method", "http_status",
              "body", "headers", "url", "origin", "text", "line", "cards", "task", "jsonrpc_id", "wire", "seq"]
    for _ in range(300):
        records = [{"kind": rng.choice(kinds), **{rng.choice(fields): rng.choice(values) for _ in range(rng.randint(0, 8))}}
                   for _ in range(rng.randint(0, 12))]
        for drawn_text in (page.page(records), diagram.svg(records), diagram.mermaid(records)):
            assert not any(ch in drawn_text for ch in ("\x1b", "\x07", "\u202e")), records
