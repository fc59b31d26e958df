"""`check --deep --other-caller` against our own served peers: billing-agent on 1.0 (JSON-RPC
and HTTP+JSON) and on 0.3, and the conformance-agent, each with two callers (`serve
--token` and `--other-token`): no MUST fails, the exit status is 0, and no task of one
caller reaches the other; the report says messages were sent.

Each peer is `a2a_delegation.py serve` on 127.0.0.1, port 0, as a user runs it."""
import json

import pytest

from conftest import base_url, cli, start_serve

TOKEN, OTHER = "deep-token-a-0123456789", "deep-token-b-0123456789"
SERVED = {"billing 1.0": ("billing-agent", "--wire", "1.0"), "billing 0.3": ("billing-agent", "--wire", "0.3"),
          "conformance 1.0": ("conformance-agent", "--wire", "1.0", "--auth", "bearer")}
CALLERS = ("WB-CALLER-GET-001", "WB-CALLER-CANCEL-001", "WB-CALLER-SUBSCRIBE-001", "WB-CALLER-PUSH-001",
           "AUTH-SCOPE-003")


@pytest.fixture(scope="module")
def served():
    started = {name: start_serve(*args, "--token", TOKEN, "--other-token", OTHER) for name, args in SERVED.items()}
    yield {name: base_url(banner[0]) for name, (_, banner) in started.items()}
    for process, _ in started.values():
        process.stop()


def deep_report(url, folder):
    stores = []
    for name, token in (("a", TOKEN), ("b", OTHER)):
        stores.append(folder / f"{name}.json")
        stores[-1].write_text(json.dumps({"tokens": {url: token}}))
    done = cli("check", url, "--deep", "--credentials", stores[0], "--other-caller", stores[1], "--format", "json")
    assert "Traceback" not in done.stdout + done.stderr
    return done, json.loads(done.stdout)


@pytest.mark.parametrize("name", list(SERVED))
def test_our_served_peer_fails_no_must_with_deep_and_leaks_no_task_to_another_caller(served, tmp_path, name):
    done, report = deep_report(served[name], tmp_path)
    outcomes = {row["id"]: row["outcome"] for row in report["requirements"]}
    musts = {row["id"] for row in report["requirements"] if row["outcome"] == "fail" and row["level"] == "MUST"}
    assert musts == set() and done.returncode == 0 and report["deep"] is True
    assert all(outcomes[row] == "pass" for row in CALLERS), "caller B is told nothing of caller A's task"
    assert {outcomes[row] for row in ("CORE-SEND-001", "CORE-GET-001", "CORE-CANCEL-002", "CORE-STREAM-003")} == {"pass"}
    if name != "billing 0.3":
        assert {outcomes[row] for row in ("CORE-LIST-001", "CORE-LIST-002", "BIND-EQUIV-002", "PUSH-CREATE-001")} == {"pass"}
        deleted = next(row for row in report["requirements"] if row["id"] == "PUSH-DEL-001")["verdicts"]
        assert {v["binding"]: v["outcome"] for v in deleted} == {"JSONRPC": "pass", "HTTP+JSON": "pass"}
        assert [f["method"] for v in deleted for f in v["frames"] if v["binding"] == "HTTP+JSON"][:2] == ["DELETE"] * 2
        redact = next(row for row in report["requirements"] if row["id"] == "WB-PUSH-REDACT-001")
        assert redact["outcome"] == "skip" and "finding, not judged: the config read back echoes" in json.dumps(redact)


def test_the_text_report_says_deep_sent_messages(served, tmp_path):
    store = tmp_path / "a.json"
    store.write_text(json.dumps({"tokens": {served["billing 1.0"]: TOKEN}}))
    done = cli("check", served["billing 1.0"], "--deep", "--credentials", store, "--binding", "jsonrpc")
    assert done.returncode == 0 and "--deep sent messages, which may have caused effects" in done.stdout
    skipped = next(line for line in done.stdout.splitlines() if "WB-CALLER-GET-001" in line)
    assert skipped.startswith("SKIP") and "--other-caller" in skipped


def test_other_token_under_another_scheme_is_one_line_and_exit_status_2():
    done = cli("serve", "billing-agent", "--auth", "apikey", "--token", "key-0123456789", "--other-token", OTHER,
               timeout=20)
    assert done.returncode == 2 and "--other-token" in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_other_token_the_same_as_the_token_is_one_line_and_exit_status_2():
    """Two callers with one token are one caller: check --other-caller would read a's tasks as b's."""
    done = cli("serve", "billing-agent", "--token", TOKEN, "--other-token", TOKEN, timeout=20)
    assert done.returncode == 2 and done.stderr.strip().splitlines() == [
        "error: --other-token is a second caller's token: the same as the first, they would be one caller"]
