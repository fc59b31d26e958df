"""`check URL` against our own served peers, in each shape: no MUST fails and the exit status
is 0; the JSON report fits its documented schema, the JUnit report is XML, the HTML page is
self-contained; a signed card verifies with its key; a usage error is one line and 2.

Each peer is `a2a_delegation.py serve` on 127.0.0.1, port 0, as a user runs it."""
import json
import xml.etree.ElementTree as ElementTree

import pytest

from conftest import ROOT, base_url, cli, start_serve
from peers.a2a.schema import problems
from peers.support.check.report import SCHEMA
from peers.support.check.requirements import REQUIREMENTS

TOKEN = "check-token-0123456789"


@pytest.fixture(scope="module")
def served():
    """billing-agent on 1.0 (signed) and on 0.3, each with a bearer token: their base URLs."""
    started = {}
    for wire in ("1.0", "0.3"):
        extra = ("--signing-key", str(ROOT / "peers/keys/billing-agent.DEMO-KEY.pem")) if wire == "1.0" else ()
        process, banner = start_serve("billing-agent", "--wire", wire, "--token", TOKEN, *extra)
        started[wire] = (process, base_url(banner[0]))
    yield {wire: url for wire, (_, url) in started.items()}
    for process, _ in started.values():
        process.stop()


def checked(url, tmp_path, *extra):
    store = tmp_path / "credentials.json"
    store.write_text(json.dumps({"tokens": {url: TOKEN}}))
    done = cli("check", url, "--credentials", store, "--format", "json", *extra)
    assert "Traceback" not in done.stdout + done.stderr
    return done, json.loads(done.stdout)


def failed(report, level="MUST"):
    return {row["id"] for row in report["requirements"] if row["outcome"] == "fail" and row["level"] == level}


@pytest.mark.parametrize("wire, extra", [("1.0", ()), ("1.0", ("--binding", "http+json")), ("0.3", ())])
def test_our_served_peer_fails_no_must_in_any_shape(served, tmp_path, wire, extra):
    done, report = checked(served[wire], tmp_path, *extra)
    assert failed(report) == set() and done.returncode == 0 and report["exit_status"] == 0
    assert report["card"]["version"] == wire
    passed = {row["id"] for row in report["requirements"] if row["outcome"] == "pass"}
    assert {"CARD-DISC-001", "CORE-GET-002", "AUTH-SERVER-002", "WB-AUTH-RIGHT-001"} <= passed
    if wire == "1.0" and not extra:
        assert report["card"]["bindings"] == ["JSONRPC", "HTTP+JSON"]
        assert {"VER-SERVER-002", "CARD-EXT-001", "HTTP_JSON-STATUS-001", "JSONRPC-ERR-003"} <= passed


@pytest.mark.parametrize("suffix", ["?tenant=a", "/#top", "/.well-known/agent-card.json?v=1"])
def test_a_url_with_a_query_or_fragment_finds_the_card_on_its_path_not_after_the_query(served, tmp_path, suffix):
    """A base URL's card is at its path + the well-known path, its query kept after it (the
    path was once glued onto the query: GET /?tenant=a/.well-known/agent-card.json, a 404)."""
    done, report = checked(served["1.0"] + suffix, tmp_path)
    assert report["card"]["version"] == "1.0" and "CARD-DISC-001" not in failed(report), report["card"]
    asked = report["target"] if isinstance(report["target"], str) else json.dumps(report["target"])
    assert "/.well-known/agent-card.json" in asked and asked.count("/.well-known/agent-card.json") == 1, asked


def test_the_json_report_fits_its_schema_and_lists_every_requirement_once(served, tmp_path):
    _, report = checked(served["1.0"], tmp_path)
    assert problems(report, SCHEMA, "report") == []
    assert sorted(row["id"] for row in report["requirements"]) == sorted(row.id for row in REQUIREMENTS)
    frames = [frame for row in report["requirements"] for verdict in row["verdicts"] for frame in verdict["frames"]]
    assert frames and all(TOKEN not in json.dumps(frame) for frame in frames), "every secret masked"


def test_a_signed_card_verifies_with_its_key_and_another_key_is_a_failure(served, tmp_path):
    _, report = checked(served["1.0"], tmp_path, "--card-key", str(ROOT / "peers/support/keys/billing-agent.jwk.json"))
    assert {row["id"]: row["outcome"] for row in report["requirements"]}["CARD-SIGN-001"] == "pass"
    done, report = checked(served["1.0"], tmp_path, "--card-key",
                           str(ROOT / "peers/support/keys/billing-agent.ES256.jwk.json"))
    assert "CARD-SIGN-001" in failed(report) and done.returncode == 1


def test_without_credentials_what_needs_them_is_skipped_saying_so(served):
    done = cli("check", served["1.0"])
    assert done.returncode == 0, done.stdout
    skipped = [line for line in done.stdout.splitlines() if line.startswith("SKIP") and "WB-AUTH-RIGHT-001" in line]
    assert skipped and "--credentials" in skipped[0]


def test_junit_is_xml_and_html_is_one_page_with_nothing_from_elsewhere(served, tmp_path):
    done = cli("check", served["1.0"], "--format", "junit")
    suite = ElementTree.fromstring(done.stdout)
    assert suite.tag == "testsuite" and int(suite.get("tests")) == len(REQUIREMENTS)
    page = tmp_path / "report.html"
    done = cli("check", served["1.0"], "--format", "html", "--out", page)
    html = page.read_text()
    assert done.returncode == 0 and "the report is in" in done.stdout
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    assert "<script" not in html and " src=" not in html and "<link" not in html


@pytest.mark.parametrize("args, said", [
    (("check", "not-a-url"), "is not an http(s) base URL"),
    (("check", "http://127.0.0.1:1"), "cannot be reached"),
    (("check", "http://127.0.0.1:1", "--credentials", "/no/such/file.json"), "file not found"),
    (("check", "http://127.0.0.1:1", "--format", "yaml"), "invalid choice"),
    (("check", "http://127.0.0.1:1", "--out", "/no/such/folder/report.txt"), "--out"),
    (("check", "http://127.0.0.1:1", "--other-caller", str(ROOT / "registry.json")), "--other-caller needs --deep"),
])
def test_a_usage_error_is_one_line_and_exit_status_2(args, said):
    done = cli(*args)
    assert done.returncode == 2 and said in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr


def test_verbose_prints_every_frame_with_the_token_masked(served, tmp_path):
    store = tmp_path / "credentials.json"
    store.write_text(json.dumps({"tokens": {served["1.0"]: TOKEN}}))
    done = cli("check", served["1.0"], "--credentials", store, "--verbose", "--binding", "jsonrpc")
    assert done.returncode == 0 and TOKEN not in done.stdout + done.stderr
    assert "--> GET /.well-known/agent-card.json" in done.stdout or "--> GET http" in done.stdout
    assert "Authorization: Bearer ****#" in done.stdout and "--> HEAD" in done.stdout


def test_without_deep_nothing_that_needs_a_task_is_asked_and_the_report_says_why(served, tmp_path):
    _, report = checked(served["1.0"], tmp_path)
    deep = {row["id"]: row for row in report["requirements"] if row["id"] in {"CORE-SEND-001", "CORE-LIST-001"}}
    assert report["deep"] is False and all(row["outcome"] == "skip" for row in deep.values())
    assert "needs --deep" in deep["CORE-LIST-001"]["verdicts"][0]["detail"]
    assert not any("SendMessage" in frame["body"] for row in report["requirements"] for verdict in row["verdicts"]
                   for frame in verdict["frames"])
