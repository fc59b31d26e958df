"""The live page's first minute, in headless Chromium (the session's one browser,
tests/chromium.py), against the page's real server, real runs and billing-agent served on
127.0.0.1 port 0: an input problem is said beside the field that caused it and the last
run's frames stay; the tabs move with the arrow keys (the WAI-ARIA tabs pattern) and every
control has a name; a stream's status and headers show before its events; and at 1280 and
390 px the controls stay in view while the frames pane, not the window, scrolls. A script in
any field never runs. Skipped, saying why, where Chromium is absent."""
import json

import pytest

import a2a_delegation as story
from chromium import CHROMIUM
from conftest import NO_CHROMIUM, ROOT
from peers.support.web import server as web
from test_live_page_any_agent import REFUND, TOKEN, billing_served
from test_live_page_in_chromium import ENDED, FRAMES, PAYLOAD, READY

pytestmark = pytest.mark.skipif(not CHROMIUM, reason=NO_CHROMIUM)
KEYS = {"ArrowLeft": 37, "ArrowRight": 39, "Home": 36, "End": 35, "Enter": 13}
# Each field's problem as the page shows it: its text, whether the field is marked invalid, and its place on screen.
PROBLEM = """((id) => {{ const field = document.getElementById(id), said = document.getElementById(id + '-problem');
    return [said.textContent, field.getAttribute('aria-invalid'), field.getClientRects().length > 0,
            said.getClientRects().length > 0, document.activeElement === field]; }})({!r})"""


@pytest.fixture(scope="module")
def front(tmp_path_factory):
    """billing-agent served with a bearer token, and the page trusting it and the essay's billing."""
    agent, _, _ = billing_served("bearer")
    allowlist = json.loads((ROOT / "allowlist.json").read_text())
    allowlist["trusted"].append({"name": "billing-agent", "endpoint": agent.base_url + "/a2a"})
    path = tmp_path_factory.mktemp("front") / "allowlist.json"
    path.write_text(json.dumps(allowlist))
    server, app, url = web.listening(0, str(path), story.main)
    yield {"url": url, "agent": agent.base_url}
    web.close(server, app)
    agent.stop()


def press(browser, key, **modifiers):
    for kind in ("rawKeyDown", "keyUp"):
        browser.call("Input.dispatchKeyEvent", type=kind, key=key, code=key, windowsVirtualKeyCode=KEYS[key],
                     **modifiers)


def ran(browser):
    """Run pressed, as a person does, and waited for to its end: its frames."""
    browser.evaluate("document.body.dataset.state = 'again'; document.getElementById('start').click()")
    browser.wait_for(ENDED)
    return browser.evaluate(FRAMES)


def refused(browser, script, field):
    """`script` run in the page (it fills fields and presses a button); once the page has said
    what is wrong beside `field`: what it said."""
    browser.evaluate(f"(() => {{ {script} }})()")
    return browser.wait_for(f"document.getElementById('{field}-problem').textContent")


def test_each_input_problem_is_said_beside_its_field_and_the_last_runs_frames_stay(chromium, front):
    with chromium.tab(front["url"], width=390, height=844) as browser:
        browser.wait_for(READY)
        before = ran(browser)
        assert any("delegation REFUSED" in line for line in before)
        assert browser.evaluate("document.getElementById('options').hidden"), "on a phone the options are folded"
        said = refused(browser, f"document.getElementById('peer').value = {json.dumps('ftp://x' + PAYLOAD)};"
                                "document.getElementById('start').click();", "peer")
        assert said == "an agent's URL is http(s): its card's, or its base URL, as --peer"
        assert browser.evaluate("document.getElementById('status').textContent") == said
        assert browser.evaluate(PROBLEM.format("peer")) == [said, "true", True, True, True]
        assert browser.evaluate(FRAMES) == before, "the last run's frames stay"
        browser.evaluate("(() => { const peer = document.getElementById('peer'); peer.value = 'http://127.0.0.1:9/';"
                         " peer.dispatchEvent(new Event('input', {bubbles: true})); })()")
        assert browser.evaluate(PROBLEM.format("peer"))[:2] == ["", None], "edited, its problem goes"
        said = refused(browser, "document.getElementById('scheme').value = 'basic';"
                                "document.getElementById('token').value = 'no-colon';"
                                "document.getElementById('check-agent').click();", "token")
        assert said == "an HTTP Basic user and password: entered as USER:PASSWORD, two parts, the first without a colon"
        problem = browser.evaluate(PROBLEM.format("token"))
        assert problem == [said, "true", True, True, True], "the folded options open to show the secret's problem"
        assert "no-colon" not in browser.evaluate("document.body.textContent"), "a secret is never said back"
        assert browser.evaluate("document.getElementById('check-report').childElementCount") == 0, "no check ran"
        said = refused(browser, "document.getElementById('token').value = '';"
                                "document.getElementById('part-data').checked = true;"
                                "document.getElementById('message').value = '{bad';"
                                "document.getElementById('say').click();", "message")
        assert said.startswith("the data part is not JSON the workbench reads: ")
        assert browser.evaluate(PROBLEM.format("message")) == [said, "true", True, True, True]
        assert browser.evaluate("document.body.dataset.tab") == "side", "a phone shows the message's tab"
        assert browser.evaluate(PROBLEM.format("peer"))[0] == "", "only the field in the wrong says so"
        said = refused(browser, f"document.getElementById('proxy-to').value = 'http://127.0.0.1:9';"
                                f"document.getElementById('proxy-faults').value = {json.dumps('status:1:' + PAYLOAD)};"
                                "document.getElementById('proxy-start').click();", "proxy-faults")
        assert "'status:1:<img'" in said and browser.evaluate(PROBLEM.format("proxy-faults"))[:2] == [said, "true"]
        said = refused(browser, "document.getElementById('proxy-faults').value = '';"
                                "document.getElementById('proxy-seed').value = '-3';"
                                "document.getElementById('proxy-start').click();", "proxy-seed")
        assert said.startswith("the seed is a whole number") and browser.evaluate(PROBLEM.format("proxy-seed"))[1]
        assert browser.evaluate(FRAMES) == before, "no problem wiped the last run's frames"
        assert browser.evaluate("document.body.dataset.pwned") is None
        assert browser.evaluate("document.querySelectorAll('header img, main img, aside img').length") == 0


@pytest.mark.parametrize("width", [1280, 390])
def test_the_arrow_keys_move_between_the_tabs_and_every_control_has_a_name(chromium, front, width):
    with chromium.tab(front["url"] + "#run=default", width=width, height=844) as browser:
        browser.wait_for(READY)
        ran(browser)
        shown = browser.evaluate("[...document.querySelectorAll('[role=tab]')].filter((tab) =>"
                                 " tab.getClientRects().length).map((tab) => tab.id)")
        assert shown == (["tab-frames", "tab-tools"] if width == 1280 else
                         ["tab-frames", "tab-diagram", "tab-tools", "tab-side"])
        state = ("[document.activeElement.id, document.body.dataset.tab || 'frames',"
                 " [...document.querySelectorAll('[role=tab]')].filter((tab) => tab.tabIndex === 0).map((tab) => tab.id),"
                 " [...document.querySelectorAll('[role=tab][aria-selected=true]')].map((tab) => tab.id)]")
        browser.evaluate("document.getElementById('tab-frames').focus()")
        seen = []
        for key in ("ArrowRight", "ArrowRight", "End", "Home", "ArrowLeft"):
            press(browser, key)
            seen.append(browser.evaluate(state))
        order = [name[len("tab-"):] for name in shown]
        expected = [order[1 % len(order)], order[2 % len(order)], order[-1], order[0], order[-1]]
        assert [tab for _, tab, _, _ in seen] == expected
        for focused, tab, in_order, selected in seen:
            assert focused == f"tab-{tab}" and in_order == selected == [focused], "one tab in the Tab order: the chosen"
        panel = browser.evaluate("[...document.querySelectorAll('[role=tabpanel]')].filter((panel) =>"
                                 " panel.getClientRects().length).map((panel) => panel.id)")
        assert ("side-panel" in panel) and ("frames-panel" not in panel) if width == 390 else "tools-panel" in panel
        browser.evaluate("document.getElementById('options').hidden && document.getElementById('options-toggle').click()")
        named = {}
        for key in ("Home", "End"):  # each tab's panel shown in turn, as a screen reader reads it
            press(browser, key)
            for node in browser.call("Accessibility.getFullAXTree")["nodes"]:
                role = node.get("role", {}).get("value")
                if not node.get("ignored") and role in ("button", "textbox", "combobox", "checkbox", "radio", "tab",
                                                         "searchbox", "spinbutton", "link", "tabpanel", "tablist"):
                    named.setdefault(role, []).append(node.get("name", {}).get("value", "").strip())
        assert {"button", "textbox", "combobox", "checkbox", "radio", "tab"} <= set(named), named
        assert all(all(names) for names in named.values()), {role: names for role, names in named.items()
                                                              if not all(names)}
        assert browser.evaluate("[...document.querySelectorAll('input, select, textarea')].filter((field) =>"
                                " !field.labels.length && !field.getAttribute('aria-label')).map((field) => field.id)") == []


def test_a_streams_status_and_headers_show_before_its_events(chromium, front):
    with chromium.tab(front["url"]) as browser:
        browser.wait_for(READY)
        browser.evaluate(f"""(() => {{ const set = (id, value) => document.getElementById(id).value = value;
            set('peer', {json.dumps(front['agent'])}); set('scheme', 'bearer'); set('token', {json.dumps(TOKEN)});
            set('follow', 'stream'); set('message', {json.dumps(json.dumps({**REFUND, "order_id": "ORD-4800"}))});
            document.getElementById('part-data').checked = true; document.getElementById('say').click(); }})()""")
        browser.wait_for(ENDED)
        lines = browser.evaluate("[...document.querySelectorAll('#frames > li')].map((li) => [li.className, li.textContent])")
        first_event = next(at for at, (_, text) in enumerate(lines) if text.startswith("<-- [1] "))
        head = next(at for at, (kind, _) in enumerate(lines) if "stream-head" in kind)
        stream = lines[head][1]
        assert head < first_event, lines[head - 1:first_event + 1]
        assert stream.startswith("[<-- #") and "HTTP 200" in stream and "a stream: its events follow" in stream
        assert "text/event-stream" in stream, "its headers, before its events"
        seq = stream.split()[1]  # "#N"
        ended = [text for kind, text in lines[first_event:] if text.startswith(f"[<-- {seq} ")]
        assert len(ended) == 1 and "a stream" not in ended[0], "the whole stream's frame, once it ended"
        assert TOKEN not in browser.evaluate("document.body.textContent")


@pytest.mark.parametrize("width, height", [(1280, 800), (390, 844)])
def test_the_controls_stay_in_view_and_the_frames_pane_scrolls_not_the_window(chromium, front, width, height):
    with chromium.tab(front["url"] + "#run=approval", width=width, height=height) as browser:
        browser.wait_for(READY)
        ran(browser)
        where = ("['start', 'stop', 'peer', 'check-agent', 'options-toggle'].map((id) => {"
                 " const box = document.getElementById(id).getBoundingClientRect();"
                 " return [id, Math.round(box.top), Math.round(box.bottom), Math.round(box.height)]; })")
        before = browser.evaluate(where)
        header = browser.evaluate("document.querySelector('header').getBoundingClientRect().height")
        assert header <= 0.2 * height, f"a compact header: {header} px of {height}"
        assert all(0 <= top and bottom <= header for _, top, bottom, _ in before), before
        if width == 390:
            assert all(tall >= 44 for _, _, _, tall in before), "touch targets of 44 px"
        assert browser.evaluate("document.documentElement.scrollHeight <= innerHeight"), "the window does not scroll"
        assert browser.evaluate("document.documentElement.scrollWidth <= innerWidth"), "nor sideways"
        pane = "document.getElementById('frames-panel')"
        assert browser.evaluate(f"{pane}.scrollHeight > {pane}.clientHeight"), "the frames pane scrolls"
        browser.evaluate(f"{pane}.scrollTop = 0")
        assert browser.evaluate(f"{pane}.scrollTop") == 0
        browser.evaluate(f"{pane}.scrollTop = {pane}.scrollHeight")
        assert browser.evaluate(f"{pane}.scrollTop") > 0
        assert browser.evaluate(where) == before and browser.evaluate("scrollY") == 0, "the controls did not move"
