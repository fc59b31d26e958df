"""`--peer` given twice for one card, by the same URL or by two spellings of it (its base URL,
its card's URL, another query, its host ending in the root's dot), is one peer: asked once, one line saying the repeat was
dropped. It was asked twice: one ticket, two refunds asked for. Cards are keyed as the
registry keys them (config.card_key: origin and path, a query naming no other agent).

The agent is test_cards_of_outside_agents.py's (http.server's, not ours), on 127.0.0.1."""
import json

import pytest

from conftest import cli, outside_peer
from test_cards_of_outside_agents import Outside, card_03


@pytest.mark.parametrize("again", ["{base}", "{base}/", "{base}/.well-known/agent-card.json",
                                   "HTTP://127.0.0.1:{port}/.well-known/agent-card.json?a=2",
                                   "http://127.0.0.1.:{port}", "HTTP://127.0.0.1.:{port}/.well-known/agent-card.json"])
def test_a_peer_given_twice_by_any_spelling_of_its_card_is_asked_once_and_the_repeat_said_in_one_line(again):
    posted = []
    with outside_peer(Outside, card=card_03, posted=posted) as base:
        repeat = again.format(base=base, port=base.rsplit(":", 1)[1])
        done = cli("--peer", base, "--peer", repeat, "--allow-untrusted", "outside", "--timeout", "5", timeout=20)
    said = done.stdout + done.stderr
    assert posted == [("/a2a", "message/send")] and "Traceback" not in said, said
    dropped = [line for line in said.splitlines() if "--peer" in line and "dropped" in line]
    assert len(dropped) == 1 and "agent-card.json" in dropped[0], said
    assert said.count("UNTRUSTED result (from outside)") == 1 and done.returncode == 0, said


def test_two_peers_at_one_origin_with_two_cards_are_both_asked():
    """Keyed by origin and path: two cards at one origin are two agents (a gateway serves many)."""
    posted = []
    with outside_peer(Outside, card=card_03, posted=posted) as base:
        done = cli("--peer", base, "--peer", base + "/other/.well-known/agent-card.json", "--allow-untrusted",
                   "outside", "--timeout", "5", timeout=20)
    said = done.stdout + done.stderr
    assert len(posted) == 2 and "dropped" not in said, said


@pytest.mark.parametrize("given", ["{base}", "{base}/.well-known/agent-card.json?a=2"])
def test_a_peer_the_registry_lists_is_asked_once_as_the_registrys_entry_and_the_peer_dropped_in_one_line(
        given, tmp_path):
    """--peer beside a registry that lists its card: the registry's entry is asked, the --peer
    dropped. Both were asked: one ticket, two refunds asked for."""
    posted = []
    with outside_peer(Outside, card=card_03, posted=posted) as base:
        listed = base + "/.well-known/agent-card.json?v=1"
        (tmp_path / "registry.json").write_text(json.dumps({"peers": [{"cardUrl": listed}]}))
        done = cli("--registry", str(tmp_path / "registry.json"), "--peer", given.format(base=base),
                   "--allow-untrusted", "outside", "--timeout", "5", timeout=20)
    said = done.stdout + done.stderr
    assert posted == [("/a2a", "message/send")] and "Traceback" not in said, said
    dropped = [line for line in said.splitlines() if "--peer" in line and "dropped" in line]
    assert len(dropped) == 1 and "registry" in dropped[0] and "?v=1" in dropped[0], said
    assert said.count("UNTRUSTED result (from outside)") == 1 and done.returncode == 0, said
    assert "never asked" not in said, "the card it names was asked, as the registry's entry"


def test_a_secret_in_a_dropped_peers_query_is_masked_in_the_line_saying_so():
    """A card URL's query may carry a key (A2A 4.5: location "query"): the frames show it masked,
    and so must the line saying the repeat was dropped, which named both URLs as given."""
    posted = []
    with outside_peer(Outside, card=card_03, posted=posted) as base:
        keyed = base + "/.well-known/agent-card.json?api_key=SECRETAAAA1"
        done = cli("--peer", keyed, "--peer", base + "/?api_key=SECRETAAAA2", "--allow-untrusted", "outside",
                   "--timeout", "5", timeout=20)
    said = done.stdout + done.stderr
    assert [line for line in said.splitlines() if "dropped" in line and "api_key=****#" in line], said
    assert "SECRETAAAA" not in said and len(posted) == 1, said


def test_a_dropped_peers_line_keeps_what_follows_a_masked_key_in_the_url_it_names(tmp_path):
    """A key's value runs to what no query holds, and ")" and ":" may be in one: masked in the
    whole line, the key took the line's own "):" with it. Each URL is masked on its own."""
    with outside_peer(Outside, card=card_03, posted=[]) as base:
        keyed = base + "/.well-known/agent-card.json?api_key=SECRETAAAA1"
        (tmp_path / "registry.json").write_text(json.dumps({"peers": [{"cardUrl": keyed}]}))
        other = base + "/other/.well-known/agent-card.json?api_key=SECRETAAAA2"  # a second agent, keyed too
        done = cli("--registry", str(tmp_path / "registry.json"), "--peer", other, "--peer", base + "/other",
                   "--peer", base, "--allow-untrusted", "outside", "--timeout", "5", timeout=20)
    said = done.stdout + done.stderr
    repeat = [line for line in said.splitlines() if "an earlier --peer does" in line]
    listed = [line for line in said.splitlines() if "the registry lists" in line]
    assert len(repeat) == 1 and "): it is asked once" in repeat[0], said
    assert len(listed) == 1 and "): the registry's entry is asked" in listed[0], said
    assert "SECRETAAAA" not in said, said


@pytest.mark.parametrize("name", ["API_KEY", "X-API-Key", "access-key", "api%5Fkey"])
def test_a_key_in_a_peers_query_under_a_name_a_secret_header_could_have_is_masked_in_each_line_frame_and_trace(
        name, tmp_path):
    """A card names where its API key goes (A2A 4.5: in the query, under a name of its choosing), and a
    key typed into a --peer URL is the user's secret under whatever name: only the few names a form's
    secret field has (api_key, token ...) were masked, so X-API-Key, API_KEY and the rest were printed in
    the clear in the card's frame, the line dropping the repeat and the trace. Any name a secret header
    could have is masked, as a served peer's log masks it (masking.mask_line), in any case or encoding."""
    with outside_peer(Outside, card=card_03, posted=[]) as base:
        keyed = f"{base}/.well-known/agent-card.json?{name}=SECRETBBBB1"
        done = cli("--peer", keyed, "--peer", base, "--allow-untrusted", "outside", "--timeout", "5",
                   "--trace", str(tmp_path / "run.jsonl"), timeout=20)
    said = done.stdout + done.stderr
    assert [line for line in said.splitlines() if "dropped" in line and f"{name}=****#" in line], said
    assert [line for line in said.splitlines() if line.startswith("--> GET") and f"{name}=****#" in line], said
    assert "SECRETBBBB1" not in said and "SECRETBBBB1" not in (tmp_path / "run.jsonl").read_text(), said
