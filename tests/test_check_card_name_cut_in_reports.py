"""`check URL`'s JSON and HTML reports cut the card's name, as every other value an agent
controls is cut (report.py: SHOWN_LINE; the text report's heading shows 60 characters): a
card may be a megabyte, most of it its name, which the JSON report's "card" and the HTML
page's heading carried whole."""
import json

import pytest

from conftest import OutsidePeer, cli, outside_peer

NAME = "N" * 900_000


class HugeName(OutsidePeer):
    def do_GET(self):
        card = {"name": NAME, "description": "d", "version": "1", "supportedInterfaces": [], "capabilities": {},
                "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": []}
        self.send(200, json.dumps(card).encode())

    do_HEAD = do_GET


@pytest.mark.parametrize("shape", ["json", "html"])
def test_a_card_name_of_900_000_characters_is_cut_in_the_report(shape):
    with outside_peer(HugeName) as base:
        done = cli("check", base, "--format", shape, "--timeout", "1")
    assert "Traceback" not in done.stdout + done.stderr and done.returncode == 1, done.stderr
    if shape == "json":  # (its frames keep the card's first KEPT_BODY characters, as any body's)
        name = json.loads(done.stdout)["card"]["name"]
        assert len(name) < 1_000 and name.startswith("NNNN") and name.endswith("more characters)"), len(name)
    else:
        assert "N" * 1_000 not in done.stdout and "more characters)" in done.stdout
