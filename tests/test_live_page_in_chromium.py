"""The live page in a real browser: headless Chromium (Debian's `chromium`) driven over the
DevTools protocol (tests/chromium.py), against the page's real server and real runs. One
browser serves the session; each test opens its own tab, the browser's cookies cleared first.

A run is started the way a person shares one (`#run=NAME`) or by the page's own controls;
what the test reads is what the page shows. Skipped, saying why, where Chromium is absent."""
import base64
import contextlib
import json
import re
import tempfile
import zlib
from urllib.request import urlopen

import pytest

import a2a_delegation as story
from chromium import CHROMIUM
from conftest import NO_CHROMIUM, ROOT, OutsidePeer, outside_peer
from peers import billing
from peers.a2a import wire_essay
from peers.support.learner import diagram
from peers.support.learner.trace import load
from peers.support.web import server as web

pytestmark = pytest.mark.skipif(not CHROMIUM, reason=NO_CHROMIUM)
READY = "document.body.dataset.state === 'idle'"  # loaded, and every control listening: set last
ENDED = "document.body.dataset.state === 'ended'"
RUN = "document.getElementById('start').click()"  # a linked run waits for a person to press Run


def press_run(browser):
    """Once the page has set a linked run up, press Run, as a person must."""
    browser.wait_for(READY)
    browser.evaluate(RUN)
FRAMES = "[...document.querySelectorAll('#frames pre')].map((line) => line.textContent)"
DECISIONS = ("[...document.querySelectorAll('#decisions li')].map((line) => [...line.childNodes].filter((node) =>"
             " node.localName !== 'button').map((node) => node.textContent).join(''))")  # not a refusal's offer
# Markup a hostile peer puts in everything it controls; none of it may become an element or run.
PAYLOAD = ("<img src=x onerror=\"document.body.dataset.pwned='img'\">"
           "<script>document.body.dataset.pwned='script'</script>")


# The live diagram as the browser drew it: each step group's data-step, the frame it draws
# (data-seq, or null), its words, and where its arrows are on the screen.
DRAWN = """[...document.querySelectorAll('#live-diagram g.step')].map((group) => [Number(group.dataset.step),
    group.dataset.seq ? Number(group.dataset.seq) : null, [...group.querySelectorAll('text')].map((t) => t.textContent),
    [...group.querySelectorAll('line.arrow')].map((line) => { const box = line.getBoundingClientRect();
      return [box.width, box.top]; })])"""


def diagram_of_the_run(browser, base):
    """The live diagram, once drawn whole, checked against the frames the page listed and the
    SVG `--diagram` draws from the same run's trace (the page's Save link): the same groups,
    the same words, in the same order, each arrow drawn with a width, each row below the last."""
    browser.evaluate("document.getElementById('tab-diagram').click()")  # on a narrow window, its tab
    assert browser.evaluate("document.getElementById('frames-panel').offsetParent === null") == \
        browser.evaluate("getComputedStyle(document.getElementById('tab-diagram')).display !== 'none'")
    drawn = browser.evaluate(DRAWN)
    listed = browser.evaluate("[...document.querySelectorAll('#frames li.http')].map((li) => Number(li.dataset.seq))")
    assert [seq for _, seq, _, _ in drawn if seq is not None] == listed, "one arrow per frame, in order"
    with urlopen(base.split("/?")[0] + browser.evaluate("document.getElementById('trace').getAttribute('href')"),
                 timeout=10) as answer:
        saved = answer.read()
    with tempfile.NamedTemporaryFile("wb", suffix=".jsonl") as file:
        file.write(saved)
        file.flush()
        svg = diagram.svg(load(file.name))  # as --replay reads it: from a file
    groups = re.findall(r'<g class="step [^"]*" data-step="(\d+)">(.*?)</g>', svg)
    words = [[re.sub(r"<[^>]+>", "", text).replace("&#x27;", "'").replace("&quot;", '"').replace("&lt;", "<")
              .replace("&gt;", ">").replace("&amp;", "&") for text in re.findall(r"<text[^>]*>(.*?)</text>", body)]
             for _, body in groups]
    assert [step for step, _, _, _ in drawn] == [int(step) for step, _ in groups]
    assert [texts for _, _, texts, _ in drawn] == words, "the page draws what --diagram draws"
    arrows = [arrow for _, _, _, found in drawn for arrow in found]
    assert len(arrows) == svg.count('<line class="arrow') and all(width > 0 for width, _ in arrows)
    assert [top for _, top in arrows] == sorted(top for _, top in arrows), "each arrow below the one before"
    return drawn


@pytest.fixture
def page(tmp_path):
    path = tmp_path / "allowlist.json"
    path.write_text((ROOT / "allowlist.json").read_text())
    server, app, url = web.listening(0, str(path), story.main)
    yield url, path
    web.close(server, app)


def test_run_default_shows_the_essays_frames_the_trusted_result_and_the_refusal(chromium, page):
    with chromium.tab(page[0] + "#run=default") as browser:
        press_run(browser)
        browser.wait_for(ENDED)
        frames = browser.evaluate(FRAMES)
        assert "--> GET https://billing.acme.example/.well-known/agent-card.json" in frames
        assert any(line.startswith('--> {"jsonrpc": "2.0", "id": 1, "method": "tasks/send"') for line in frames)
        assert "[support] trusted result (from billing-agent): refund of $180.00 issued for ORD-3300 " \
               "(ref BILL-ORD-3300)" in frames
        assert "[trust] 'refund-bot-9000' is NOT on the allowlist -> delegation REFUSED" in frames
        decisions = browser.evaluate(DECISIONS)
        assert "billing-agent: trusted (is allowlisted)" in decisions
        assert "refund-bot-9000: refused (is NOT on the allowlist)" in decisions
        assert browser.evaluate("location.search") == "", "the token left the address bar"
        drawn = diagram_of_the_run(browser, page[0])
        refusal = [texts for _, seq, texts, _ in drawn if any("delegation REFUSED" in text for text in texts)]
        assert refusal and "NOT on the allowlist" in " ".join(refusal[0]), "the refusal, with the rule, where it stopped"
        sent = next(step for step, seq, texts, _ in drawn if seq is not None and texts[0].startswith("tasks/send"))
        browser.evaluate(f"document.querySelector('#live-diagram g.step[data-step=\"{sent}\"]')"
                         ".dispatchEvent(new MouseEvent('click', {bubbles: true}))")
        chosen = browser.evaluate("[...document.querySelectorAll('#frames li.chosen')].map((li) => li.textContent)")
        assert any(line.startswith('--> {"jsonrpc": "2.0", "id": 1, "method": "tasks/send"') for line in chosen), \
            "clicking the arrow shows its frame"


def test_run_approval_shows_the_follow_up_frame_with_the_same_task_id(chromium, page):
    with chromium.tab(page[0] + "#run=approval") as browser:
        press_run(browser)
        browser.wait_for(ENDED)
        frames = browser.evaluate(FRAMES)
        first = next(line for line in frames if line.startswith("<-- ") and '"task": {"id": "task-1"' in line)
        follow_up = [line for line in frames if line.startswith("--> ") and '"taskId": "task-1"' in line]
        assert follow_up and frames.index(follow_up[0]) > frames.index(first)
        assert "[support] task task-1 state: completed" in frames
        drawn = diagram_of_the_run(browser, page[0])
        assert any(texts[0].endswith(": next turn of task-1") for _, _, texts, _ in drawn)


def test_editing_the_allowlist_and_running_again_shows_billing_refused(chromium, page):
    url, path = page
    with chromium.tab(url + "#run=default") as browser:
        press_run(browser)
        browser.wait_for(ENDED)
        browser.evaluate("""(() => { const box = document.getElementById('allowlist');
            box.value = JSON.stringify({trusted: []}); document.getElementById('check').click(); })()""")
        assert browser.wait_for("document.getElementById('allowlist-problem').textContent") == \
            "the loader takes it: no peer trusted"
        browser.evaluate("document.getElementById('allowlist').value = '{\"trusted\": [{\"name\": 1}]}';"
                         "document.getElementById('check').click()")
        problem = browser.wait_for("document.getElementById('allowlist-problem').className === 'bad' && "
                                   "document.getElementById('allowlist-problem').textContent")
        assert problem.startswith("the allowlist in the page")
        browser.evaluate("""(() => { document.getElementById('allowlist').value = JSON.stringify({trusted: []});
            document.body.dataset.state = 'again'; document.getElementById('rerun').click(); })()""")
        browser.wait_for(ENDED)
        frames = browser.evaluate(FRAMES)
        assert "[trust] 'billing-agent' is NOT on the allowlist -> delegation REFUSED" in frames
        assert not any(line.startswith('--> {"jsonrpc"') for line in frames), "nothing was delegated"
    assert json.loads(path.read_text())["trusted"], "the file is unchanged until Save"


def test_step_mode_sends_nothing_until_send(chromium, page):
    with chromium.tab(page[0] + "#run=default&step=1") as browser:
        press_run(browser)
        browser.wait_for("document.body.dataset.state === 'held'")
        sent = "[...document.querySelectorAll('#frames li.http')].map((line) => line.textContent.slice(0, 3))"
        assert browser.evaluate(sent) == ["[--"]  # the card's GET, shown, held
        assert browser.evaluate(f"{FRAMES}.some((line) => line.startsWith('{{'))") is False, "no card came back"
        browser.evaluate("document.getElementById('send').click()")
        browser.wait_for("document.querySelectorAll('li.held').length === 2")
        assert browser.evaluate(sent) == ["[--", "[<-", "[--"]
        browser.evaluate("document.getElementById('stop').click()")
        browser.wait_for(ENDED)
        assert browser.evaluate(sent) == ["[--", "[<-", "[--"], "Stop: nothing more left"


@pytest.fixture
def hostile_peer():
    """An agent on 127.0.0.1 that puts markup in its card, its artifact, its error and its headers."""
    class Handler(OutsidePeer):
        extra_headers = {"X-Note": PAYLOAD}

        def do_GET(self):
            base = f"http://127.0.0.1:{self.server.server_address[1]}"
            card = wire_essay.card_to_wire(billing.billing_agent(base).card)
            self.reply({**card, "name": "hostile" + PAYLOAD, "description": PAYLOAD,
                        "authentication": {"schemes": ["none"]}})

        def do_POST(self):
            asked = self.asked()
            if self.server.errs:
                return self.reply({"jsonrpc": "2.0", "id": asked["id"], "error": {"code": -32001, "message": PAYLOAD}})
            self.reply({"jsonrpc": "2.0", "id": asked["id"], "result": {
                "id": "task-1", "lifecycle": ["submitted", "working", "completed"], "status": {"state": "completed"},
                "artifacts": [{"type": "text", "text": PAYLOAD}]}})

    with contextlib.ExitStack() as servers:
        yield lambda errs: servers.enter_context(outside_peer(Handler, errs=errs))


@pytest.mark.parametrize("errs", [False, True], ids=["in its artifact", "in its error message"])
def test_markup_from_a_peer_is_shown_as_text_and_never_runs(chromium, page, hostile_peer, errs):
    base = hostile_peer(errs)
    trusting = json.dumps({"trusted": [{"name": "hostile" + PAYLOAD, "endpoint": base + "/a2a"}]})
    with chromium.tab(page[0]) as browser:
        browser.wait_for(READY)
        browser.evaluate(f"""(() => {{ document.getElementById('peer').value = {json.dumps(base)};
            document.getElementById('allowlist').value = {json.dumps(trusting)};
            document.getElementById('start').click(); }})()""")
        browser.wait_for(ENDED)
        shown = browser.evaluate("document.querySelector('main').textContent")
        assert shown.count(PAYLOAD) >= 3, "card, artifact or error, and headers: shown as the text they are"
        assert browser.evaluate("document.body.dataset.pwned") is None
        assert browser.evaluate("document.querySelectorAll('main img, main script').length") == 0
        assert "hostile<img" in browser.evaluate("document.getElementById('live-diagram').textContent"), \
            "the diagram draws its name as text"
        lines = browser.evaluate(FRAMES)
        said = "trusted result (from hostile" if not errs else "delegation failed"
        assert any(said in line and PAYLOAD in line for line in lines), lines[-8:]


def test_a_finished_run_steps_through_in_the_existing_view(chromium, page):
    with chromium.tab(page[0] + "#run=default") as browser:
        press_run(browser)
        browser.wait_for(ENDED)
        browser.evaluate("location.href = document.getElementById('steps').href")
        browser.wait_for("document.getElementById('step') && document.getElementById('panel').textContent")
        browser.evaluate("document.getElementById('next').click()")
        assert browser.wait_for("document.getElementById('step').textContent === '2'")
        assert browser.evaluate("document.getElementById('panel').textContent").startswith("Step 2 of ")
        fetch = browser.evaluate("[...document.querySelectorAll('li[data-step]')].find(item => "
                                 "item.textContent.includes('GET agent card to billing-agent')).dataset.step")
        browser.evaluate(f"location.hash = '#step={fetch}'")
        assert "GET https://billing.acme.example/.well-known/agent-card.json" in \
            browser.wait_for(f"document.getElementById('step').textContent === '{fetch}' && "
                             "document.getElementById('panel').textContent")


def png_pixels(png: bytes) -> list[tuple[int, int, int]]:
    """Every pixel of an 8-bit RGB or RGBA PNG as (r, g, b): its chunks, zlib and the five
    row filters, standard library only (a screenshot's pixels are what a person sees). Each
    row undoes only its own filter: None and Up, most of a screenshot, without a loop."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    at, header, data = 8, None, b""
    while at < len(png):
        size = int.from_bytes(png[at:at + 4], "big")
        kind, body = png[at + 4:at + 8], png[at + 8:at + 8 + size]
        header = body if kind == b"IHDR" else header
        data += body if kind == b"IDAT" else b""
        at += 12 + size
    width, height, depth, colour = int.from_bytes(header[:4], "big"), int.from_bytes(header[4:8], "big"), \
        header[8], header[9]
    assert depth == 8 and colour in (2, 6), "Chromium writes 8-bit RGB or RGBA"
    step = 3 if colour == 2 else 4
    raw, stride, pixels, previous = zlib.decompress(data), width * step, [], bytes(width * step)
    for row in range(height):
        kind, line = raw[row * (stride + 1)], bytearray(raw[row * (stride + 1) + 1:(row + 1) * (stride + 1)])
        if kind == 2:  # Up
            line = bytearray((a + b) & 0xFF for a, b in zip(line, previous))
        elif kind:
            for i in range(stride):
                left, up = line[i - step] if i >= step else 0, previous[i]
                if kind == 1:
                    guess = left
                elif kind == 3:
                    guess = (left + up) // 2
                else:  # Paeth: of left, up and the corner, the nearest to left + up - corner
                    corner = previous[i - step] if i >= step else 0
                    estimate = left + up - corner
                    near_left, near_up, near_corner = abs(estimate - left), abs(estimate - up), abs(estimate - corner)
                    guess = left if near_left <= near_up and near_left <= near_corner else \
                        up if near_up <= near_corner else corner
                line[i] = (line[i] + guess) & 0xFF
        pixels += zip(line[0::step], line[1::step], line[2::step])
        previous = line
    return pixels


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_step_through_view_draws_its_diagram_in_colour_not_black(chromium, page, scheme):
    """The SVG's own style must apply under the page's policy: its background and arrows are
    checked in the pixels of a screenshot, not in the DOM (the DOM was right while it drew black)."""
    with chromium.tab(page[0] + "#run=default", width=1280) as browser:
        press_run(browser)
        browser.call("Emulation.setEmulatedMedia", features=[{"name": "prefers-color-scheme", "value": scheme}])
        browser.wait_for(ENDED)
        browser.evaluate("location.href = document.getElementById('steps').href")
        last = browser.wait_for("document.getElementById('step') && document.getElementById('panel').textContent"
                                " && document.querySelectorAll('li[data-step]').length")
        browser.evaluate(f"location.hash = '#step={last}'")  # every step drawn in full, none faded as still to come
        browser.wait_for(f"document.getElementById('step').textContent === '{last}'")
        box = browser.evaluate("(() => { const r = document.getElementById('diagram').getBoundingClientRect();"
                               " return [r.x, r.y, r.width, Math.min(r.height, 600)]; })()")
        shot = browser.call("Page.captureScreenshot", format="png", clip=dict(
            zip(("x", "y", "width", "height"), box), scale=1))
    pixels = png_pixels(base64.b64decode(shot["data"]))
    background = (255, 255, 255) if scheme == "light" else (0x0D, 0x11, 0x17)  # picture.STYLE's --bg
    share = pixels.count(background) / len(pixels)
    assert share > 0.5, f"{share:.0%} of the diagram is its background colour {background}"
    colours = set(pixels)  # a few thousand distinct, of some 700,000 pixels: each looked at once
    def near(colour, pixel):
        return sum(abs(a - b) for a, b in zip(colour, pixel)) < 60
    fail, send = ((0xCF, 0x22, 0x2E), (0x09, 0x69, 0xDA)) if scheme == "light" else \
        ((0xFF, 0x7B, 0x72), (0x58, 0xA6, 0xFF))
    assert any(near(fail, pixel) for pixel in colours), "the refusal is drawn in the failure colour"
    assert any(near(send, pixel) for pixel in colours), "the frames sent are drawn in the send colour"


@pytest.mark.parametrize("width", [1280, 420])
def test_the_page_reads_at_1280_pixels_and_on_a_narrow_window(chromium, page, width):
    with chromium.tab(page[0] + "#run=approval") as browser:
        press_run(browser)
        browser.call("Emulation.setDeviceMetricsOverride", width=width, height=900, deviceScaleFactor=1, mobile=False)
        browser.wait_for(ENDED)
        assert browser.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), "no sideways scrolling"
        frames, decisions = (browser.evaluate(f"document.getElementById('{which}').getBoundingClientRect().left")
                             for which in ("frames", "decisions"))
        assert (decisions > frames) if width == 1280 else (decisions < 40), "side by side, or one above the other"
        if width == 1280:  # the controls stay in view: the frames pane scrolls, not the window
            assert browser.evaluate("document.documentElement.scrollHeight <= window.innerHeight")
            assert browser.evaluate("(() => { const pane = document.getElementById('frames-panel');"
                                    " return pane.scrollHeight > pane.clientHeight && pane.scrollTop > 0; })()")


def test_a_saved_run_opens_in_the_page(chromium, page, tmp_path):
    from conftest import cli
    cli("--trace", str(tmp_path / "run.jsonl"))
    with chromium.tab(page[0]) as browser:
        browser.wait_for(READY)
        node = browser.call("DOM.querySelector", nodeId=browser.call("DOM.getDocument")["root"]["nodeId"],
                            selector="#open")["nodeId"]
        browser.call("DOM.setFileInputFiles", nodeId=node, files=[str(tmp_path / "run.jsonl")])
        browser.wait_for(ENDED)
        assert "[trust] 'refund-bot-9000' is NOT on the allowlist -> delegation REFUSED" in browser.evaluate(FRAMES)
        assert "refund-bot-9000: refused (is NOT on the allowlist)" in browser.evaluate(DECISIONS)
        assert browser.evaluate("document.querySelectorAll('#live-diagram line.arrow').length") >= 8, \
            "a saved run is drawn too"


def test_an_input_error_keeps_the_last_runs_frames_and_says_only_what_is_wrong(chromium, page):
    with chromium.tab(page[0] + "#run=default") as browser:
        press_run(browser)
        browser.wait_for(ENDED)
        before = browser.evaluate(FRAMES)
        browser.evaluate("document.getElementById('peer').value = ''; document.getElementById('say').click()")
        said = browser.wait_for("document.body.dataset.state === 'refused' && document.getElementById('status').textContent")
        assert said == "the agent's URL is http(s): its card's, or its base URL, as --peer"
        assert browser.evaluate(FRAMES) == before, "the last run's frames stay"
        assert browser.evaluate("getComputedStyle(document.getElementById('status')).color") == "rgb(187, 0, 0)"
        browser.evaluate("""(() => { document.getElementById('peer').value = 'http://127.0.0.1:9/';
            document.getElementById('part-data').checked = true; document.getElementById('message').value = '{bad';
            document.body.dataset.state = 'again'; document.getElementById('say').click(); })()""")
        said = browser.wait_for("document.body.dataset.state === 'refused' && document.getElementById('status').textContent")
        assert said.startswith("the data part is not JSON the workbench reads: ") and "request" not in said
        assert browser.evaluate(FRAMES) == before


def test_failures_in_trust_decisions_and_outcomes_are_red(chromium, page, closed_port):
    with chromium.tab(page[0] + f"#run=default&peer=http://127.0.0.1:{closed_port}/") as browser:
        press_run(browser)
        browser.wait_for(ENDED)
        colours = browser.evaluate("[...document.querySelectorAll('#decisions li')].map((line) => "
                                   "[line.className, line.textContent, getComputedStyle(line).color])")
    failing = [(text, colour) for cls, text, colour in colours if cls in ("kind-refused", "kind-error")]
    assert {cls for cls, _, _ in colours} >= {"kind-refused", "kind-error"}, colours
    assert all(colour == "rgb(187, 0, 0)" for _, colour in failing), failing
    trusted = [colour for cls, _, colour in colours if cls == "kind-trusted"]
    assert trusted and all(colour == "rgb(0, 119, 0)" for colour in trusted)


def test_enter_in_the_agents_url_starts_no_run(chromium, page):
    with chromium.tab(page[0]) as browser:
        browser.wait_for(READY)
        browser.evaluate("document.getElementById('peer').value = 'http://127.0.0.1:9/'; "
                         "document.getElementById('peer').focus()")
        for kind in ("rawKeyDown", "char", "keyUp"):  # a real key press: the browser's implicit submission
            browser.call("Input.dispatchKeyEvent", type=kind, key="Enter", code="Enter", windowsVirtualKeyCode=13,
                         **({"text": "\r"} if kind == "char" else {}))
        assert "Enter runs nothing here" in browser.wait_for("document.getElementById('status').textContent")
        assert browser.evaluate("document.body.dataset.state") == "idle"
        assert browser.evaluate("document.body.dataset.run") is None, "no run was started"
        browser.evaluate("document.getElementById('start').click()")  # the Run button still runs
        browser.wait_for(ENDED)


def test_a_link_from_another_page_only_sets_a_run_up_and_a_person_starts_it(chromium, page, closed_port):
    """Any page, one on another port of this machine too, can send the browser to a link
    naming a run and an agent's URL: it sets the run up; nothing starts until Run."""
    agent = f"http://127.0.0.1:{closed_port}/"
    with chromium.tab(page[0] + f"#run=approval&peer={agent}") as browser:
        said = browser.wait_for(f"{READY} && document.getElementById('status').textContent")
        assert said == f"set up from the link (approval, with the agent at {agent}): Run starts it"
        assert browser.evaluate("document.activeElement.id") == "start"
        assert browser.evaluate(FRAMES) == [] and browser.evaluate("document.body.dataset.run") is None


def test_the_token_is_in_no_cookie_and_a_reload_keeps_the_page_working(chromium, page):
    with chromium.tab(page[0]) as browser:
        browser.wait_for(READY)
        assert browser.evaluate("document.cookie") == "" and browser.evaluate("location.search") == ""
        browser.evaluate("window.before = 1")
        browser.call("Page.reload")  # the address has no token now: the tab's sessionStorage has
        assert browser.wait_for(f"!window.before && {READY} && document.querySelectorAll('#run option').length") > 2
    with chromium.tab(page[0].split("?")[0]) as browser:  # a tab that never had the token
        said = browser.wait_for(f"{READY} && document.getElementById('status').textContent")
        assert said.startswith("no token: open the address the web command printed")
