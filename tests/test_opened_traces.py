"""Traces opened in the live page are kept as finished runs are (issue 30, item 14): at
most MAX_KEPT in all, the oldest forgotten first, however many a page (or a script with its
token) opens. Before, every one was kept: 150 opens of a 0.9 MB trace grew the server by
some 150 MB. Bounded in count and size; the page's server on 127.0.0.1, port 0."""
import json

from conftest import cli
from peers.support.web.runs_by_id import MAX_KEPT
from test_live_page_server import ask, page  # noqa: F401 - page: the fixture, a server in this process


def test_opening_more_traces_than_are_kept_forgets_the_oldest_and_holds_only_max_kept(page, tmp_path):
    cli("--trace", str(tmp_path / "run.jsonl"))
    text = (tmp_path / "run.jsonl").read_text()
    opened = []
    for _ in range(MAX_KEPT + 5):
        status, _, body = ask(page, "/traces", "POST", {"text": text})
        assert status == 201
        opened.append(json.loads(body)["id"])
    kept = [run_id for run_id in opened if ask(page, f"/runs/{run_id}/trace.jsonl")[0] == 200]
    assert kept == opened[-MAX_KEPT:], "the newest MAX_KEPT, the oldest forgotten"
    assert len(page["app"].runs.by_id) == MAX_KEPT
    assert ask(page, f"/runs/{opened[0]}/trace.jsonl")[0] == 404
