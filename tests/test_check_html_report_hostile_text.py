"""`check --format html` against an agent whose card's name and binding name are made to
break a page: markup, a terminal's escape sequence, and a lone surrogate (which JSON can
carry and no UTF-8 page can hold). The page is still written, every one of them shown as
text (escaped, the invisible ones made visible), never a traceback."""
import json

from conftest import OutsidePeer, cli, outside_peer

HOSTILE = "\ud800</title><script>alert(1)</script><img src=x onerror=alert(1)>\x1b[2J"


class Agent(OutsidePeer):
    def do_GET(self):
        base = f"http://127.0.0.1:{self.server.server_port}"
        self.send(200, json.dumps({
            "name": HOSTILE, "description": "d", "version": "1", "capabilities": {},
            "supportedInterfaces": [{"url": base + "/a2a", "protocolBinding": "X\ud800<b>", "protocolVersion": "1.0"}],
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": []}).encode())


def test_a_card_whose_name_no_page_can_hold_is_reported_as_escaped_text(tmp_path):
    out = tmp_path / "report.html"
    with outside_peer(Agent) as base:
        done = cli("check", base, "--format", "html", "--out", out, "--timeout", "2")
    assert "Traceback" not in done.stdout + done.stderr and done.returncode in (0, 1)
    page = out.read_text(encoding="utf-8")
    assert "<script>" not in page and "<img" not in page and "\x1b" not in page
    assert "\\ud800&lt;/title&gt;&lt;script&gt;" in page and "\\x1b[2J" in page
