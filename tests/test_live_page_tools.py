"""The live page's tools over plain HTTP: check an agent, propose an allowlist entry, copy a
request as curl, compare two saved runs (peers/support/web/tools.py). Real runs, a real
broken agent (tests/test_check_broken_agents.py's), real saved traces; the browser's side is
tests/test_live_page_in_chromium.py."""
import json
import shlex
import time
import urllib.request

import pytest

from conftest import ROOT, outside_peer
from test_check_broken_agents import TOKEN, Agent
import test_live_page_server as server_tests
from test_live_page_server import ESSAY_ALLOWLIST, ask, events_of, started

page = server_tests.page  # the page's server, as a fixture


def post(page, path, body):
    status, _, answer = ask(page, path, "POST", body)
    return status, json.loads(answer)


def test_check_in_the_page_is_checks_own_report_with_the_failure_first(page):
    with outside_peer(Agent, flaw="wrong_codes", handle_error=lambda request, address: None) as base:
        status, answer = post(page, "/check", {"peer": base, "scheme": "bearer", "secret": TOKEN})
    assert status == 200 and answer["report"]["schema"] == "a2a-workbench-check/1"
    first = answer["report"]["requirements"][0]
    assert (first["id"], first["outcome"]) == ("WB-JSONRPC-ERR-001", "fail"), "the failure first"
    assert [row["id"] for row in answer["report"]["requirements"] if row["outcome"] == "fail"] == ["WB-JSONRPC-ERR-001"]
    assert first["fix"] and first["verdicts"][0]["frames"], "its fix and its frames"
    assert answer["summary"].endswith("Exit status 1: a MUST failed.")
    assert answer["report"]["deep"] is False and "--deep" not in answer["command"]
    assert TOKEN not in json.dumps(answer), "the credential is masked in every frame"


def test_check_of_an_agent_that_cannot_be_reached_is_one_line(page, closed_port):
    status, answer = post(page, "/check", {"peer": f"http://127.0.0.1:{closed_port}", "scheme": "", "secret": ""})
    assert status == 502 and "cannot be reached" in answer["error"]
    assert post(page, "/check", {"peer": "file:///etc/passwd"})[0] == 400


def test_an_allowlist_entry_is_proposed_with_its_diff_and_nothing_is_written(page):
    status, answer = post(page, "/allowlist/entry", {"text": ESSAY_ALLOWLIST, "name": "refund-bot-9000",
                                                     "endpoint": "https://refunds-r-us.example/a2a"})
    assert status == 200 and page["path"].read_text() == ESSAY_ALLOWLIST, "nothing written until confirmed"
    added = [line for line in answer["diff"].splitlines() if line.startswith("+") and not line.startswith("+++")]
    removed = [line for line in answer["diff"].splitlines() if line.startswith("-") and not line.startswith("---")]
    assert added == ['+    {"name": "billing-agent", "endpoint": "https://billing.acme.example/a2a"},',
                     '+    {"name": "refund-bot-9000", "endpoint": "https://refunds-r-us.example/a2a"}']
    assert removed == ['-    {"name": "billing-agent", "endpoint": "https://billing.acme.example/a2a"}']
    assert answer["path"] == str(page["path"]) and str(page["path"]) in answer["which"]
    assert post(page, "/allowlist", {"text": answer["text"], "save": True})[0] == 200
    trusted = json.loads(page["path"].read_text())["trusted"]
    assert trusted[-1] == {"name": "refund-bot-9000", "endpoint": "https://refunds-r-us.example/a2a"}
    again = post(page, "/allowlist/entry", {"text": answer["text"], "name": "refund-bot-9000",
                                            "endpoint": "https://refunds-r-us.example/a2a"})
    assert again[0] == 400 and "already" in again[1]["error"]


@pytest.mark.parametrize("spelled", ["https://BILLING.acme.example/a2a", "https://billing.acme.example:443/a2a"])
def test_no_entry_is_proposed_for_a_peer_already_vetted_at_that_endpoint_however_it_is_spelled(page, spelled):
    """A refusal of a vetted peer's card (signed by another key, altered, from elsewhere) offered an
    entry under another spelling of its endpoint; confirmed, that unpinned twin let any card through."""
    pinned = json.dumps({"trusted": [{"name": "billing-agent", "endpoint": "https://billing.acme.example/a2a",
                                      "publicKey": json.loads((ROOT / "peers/support/keys/billing-agent.jwk.json")
                                                              .read_text())}]})
    status, answer = post(page, "/allowlist/entry", {"text": pinned, "name": "billing-agent", "endpoint": spelled})
    assert status == 400 and "on the allowlist already" in answer["error"] and "no entry changes" in answer["error"]


def test_a_request_frame_copied_as_curl_has_placeholders_never_the_secret(page):
    """The essay's run sends billing a bearer token (made fresh for the run): curl names a variable for it."""
    run = started(page, run="default", transport="http")
    events_of(page, run)
    frames = [json.loads(line) for line in ask(page, f"/runs/{run}/trace.jsonl")[2].decode().splitlines()]
    frames = [record for record in frames if record["kind"] == "frame"]
    sent = next(index for index, frame in enumerate(frames) if frame["direction"] == "-->" and frame["body"])
    status, _, body = ask(page, f"/runs/{run}/curl?frame={sent}")
    text = json.loads(body)["curl"]
    said, command = text.split("\n", 1)
    assert status == 200 and said.startswith("# set A2A_AUTHORIZATION to the secret first")
    assert command.startswith("curl -X POST ") and "--data-raw" in command and "****" not in command
    words = shlex.split(command.replace("\\\n", ""))
    assert words[3:5] == ["--url", frames[sent]["url"]] and "Authorization: Bearer ${A2A_AUTHORIZATION}" in words
    assert frames[sent]["headers"]["Authorization"].startswith("Bearer ****#"), "the trace had it masked"
    answered = next(index for index, frame in enumerate(frames) if frame["direction"] == "<--")
    assert ask(page, f"/runs/{run}/curl?frame={answered}")[0] == 404, "an answer is no request"


def test_the_curl_of_a_masked_header_names_a_variable_not_the_value():
    from peers.support.web.tools import curl
    text = curl({"http_method": "POST", "url": "http://127.0.0.1:1/a2a", "body": "{}",
                 "headers": {"Authorization": "Bearer ****#1ec1", "Content-Type": "application/json",
                             "X-Note": "'; rm -rf / #"}})
    assert "****" not in text and '"${A2A_AUTHORIZATION}"' in text
    words = shlex.split(text.split("\n", 1)[1].replace("\\\n", ""))
    assert words[words.index("-H") + 1] == "Authorization: Bearer ${A2A_AUTHORIZATION}", "the shell fills it in"
    assert "X-Note: '; rm -rf / #" in words, "a hostile header stays one quoted word"


def test_two_saved_runs_differ_frame_by_frame(page):
    first = started(page, run="default")
    events_of(page, first)
    emptied = json.dumps({"trusted": []})
    second = started(page, run="default", allowlist=emptied)
    events_of(page, second)
    texts = [ask(page, f"/runs/{run}/trace.jsonl")[2].decode() for run in (first, second)]
    status, answer = post(page, "/traces/diff", {"a": texts[0], "b": texts[1]})
    assert status == 200
    changes = {row["change"] for row in answer["rows"]}
    removed = [row["label"] for row in answer["rows"] if row["change"] == "removed"]
    assert any(label.startswith("--> tasks/send billing-agent") for label in removed), removed
    assert "added" not in changes and "same" in changes
    same = post(page, "/traces/diff", {"a": texts[0], "b": texts[0]})[1]
    assert {row["change"] for row in same["rows"]} == {"same"}
    bad = post(page, "/traces/diff", {"a": texts[0], "b": "not a trace"})
    assert bad[0] == 400 and bad[1]["error"].startswith("the second trace:")


def test_a_changed_answer_is_one_changed_frame_naming_each_field_that_differs(page):
    run = started(page, run="default")
    events_of(page, run)
    text = ask(page, f"/runs/{run}/trace.jsonl")[2].decode()
    records = [json.loads(line) for line in text.splitlines()]
    answer = next(record for record in records if record["kind"] == "frame" and record["method"] == "tasks/send"
                  and record["direction"] == "<--")
    document = json.loads(answer["body"])
    document["result"]["status"]["state"] = "failed"
    answer.update(body=json.dumps(document), http_status=500)
    status, compared = post(page, "/traces/diff", {"a": text, "b": "".join(json.dumps(r) + "\n" for r in records)})
    changed = [row for row in compared["rows"] if row["change"] != "same"]
    assert status == 200 and len(changed) == 1 and changed[0]["label"] == "<-- tasks/send billing-agent HTTP 200"
    assert changed[0]["fields"] == [{"field": "http_status", "a": "200", "b": "500"},
                                    {"field": "body.result.status.state", "a": '"completed"', "b": '"failed"'}]


def test_two_traces_of_repeated_frames_are_compared_in_moments_not_minutes(page):
    """One frame a thousand times against two frames alternating: difflib's matcher took 35 s
    here, cubic in the frames, and a request may carry twelve times as many."""
    def trace(directions):
        return "".join(json.dumps({"kind": "frame", "direction": way, "method": "GetTask"}) + "\n" for way in directions)
    request = urllib.request.Request(page["base"] + "/traces/diff", method="POST", headers={
        "X-Workbench-Token": page["token"], "Origin": page["base"]}, data=json.dumps(
        {"a": trace(["-->"] * 1000), "b": trace(["-->", "<--"] * 500)}).encode())
    sent_at = time.monotonic()
    with urllib.request.urlopen(request, timeout=10) as response:
        rows = json.loads(response.read())["rows"]
    assert time.monotonic() - sent_at < 5
    changes = [row["change"] for row in rows]
    assert (changes.count("same"), changes.count("removed"), changes.count("added")) == (500, 500, 500)
    assert [row["b"] for row in rows if row["change"] == "same"] == list(range(0, 1000, 2)), "in order"


def test_the_tools_are_behind_the_pages_door(page):
    run = started(page)
    events_of(page, run)
    assert ask(page, f"/runs/{run}/curl?frame=0", token=False)[0] == 401, "a token, not a run's key"
    for path, body in (("/check", {"peer": "http://127.0.0.1:9/"}), ("/traces/diff", {"a": "", "b": ""}),
                       ("/allowlist/entry", {"text": ESSAY_ALLOWLIST, "name": "x", "endpoint": "http://x.example/"})):
        assert ask(page, path, "POST", body, origin=False)[0] == 403, path
        assert ask(page, path, "POST", body, token=False)[0] == 401, path


def test_the_command_shown_names_every_flag_and_says_where_the_credential_goes_never_what_it_is(page, closed_port):
    agent = f"http://127.0.0.1:{closed_port}/"
    status, answer = post(page, "/runs", {"run": "default", "transport": "http", "peer": agent, "follow": "stream",
                                          "scheme": "bearer", "secret": "s3cret-token-0123"})
    assert status == 201 and "s3cret" not in answer["command"]
    flags, said = answer["command"].split(" --credentials FILE ")
    assert shlex.split(flags) == ["python3", "a2a_delegation.py", "--transport", "http", "--peer", agent, "--stream",
                                  "--allowlist", str(page["path"])]
    assert said == "(the credential entered, in a credential store: never shown)"
    events_of(page, answer["id"])


def test_the_diff_is_of_the_file_itself_and_says_when_it_carries_an_edit_not_saved(page):
    edited = ESSAY_ALLOWLIST.replace("billing-agent", "billing-agent-2")
    status, answer = post(page, "/allowlist/entry", {"text": edited, "name": "refund-bot-9000",
                                                     "endpoint": "https://refunds-r-us.example/a2a"})
    assert status == 200 and answer["diff"].startswith(f"--- {page['path']} (now)\n+++ {page['path']} (confirmed)")
    assert '-    {"name": "billing-agent", "endpoint": "https://billing.acme.example/a2a"}' in answer["diff"].splitlines()
    assert "with the page's edit not saved yet" in answer["which"]


def test_check_refuses_a_deep_that_is_not_true_or_false_rather_than_reading_it_as_false(page, closed_port):
    status, answer = post(page, "/check", {"peer": f"http://127.0.0.1:{closed_port}", "deep": "yes"})
    assert (status, answer["field"]) == (400, "deep")
