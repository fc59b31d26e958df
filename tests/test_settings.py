"""A run's settings are the command line parsed once into a frozen record: the lesson found
once with its flags merged in, the environment's and the files' defaults settled, how a task
is followed a value; nothing sets a field afterwards (peers/support/cli/command_line.py)."""
import ast
import os

import pytest

from conftest import ROOT
from peers import demo
from peers.support.cli import command_line, flags
from peers.support.calling.follow import Following
from peers.support.lessons import every, find
from peers.support.cli.settings import Settings, following


def test_the_essays_run_is_every_flags_default_with_the_files_beside_the_story(monkeypatch):
    monkeypatch.delenv("A2A_CREDENTIALS", raising=False)
    settings = command_line.parse([])
    assert isinstance(settings, Settings) and settings.lesson is None and settings.ignored == ()
    assert settings.registry == os.path.join(ROOT, "registry.json")
    assert settings.allowlist == os.path.join(ROOT, "allowlist.json")
    assert settings.following == Following("wait", False, flags.HTTP_TIMEOUT)
    assert settings == command_line.parse(["--frames", "full"]), "no flags and the defaults given: one record"


def test_the_record_cannot_be_changed_and_a_variant_is_a_new_record():
    settings = command_line.parse(["--stream"])
    with pytest.raises(AttributeError):
        settings.transport = "http"
    variant = settings._replace(transport="http")
    assert (settings.transport, variant.transport) == ("in-process", "http")


def test_the_lesson_is_found_once_and_its_flags_are_merged_where_the_command_line_left_them():
    slow = command_line.parse(["--scenario", "slow"])
    assert slow.lesson is find("slow") and slow.scenario == "slow" and slow.wire == "1.0"
    assert slow.timeout == 0.5 and slow.following.patience == 0.5, "the lesson's --timeout, followed too"
    given = command_line.parse(["--scenario", "slow", "--timeout", "3"])
    assert given.timeout == 3.0 and given.following.patience == 3.0, "a flag given wins over the lesson's"
    assert command_line.parse(["--scenario", "broken-stream"]).following.stream is True
    crash = command_line.parse(["--scenario", "crash", "--transport", "in-process"])
    assert crash.transport == "http", "what a lesson needs wins over what is given"


def test_peer_implies_http_except_in_a_replay_which_warns_instead(tmp_path):
    assert command_line.parse(["--peer", "http://127.0.0.1:9"]).transport == "http"
    assert command_line.parse(["--peer", "http://127.0.0.1:9", "--transport", "https"]).transport == "https"
    replay = command_line.parse(["--replay", str(tmp_path / "run.jsonl"), "--peer", "http://127.0.0.1:9", "--push"])
    assert replay.transport == "in-process" and replay.peer == ("http://127.0.0.1:9",)
    assert [line.split(" does")[0] for line in replay.ignored] == ["--peer", "--push"]


def test_the_environment_supplies_what_the_command_line_left_out(monkeypatch):
    monkeypatch.setenv("A2A_CREDENTIALS", "from-env.json")
    assert command_line.parse([]).credentials == "from-env.json"
    assert command_line.parse(["--credentials", "given.json"]).credentials == "given.json"
    monkeypatch.setenv("A2A_SERVE_TOKEN", "tok-7")
    served = command_line.parse(["serve", "billing-agent"], serve_flags=demo.SERVE_FLAGS)
    assert (served.command, served.peer, served.token) == ("serve", "billing-agent", "tok-7")
    with pytest.raises(AttributeError):
        served.token = "other"


def test_the_pages_allowlist_is_the_one_beside_the_story_unless_given():
    assert command_line.parse(["web"]).allowlist == os.path.join(ROOT, "allowlist.json")
    assert command_line.parse(["web", "--allowlist", "mine.json"]).allowlist == "mine.json"


@pytest.mark.parametrize("flag, mode", [("--no-wait", "poll"), ("--push", "push")])
def test_how_a_task_is_followed_is_one_value_from_its_flags(flag, mode):
    assert command_line.parse([flag, "--stream", "--timeout", "2"]).following == Following(mode, True, 2.0)


def test_every_run_flag_lands_in_the_record_as_a_field_or_in_how_a_task_is_followed():
    class Reading(dict):
        def __getitem__(self, key):
            self.read.add(key)
            return super().__getitem__(key)
    values = Reading({flag.dest: flag.default for flag in flags.FLAGS})
    values.read = set()
    following(values)
    assert {flag.dest for flag in flags.FLAGS} - set(Settings._fields) <= values.read


def test_every_flag_a_lesson_reads_is_a_field_it_can_be_given():
    assert all(flags.dest_of(flag) in Settings._fields for module in every() for flag in module.LESSON.reads)


def test_nothing_sets_a_field_of_the_settings_after_parsing():
    """No assignment to an attribute of `settings` (or the old `options`), and no setattr on one."""
    def holder(node):
        return (isinstance(node, ast.Name) and node.id in ("settings", "options")) or (
            isinstance(node, ast.Attribute) and node.attr in ("settings", "options"))
    found = []
    for path in sorted((ROOT / "peers").rglob("*.py")) + [ROOT / "a2a_delegation.py"]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and holder(node.value):
                found.append(f"{path.name}:{node.lineno}")
            elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "setattr" and holder(node.args[0]):
                found.append(f"{path.name}:{node.lineno}")
    assert found == []


def test_strict_cards_is_a_field_false_unless_given_and_a_replay_says_it_does_nothing(tmp_path):
    assert command_line.parse([]).strict_cards is False
    assert command_line.parse(["--strict-cards", "--wire", "1.0"]).strict_cards is True
    replay = command_line.parse(["--replay", str(tmp_path / "run.jsonl"), "--strict-cards"])
    assert [line.split(" does")[0] for line in replay.ignored] == ["--strict-cards"]
