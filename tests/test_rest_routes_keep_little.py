"""HTTP+JSON keeps the routes of the paths it was asked lately, and nothing a client could
make large: a path longer than any route a peer answers is matched afresh each time, so a
client asking many long paths (a task id of 8 KiB each, the longest target a server takes)
cannot grow what a served peer holds; and each path, kept or not, names the same route."""
import random

import pytest

from conftest import bytes_kept
from peers import rest
from transports.base import MOST_CACHED


def test_many_long_paths_are_matched_alike_and_not_kept():
    rng = random.Random(11)
    rest.routes_for("tasks/t-1")  # what a first request loads, not counted
    # each path its own copy of it, escapes and stray percent signs among its letters (each
    # is a step of unquote's, so a few of them: the test is of what is kept, not of unquote)
    shared = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789%") for _ in range(8 * 1024 - 16))

    def ask_each():
        for n in range(150):  # 150 distinct paths of 8 KiB: over 2 MiB, with their ids, if each were kept
            task_id = f"{n}-{shared}"
            found = rest.routes_for(f"tasks/{task_id}")
            assert [(route.operation, fields) for route, fields in found] == [("get", {"id": rest.unquote(task_id)})]
    assert bytes_kept(ask_each) < 1 << 20


def test_a_path_at_the_cache_limit_and_past_it_name_the_same_route():
    for length in (MOST_CACHED - 1, MOST_CACHED, MOST_CACHED + 1):
        path = "acme/tasks/" + "x" * (length - len("acme/tasks/:cancel")) + ":cancel"
        assert len(path) == length
        assert [(route.operation, fields) for route, fields in rest.routes_for(path)] == [
            ("cancel", {"tenant": "acme", "id": path[len("acme/tasks/"):-len(":cancel")]})]
    assert rest.routes_for("x" * (MOST_CACHED + 1)) == ()


def test_a_route_kept_for_a_path_cannot_be_changed_by_whoever_was_handed_it():
    (route, fields), = rest.routes_for("acme/tasks/t-1")
    with pytest.raises(TypeError):
        fields["id"] = "someone-elses-task"  # a later request for this path would have read it
    assert rest.routes_for("acme/tasks/t-1")[0][1] == {"tenant": "acme", "id": "t-1"}
