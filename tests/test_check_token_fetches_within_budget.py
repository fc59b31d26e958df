"""`check URL` keeps its whole run within its budget (run.py: BUDGET, or PER_TIMEOUT
--timeouts) whatever the card asks of the calling side.

A card's way in (one securityRequirements entry) may name any number of OAuth2 schemes to
present together. The calling side fetched a token for each, one after another, before the
first probe (reach.py: _credential, through credential_for), outside the run's budget: a card
naming 40 schemes whose token endpoint (at the agent's own origin, where our client secret may
go) answers each in just under the deadline held the run for 40 deadlines, and had our client
secret sent 40 times. Two guards hold it now: such a way is never chosen (two tokens cannot both
ride in Authorization: credentials.py `_one_request`), and a token fetch is held to the budget
(probe.py `Budgeted`); this run would pass with either alone."""
import json
import time

from conftest import OutsidePeer, cli, outside_peer

SCHEMES = 40
PAUSE = 0.3  # each token answer: inside --timeout 0.4
TIMEOUT = 0.4  # so the run's budget is 8 x 0.4 = 3.2 s


class ManyWaysIn(OutsidePeer):
    def do_GET(self):
        base = f"http://127.0.0.1:{self.server.server_port}"
        schemes = {f"o{n}": {"oauth2SecurityScheme": {"flows": {"clientCredentials": {
            "tokenUrl": f"{base}/token/{n}", "scopes": {}}}}} for n in range(SCHEMES)}
        card = {"name": "many-ways-in", "description": "d", "version": "1",
                "supportedInterfaces": [{"url": base + "/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
                "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
                "skills": [{"id": "s", "name": "s", "description": "d", "tags": []}],
                "securitySchemes": schemes, "securityRequirements": [{"schemes": {name: {"list": []} for name in schemes}}]}
        self.send(200, json.dumps(card).encode())

    do_HEAD = do_GET

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path.startswith("/token/"):
            self.server.tokens.append(self.path)
            time.sleep(PAUSE)
            return self.send(200, json.dumps({"access_token": "tok-0123456789", "token_type": "Bearer",
                                              "expires_in": 3600}).encode())
        self.send(401, b"{}", headers=[("WWW-Authenticate", "Bearer")])


def test_token_fetches_a_card_asks_for_are_held_to_the_runs_budget(tmp_path):
    store = tmp_path / "credentials.json"
    tokens = []
    with outside_peer(ManyWaysIn, tokens=tokens, handle_error=lambda request, address: None) as base:
        store.write_text(json.dumps({"credentials": {base: {"oauth2": "client-id:client-secret-0123456789"}}}))
        started = time.monotonic()
        done = cli("check", base, "--credentials", store, "--format", "json", "--timeout", str(TIMEOUT))
        took = time.monotonic() - started
    assert "Traceback" not in done.stdout + done.stderr and done.returncode in (0, 1), done.stderr
    budget = 8 * TIMEOUT
    assert took < budget + 2, f"the run took {took:.1f} s against a budget of {budget:g} s ({len(tokens)} token requests)"
