"""Over the connection cap (issue 30, item 5): a stranger who opens more connections than a
server holds, and opens each again as soon as it is closed, never keeps an honest client out.

When full, the server closes the connection that has made the least progress: a silent
one first (a TLS handshake that sent nothing, an idle keep-alive), the one silent longest;
else the request head still coming after the longest time; so a newcomer is the last to go. The attacker and
the honest client share 127.0.0.1 here, as they may anywhere: no share per address could
tell them apart. Each test plays the attacker on loopback, bounded in time and size;
honest service is a ratio in one run, never a timed assertion (bench/attacks.py has the
figures at 1,024 connections).
"""
import socket
import ssl
import threading
import time

import pytest

from attacks import HEAD, Reopening, enough_files, held_open, honest_ratio
from conftest import FRAME, JSON_AUTH, ROOT, serving
from peers import billing
from peers.a2a import wire_essay
from peers.app import PeerApp
from transports import room, tls
from transports.network import HttpTransport
from transports.server import PeerServer

CAP = 48  # the server's cap in these tests: the attack is the cap's worth, and more
KEYS = ROOT / "peers/keys"
CA, CERT, KEY = (str(KEYS / name) for name in ("demo-ca.DEMO-CERT.pem", "billing-agent.DEMO-TLS-CERT.pem",
                                                "billing-agent.DEMO-TLS-KEY.pem"))


def billing_app():
    return PeerApp(billing.billing_agent(), wire_essay, token="t0k")


def honest(base_url, context=None) -> bool:
    """One honest request on a fresh connection: answered 200? (Within 3 s, a bound, not a target:
    the attack shares this process and a loaded machine; bench/attacks.py measures 1 s.)"""
    transport = HttpTransport(timeout=3, tls=context)
    try:
        return transport.post(f"{base_url}/a2a", FRAME, JSON_AUTH).status == 200
    except Exception:  # noqa: BLE001 - refused, reset, timed out: not answered
        return False
    finally:
        transport.close()


def closed_by_server(sock, seconds=2.0) -> bool:
    sock.settimeout(seconds)
    try:
        return sock.recv(65536) == b""
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False


def settled(server, count, seconds=3.0) -> bool:
    deadline = time.monotonic() + seconds
    while server.connections != count and time.monotonic() < deadline:
        time.sleep(0.01)
    return server.connections == count


def test_when_full_the_silent_connection_goes_first_then_the_request_begun_longest_ago():
    lines = []
    with serving(billing_app(), max_connections=4, log=lines.append) as server:
        held = []
        for first in (b"POST /a2a HTTP/1.1\r\n", b"", b"P", b""):  # oldest first: begun, silent, begun, silent
            held.append(socket.create_connection(server.server_address, timeout=3))
            held[-1].sendall(first)
            assert settled(server, len(held))
        time.sleep(2 * room.SILENT_SECONDS)  # said nothing for long enough to count as silent
        for going in (1, 3, 0, 2):  # each honest newcomer closes one: silent first, then the oldest begun
            assert honest(server.base_url)
            assert closed_by_server(held[going]), f"connection {going} made room"
            assert settled(server, 3), "the honest client's connection, closed by it, is gone"
            held.append(socket.create_connection(server.server_address, timeout=3))  # full again, by a younger one
            held[-1].sendall(b"G")
            assert settled(server, 4)
        assert sum("closed to make room" in line for line in lines) == 2, "a request begun is news; a silent one not"
        assert any('"POST /a2a HTTP/1.1" closed to make room' in line for line in lines)
        for sock in held:
            sock.close()


def test_a_tls_handshake_that_sends_nothing_is_closed_to_make_room():
    server = PeerServer(billing_app(), max_connections=2, tls=tls.server_context(CERT, KEY)).start()
    try:
        silent = [socket.create_connection(server.server_address, timeout=3) for _ in range(2)]
        assert settled(server, 2)
        assert honest(server.base_url, ssl.create_default_context(cafile=CA))
        assert closed_by_server(silent[0]), "the silent handshake longest open made room"
        for sock in silent:
            sock.close()
    finally:
        server.stop()


def test_a_newcomer_is_turned_away_with_503_only_when_every_connection_is_being_answered():
    release = threading.Event()
    with serving(held_open(billing_app(), release), max_connections=2) as server:
        held = [socket.create_connection(server.server_address, timeout=3) for _ in range(2)]
        for sock in held:
            sock.sendall(b"GET /held HTTP/1.1\r\nHost: x\r\n\r\n")
            answer = b""
            while b"held" not in answer and len(answer) < 4096:
                answer += sock.recv(4096) or b"-" * 4096  # the end, before the body: fails below
            assert b"held" in answer
        transport = HttpTransport(timeout=3)
        try:
            answer = transport.post(f"{server.base_url}/a2a", FRAME, JSON_AUTH)
            assert answer.status == 503 and answer.header("retry-after") == "1"
        finally:
            transport.close()
        release.set()
        for sock in held:
            sock.close()
        assert settled(server, 0)
        assert honest(server.base_url), "answered once a slot is free"


@pytest.mark.parametrize("secure", [False, True], ids=["dripping heads", "silent TLS handshakes"])
@pytest.mark.parametrize("pace", [200, None], ids=["reopened at 200 a second", "reopened at once"])
def test_a_stranger_reopening_the_caps_worth_of_connections_leaves_honest_requests_answered(secure, pace):
    if not enough_files(8 * CAP + 200):
        pytest.skip("this process may not open enough files for the attack and its server side")
    context = ssl.create_default_context(cafile=CA) if secure else None
    server = PeerServer(billing_app(), max_connections=CAP,
                        tls=tls.server_context(CERT, KEY) if secure else None).start()
    try:
        attack = Reopening(server.server_address, CAP + 16, b"" if secure else HEAD, pace, drip=not secure)
        with attack:
            answered, asked = honest_ratio(lambda: honest(server.base_url, context), 30)
        assert attack.reopened > 0, "the server closed the stranger's connections to make room"
        # Before the rule, 0 of 30. The 95% target is bench/attacks.py's, measured at 1,024
        # connections from another process; here the attack, the honest client and the rest of
        # the suite share one process and two cores, so the bar allows their scheduling's noise.
        assert answered / asked >= 0.8, f"{answered} of {asked} honest requests answered"
    finally:
        server.stop()
