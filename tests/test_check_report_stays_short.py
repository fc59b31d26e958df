"""`check --deep` against an agent whose answers quote values of a megabyte's size: a task id
of 200,000 characters (which a verdict's line quotes, and an HTTP+JSON URL then carries) and
a result whose keys are as long. The text report stays about a screen: each line cut short,
saying how much more there was; the JSON report's verdict lines are cut the same way, and so are its frames' bodies and URLs."""
import json

import pytest

from conftest import cli, outside_peer
from test_check_deep_broken_agents import Agent, Tasks

HUGE = 200_000


class HugeTasks(Tasks):
    def operation(self, method, params, owner, rest):
        result = super().operation(method, params, owner, rest)
        if method != "SendMessage":
            return result
        return dict(result, id="x" * HUGE + result["id"]) if rest else {"K" * HUGE: 1, "L" * HUGE: 2}


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    folder = tmp_path_factory.mktemp("huge")
    with outside_peer(Agent, tasks=HugeTasks(None)) as base:
        store = folder / "a.json"
        store.write_text(json.dumps({"tokens": {base: "token-of-a-0123456789"}}))
        found = {shape: cli("check", base, "--deep", "--credentials", store, "--format", shape, "--timeout", "2")
                 for shape in ("text", "json")}
    for done in found.values():
        assert "Traceback" not in done.stdout + done.stderr and done.returncode == 1
    return found


def test_the_text_report_cuts_each_line_an_agent_makes_huge(reports):
    lines = reports["text"].stdout.splitlines()
    assert max(map(len, lines)) < 1_000 and len(lines) < 200
    assert "more characters)" in reports["text"].stdout


def test_the_json_reports_verdict_lines_are_cut_too(reports):
    details = [verdict["detail"] for row in json.loads(reports["json"].stdout)["requirements"]
               for verdict in row["verdicts"]]
    assert max(map(len, details)) < 1_000 and any("more characters)" in detail for detail in details)


def test_the_json_reports_frames_are_cut_so_the_report_stays_small(reports):
    from peers.support.check.report import KEPT_BODY, SHOWN_LINE
    frames = [frame for row in json.loads(reports["json"].stdout)["requirements"]
              for verdict in row["verdicts"] for frame in verdict["frames"]]
    assert max(len(frame["body"]) for frame in frames) < KEPT_BODY + 100
    assert max(len(frame["url"]) for frame in frames) < SHOWN_LINE + 100
    assert any("more characters)" in frame["body"] for frame in frames), "a huge answer said cut, not dropped"
    assert len(reports["json"].stdout) < 2 << 20, "megabyte answers quoted by many verdicts: still a small report"


def test_skips_that_give_one_reason_are_one_line_so_a_served_peers_report_fits_a_screen(tmp_path):
    """Without --deep, 30 requirements are skipped for one reason (it needs --deep): one line each
    buried the passes under a screen of the same sentence. Folded, the report of our own billing is
    about a screen, still names every requirement, and --verbose gives each its line again."""
    from conftest import base_url, start_serve
    from peers.support.check.requirements import REQUIREMENTS
    process, banner = start_serve("billing-agent", "--wire", "1.0", "--token", "check-token-0123456789")
    try:
        url = base_url(banner[0])
        store = tmp_path / "credentials.json"
        store.write_text(json.dumps({"tokens": {url: "check-token-0123456789"}}))
        plain, verbose = (cli("check", url, "--credentials", store, *extra) for extra in ((), ("--verbose",)))
    finally:
        process.stop()
    lines = plain.stdout.splitlines()
    assert plain.returncode == 0 and len(lines) <= 50, plain.stdout
    assert plain.stdout.count("it needs --deep") == 1
    folded = next(line for line in lines if "it needs --deep" in line)
    assert folded.startswith("SKIP") and "30 requirements (26 MUST, 1 SHOULD, 3 MAY)" in folded
    assert all(requirement.id in plain.stdout for requirement in REQUIREMENTS)
    own = [line for line in verbose.stdout.splitlines() if line.startswith("SKIP") and "CORE-SEND-001" in line]
    assert len(own) == 1 and "requirements" not in own[0]
