"""The live page in a second engine: headless Firefox (Debian's `firefox-esr`) over WebDriver
BiDi (tests/firefox.py), the same checks that matter most as in Chromium: a shared
`#run=default` shows the essay's frames and both verdicts, step mode holds the first frame,
and a peer's markup is text that never runs. Skipped, saying why, where Firefox is absent
(.ci/run does not install it: Chromium carries the page's tests there)."""
import json

import pytest

from firefox import FIREFOX, Firefox
from test_live_page_in_chromium import DECISIONS, ENDED, FRAMES, PAYLOAD, READY, press_run, hostile_peer, page  # noqa: F401 (fixtures)

pytestmark = pytest.mark.skipif(not FIREFOX, reason="headless Firefox is not installed here (Debian's "
                                "firefox-esr package; .ci/run leaves it out, Chromium runs the page tests)")


def test_in_firefox_run_default_shows_the_essays_frames_and_both_verdicts_and_step_mode_holds(page):
    with Firefox(page[0] + "#run=default") as browser:
        press_run(browser)
        browser.wait_for(ENDED)
        frames = browser.evaluate(FRAMES)
        assert "--> GET https://billing.acme.example/.well-known/agent-card.json" in frames
        assert "[support] trusted result (from billing-agent): refund of $180.00 issued for ORD-3300 " \
               "(ref BILL-ORD-3300)" in frames
        assert "[trust] 'refund-bot-9000' is NOT on the allowlist -> delegation REFUSED" in frames
        assert "refund-bot-9000: refused (is NOT on the allowlist)" in browser.evaluate(DECISIONS)
        assert browser.evaluate("location.search") == "", "the token left the address bar"
        browser.call("browsingContext.navigate", context=browser.context, url=page[0] + "#run=default&step=1",
                     wait="complete")
        browser.call("browsingContext.reload", context=browser.context, wait="complete")
        press_run(browser)
        browser.wait_for("document.body.dataset.state === 'held'")
        sent = "[...document.querySelectorAll('#frames li.http')].map((line) => line.textContent.slice(0, 3))"
        assert browser.evaluate(sent) == ["[--"], "the card's GET, shown and held: nothing more sent"


def test_in_firefox_a_peers_markup_is_shown_as_text_and_never_runs(page, hostile_peer):
    base = hostile_peer(False)
    trusting = json.dumps({"trusted": [{"name": "hostile" + PAYLOAD, "endpoint": base + "/a2a"}]})
    with Firefox(page[0]) as browser:
        browser.wait_for(READY)
        browser.evaluate(f"""(() => {{ document.getElementById('peer').value = {json.dumps(base)};
            document.getElementById('allowlist').value = {json.dumps(trusting)};
            document.getElementById('start').click(); }})()""")
        browser.wait_for(ENDED)
        assert browser.evaluate("document.querySelector('main').textContent").count(PAYLOAD) >= 3
        assert browser.evaluate("document.body.dataset.pwned") is None
        assert browser.evaluate("document.querySelectorAll('main img, main script').length") == 0


# WebDriver's codes for the keys the tabs answer (the W3C WebDriver spec's key table).
KEYS = {"ArrowLeft": "\ue012", "ArrowRight": "\ue014", "Home": "\ue011", "End": "\ue010"}


def test_in_firefox_the_arrow_keys_move_between_tabs_and_a_problem_is_said_beside_its_field(page):
    with Firefox(page[0] + "#run=default") as browser:
        press_run(browser)
        browser.wait_for(ENDED)
        before = browser.evaluate(FRAMES)
        browser.evaluate("document.getElementById('tab-frames').focus()")
        seen = []
        for key in ("ArrowRight", "End", "Home", "ArrowLeft"):
            browser.call("input.performActions", context=browser.context, actions=[{"type": "key", "id": "keys", "actions": [
                {"type": "keyDown", "value": KEYS[key]}, {"type": "keyUp", "value": KEYS[key]}]}])
            seen.append(browser.evaluate("[document.activeElement.id, [...document.querySelectorAll('[role=tab]')]"
                                         ".filter((tab) => tab.tabIndex === 0).map((tab) => tab.id)]"))
        shown = browser.evaluate("[...document.querySelectorAll('[role=tab]')].filter((tab) => tab.getClientRects()"
                                 ".length).map((tab) => tab.id)")
        assert [focused for focused, _ in seen] == [shown[1], shown[-1], shown[0], shown[-1]], seen
        assert all(in_order == [focused] for focused, in_order in seen), "one tab in the Tab order: the chosen"
        browser.evaluate(f"""(() => {{ document.getElementById('peer').value = {json.dumps('ftp://x' + PAYLOAD)};
            document.getElementById('start').click(); }})()""")
        said = browser.wait_for("document.getElementById('peer-problem').textContent")
        assert said == "an agent's URL is http(s): its card's, or its base URL, as --peer"
        assert browser.evaluate("document.getElementById('peer').getAttribute('aria-invalid')") == "true"
        assert browser.evaluate(FRAMES) == before, "the last run's frames stay"
        assert browser.evaluate("document.body.dataset.pwned") is None
