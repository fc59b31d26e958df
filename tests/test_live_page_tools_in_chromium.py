"""The page's tools in headless Chromium (the session's one browser, tests/chromium.py): a check
report of a broken agent, reading and comparing saved runs, adding a refused agent to the
allowlist, a request copied as curl; and a script in any of them never runs. Real runs, a
real broken agent (tests/test_check_broken_agents.py's), real --trace files. Skipped, saying
why, where Chromium is absent."""
import json

import pytest

from chromium import CHROMIUM
from conftest import NO_CHROMIUM, cli, outside_peer
from test_check_broken_agents import TOKEN, Agent
import test_live_page_in_chromium as live
from test_live_page_in_chromium import ENDED, PAYLOAD, READY, press_run

pytestmark = pytest.mark.skipif(not CHROMIUM, reason=NO_CHROMIUM)
page, hostile_peer = live.page, live.hostile_peer  # the page's server and the hostile agent, as fixtures
TEXTS = "[...document.querySelectorAll('{}')].filter((node) => !node.closest('[hidden]')).map((node) => node.textContent)"


def check_in_the_page(browser, base, secret=""):
    browser.evaluate(f"""(() => {{ document.getElementById('peer').value = {json.dumps(base)};
        document.getElementById('token').value = {json.dumps(secret)};
        document.getElementById('check-agent').click(); }})()""")
    return browser.wait_for("document.getElementById('check-summary').textContent.includes('Exit status') && "
                            "document.getElementById('check-summary').textContent", timeout=60)


def test_the_check_report_of_a_broken_agent_shows_its_failure_first_with_its_frames_and_fix(chromium, page):
    with outside_peer(Agent, flaw="wrong_codes", handle_error=lambda request, address: None) as base, \
            chromium.tab(page[0]) as browser:
        browser.wait_for(READY)
        summary = check_in_the_page(browser, base, TOKEN)
        assert summary.startswith("broken (1.0, JSONRPC): MUST: ") and summary.endswith("a MUST failed.")
        classes = browser.evaluate("[...document.querySelectorAll('#check-report > li')].map((li) => li.className)")
        assert classes[0] == "outcome-fail" and classes.count("outcome-fail") == 1 and "outcome-pass" in classes
        first = browser.evaluate("document.querySelector('#check-report > li').textContent")
        assert first.startswith("FAIL SHOULD WB-JSONRPC-ERR-001") or first.startswith("FAIL MUST WB-JSONRPC-ERR-001")
        assert browser.evaluate("document.querySelector('#check-report details').open") is False, "folded until opened"
        browser.evaluate("document.querySelector('#check-report summary').click()")
        opened = browser.evaluate(TEXTS.format("#check-report > li:first-child details > *"))
        assert any(text.startswith("fix: ") for text in opened)
        assert any(text.startswith("--> POST " + base) for text in opened), "its frames"
        assert TOKEN not in browser.evaluate("document.getElementById('tools-panel').textContent"), "masked"
        assert browser.evaluate("document.getElementById('check-command').textContent").startswith(
            f"python3 a2a_delegation.py check {base}")


@pytest.fixture(scope="module")
def saved_runs(tmp_path_factory):
    """Two --trace files, made once for the file: the essay's run, and the same with billing taken off the allowlist."""
    tmp_path = tmp_path_factory.mktemp("saved-runs")
    emptied = tmp_path / "emptied.json"
    emptied.write_text(json.dumps({"trusted": []}))
    cli("--trace", tmp_path / "a.jsonl")
    cli("--trace", tmp_path / "b.jsonl", "--allowlist", emptied)
    return tmp_path / "a.jsonl", tmp_path / "b.jsonl"


def pick(browser, selector, path):
    node = browser.call("DOM.querySelector", nodeId=browser.call("DOM.getDocument")["root"]["nodeId"],
                        selector=selector)["nodeId"]
    browser.call("DOM.setFileInputFiles", nodeId=node, files=[str(path)])


def test_filter_search_and_diff_work_on_saved_traces(chromium, page, saved_runs):
    first, second = saved_runs
    with chromium.tab(page[0]) as browser:
        browser.wait_for(READY)
        pick(browser, "#open", first)
        browser.wait_for(ENDED)
        browser.evaluate("document.getElementById('tab-tools').click()")
        total = len([line for line in first.read_text().splitlines() if json.loads(line)["kind"] == "frame"])
        assert browser.wait_for("document.getElementById('reader-count').textContent") == \
            f"{total} of {total} frames shown"
        shown = TEXTS.format("#reader-frames > li summary")
        browser.evaluate("(() => { const peer = document.getElementById('filter-peer'); peer.value = 'billing-agent';"
                         " peer.dispatchEvent(new Event('change')); })()")
        assert browser.evaluate(shown) and all(" billing-agent" in line for line in browser.evaluate(shown))
        browser.evaluate("(() => { const box = document.getElementById('filter-search'); box.value = 'tasks/send';"
                         " box.dispatchEvent(new Event('input')); })()")
        assert [line.split(" ", 1)[1] for line in browser.evaluate(shown)] == ["--> tasks/send billing-agent",
                                                                               "<-- tasks/send billing-agent HTTP 200"]
        browser.evaluate("document.querySelector('#reader-frames li:not([hidden]) summary').click()")
        body = browser.evaluate("document.querySelector('#reader-frames li:not([hidden]) pre.body').textContent")
        assert body.startswith('{\n  "jsonrpc": "2.0",'), "pretty-printed"
        browser.evaluate("document.querySelector('#reader-frames li:not([hidden]) details button').click()")
        raw = browser.evaluate(TEXTS.format("#reader-frames li:not([hidden]) pre.raw"))
        assert raw and raw[0].startswith('{"jsonrpc": "2.0", "id": 1, "method": "tasks/send"'), "the raw bytes"
        pick(browser, "#diff-a", first)
        pick(browser, "#diff-b", second)
        browser.evaluate("document.getElementById('diff').click()")
        said = browser.wait_for("document.getElementById('diff-summary').textContent")
        assert said.endswith("0 added (only in the second), 2 removed (only in the first)"), said
        removed = browser.evaluate(TEXTS.format("#diff-rows li.change-removed > p"))
        assert removed == ["removed: --> tasks/send billing-agent (#2 / -)",
                           "removed: <-- tasks/send billing-agent HTTP 200 (#3 / -)"], removed
        assert browser.evaluate("getComputedStyle(document.querySelector('.change-removed > p')).color") == \
            "rgb(187, 0, 0)"


def test_add_to_allowlist_shows_the_entry_and_the_diff_and_writes_only_on_confirmation(chromium, page):
    url, path = page
    before = path.read_text()
    with chromium.tab(url + "#run=default") as browser:
        press_run(browser)
        browser.wait_for(ENDED)
        browser.evaluate("[...document.querySelectorAll('#decisions li.verdict-refused button')].find((b) => "
                         "b.textContent === 'Add to allowlist').click()")
        diff = browser.wait_for("!document.getElementById('proposal').hidden && "
                                "document.getElementById('proposal-diff').textContent")
        assert '+    {"name": "refund-bot-9000", "endpoint": "https://refunds-r-us.example/a2a"}' in diff.splitlines()
        assert browser.evaluate("document.getElementById('proposal-entry').textContent") == \
            '{"name": "refund-bot-9000", "endpoint": "https://refunds-r-us.example/a2a"}'
        assert str(path) in browser.evaluate("document.getElementById('proposal-which').textContent")
        assert path.read_text() == before, "shown, not written"
        browser.evaluate("document.getElementById('proposal-confirm').click()")
        assert browser.wait_for("document.getElementById('proposal-which').className === 'good' && "
                                "document.getElementById('proposal-which').textContent").startswith(f"written to {path}")
        assert json.loads(path.read_text())["trusted"][-1]["name"] == "refund-bot-9000"
        assert "refund-bot-9000" in browser.evaluate("document.getElementById('allowlist').value")
        command = browser.evaluate("document.getElementById('command').textContent")
        assert command.endswith(f"--allowlist {path}"), "the command names the allowlist it read"


def test_a_request_copied_as_curl_has_placeholders_not_secrets(chromium, page):
    with chromium.tab(page[0] + "#run=default") as browser:
        press_run(browser)
        browser.wait_for(ENDED)
        browser.wait_for("document.querySelectorAll('#reader-frames li').length")
        browser.evaluate("""(() => { const item = [...document.querySelectorAll('#reader-frames li.send')].find((li) =>
            li.textContent.includes('tasks/send')); item.querySelector('details').open = true;
            [...item.querySelectorAll('button')].find((b) => b.textContent === 'Copy as curl').click(); })()""")
        curl = browser.wait_for("document.querySelector('#reader-frames pre.curl') && "
                                "document.querySelector('#reader-frames pre.curl').textContent")
        assert "-H 'Authorization: Bearer '\"${A2A_AUTHORIZATION}\"''" in curl and "****" not in curl
        assert curl.startswith("# set A2A_AUTHORIZATION to the secret first")


def test_a_script_in_a_check_finding_a_diffed_trace_or_a_curl_copied_frame_never_runs(chromium, page, hostile_peer,
                                                                                         saved_runs):
    first, _ = saved_runs
    records = [json.loads(line) for line in first.read_text().splitlines()]
    sent = next(record for record in records if record["kind"] == "frame" and record["direction"] == "-->"
                and record["body"])
    sent.update(peer="billing" + PAYLOAD, body=PAYLOAD, url=sent["url"] + "?" + PAYLOAD,
                headers={**sent["headers"], "X-Note": PAYLOAD})
    answered = next(record for record in records if record["kind"] == "frame" and record["direction"] == "<--"
                    and record["method"] == "tasks/send")
    answered["http_status"] = 500  # an error: red in the list, and what the errors filter keeps
    hostile = "".join(json.dumps(record) + "\n" for record in records)
    with chromium.tab(page[0]) as browser:
        browser.wait_for(READY)
        check_in_the_page(browser, hostile_peer(True))
        browser.evaluate("document.querySelectorAll('#check-report details').forEach((d) => { d.open = true; })")
        assert PAYLOAD in browser.evaluate("document.getElementById('check-report').textContent")
        browser.evaluate(f"follow('/traces', {{text: {json.dumps(hostile)}}})")  # as a picked file is opened
        browser.wait_for(f"{ENDED} && document.querySelectorAll('#reader-frames li').length")
        browser.evaluate("""(() => { const item = [...document.querySelectorAll('#reader-frames li.send')].find((li) =>
            li.textContent.includes('<img')); item.querySelector('details').open = true;
            [...item.querySelectorAll('button')].find((b) => b.textContent === 'Copy as curl').click(); })()""")
        curl = browser.wait_for("document.querySelector('#reader-frames pre.curl') && "
                                "document.querySelector('#reader-frames pre.curl').textContent")
        assert "<script>" in curl
        browser.evaluate("(() => { const status = document.getElementById('filter-status'); status.value = 'error';"
                         " status.dispatchEvent(new Event('change')); })()")
        errors = browser.evaluate("[...document.querySelectorAll('#reader-frames > li:not([hidden]) summary')].map("
                                  "(line) => [line.textContent, getComputedStyle(line).color])")
        assert errors == [["#3 <-- tasks/send billing-agent HTTP 500", "rgb(187, 0, 0)"]], errors
        browser.evaluate(f"compare({json.dumps(hostile)}, {json.dumps(first.read_text())})")
        assert "<img" in browser.wait_for("document.getElementById('diff-rows').textContent")
        assert browser.evaluate("document.body.dataset.pwned") is None
        assert browser.evaluate("document.querySelectorAll('main img, main script').length") == 0


def test_a_request_in_the_live_frames_list_copies_as_curl_too(chromium, page):
    with chromium.tab(page[0] + "#run=default") as browser:
        press_run(browser)
        browser.wait_for(ENDED)
        browser.evaluate("""[...document.querySelectorAll('#frames li.http.send')].find((li) =>
            li.textContent.includes('POST')).querySelector('button').click()""")
        curl = browser.wait_for("document.querySelector('#frames pre.curl') && "
                                "document.querySelector('#frames pre.curl').textContent")
        assert "'\"${A2A_AUTHORIZATION}\"'" in curl and "tasks/send" in curl and "****" not in curl


def test_a_proxied_session_appears_live_and_a_script_in_a_proxied_frame_never_runs(chromium, page):
    """Started from the Proxy panel; a request sent through the URL it shows, answered by an
    agent whose card, error and id carry markup: frames, annotation and fault show as text."""
    from test_live_page_proxy import ASKED, agent_app, through
    from transports.server import PeerServer
    agent = PeerServer(agent_app, "127.0.0.1", 0, idle_timeout=2.0).start()
    try:
        with chromium.tab(page[0]) as browser:
            browser.wait_for(READY)
            browser.evaluate(f"""(() => {{ document.getElementById('proxy-to').value = {json.dumps(agent.base_url)};
                document.getElementById('proxy-faults').value = 'status:3:503';
                document.getElementById('proxy-start').click(); }})()""")
            proxy = browser.wait_for("!document.getElementById('proxy-where').hidden && "
                                     "document.getElementById('proxy-url').textContent")
            assert through(proxy + "/.well-known/agent-card.json") == 200 and through(proxy + "/a2a", ASKED) == 200
            assert through(proxy + "/a2a", ASKED) == 503
            browser.wait_for("!!(document.querySelector('#frames li.fault') && document.querySelector('#frames li.annotation'))")
            shown = browser.evaluate("document.getElementById('frames').textContent")
            assert "[#2 client -> agent] -->" in shown and "[#2 agent -> client] <--" in shown and "<script>" in shown
            browser.evaluate("document.getElementById('proxy-stop').click()")
            browser.wait_for("document.getElementById('proxy-where').hidden && !document.getElementById('proxy-start').disabled")
            assert browser.evaluate("document.body.dataset.pwned") is None
            assert browser.evaluate("document.querySelectorAll('main img, main script, aside img').length") == 0
    finally:
        agent.stop()
