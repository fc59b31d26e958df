"""A key typed into a card URL's query (A2A 4.5: a card may ask for its key there, under a name of its
choosing) is masked in the run's frames, lines and trace, and in check's report, however the URL spells
it: with a `+` or a `/` as a base64 key has, percent-encoded, or a short plain word. It was held only as
parse_qsl decodes it (a `+` read as a space, `%2D` as `-`), a spelling the URL itself does not have, and
not at all when short or a plain word, so each of these was printed whole. The agent is
test_cards_of_outside_agents.py's (http.server's, not ours), on 127.0.0.1."""
import pytest

from conftest import cli, outside_peer
from test_cards_of_outside_agents import Outside, card_03

SPELLINGS = {"base64": ("Ab+Cd/SECRETCCCC1==", "SECRETCCCC1"), "percent-encoded": ("SECRET%2DEEEE1", "SECRET"),
             "a plain word": ("quietpassword", "quietpassword"), "short": ("k3y", "k3y")}


@pytest.mark.parametrize("spelled", SPELLINGS, ids=list(SPELLINGS))
def test_a_key_in_a_peers_query_is_masked_in_its_frames_lines_and_trace_however_it_is_spelled(spelled, tmp_path):
    value, part = SPELLINGS[spelled]
    with outside_peer(Outside, card=card_03, posted=[]) as base:
        keyed = f"{base}/.well-known/agent-card.json?X-API-Key={value}"
        done = cli("--peer", keyed, "--allow-untrusted", "outside", "--timeout", "5",
                   "--trace", str(tmp_path / "run.jsonl"), timeout=20)
    said, trace = done.stdout + done.stderr, (tmp_path / "run.jsonl").read_text()
    fetched = [line for line in said.splitlines() if line.startswith("--> GET http://127.0.0.1")]
    assert fetched and f"X-API-Key={value}" not in fetched[0] and "****#" in fetched[0], fetched
    assert f"X-API-Key={value}" not in said and f"X-API-Key={value}" not in trace, said[-2000:]
    assert part not in said.replace("X-API-Key", "") and part not in trace.replace("X-API-Key", ""), said[-2000:]


@pytest.mark.parametrize("spelled", ["base64", "percent-encoded"])
def test_a_key_in_the_checked_urls_query_is_masked_in_its_report_however_it_is_spelled(spelled):
    value, part = SPELLINGS[spelled]
    done = cli("check", f"http://127.0.0.1:9/.well-known/agent-card.json?X-API-Key={value}", "--timeout", "2")
    said = done.stdout + done.stderr
    assert "Traceback" not in said and part not in said and "X-API-Key=****#" in said, said[-2000:]
