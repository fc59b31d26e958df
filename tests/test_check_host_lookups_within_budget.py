"""`check URL` keeps its whole run within its budget (run.py: BUDGET, or PER_TIMEOUT --timeouts)
when a host name the card makes it look up is answered by no one.

An interface at another host than the card is judged before it is asked (reach.py `inward`: no
private address), its name looked up for at most LOOKUP_SECONDS (5 s: the resolver takes no
deadline); the card's own host name is looked up the same way, to be pinned. Those waits were
outside the run's budget: a card naming one interface at a silent resolver's host per binding
held a run whose budget was 3.2 s for 10 s."""
import json
import time

from conftest import SILENT, OutsidePeer, cli, outside_peer

TIMEOUT = 0.4  # so the run's budget is 8 x 0.4 = 3.2 s


class ElsewhereInterfaces(OutsidePeer):
    def do_GET(self):
        card = {"name": "elsewhere", "description": "d", "version": "1", "capabilities": {},
                "supportedInterfaces": [
                    {"url": f"http://jsonrpc{SILENT}/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
                    {"url": f"http://rest{SILENT}/a2a", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}],
                "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
                "skills": [{"id": "s", "name": "s", "description": "d", "tags": []}]}
        self.send(200, json.dumps(card).encode())

    do_HEAD = do_GET


def test_host_names_a_card_makes_check_look_up_are_waited_for_within_the_runs_budget(silent_resolver):
    with outside_peer(ElsewhereInterfaces) as base:
        started = time.monotonic()
        done = cli("check", base, "--format", "json", "--timeout", str(TIMEOUT))
        took = time.monotonic() - started
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    budget = 8 * TIMEOUT
    assert took < budget + 1.5, f"the run took {took:.1f} s against a budget of {budget:g} s"
    for host in ("jsonrpc", "rest"):  # the second, its wait cut to what the budget had left (nothing)
        assert f"its host {host}{SILENT} did not resolve within 5 s, or the run's time budget" in measured(done), done.stdout


def test_an_interface_not_looked_up_because_eight_lookups_were_already_waiting_is_said_so_not_as_slow(silent_resolver):
    """Past lookups.MOST_WAITING lookups waiting on the resolver, an interface's host is not looked up at all:
    check said it "did not resolve within 5 s", true, but the resolver was never asked and the run never waited."""
    from transports import lookups
    silent_resolver.fill()
    with outside_peer(ElsewhereInterfaces) as base:
        started = time.monotonic()
        done = cli("check", base, "--format", "json", "--timeout", str(TIMEOUT))
        took = time.monotonic() - started
    assert "Traceback" not in done.stdout + done.stderr and took < 8 * TIMEOUT + 1.5, (took, done.stderr)
    for host in ("jsonrpc", "rest"):
        assert f"its host {host}{SILENT} was not looked up, as {lookups.MOST_WAITING} lookups were already waiting " \
               "on the resolver" in measured(done), done.stdout


def measured(done) -> str:
    """What check's report says of the interfaces it measured (WB-BIND-MEASURED-001), in one text."""
    row = next(row for row in json.loads(done.stdout)["requirements"] if row["id"] == "WB-BIND-MEASURED-001")
    return " ".join(verdict["detail"] for verdict in row["verdicts"])
