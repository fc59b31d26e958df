"""The demo peers' cards are JSON files a learner edits (peers/cards/), and the run follows.

Each test copies the workbench to a temporary folder, edits a card there, and runs it,
as a learner would; the checkout's own files are never touched."""
import json
import shutil

import pytest

from conftest import GOLDEN, ROOT, cli_once


@pytest.fixture
def workbench(tmp_path):
    copy = tmp_path / "wb"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".git", "__pycache__", ".sdk", ".venv", ".js-sdk", "tests"))
    return copy


def edit_card(workbench, name, change):
    path = workbench / "peers" / "cards" / f"{name}.json"
    card = json.loads(path.read_text())
    change(card)
    path.write_text(json.dumps(card, indent=2))


def run_copy(workbench, *args):
    import subprocess
    import sys
    return subprocess.run([sys.executable, str(workbench / "a2a_delegation.py"), *args], cwd=workbench,
                          capture_output=True, text=True, timeout=60)


def test_the_untouched_card_files_give_the_essays_run():
    assert cli_once().stdout == (GOLDEN / "default_run.txt").read_text()


def test_a_skill_added_to_billings_card_is_discovered(workbench):
    edit_card(workbench, "billing-agent", lambda card: card["skills"].append(
        {"id": "issue_credit", "description": "Credit an account", "inputModes": ["application/json"],
         "outputModes": ["application/json"]}))
    done = run_copy(workbench)
    assert "skills=['process_refund', 'issue_credit']" in done.stdout and done.returncode == 0


def test_billing_without_auth_on_its_card_takes_frames_without_a_token(workbench):
    edit_card(workbench, "billing-agent", lambda card: card["authentication"].update(schemes=["none"]))
    done = run_copy(workbench, "--verbose")
    assert "auth=['none']" in done.stdout and "trusted result (from billing-agent)" in done.stdout
    assert "Authorization" not in done.stdout.split("--> {")[1].split("\n")[1], "no token was sent"


def test_moving_billings_endpoint_makes_the_trust_gate_refuse_it(workbench):
    edit_card(workbench, "billing-agent", lambda card: card.update(url="https://billing.acme.example/v2/a2a"))
    done = run_copy(workbench)
    assert ("[trust] 'billing-agent' is allowlisted only at https://billing.acme.example/a2a, but its card "
            "sends frames to https://billing.acme.example/v2/a2a -> delegation REFUSED") in done.stdout
    assert '"method": "tasks/send"' not in done.stdout


def test_a_card_file_with_mistakes_is_one_line_naming_the_file_and_each_field(workbench):
    def break_it(card):
        del card["version"]
        card["skills"][0]["id"] = 7
    edit_card(workbench, "billing-agent", break_it)
    done = run_copy(workbench)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "billing-agent.json: card.version is missing; card.skills[0].id must be a string" in done.stderr


def test_a_card_file_that_is_not_json_points_at_the_line_as_the_allowlist_does(workbench):
    path = workbench / "peers" / "cards" / "billing-agent.json"
    path.write_text(path.read_text().replace('"version": "1.0.0",', '"version": "1.0.0"', 1))
    done = run_copy(workbench)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    line = next(number for number, text in enumerate(path.read_text().splitlines(), 1) if '"skills"' in text)
    assert f"billing-agent.json:{line}:3: not valid JSON (Expecting ',' delimiter)" in done.stderr, done.stderr


def test_a_peer_opted_in_to_at_an_endpoint_the_allowlist_does_not_vet_is_said_allowlisted_elsewhere(workbench):
    """--allow-untrusted: the gate's line says why the card is untrusted as it does without it,
    not that a peer the allowlist names is NOT on it."""
    edit_card(workbench, "billing-agent", lambda card: card.update(url="https://billing.acme.example/v2/a2a"))
    done = run_copy(workbench, "--allow-untrusted", "billing-agent")
    assert ("[trust] 'billing-agent' is allowlisted only at https://billing.acme.example/a2a, but its card "
            "sends frames to https://billing.acme.example/v2/a2a -> delegating anyway") in done.stdout
    assert "'billing-agent' is NOT on the allowlist" not in done.stdout
