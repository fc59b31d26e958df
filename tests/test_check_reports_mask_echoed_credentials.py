"""`check --deep` against an agent that echoes the caller's token back inside the values the
report quotes: a task id (which an HTTP+JSON request then carries in its path) and a
contextId (in a ListTasks query). The bodies were masked already; the verdicts' lines and
the request URLs must be too, in every format and in --verbose's frames."""
import json

import pytest

from conftest import cli, outside_peer
from test_check_deep_broken_agents import Agent, Tasks

TOKEN = "token-of-a-0123456789"  # the token the deep test agent knows as caller "a"


class EchoingTasks(Tasks):
    def operation(self, method, params, owner, rest):
        result = super().operation(method, params, owner, rest)
        if method != "SendMessage":
            return result
        return dict(result, id=f"{TOKEN}-{result['id']}", contextId=f"ctx {TOKEN}")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("echo")
    found = {}
    with outside_peer(Agent, tasks=EchoingTasks(None)) as base:
        store = folder / "a.json"
        store.write_text(json.dumps({"tokens": {base: TOKEN}}))
        for shape in ("text", "json", "junit", "html"):
            out = folder / f"report.{shape}"
            done = cli("check", base, "--deep", "--credentials", store, "--format", shape, "--out", out,
                       "--timeout", "2")
            assert "Traceback" not in done.stdout + done.stderr and done.returncode == 1
            found[shape] = out.read_text()
        found["verbose"] = cli("check", base, "--deep", "--credentials", store, "--verbose", "--timeout", "2").stdout
    return found


@pytest.mark.parametrize("shape", ["text", "json", "junit", "html", "verbose"])
def test_a_token_the_agent_echoes_into_ids_is_masked_in_every_report(runs, shape):
    assert TOKEN not in runs[shape]
    assert "****#" in runs[shape], "the echoed value is shown, masked"


@pytest.mark.parametrize("shape", ["text", "json", "junit", "html", "verbose", "unreached"])
def test_a_key_in_the_checked_urls_query_is_masked_in_every_report_and_in_the_line_saying_it_cannot_be_reached(shape):
    """A card puts its API key in the query under a name of its choosing (A2A 4.5): a URL given to check with one
    (X-API-Key=...) was printed whole, in the report's first line, every format's target, --verbose's frames and
    the error line for an agent not reached; only a form's few secret field names (api_key ...) were masked."""
    with outside_peer(Agent, tasks=Tasks(None)) as base:
        url = (base if shape != "unreached" else "http://127.0.0.1:9") + "/.well-known/agent-card.json?X-API-Key=SECRETDDDD1"
        flags = ["--verbose"] if shape == "verbose" else [] if shape == "unreached" else ["--format", shape]
        done = cli("check", url, *flags, "--timeout", "2")
    said = done.stdout + done.stderr
    assert "SECRETDDDD1" not in said and "X-API-Key=****#" in said and "Traceback" not in said, said[-2000:]
