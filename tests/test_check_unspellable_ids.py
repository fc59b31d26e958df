"""`check --deep` against an agent whose task ids hold a lone surrogate ("\\ud800" in its
JSON): JSON can carry one, no URL can spell one. The HTTP+JSON binding, which puts a task's
id in its path, refuses to build that request (one line, nothing sent) instead of raising
out of the run; the checks that needed it say so, and the report is written."""
import json

import pytest

from conftest import cli, outside_peer
from peers.support.calling.http_json import request_for
from test_check_deep_broken_agents import Agent, Tasks
from transports.errors import TransportError

UNSPELLABLE = "task-\ud800-1"


class SurrogateTasks(Tasks):
    """Every task as the flawless agent keeps it, but SendMessage names it with a lone surrogate."""

    def operation(self, method, params, owner, rest):
        result = super().operation(method, params, owner, rest)
        return dict(result, id=UNSPELLABLE + result["id"]) if method == "SendMessage" else result


def test_a_path_or_query_value_no_url_can_spell_is_refused_in_one_line():
    for method, params in (("GetTask", {"id": UNSPELLABLE}), ("ListTasks", {"contextId": UNSPELLABLE})):
        with pytest.raises(TransportError, match="lone surrogate"):
            request_for(method, params)


def test_check_deep_reports_an_unspellable_task_id_instead_of_a_traceback(tmp_path):
    with outside_peer(Agent, tasks=SurrogateTasks(None)) as base:
        store = tmp_path / "a.json"
        store.write_text(json.dumps({"tokens": {base: "token-of-a-0123456789"}}))
        done = cli("check", base, "--deep", "--credentials", store, "--format", "json", "--timeout", "2")
    assert "Traceback" not in done.stdout + done.stderr and done.returncode == 1
    rows = {row["id"]: row for row in json.loads(done.stdout)["requirements"]}
    rest = [verdict for verdict in rows["CORE-GET-001"]["verdicts"] if verdict["binding"] == "HTTP+JSON"]
    assert rest and "lone surrogate" in rest[0]["detail"]
