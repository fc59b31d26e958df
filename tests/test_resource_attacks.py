"""Resource attacks by a stranger and by a token holder: connections, streams, push delivery, holds.

Each finding is one test over real sockets on 127.0.0.1, seeded where it draws anything
and bounded in time. Honest service is measured as a ratio in one run (honest requests
answered within a second while the attack runs), never as a timed assertion: the goal
is 95%. The attacks are tests/attacks.py's; bench/attacks.py runs them heavier.
"""
import ipaddress
import json
import os
import select
import socket
import sqlite3
import subprocess
import sys
import threading
import time

import pytest

from attacks import (DrippingHeads, IdleSockets, KeptAlive, SlowBodies, answered_within, enough_files, honest_ratio,
                     rebinding_dns)
from conftest import FRAME, JSON_AUTH, ROOT, serving, start_serve
from peers import billing
from peers.a2a import wire_essay, wire_v03, wire_v10
from peers.a2a.model import PushConfig
from peers.app import PeerApp
from peers.changes import Changes
from peers.durable import open_store
from peers.addresses import public_address
from peers.push import Webhooks
from peers.restart import restarted
from peers.stamps import utc_now
from transports.jsonrpc import InvalidParams
from transports.network import HttpTransport

pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")
STRANGER_SIZE = 500  # idle connections, or dripping heads, one stranger opens


def served_billing(**server_options):
    return serving(PeerApp(billing.billing_agent(), wire_essay, token="t0k"), **server_options)


# 1. A stranger with no token holds every connection

@pytest.mark.parametrize("attack", ["idle", "dripping heads", "kept-alive", "slow bodies"])
def test_a_stranger_with_500_waiting_connections_leaves_honest_requests_answered(attack):
    if not enough_files(4 * STRANGER_SIZE):
        pytest.skip("this process may not open enough files for 500 connections and their server side")
    with served_billing() as server:
        request = b"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: x\r\n\r\n"
        stranger = {"idle": IdleSockets(server.server_address, STRANGER_SIZE),
                    "dripping heads": DrippingHeads(server.server_address, STRANGER_SIZE, every=0.25),
                    "kept-alive": KeptAlive(server.server_address, STRANGER_SIZE, request),
                    "slow bodies": SlowBodies(server.server_address, STRANGER_SIZE, every=0.25)}[attack]
        with stranger:
            answered, asked = honest_ratio(lambda: answered_within(server.base_url, FRAME, JSON_AUTH), 40)
            assert answered / asked >= 0.95, f"{answered} of {asked} honest requests answered under {attack}"
            assert server.connections >= STRANGER_SIZE, "the stranger's connections were all held, not dropped"


@pytest.mark.parametrize("framing", [b"Content-Length: 1048576\r\n\r\n", b"Transfer-Encoding: chunked\r\n\r\n100000\r\n"],
                         ids=["content-length", "chunked"])  # a chunked body is counted as decoded, not as it waits
def test_large_requests_held_at_once_are_bounded_in_bytes_as_well_as_in_connections(framing):
    from transports.server import _MOST_HELD
    with served_billing() as server:
        head = (b"POST /a2a HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer t0k\r\n"
                + framing)
        socks, refused = [], 0
        for _ in range(_MOST_HELD // (1 << 20) + 8):  # bodies of 1 MiB, each a byte short of whole
            sock = socket.create_connection(server.server_address, timeout=3)
            try:
                sock.sendall(head + b" " * ((1 << 20) - 1))
            except OSError:
                pass  # answered 503 and drained: the rest is not wanted
            socks.append(sock)
        # Read the answers as they come, not after a fixed pause a loaded machine can outrun:
        # until the first refusal (5 s at most), then 0.3 s more for any others.
        waiting, deadline = list(socks), time.monotonic() + 5
        while waiting and time.monotonic() < deadline:
            for sock in select.select(waiting, [], [], max(0.0, deadline - time.monotonic()))[0]:
                waiting.remove(sock)
                try:
                    answer = sock.recv(1000)
                except OSError:
                    continue
                refused += answer.startswith(b"HTTP/1.1 503") and b"too many large requests" in answer
                if refused == 1:
                    deadline = min(deadline, time.monotonic() + 0.3)
        for sock in socks:
            sock.close()
        assert 1 <= refused <= 8 + 2, f"{refused} refused: past {_MOST_HELD >> 20} MiB held, large requests wait"


# 2. A token holder holds every stream slot

def two_callers(peer, wire=wire_v10):
    """One peer, served to two callers with tokens of their own (each a PeerServer)."""
    return (serving(PeerApp(peer, wire, token="attacker")), serving(PeerApp(peer, wire, token="honest")))


def headers(token):
    return {"Content-Type": "application/json", "Authorization": f"Bearer {token}", "A2A-Version": "1.0"}


def call(base, token, method, params, request_id=1):
    transport = HttpTransport(timeout=5)
    try:
        frame = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode()
        return json.loads(transport.post(f"{base}/a2a", frame, headers(token)).body)
    finally:
        transport.close()


def refund(message_id, order, amount, **configuration):
    return {"message": {"messageId": message_id, "role": "ROLE_USER", "parts": [
        {"data": {"order_id": order, "amount": amount}}]}, **({"configuration": configuration} if configuration else {})}


def test_32_subscriptions_from_one_token_leave_honest_streamed_sends_their_slots():
    peer = billing.billing_agent()
    attacker_server, honest_server = two_callers(peer)
    with attacker_server as attacker, honest_server as honest:
        paused = [call(attacker.base_url, "attacker", "SendMessage", refund(f"a-{n}", f"ORD-A{n}", 6000))
                  ["result"]["task"]["id"] for n in range(16)]
        held, refused = [], 0
        for number in range(32):  # every slot, as the attacker would keep them (renewing at 29.5 s)
            transport = HttpTransport(timeout=5)
            frame = json.dumps({"jsonrpc": "2.0", "id": number, "method": "SubscribeToTask",
                                "params": {"id": paused[number % 16]}}).encode()
            reply = transport.stream(f"{attacker.base_url}/a2a", frame, headers("attacker"))
            if isinstance(reply.body, bytes):
                refused += json.loads(reply.body)["error"]["code"] == -32050
                transport.close()
            else:
                next(reply.body)
                held.append((transport, reply.body))
        try:
            assert (len(held), refused) == (16, 16), "one caller holds at most half of the slots"

            def streamed_send(counter=iter(range(1000))):
                number, started = next(counter), time.monotonic()
                transport = HttpTransport(timeout=1)
                try:
                    frame = json.dumps({"jsonrpc": "2.0", "id": number, "method": "SendStreamingMessage",
                                        "params": refund(f"h-{number}", f"ORD-H{number}", 5)}).encode()
                    body = b"".join(transport.stream(f"{honest.base_url}/a2a", frame, headers("honest")).body)
                    return b"TASK_STATE_COMPLETED" in body and time.monotonic() - started <= 1
                except Exception:  # noqa: BLE001 - refused or too slow: not answered
                    return False
                finally:
                    transport.close()
            answered, asked = honest_ratio(streamed_send, 40)
            assert answered / asked >= 0.95, f"{answered} of {asked} honest streamed sends answered"
        finally:
            for transport, body in held:
                body.close()
                transport.close()


# 3. Push delivery blocked and dropped by other tasks' webhooks

class HangingWebhooks:
    """Listening sockets that never accept: a delivery connects (the backlog takes it) and
    then waits for an answer that never comes, 10 s an attempt (peers/push.py)."""

    def __init__(self, count):
        self.socks = [socket.create_server(("127.0.0.1", 0), backlog=1024) for _ in range(count)]
        self.urls = [f"http://127.0.0.1:{sock.getsockname()[1]}/hook" for sock in self.socks]

    def close(self):
        for sock in self.socks:
            sock.close()


def test_400_hanging_webhooks_of_other_tasks_neither_delay_nor_drop_an_honest_tasks_pushes():
    from test_push import Receiver
    peer = billing.billing_agent(allow_private_webhooks=True)
    hanging = HangingWebhooks(8)
    attacker_server, honest_server = two_callers(peer)
    try:
        with attacker_server as attacker, honest_server as honest, Receiver() as hook:
            refused = 0
            for number in range(400):  # each a refund whose webhook hangs: three pushes each
                answer = call(attacker.base_url, "attacker", "SendMessage", refund(
                    f"a-{number}", f"ORD-A{number}", 5, taskPushNotificationConfig={"url": hanging.urls[number % 8]}))
                refused += "error" in answer
            assert refused == 300, "one caller keeps at most 100 webhooks: the rest are refused, nothing done"

            def pushed_within_a_second(counter=iter(range(1000))):
                number, before = next(counter), len(hook.requests)
                started = time.monotonic()
                call(honest.base_url, "honest", "SendMessage", refund(
                    f"h-{number}", f"ORD-H{number}", 5, taskPushNotificationConfig={"url": hook.url}))
                hook.wait_for(before + 3, seconds=1)  # submitted, working, completed
                return len(hook.requests) >= before + 3 and time.monotonic() - started <= 1
            answered, asked = honest_ratio(pushed_within_a_second, 20)
            assert answered / asked >= 0.95, f"{answered} of {asked} honest tasks had their pushes within 1 s"
            assert not peer.webhooks.dropped[hook.url.rsplit("/", 1)[0]], "none of the honest task's was dropped"
    finally:
        hanging.close()
        with peer.webhooks.lock:  # the test is over: what still waits for the hanging ones is let go
            peer.webhooks.waiting.clear()


def test_a_destinations_overflow_is_counted_and_said_for_that_destination_only():
    lines, hanging = [], HangingWebhooks(1)
    webhooks = Webhooks(Changes(), allow_private=True, log=lines.append)
    task = billing.billing_agent().send_message(billing_refund_message(), owner="o")
    try:
        # 0.3's pushes are the whole task each time: 150 changes told, 150 deliveries (1.0's would be one:
        # the task, then what changed, and no state did)
        webhooks.set("o", PushConfig(task.id, "c", hanging.urls[0] + "?key=sekrit"), wire_v03)
        for change in range(150):
            webhooks.tell(task._replace(metadata={"change": change}), "o")
        destination = hanging.urls[0].rsplit("/", 1)[0]
        dropped = webhooks.dropped[destination]
        assert list(webhooks.dropped) == [destination] and dropped in (49, 50), "100 wait (one may be on its way)"
        assert sum("dropped" in line for line in lines) == dropped
        assert all("sekrit" not in line and destination in line for line in lines), "the query is never logged"
    finally:
        hanging.close()
        with webhooks.lock:
            webhooks.waiting.clear()



def test_a_caller_naming_ever_new_destinations_while_its_deliveries_wait_keeps_no_more_drop_counts():
    """Each destination a push was dropped for was counted for ever: a caller whose 200 deliveries wait
    (two hanging webhooks) and who sets, is told at and deletes a webhook at a new origin each time adds
    one that never went. Kept: the counts of the latest destinations, the one dropping now among them."""
    lines, hanging = [], HangingWebhooks(2)
    webhooks = Webhooks(Changes(), allow_private=True, log=lines.append)
    task = billing.billing_agent().send_message(billing_refund_message(), owner="o")
    try:
        for number, url in enumerate(hanging.urls):  # 0.3: the whole task each change, a delivery each
            webhooks.set("o", PushConfig(task.id, f"h{number}", url), wire_v03)
        for change in range(150):
            webhooks.tell(task._replace(metadata={"change": change}), "o")
        deadline = time.monotonic() + 5  # each hanging webhook's thread has taken its first (then waits 10 s) ...
        while time.monotonic() < deadline and (len(webhooks.sending) < 2 or taken(webhooks) < 2):
            time.sleep(0.01)
        webhooks.tell(task._replace(metadata={"change": "more"}), "o")  # ... and its place is filled again: 200 wait
        assert webhooks._waiting_for("o") == 200
        for number in range(3000):  # seeded by its number: an origin of its own each time
            config = PushConfig(task.id, "c", f"http://127.0.0.{1 + number % 250}:{1024 + number}/hook")
            webhooks.set("o", config, wire_v03)
            webhooks.tell(task, "o", only=config)
            webhooks.delete("o", task.id, "c")
        assert webhooks.dropped[f"http://127.0.0.{1 + 2999 % 250}:{1024 + 2999}"] == 1, "the latest is counted"
        assert len(webhooks.dropped) <= 1000, f"{len(webhooks.dropped)} destinations' drop counts kept"
    finally:
        hanging.close()
        with webhooks.lock:
            webhooks.waiting.clear()


def taken(webhooks):
    """How many of its caller's 200 waiting deliveries the threads have taken to send (o's, the one caller)."""
    with webhooks.lock:
        return 200 - webhooks._waiting_for("o")


def billing_refund_message():
    from peers.a2a.model import Message, Part
    return Message("m-1", "user", (Part(data={"order_id": "ORD-1", "amount": 6000}),),
                   metadata={"skillId": "process_refund"})


# 4. The webhook guard and IPv6 embeddings

EMBEDDED = ["[::127.0.0.1]", "[::a9fe:a9fe]", "[::ffff:0:7f00:1]", "[64:ff9b::7f00:1]", "[64:ff9b::a9fe:a9fe]",
            "[2002:7f00:1::]", "[2002:a9fe:a9fe::]", "224.0.0.1", "[::ffff:7f00:1]", "[64:ff9b:1::a9fe:a9fe]",
            "[2001:0:4136:e378:8000:63bf:80ff:fffe]", "[ff02::1]", "240.0.0.1", "0.0.0.0", "[::]"]


def test_a_webhook_at_a_private_address_inside_an_ipv6_one_or_multicast_is_refused_over_the_wire():
    with serving(PeerApp(billing.billing_agent(), wire_v10, token="t0k")) as server:
        task = call(server.base_url, "t0k", "SendMessage", refund("m-1", "ORD-1", 6000))["result"]["task"]
        answers = {host: call(server.base_url, "t0k", "CreateTaskPushNotificationConfig",
                              {"taskId": task["id"], "id": f"c{n}", "url": f"http://{host}:8080/hook"})
                   for n, host in enumerate(EMBEDDED)}
    accepted = [host for host, answer in answers.items() if "error" not in answer]
    assert accepted == [], f"accepted: {accepted}"
    assert all(answer["error"]["code"] == -32602 for answer in answers.values())


@pytest.mark.parametrize("address, public", [
    ("2002:808:808::1", True),  # 6to4 holding 8.8.8.8: private to 3.11.2's and 3.13.0's ipaddress
    ("2002:7f00:1::1", False), ("2002:a00:1::1", False),  # 6to4 holding 127.0.0.1, 10.0.0.1
    ("100.64.0.1", False), ("192.0.0.9", False), ("198.18.0.1", False), ("192.88.99.1", False),
    ("2001:db8::1", False), ("3fff::1", False), ("5f00::1", False), ("fd00::1", False), ("fec0::1", False),
    ("64:ff9b:1::a00:1", False), ("::ffff:10.0.0.1", False), ("::", False), ("255.255.255.255", False),
    ("1.1.1.1", True), ("2606:4700::1111", True)])
def test_a_webhook_address_is_judged_by_our_table_the_same_on_every_python(address, public):
    from peers.addresses import is_public
    assert is_public(ipaddress.ip_address(address)) is public


def test_public_addresses_inside_ipv6_are_still_accepted():
    from peers.addresses import is_public
    for address in ["8.8.8.8", "2606:4700::1111", "64:ff9b::808:808", "2002:808:808::1", "::ffff:8.8.8.8"]:
        assert is_public(ipaddress.ip_address(address)), address
    assert public_address("http://[64:ff9b::808:808]:8080/hook", False, numeric_only=True) == ("64:ff9b::808:808", 8080)
    with pytest.raises(InvalidParams, match="multicast"):
        public_address("http://224.0.0.1/hook", False)


# 5. https webhooks resolve the name again at connect time

def test_an_https_delivery_connects_to_the_address_checked_with_the_name_kept_for_tls(monkeypatch):
    checked = socket.create_server(("127.0.0.1", 0))
    port = checked.getsockname()[1]
    try:
        rebound = socket.create_server(("127.0.0.2", port))
    except OSError:
        checked.close()
        pytest.skip("127.0.0.2 cannot be bound here")
    monkeypatch.setattr(socket, "getaddrinfo", rebinding_dns(socket.getaddrinfo))
    seen = {"checked": b"", "rebound": b""}

    def listen(name, sock):
        sock.settimeout(4)
        try:
            conn, _ = sock.accept()
            conn.settimeout(2)
            seen[name] = conn.recv(4096)
            conn.close()
        except OSError:
            pass
    listeners = [threading.Thread(target=listen, args=item, daemon=True)
                 for item in (("checked", checked), ("rebound", rebound))]
    for listener in listeners:
        listener.start()
    webhooks = Webhooks(Changes(), allow_private=True)
    task = billing.billing_agent().send_message(billing_refund_message(), owner="o")
    try:
        webhooks.set("o", PushConfig(task.id, "c", f"https://hook.rebind.test:{port}/hook"), wire_v10)
        webhooks.tell(task, "o")
        listeners[0].join(5)
        assert seen["checked"][:1] == b"\x16", "a TLS ClientHello reached the address checked"
        assert b"hook.rebind.test" in seen["checked"], "with the name kept for SNI"
        assert seen["rebound"] == b"", "nothing reached the address a second DNS answer named"
    finally:
        checked.close()
        rebound.close()
        with webhooks.lock:
            webhooks.waiting.clear()


# 6. Paused tasks hold orders with no end

def test_a_caller_holds_at_most_its_share_of_orders_against_itself_until_its_stated_time():
    from peers.pause import MAX_PAUSED_PER_CALLER
    peer = billing.billing_agent(clock=utc_now, hold_seconds=1.5)
    attacker_server, honest_server = two_callers(peer)
    with attacker_server as attacker, honest_server as honest:
        held = [call(attacker.base_url, "attacker", "SendMessage", refund(f"a-{n}", f"ORD-{n}", 999_999))
                ["result"]["task"] for n in range(30)]
        states = [task["status"]["state"] for task in held]
        assert states.count("TASK_STATE_INPUT_REQUIRED") == MAX_PAUSED_PER_CALLER
        assert states.count("TASK_STATE_FAILED") == 30 - MAX_PAUSED_PER_CALLER, "over the share: nothing held"
        until = held[0]["status"]["message"]["parts"][1]["data"]["holdsUntil"]
        assert until.endswith("Z") and until > held[0]["status"]["timestamp"], "the hold's end is stated"

        def honest_refund(order, attempt):
            task = call(honest.base_url, "honest", "SendMessage", refund(f"h-{order}-{attempt}", f"ORD-{order}", 25))
            return task["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        during = sum(honest_refund(n, 1) for n in [*range(10), *range(20, 30)])
        assert during == 20, "a hold binds its own caller only: another's refunds go ahead (issue 30)"

        def own_refunds(attempt):  # the holder's own, different request for an order it holds (10 to 19)
            return sum(call(attacker.base_url, "attacker", "SendMessage", refund(f"a-{n}-{attempt}", f"ORD-{n}", 5))
                       ["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED" for n in range(10, 20))
        assert own_refunds(1) == 0, "against its own caller the hold stands until its stated time"
        time.sleep(1.6)  # past the stated time
        assert own_refunds(2) == 10, "once each hold's stated time passed, its caller may ask for the order again"


def test_a_holds_stated_end_is_kept_across_a_restart_not_renewed(tmp_path):
    path = str(tmp_path / "billing.db")
    store, ledger = open_store(path)
    peer = billing.billing_agent(store=store, ledger=ledger, clock=utc_now, hold_seconds=600)
    task = peer.send_message(billing_refund_message(), owner="attacker")
    until = task.status_data["holdsUntil"]
    store.file.close()
    time.sleep(0.01)
    store, ledger = open_store(path)
    again = billing.billing_agent(store=store, ledger=ledger, clock=utc_now, hold_seconds=600)
    restarted(again, path)
    after = again.store.tasks[task.id]
    assert after.state.value == task.state.value and after.status_data["holdsUntil"] == until
    store.file.close()


# 7. Secrets printed: the serve banner, a webhook's query

def test_the_serve_banner_never_prints_a_token_it_was_given():
    process, lines = start_serve("billing-agent", "--port", "0", env={"A2A_SERVE_TOKEN": "sekrit-token-42"})
    process.stop()
    banner = "".join(lines)
    assert "Ctrl-C" in banner and "sekrit-token-42" not in banner
    assert "bearer token from $A2A_SERVE_TOKEN" in banner


# 8. A read-only store file passes start-up

def test_a_store_file_that_cannot_be_written_is_refused_at_start_with_one_line_and_exit_2(tmp_path):
    path = tmp_path / "billing.db"
    store, _ = open_store(str(path))
    store.file.close()
    path.chmod(0o444)
    frozen = False
    if os.geteuid() == 0:  # root writes a read-only file all the same: make it immutable instead
        frozen = subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode == 0
        if not frozen:
            pytest.skip("as root, and chattr +i is not available: no file here cannot be written")
    try:
        done = subprocess.run([sys.executable, str(ROOT / "a2a_delegation.py"), "serve", "billing-agent",
                               "--port", "0", "--store", str(path)], capture_output=True, text=True, timeout=20,
                              env=dict(os.environ, A2A_SERVE_TOKEN="tok"))
    finally:
        if frozen:
            subprocess.run(["chattr", "-i", str(path)], capture_output=True)
    said = (done.stdout + done.stderr).strip().splitlines()
    assert done.returncode == 2, said
    assert said == [f"error: {path}: cannot be used as the store (it cannot be opened for writing)"]
    assert sqlite3.connect(path).execute("SELECT COUNT(*) FROM tasks").fetchone()[0] == 0
