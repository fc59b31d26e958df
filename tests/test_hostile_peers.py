"""A peer that attacks the support agent through time and size: it drips, never ends,
floods interim replies, or sends a huge, deep or duplicate-key card or reply. Whatever it
does, the whole run ends within `--timeout` (plus a small margin) with one line saying
which peer failed at which stage, and for a delegation whether a retry is safe.

Each hostile peer is a raw socket server on 127.0.0.1, port 0: a script of (bytes, pause)
steps per request, ended by the test's stop event, so every loop is bounded."""
import json
import socket
import threading
import time

import pytest

import a2a_delegation as story
from conftest import cli
from core_waits import CoreWaits
from peers import billing
from peers.a2a import wire_essay
from peers.support.calling.config import AllowEntry
from transports.network import HttpTransport
from transports.printer import FramePrinter

TIMEOUT = 1.0
# What "ends within the timeout" allows for the run's own work (a card read, its error said). The time
# its thread waited for a core on a loaded machine is the machine's, not the run's: measured, and
# taken off what is held to the bound (core_waits.py), so the bound stays this on an idle one.
MARGIN = 0.75
OK_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"


def whole(body: bytes):
    yield OK_HEAD % len(body) + body, 0


def dripped(body: bytes, pause=0.2):  # a valid reply, one byte per pause: never in time
    for byte in OK_HEAD % len(body) + body:
        yield bytes([byte]), pause


def interim_flood(pause):  # "100 Continue" for ever, fast (a count bound) or slow (the clock)
    for _ in range(100_000):
        yield b"HTTP/1.1 100 Continue\r\n\r\n", pause


def endless_chunks(pause):  # a chunked body that never ends
    yield b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n", 0
    for _ in range(1_000_000):
        yield b"400\r\n" + b" " * 1024 + b"\r\n", pause


def huge(size=3 << 20):  # valid JSON, larger than any frame we read
    return json.dumps({"padding": "x" * size}).encode()


def deep(depth=100_000):
    return b"[" * depth + b"]" * depth


def duplicate_key_bomb(keys=60_000):  # one duplicate among many keys: quadratic checks stall
    return ("{" + ", ".join(f'"k{n}": 0' for n in range(keys)) + ', "k7": 1}').encode()


class HostilePeer:
    """Serves `card(base)` on GET and `reply(base)` on POST, each a script of steps."""

    def __init__(self, card, reply) -> None:
        self.card, self.reply, self.stop = card, reply, threading.Event()
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(0.1)
        self.base = f"http://127.0.0.1:{self.server.getsockname()[1]}"
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self) -> None:
        while not self.stop.is_set():
            try:
                connection, _ = self.server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self.serve, args=(connection,), daemon=True).start()

    def serve(self, connection: socket.socket) -> None:
        connection.settimeout(5)
        with connection:
            try:
                while not self.stop.is_set():
                    data = b""
                    while b"\r\n\r\n" not in data and len(data) < 65536:
                        chunk = connection.recv(65536)
                        if not chunk:
                            return
                        data += chunk
                    head, _, body = data.partition(b"\r\n\r\n")
                    length = int(dict(line.lower().split(b": ", 1) for line in head.split(b"\r\n")[1:])
                                 .get(b"content-length", b"0"))
                    while len(body) < length:
                        body += connection.recv(65536)
                    script = self.card if head.startswith(b"GET ") else self.reply
                    for data, pause in script(self.base):
                        if pause and self.stop.wait(pause):
                            return
                        connection.sendall(data)
            except OSError:
                return  # the client gave up on us, as it should

    def close(self) -> None:
        self.stop.set()
        self.server.close()


def valid_card(base: str) -> bytes:
    return json.dumps(wire_essay.card_to_wire(billing.billing_agent(base).card)).encode()


@pytest.fixture
def hostile_peer():
    peers = []

    def start(card, reply=lambda base: whole(b"{}")):
        peers.append(HostilePeer(card, reply))
        return peers[-1].base
    yield start
    for peer in peers:
        peer.close()


def delegate(base: str) -> tuple[story.Outcome, float]:
    """The run's outcome, and how long it took less the time its thread (this one) waited for a core."""
    transport = FramePrinter(HttpTransport(timeout=TIMEOUT))
    agent = story.SupportAgent(transport, [AllowEntry("billing-agent", f"{base}/a2a")],
                               {f"{base}/a2a": "t0k"}, lambda *args, **facts: None)
    with CoreWaits() as waits:
        started = time.monotonic()
        (outcome,) = story.run(agent, [f"{base}/.well-known/agent-card.json"])
        took = time.monotonic() - started
    return outcome, took - waits.seconds


def assert_one_line(outcome: story.Outcome, stage: str, took: float) -> None:
    assert took < TIMEOUT + MARGIN, f"{took:.2f} s: {outcome.error}"
    assert outcome.error is not None and outcome.error.startswith(stage), outcome.error
    assert "\n" not in outcome.error and len(outcome.error) < 500, outcome.error


ATTACKS = {
    "dripped": lambda base: dripped(valid_card(base)),
    "slow 1xx flood": lambda base: interim_flood(0.05),
    "fast 1xx flood": lambda base: interim_flood(0),
    "slow endless body": lambda base: endless_chunks(0.05),
    "fast endless body": lambda base: endless_chunks(0),
    "huge": lambda base: whole(huge()),
    "deep": lambda base: whole(deep()),
    "duplicate-key bomb": lambda base: whole(duplicate_key_bomb()),
}


@pytest.mark.parametrize("attack", ATTACKS, ids=list(ATTACKS))
def test_a_hostile_card_ends_the_run_within_the_timeout_before_any_trust_decision(hostile_peer, attack):
    outcome, took = delegate(hostile_peer(ATTACKS[attack]))
    assert_one_line(outcome, "card fetch failed: ", took)
    assert outcome.verdict is None, "nothing about the peer was decided from a card never read"


@pytest.mark.parametrize("attack", ATTACKS, ids=list(ATTACKS))
def test_a_hostile_reply_ends_the_delegation_within_the_timeout_and_says_if_a_retry_is_safe(hostile_peer, attack):
    reply = ATTACKS[attack] if attack != "dripped" else lambda base: dripped(b'{"jsonrpc": "2.0", "id": 1, "result": {}}')
    outcome, took = delegate(hostile_peer(lambda base: whole(valid_card(base)), reply))
    assert_one_line(outcome, "delegation failed: ", took)
    assert outcome.verdict is story.Verdict.TRUSTED and outcome.result is None
    assert "retry is NOT safe" in outcome.error, "the peer had the request: it may have acted"


def test_the_cli_against_a_dripping_peer_ends_in_about_the_timeout_with_one_line(hostile_peer):
    base = hostile_peer(ATTACKS["dripped"])
    with CoreWaits() as waits:
        started = time.monotonic()
        done = cli("--peer", base, "--timeout", "1", timeout=20)
        took = time.monotonic() - started
    assert took - waits.seconds < 1 + 2.0, f"{took:.2f} s, {waits.seconds:.2f} s of it waiting for a core"
    assert done.returncode == 2 and "Traceback" not in done.stderr  # 2: a card not fetched
    assert done.stderr.count("\n") == 1 and "card fetch failed" in done.stderr, done.stderr
