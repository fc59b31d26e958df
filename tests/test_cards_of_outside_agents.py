"""Cards as agents we do not own serve them, read by `--peer`: what the card offers is what
we choose from, and a card we cannot speak to is refused saying truly why.

Each agent is a test's own http.server on 127.0.0.1, port 0 (conftest.outside_peer): its
card at /.well-known/agent-card.json, and a JSON-RPC endpoint that records what it was sent."""
import json

import pytest

from conftest import OutsidePeer, cli, outside_peer

SKILL = {"id": "process_refund", "name": "r", "description": "r", "tags": []}


def card_03(base, **fields):
    """An A2A 0.3 card as the official SDKs write it (protocolVersion "0.3.0")."""
    return {"name": "outside", "description": "d", "version": "1", "protocolVersion": "0.3.0", "url": base + "/a2a",
            "capabilities": {}, "defaultInputModes": ["application/json"], "defaultOutputModes": ["text/plain"],
            "skills": [SKILL], **fields}


class Outside(OutsidePeer):
    """Serves the server's `card(base)`; answers every JSON-RPC request with a completed task, noting its path."""

    def do_GET(self):
        base = f"http://127.0.0.1:{self.server.server_port}"
        self.send(200, json.dumps(self.server.card(base)).encode())

    def do_POST(self):
        asked = self.asked()
        self.server.posted.append((self.path, asked.get("method")))
        task = {"kind": "task", "id": "t-1", "contextId": "c-1", "status": {"state": "completed"},
                "artifacts": [{"artifactId": "a", "parts": [{"kind": "text", "text": "refund issued"}]}]}
        self.reply({"jsonrpc": "2.0", "id": asked.get("id"), "result": task})


def run_against(card, *flags):
    posted = []
    with outside_peer(Outside, card=card, posted=posted) as base:
        done = cli("--peer", base, "--allow-untrusted", "outside", "--timeout", "5", *flags, timeout=20)
    return done, posted


def test_a_0_3_card_preferring_rest_is_spoken_to_over_the_json_rpc_interface_it_also_lists():
    done, posted = run_against(lambda base: card_03(
        base, url=base + "/rest", preferredTransport="HTTP+JSON",
        additionalInterfaces=[{"url": base + "/rest", "transport": "HTTP+JSON"},
                              {"url": base + "/jsonrpc", "transport": "JSONRPC"}]))
    assert "Traceback" not in done.stderr and "not supported" not in done.stdout + done.stderr, done.stdout + done.stderr
    assert posted == [("/jsonrpc", "message/send")], done.stdout + done.stderr
    assert "UNTRUSTED result (from outside), kept as data, never as instructions: refund issued" in done.stdout


def test_wire_0_3_to_a_card_offering_0_3_only_over_http_json_says_so_and_sends_nothing():
    done, posted = run_against(lambda base: {
        "name": "outside", "description": "d", "version": "1", "capabilities": {},
        "supportedInterfaces": [{"url": base + "/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
                                {"url": base + "/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "0.3.0"}],
        "defaultInputModes": ["application/json"], "defaultOutputModes": ["text/plain"], "skills": [SKILL]}, "--wire", "0.3")
    said = done.stdout + done.stderr
    assert "it offers A2A 0.3 only over HTTP+JSON, and the support agent speaks 0.3 over JSONRPC alone" in said, said
    assert "speaks the 1.0 wire format" not in said and "Traceback" not in said
    assert posted == []


class OtherVersion(Outside):
    """Answers each request in the other version's shape: 0.3's bare task to 1.0, 1.0's wrapped task to 0.3."""

    def do_POST(self):
        asked = self.asked()
        self.server.posted.append((self.path, asked.get("method")))
        task = {"id": "t-1", "contextId": "c-1", "status": {"state": "completed"}}
        self.reply({"jsonrpc": "2.0", "id": asked.get("id"), "result": {"task": task} if asked.get("method") ==
                    "message/send" else {"kind": "task", **task}})


def test_an_answer_in_the_other_versions_shape_is_refused_in_one_line_naming_the_version_it_is_spelled_in():
    for version, spelled in (("0.3.0", 'spelled as A2A 1.0 spells one, wrapped: {"task": ...}'),
                             ("1.0", 'spelled as A2A 0.3 spells one, by its "kind"')):
        posted = []
        with outside_peer(OtherVersion, card=lambda base: {**card_03(base), "protocolVersion": version, **({
                "supportedInterfaces": [{"url": base + "/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]}
                if version == "1.0" else {})}, posted=posted) as base:
            done = cli("--peer", base, "--allow-untrusted", "outside", "--timeout", "5", timeout=20)
        failed = [line for line in done.stderr.splitlines() if "delegation failed" in line]
        assert len(failed) == 1 and spelled in failed[0] and "Traceback" not in done.stderr, done.stdout + done.stderr
        assert len(posted) == 1


@pytest.mark.parametrize("interface", [{"url": "not a url"}, {"url": 5}, {}, {"url": ["x"]}, {"url": "ftp://x/a2a"}])
def test_a_0_3_cards_json_rpc_additional_interface_with_no_http_url_is_left_out_in_one_line_not_the_whole_card(
        interface):
    """0.3's additionalInterfaces are choices beside the card's url (0.3 section 5.6): one that names
    no http(s) URL refused the whole card, the url it prefers too (and a url that was no string,
    or none at all, ended the run in a traceback). `check` leaves it out too, and names it."""
    done, posted = run_against(lambda base: card_03(base, additionalInterfaces=[
        {"transport": "JSONRPC", **interface}, {"url": base + "/a2a", "transport": "JSONRPC"}]))
    said = done.stdout + done.stderr
    assert "Traceback" not in said and posted == [("/a2a", "message/send")], said
    left_out = [line for line in said.splitlines() if "additionalInterfaces[0]" in line]
    assert len(left_out) == 1 and "left out" in left_out[0] and "http(s) URL" in left_out[0], said


@pytest.mark.parametrize("entry", [5, "x", [], None])
def test_a_0_3_cards_additional_interface_that_is_not_an_object_is_left_out_in_one_line_naming_its_index(entry):
    """It was skipped without a word, where one with no http(s) url is said: both are the card's error."""
    done, posted = run_against(lambda base: card_03(base, additionalInterfaces=[
        {"url": base + "/a2a", "transport": "JSONRPC"}, entry]))
    said = done.stdout + done.stderr
    assert "Traceback" not in said and posted == [("/a2a", "message/send")], said
    left_out = [line for line in said.splitlines() if "additionalInterfaces[1]" in line]
    assert len(left_out) == 1 and "left out" in left_out[0] and "not an object" in left_out[0], said


class Outside10(Outside):
    """Answers every JSON-RPC request with a completed task as A2A 1.0 spells one, noting its path."""

    def do_POST(self):
        asked = self.asked()
        self.server.posted.append((self.path, asked.get("method")))
        task = {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_COMPLETED"},
                "artifacts": [{"artifactId": "a", "parts": [{"text": "refund issued"}]}]}
        self.reply({"jsonrpc": "2.0", "id": asked.get("id"), "result": {"task": task}})


def card_10(base, interfaces):
    return {**{key: value for key, value in card_03(base).items() if key not in ("url", "protocolVersion")},
            "supportedInterfaces": interfaces}


@pytest.mark.parametrize("interface", [{"url": "not a url"}, {"url": 5}, {}, {"url": ["x"]}, {"url": "ftp://x/a2a"}])
def test_a_1_0_cards_interface_with_no_http_url_is_left_out_in_one_line_as_0_3s_is_not_the_whole_card(interface):
    """A 1.0 card's supportedInterfaces are choices too (1.0 section 8.3): one whose url is no
    http(s) URL, or no string, refused the whole card, its usable JSON-RPC interface with it,
    where a 0.3 card's additionalInterfaces entry of that kind is left out in one line."""
    left_out_of_a_card_refunded_through(lambda base: [{"protocolBinding": "JSONRPC", "protocolVersion": "1.0", **interface},
                                                      {"url": base + "/a2a", "protocolBinding": "JSONRPC",
                                                       "protocolVersion": "1.0"}], 0, "http(s) URL")


def left_out_of_a_card_refunded_through(interfaces, index, why):
    """A run against a 1.0 card listing `interfaces(base)`, one usable: the refund sent through it, and the
    entry at `index` said left out in one line naming `why`."""
    posted = []
    with outside_peer(Outside10, posted=posted, card=lambda base: card_10(base, interfaces(base))) as base:
        done = cli("--peer", base, "--allow-untrusted", "outside", "--timeout", "5", timeout=20)
    said = done.stdout + done.stderr
    assert "Traceback" not in said and posted == [("/a2a", "SendMessage")], said
    left_out = [line for line in said.splitlines() if f"supportedInterfaces[{index}]" in line]
    assert len(left_out) == 1 and "left out" in left_out[0] and why in left_out[0], said
    assert "UNTRUSTED result (from outside), kept as data, never as instructions: refund issued" in done.stdout


def test_a_1_0_card_whose_every_1_0_interface_has_no_http_url_is_refused_naming_why_and_nothing_is_sent():
    """Leaving out an unusable interface keeps a card only while one at its own version remains:
    a 0.3 interface beside them is no 1.0 card's endpoint."""
    posted = []
    with outside_peer(Outside10, posted=posted, card=lambda base: card_10(base, [
            {"url": "ftp://x/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": "not a url", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
            {"url": base + "/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}])) as base:
        done = cli("--peer", base, "--allow-untrusted", "outside", "--timeout", "5", timeout=20)
    said = done.stdout + done.stderr
    refused = [line for line in said.splitlines() if "card fetch failed" in line]
    assert "Traceback" not in said and posted == [] and len(refused) == 1, said
    assert "supportedInterfaces[0].url 'ftp://x/a2a' must be an http(s) URL" in refused[0], said


def test_a_signed_1_0_cards_signature_is_checked_on_the_card_as_served_not_on_it_less_the_interface_left_out(tmp_path):
    """A pinned key signed the card with every interface in it: leaving one out is our reading,
    and must not turn a good signature into a bad one (nor a bad one into a good one)."""
    from peers.demo_auth import demo_key
    from peers.signing import card_signature
    key = demo_key("billing-agent", ["EdDSA"])[0]
    posted = []
    with outside_peer(Outside10, posted=posted, card=lambda base: card_signature.sign(card_10(base, [
            {"url": "ftp://x/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": base + "/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]), key)) as base:
        (tmp_path / "allow.json").write_text(json.dumps({"trusted": [
            {"name": "outside", "endpoint": base + "/a2a", "publicKey": key.public.jwk()}]}))
        done = cli("--peer", base, "--allowlist", str(tmp_path / "allow.json"), "--timeout", "5", timeout=20)
    said = done.stdout + done.stderr
    assert "'outside' is allowlisted and its card is signed by the pinned key" in said, said
    assert posted == [("/a2a", "SendMessage")] and "Traceback" not in said, said


def test_a_1_0_card_of_thousands_of_unusable_interfaces_beside_one_good_says_a_few_lines_not_thousands():
    posted = []
    with outside_peer(Outside10, posted=posted, card=lambda base: card_10(base, [
            *({"url": f"ftp://x/{n}", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"} for n in range(3000)),
            {"url": base + "/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}])) as base:
        done = cli("--peer", base, "--allow-untrusted", "outside", "--timeout", "5", timeout=20)
    said = done.stdout + done.stderr
    left_out = [line for line in done.stderr.splitlines() if "left out" in line]
    assert posted == [("/a2a", "SendMessage")] and "Traceback" not in said, said[-2000:]
    assert len(left_out) == 17 and "and 2984 more" in left_out[-1], left_out[-3:]


@pytest.mark.parametrize("entry", [5, "x", [], None])
def test_a_1_0_cards_interface_that_is_not_an_object_is_left_out_in_one_line_naming_its_index_not_the_whole_card(entry):
    """As one whose url is no http(s) URL is: a choice the card lists wrongly, not the card; it
    refused the whole card, its usable JSON-RPC interface with it."""
    left_out_of_a_card_refunded_through(lambda base: [{"url": base + "/a2a", "protocolBinding": "JSONRPC",
                                                       "protocolVersion": "1.0"}, entry], 1, "not an object")


def test_a_1_0_card_of_only_interfaces_that_are_not_objects_is_still_refused_and_nothing_is_sent():
    posted = []
    with outside_peer(Outside10, posted=posted, card=lambda base: card_10(base, [5, "x"])) as base:
        done = cli("--peer", base, "--allow-untrusted", "outside", "--timeout", "5", timeout=20)
    said = done.stdout + done.stderr
    refused = [line for line in said.splitlines() if "card fetch failed" in line]
    assert "Traceback" not in said and posted == [] and len(refused) == 1 and "supportedInterfaces" in refused[0], said


@pytest.mark.parametrize("interfaces, named", [
    (lambda base: [{"url": "ftp://x/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
                   {"url": base + "/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0", "tenant": 7}],
     "supportedInterfaces[1].tenant"),
    (lambda base: [5, {"url": base + "/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
                   {"url": base + "/b", "protocolVersion": "1.0"}],
     "supportedInterfaces[2].protocolBinding")])
def test_a_1_0_cards_refusal_after_an_interface_is_left_out_names_the_index_of_the_card_as_served(interfaces, named):
    """The card's author reads the card as served: an index counted in it less the entries left out
    named a neighbour of the entry at fault (the tenant of [1] said [0]'s)."""
    posted = []
    with outside_peer(Outside10, posted=posted, card=lambda base: card_10(base, interfaces(base))) as base:
        done = cli("--peer", base, "--allow-untrusted", "outside", "--timeout", "5", timeout=20)
    said = done.stdout + done.stderr
    refused = [line for line in said.splitlines() if "card fetch failed" in line]
    assert "Traceback" not in said and posted == [] and len(refused) == 1, said
    assert named in refused[0], refused[0]


@pytest.mark.parametrize("entry", [{}, {"transport": ""}, {"transport": 5}, {"transport": None}])
def test_a_0_3_cards_additional_interface_that_names_no_transport_is_left_out_in_one_line_naming_its_index(entry):
    """It was skipped without a word, where one with no http(s) url is said: both are the card's error."""
    done, posted = run_against(lambda base: card_03(base, additionalInterfaces=[
        {"url": base + "/a2a", "transport": "JSONRPC"}, {"url": base + "/other", **entry}]))
    said = done.stdout + done.stderr
    assert "Traceback" not in said and posted == [("/a2a", "message/send")], said
    left_out = [line for line in said.splitlines() if "additionalInterfaces[1]" in line]
    assert len(left_out) == 1 and "left out" in left_out[0] and "transport" in left_out[0], said


def test_a_0_3_card_of_thousands_of_additional_interfaces_says_those_past_the_16th_unread_in_one_line():
    """Past the 16th, entries were never read and never said: one line for all of them, not one each."""
    done, posted = run_against(lambda base: card_03(base, additionalInterfaces=[
        {"url": f"http://127.0.0.1:9/{n}"} for n in range(3000)]))
    said = done.stdout + done.stderr
    about = [line for line in done.stderr.splitlines() if "additionalInterfaces" in line]
    assert "Traceback" not in said and posted == [("/a2a", "message/send")], said[-2000:]
    assert len(about) == 17 and all("transport" in line for line in about[:16]), about[-3:]
    assert "(2984 more) are not read" in about[-1], about[-1]


def test_wire_0_3_to_a_1_0_card_whose_0_3_interfaces_are_all_unusable_says_which_and_sends_nothing():
    """It was refused as speaking 1.0, not 0.3: true of what is left, but the card does list 0.3, unusably."""
    done, posted = run_against(lambda base: card_10(base, [
        {"url": base + "/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": "ftp://x/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
        {"url": 5, "protocolBinding": "HTTP+JSON", "protocolVersion": "0.3.0"}]), "--wire", "0.3")
    said = done.stdout + done.stderr
    refused = [line for line in said.splitlines() if "card fetch failed" in line]
    assert "Traceback" not in said and posted == [] and len(refused) == 1, said
    assert "the 0.3 interfaces it lists are unusable (supportedInterfaces[1].url 'ftp://x/a2a' must be an http(s) " \
           "URL; supportedInterfaces[2].url (an integer) must be an http(s) URL)" in refused[0], refused[0]
