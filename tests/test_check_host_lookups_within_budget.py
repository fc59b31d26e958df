"""`check URL` keeps its whole run within its budget (run.py: BUDGET, or PER_TIMEOUT --timeouts)
when a host name the card makes it look up is answered by no one.

An interface at another host than the card is judged before it is asked (reach.py `inward`: no
private address), its name looked up for at most LOOKUP_SECONDS (5 s: the resolver takes no
deadline); the card's own host name is looked up the same way, to be pinned. Those waits were
outside the run's budget: a card naming one interface at a silent resolver's host per binding
held a run whose budget was 3.2 s for 10 s."""
import json
import socket
import threading
import time

from conftest import OutsidePeer, cli, outside_peer

TIMEOUT = 0.4  # so the run's budget is 8 x 0.4 = 3.2 s
SILENT = ".silent.test"  # host names the resolver never answers for (while this test runs)


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


def test_host_names_a_card_makes_check_look_up_are_waited_for_within_the_runs_budget(monkeypatch):
    released = threading.Event()  # the silent lookups' threads end when the test does
    resolve = socket.getaddrinfo

    def silent_for_some(host, *args, **kwargs):
        if isinstance(host, str) and host.endswith(SILENT):
            released.wait(30)
            raise socket.gaierror("no answer")
        return resolve(host, *args, **kwargs)
    monkeypatch.setattr(socket, "getaddrinfo", silent_for_some)
    try:
        with outside_peer(ElsewhereInterfaces) as base:
            started = time.monotonic()
            done = cli("check", base, "--format", "json", "--timeout", str(TIMEOUT))
            took = time.monotonic() - started
    finally:
        released.set()
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    budget = 8 * TIMEOUT
    assert took < budget + 1.5, f"the run took {took:.1f} s against a budget of {budget:g} s"
    measured = next(row for row in json.loads(done.stdout)["requirements"] if row["id"] == "WB-BIND-MEASURED-001")
    said = " ".join(verdict["detail"] for verdict in measured["verdicts"])
    for host in ("jsonrpc", "rest"):  # the second, its wait cut to what the budget had left (nothing)
        assert f"its host {host}{SILENT} did not resolve within 5 s, or the run's time budget" in said, said


def test_an_interface_not_looked_up_because_eight_lookups_were_already_waiting_is_said_so_not_as_slow(monkeypatch):
    """Past lookups.MOST_WAITING lookups waiting on the resolver, an interface's host is not looked up at all:
    check said it "did not resolve within 5 s", true, but the resolver was never asked and the run never waited."""
    from transports import lookups
    released, resolve = threading.Event(), socket.getaddrinfo

    def silent(host, *args, **kwargs):  # never answers for these names; an address written out asks none
        if isinstance(host, str) and host.endswith(SILENT) and not kwargs.get("flags", 0) & socket.AI_NUMERICHOST:
            released.wait(30)
            raise socket.gaierror("no answer")
        return resolve(host, *args, **kwargs)
    monkeypatch.setattr(socket, "getaddrinfo", silent)
    try:
        for n in range(lookups.MOST_WAITING):  # each waits on the resolver after its asker has gone on
            assert lookups.addresses(f"pending-{n}{SILENT}", time.monotonic() + 0.05) is None
        with outside_peer(ElsewhereInterfaces) as base:
            started = time.monotonic()
            done = cli("check", base, "--format", "json", "--timeout", str(TIMEOUT))
            took = time.monotonic() - started
    finally:
        released.set()
        for thread in [each for each in threading.enumerate() if each.name == "lookup"]:
            thread.join(5)  # the places free again for the tests after this one
    assert "Traceback" not in done.stdout + done.stderr and took < 8 * TIMEOUT + 1.5, (took, done.stderr)
    measured = next(row for row in json.loads(done.stdout)["requirements"] if row["id"] == "WB-BIND-MEASURED-001")
    said = " ".join(verdict["detail"] for verdict in measured["verdicts"])
    for host in ("jsonrpc", "rest"):
        assert f"its host {host}{SILENT} was not looked up, as {lookups.MOST_WAITING} lookups were already waiting " \
               "on the resolver" in said, said
