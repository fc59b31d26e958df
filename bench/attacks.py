#!/usr/bin/env python3
"""Issues 23 and 30's resource attacks, heavier than the tests run them, and honest service under each.

For each finding, one line: the attack, and the honest-service ratio (honest requests
answered within 1 s while it runs) or what was refused. Issue 30's lines (30.5 to 30.9,
30.14) say it as served with the attack over served without it, both measured in one run. Every
attack runs on 127.0.0.1, port 0, from this process, bounded in time; its sockets are
tests/attacks.py's. Run it on any checkout (`--root`, default this one) to compare before
and after, all of it or some parts (`--only cap,page`):
    python3 bench/attacks.py [--root PATH] [--scale 1] [--only PART,...]
`--scale 4` runs the stranger's attacks at 2,000 connections instead of 500.
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent.parent
FRAME = (b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/send", '
         b'"params": {"skill": "process_refund", "input": {"order_id": "ORD-1", "amount": 5}}}')
EMBEDDED = ["[::127.0.0.1]", "[::a9fe:a9fe]", "[::ffff:0:7f00:1]", "[64:ff9b::7f00:1]", "[64:ff9b::a9fe:a9fe]",
            "[2002:7f00:1::]", "[2002:a9fe:a9fe::]", "224.0.0.1"]


def headers(token: str, version: str | None = "1.0") -> dict[str, str]:
    return {"Content-Type": "application/json", "Authorization": f"Bearer {token}",
            **({"A2A-Version": version} if version else {})}


def call(base: str, token: str, method: str, params: dict, timeout: float = 5) -> dict:
    from transports.network import HttpTransport
    transport = HttpTransport(timeout=timeout)
    try:
        frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
        return json.loads(transport.post(f"{base}/a2a", frame, headers(token)).body)
    finally:
        transport.close()


def refund(message_id: str, order: str, amount: float, **configuration: object) -> dict:
    return {"message": {"messageId": message_id, "role": "ROLE_USER", "parts": [
        {"data": {"order_id": order, "amount": amount}}]}, **({"configuration": configuration} if configuration else {})}


def answered_within_a_second(send: Callable[[Any], Any], context: Any = None) -> bool:
    """Whether one honest request, `send(transport)` on a fresh connection, got 200 within 1 s."""
    from transports.network import HttpTransport
    transport, started = HttpTransport(timeout=1, tls=context), time.monotonic()
    try:
        return send(transport).status == 200 and time.monotonic() - started <= 1
    except Exception:  # noqa: BLE001 - refused, reset, timed out: not served
        return False
    finally:
        transport.close()


def honest_pushes(base: str, hook: Any) -> Callable[[], bool]:
    """Each call: one honest refund asking for pushes to `hook` (a test_push Receiver), and
    whether its three pushes arrived within 1 s."""
    numbers = iter(range(100_000))

    def pushed() -> bool:
        number, before, started = next(numbers), len(hook.requests), time.monotonic()
        call(base, "honest", "SendMessage", refund(f"h-{number}", f"ORD-H{number}", 5,
                                                   taskPushNotificationConfig={"url": hook.url}))
        hook.wait_for(before + 3, seconds=1)
        return len(hook.requests) >= before + 3 and time.monotonic() - started <= 1
    return pushed


def served(app):
    from transports.server import PeerServer
    return PeerServer(app, "127.0.0.1", 0).start()


def stranger(scale: int) -> list[str]:
    from attacks import DrippingHeads, IdleSockets, KeptAlive, SlowBodies, answered_within, enough_files, honest_ratio
    from peers import billing
    from peers.a2a import wire_essay
    from peers.app import PeerApp
    size = 500 * scale
    enough_files(4 * size + 200)
    lines = []
    card = b"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: x\r\n\r\n"
    for name, make in [("idle", lambda address: IdleSockets(address, size)),
                       ("dripping heads", lambda address: DrippingHeads(address, size)),
                       ("kept-alive after one request", lambda address: KeptAlive(address, size, card)),
                       ("slow bodies", lambda address: SlowBodies(address, size))]:
        server = served(PeerApp(billing.billing_agent(), wire_essay, token="t0k"))
        try:
            with make(server.server_address) as attack:
                time.sleep(1.0)
                answered, asked = honest_ratio(lambda: answered_within(server.base_url, FRAME, headers("t0k", None)), 100)
                reopened = attack.reopened
        finally:
            server.stop()
        lines.append(f"1. {size} {name}: {answered}/{asked} honest answered within 1 s "
                     f"({reopened} of the stranger's sockets closed by the server and reopened)")
    return lines


def honest_share(ask, count: int, attack=None) -> tuple[int, int, str]:
    """Honest requests answered within 1 s, without the attack and then with it, in one
    run: (served with, served without, the ratio as a figure)."""
    from attacks import honest_ratio
    without = honest_ratio(ask, count)[0]
    if attack is None:
        return without, without, "-"
    with attack:
        time.sleep(1.0)
        served_with = honest_ratio(ask, count)[0]
    return served_with, without, f"{served_with / max(without, 1):.2f}"


def over_the_cap(cap: int = 1024, count: int = 120) -> list[str]:
    """Issue 30 item 5: a stranger holds the cap's worth of connections that make no
    progress, reopening each the server closes, paced at 200 a second or all at once."""
    import ssl
    from attacks import HEAD, Reopening, enough_files
    from peers import billing
    from peers.a2a import wire_essay
    from peers.app import PeerApp
    from transports import tls
    from transports.server import PeerServer
    enough_files(4 * cap + 400)
    keys = HERE / "peers" / "keys"
    context = ssl.create_default_context(cafile=str(keys / "demo-ca.DEMO-CERT.pem"))
    lines = []
    for secure, what in ((False, "dripping request heads"), (True, "TLS handshakes sending nothing")):
        for pace in (200, None):
            server = PeerServer(PeerApp(billing.billing_agent(), wire_essay, token="t0k"), max_connections=cap,
                                tls=tls.server_context(str(keys / "billing-agent.DEMO-TLS-CERT.pem"), str(
                                    keys / "billing-agent.DEMO-TLS-KEY.pem")) if secure else None).start()

            def ask() -> bool:
                return answered_within_a_second(lambda transport: transport.post(
                    f"{server.base_url}/a2a", FRAME, headers("t0k", None)), context)
            try:
                attack = Reopening(server.server_address, cap, b"" if secure else HEAD, pace, drip=not secure)
                served_with, without, ratio = honest_share(ask, count, attack)
                reopened = attack.reopened
            finally:
                server.stop()
            lines.append(f"30.5 {cap} {what}, reopened {'at 200/s' if pace else 'at once'}: {served_with}/{count} "
                         f"honest served with, {without}/{count} without: {ratio} ({reopened} reopened)")
    return lines


def live_page(count: int = 100) -> list[str]:
    """Issue 30 item 6: the live page's server, the cap's worth of dripping heads and 8 more,
    opened again as the server closes them, paced at 200 a second or all at once."""
    from attacks import HEAD, Reopening, enough_files
    from peers.support.web import server as web
    folder = Path(tempfile.mkdtemp())
    (folder / "allowlist.json").write_text((HERE / "allowlist.json").read_text())
    size = web.MAX_CONNECTIONS + 8
    enough_files(4 * size + 400)
    lines = []
    for pace in (200, None):
        server, app, url = web.listening(0, str(folder / "allowlist.json"), lambda argv, out: 0)
        base, token = url.split("/?token=")

        def ask() -> bool:
            return answered_within_a_second(lambda transport: transport.get(f"{base}/lessons",
                                                                            {"X-Workbench-Token": token}))
        try:
            attack = Reopening(server.server_address, size, HEAD, pace)
            served_with, without, ratio = honest_share(ask, count, attack)
        finally:
            web.close(server, app)
        lines.append(f"30.6 live page, {size} dripping heads (cap {web.MAX_CONNECTIONS}), reopened "
                     f"{'at 200/s' if pace else 'at once'}: {served_with}/{count} honest served with, "
                     f"{without}/{count} without: {ratio} ({attack.reopened} reopened)")
    return lines


def task_share() -> str:
    """Issue 30 item 7: one caller sends more refunds than the store keeps for everyone; how
    many of another caller's tasks can it still read (GetTask) within 1 s, before and after."""
    from peers import billing
    from peers.a2a import wire_v10
    from peers.app import PeerApp
    peer = billing.billing_agent()
    alice, bob = served(PeerApp(peer, wire_v10, token="alice")), served(PeerApp(peer, wire_v10, token="bob"))
    try:
        bobs = [call(bob.base_url, "bob", "SendMessage", refund(f"b-{n}", f"ORD-B{n}", 5))["result"]["task"]["id"]
                for n in range(5)]

        def found() -> int:
            return sum("result" in call(bob.base_url, "bob", "GetTask", {"id": task_id}, timeout=1) for task_id in bobs)
        without, started = found(), time.monotonic()
        for n in range(1050):
            call(alice.base_url, "alice", "SendMessage", refund(f"a-{n}", f"ORD-A{n}", 5))
        seconds, served_with = time.monotonic() - started, found()
    finally:
        alice.stop()
        bob.stop()
    return (f"30.7 1,050 refunds by one caller in {seconds:.1f} s: {served_with}/5 of another caller's tasks found "
            f"with, {without}/5 without: {served_with / max(without, 1):.2f}")


def cycled_webhooks(rounds: int = 4, per_round: int = 100, count: int = 20) -> str:
    """Issue 30 item 8: a caller sends refunds whose webhooks never answer, 100 new
    destinations a round, deleting each config to stay within its share; another caller's
    tasks have all 3 pushes within 1 s? Served with the attack over served without."""
    from attacks import enough_files
    from peers import billing
    from peers.a2a import wire_v10
    from peers.app import PeerApp
    sys.path.insert(1, str(HERE / "tests"))
    from test_push import Receiver
    enough_files(rounds * per_round + 600)
    peer = billing.billing_agent(allow_private_webhooks=True)
    hanging = [socket.create_server(("127.0.0.1", 0), backlog=64) for _ in range(rounds * per_round)]
    attacker, honest = served(PeerApp(peer, wire_v10, token="attacker")), served(PeerApp(peer, wire_v10, token="honest"))
    try:
        with Receiver() as hook:
            pushed = honest_pushes(honest.base_url, hook)
            without = sum(pushed() for _ in range(count))
            for round_number in range(rounds):
                for n in range(per_round):
                    port = hanging[round_number * per_round + n].getsockname()[1]
                    answer = call(attacker.base_url, "attacker", "SendMessage", refund(
                        f"a-{round_number}-{n}", f"ORD-A{round_number}-{n}", 5,
                        taskPushNotificationConfig={"url": f"http://127.0.0.1:{port}/hook"}))
                    if "result" in answer:
                        task_id = answer["result"]["task"]["id"]
                        call(attacker.base_url, "attacker", "DeleteTaskPushNotificationConfig",
                             {"taskId": task_id, "id": task_id})
            served_with = sum(pushed() for _ in range(count))
    finally:
        for sock in hanging:
            sock.close()
        attacker.stop()
        honest.stop()
    return (f"30.8 {rounds} rounds of {per_round} new hanging webhook destinations, configs deleted: {served_with}/"
            f"{count} honest tasks had all 3 pushes within 1 s with, {without}/{count} without: "
            f"{served_with / max(without, 1):.2f}")


def opened_traces(root: Path, opens: int = 150) -> str:
    """Issue 30 item 14: one trace opened in the live page again and again; how much memory
    the page's server holds after, and how many of them it keeps."""
    import gc
    from peers.support.web import server as web
    from transports.network import HttpTransport
    folder = Path(tempfile.mkdtemp())
    (folder / "allowlist.json").write_text((HERE / "allowlist.json").read_text())
    subprocess.run([sys.executable, str(root / "a2a_delegation.py"), "--scenario", "approval", "--verbose", "--trace",
                    str(folder / "run.jsonl")], capture_output=True, timeout=120,
                   env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    text = (folder / "run.jsonl").read_text()

    def resident() -> float:  # MB of this process in memory now (Linux)
        gc.collect()
        return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6
    server, app, url = web.listening(0, str(folder / "allowlist.json"), lambda argv, out: 0)
    base, token = url.split("/?token=")
    transport = HttpTransport(timeout=30)
    try:
        before = resident()
        body = json.dumps({"text": text}).encode()
        for _ in range(opens):
            transport.post(f"{base}/traces", body, {"Content-Type": "application/json", "X-Workbench-Token": token,
                                                    "Origin": base})
        after, kept = resident(), len(app.runs.by_id)
    finally:
        transport.close()
        web.close(server, app)
    return (f"30.14 {opens} opens of a {len(text) / 1e3:.0f} kB trace in the live page: {kept} kept, memory "
            f"{before:.0f} MB to {after:.0f} MB")


def subscriptions() -> str:
    from attacks import honest_ratio
    from peers import billing
    from peers.a2a import wire_v10
    from peers.app import PeerApp
    from transports.network import HttpTransport
    peer = billing.billing_agent()
    attacker, honest = served(PeerApp(peer, wire_v10, token="attacker")), served(PeerApp(peer, wire_v10, token="honest"))
    held = []
    try:
        paused = [call(attacker.base_url, "attacker", "SendMessage", refund(f"a-{n}", f"ORD-A{n}", 6000))
                  ["result"]["task"]["id"] for n in range(16)]
        for number in range(32):
            transport = HttpTransport(timeout=5)
            frame = json.dumps({"jsonrpc": "2.0", "id": number, "method": "SubscribeToTask",
                                "params": {"id": paused[number % 16]}})
            reply = transport.stream(f"{attacker.base_url}/a2a", frame.encode(), headers("attacker"))
            if isinstance(reply.body, bytes):
                transport.close()
            else:
                next(reply.body)
                held.append((transport, reply.body))
        numbers = iter(range(1000))

        def streamed() -> bool:
            number, started, transport = next(numbers), time.monotonic(), HttpTransport(timeout=1)
            try:
                frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
                                    "params": refund(f"h-{number}", f"ORD-H{number}", 5)}).encode()
                body = b"".join(transport.stream(f"{honest.base_url}/a2a", frame, headers("honest")).body)
                return b"TASK_STATE_COMPLETED" in body and time.monotonic() - started <= 1
            except Exception:  # noqa: BLE001
                return False
            finally:
                transport.close()
        answered, asked = honest_ratio(streamed, 65)
    finally:
        for transport, body in held:
            body.close()
            transport.close()
        attacker.stop()
        honest.stop()
    return f"2. 32 subscriptions from one token ({len(held)} held): {answered}/{asked} honest streamed sends answered"


def hanging_webhooks() -> list[str]:
    from attacks import honest_ratio
    from peers import billing
    from peers.a2a import wire_v10
    from peers.app import PeerApp
    sys.path.insert(1, str(HERE / "tests"))
    from test_push import Receiver
    peer = billing.billing_agent(allow_private_webhooks=True)
    hanging = [socket.create_server(("127.0.0.1", 0), backlog=1024) for _ in range(8)]
    urls = [f"http://127.0.0.1:{sock.getsockname()[1]}/hook" for sock in hanging]
    attacker, honest = served(PeerApp(peer, wire_v10, token="attacker")), served(PeerApp(peer, wire_v10, token="honest"))
    try:
        with Receiver() as hook:
            refused = sum("error" in call(attacker.base_url, "attacker", "SendMessage", refund(
                f"a-{n}", f"ORD-A{n}", 5, taskPushNotificationConfig={"url": urls[n % 8]})) for n in range(400))
            pushed = honest_pushes(honest.base_url, hook)
            answered, asked = honest_ratio(pushed, 40)
            dropped = (dict(peer.webhooks.dropped) or "none") if hasattr(peer.webhooks, "dropped") else "not counted"
    finally:
        for sock in hanging:
            sock.close()
        attacker.stop()
        honest.stop()
    return [f"3. 400 refunds whose webhooks hang ({400 - refused} accepted, {refused} refused): {answered}/{asked} "
            f"honest tasks had all 3 pushes within 1 s; dropped per destination: {dropped}"]


def guard() -> str:
    from peers.addresses import public_address
    from transports.jsonrpc import InvalidParams
    accepted = []
    for host in EMBEDDED:
        try:
            public_address(f"http://{host}:8080/hook", False, numeric_only=True)
            accepted.append(host)
        except InvalidParams:
            pass
    return f"4. webhook guard: {len(accepted)} of {len(EMBEDDED)} private spellings accepted {accepted or ''}"


def rebinding() -> str:
    from attacks import rebinding_dns
    from peers import billing
    from peers.a2a.model import Message, Part, PushConfig
    from peers.changes import Changes
    from peers.push import Webhooks
    checked = socket.create_server(("127.0.0.1", 0))
    port = checked.getsockname()[1]
    rebound = socket.create_server(("127.0.0.2", port))
    reached = {"checked": 0, "rebound": 0}

    def listen(name, sock):
        sock.settimeout(1)
        ends = time.monotonic() + 12
        while time.monotonic() < ends:
            try:
                conn, _ = sock.accept()
            except OSError:
                continue
            reached[name] += conn.recv(1)[:1] == b"\x16"  # a TLS ClientHello
            conn.close()
    real, socket.getaddrinfo = socket.getaddrinfo, rebinding_dns(socket.getaddrinfo)
    threads = [threading.Thread(target=listen, args=item, daemon=True)
               for item in (("checked", checked), ("rebound", rebound))]
    for thread in threads:
        thread.start()
    try:
        webhooks = Webhooks(Changes(), allow_private=True)
        message = Message("m-1", "user", (Part(data={"order_id": "ORD-1", "amount": 6000}),),
                          metadata={"skillId": "process_refund"})
        task = billing.billing_agent().send_message(message, owner="o")
        from peers.a2a import wire_v10
        webhooks.set("o", PushConfig(task.id, "c", f"https://hook.rebind.test:{port}/hook"), wire_v10)
        webhooks.tell(task, "o")
        for thread in threads:
            thread.join()
    finally:
        socket.getaddrinfo = real
        checked.close()
        rebound.close()
    return (f"5. https webhook, DNS rebound after the check: {reached['rebound']} ClientHellos reached the rebound "
            f"address, {reached['checked']} the checked one")


def holds() -> list[str]:
    from peers import billing
    from peers.a2a import wire_v10
    from peers.app import PeerApp
    from peers.stamps import utc_now
    try:
        peer = billing.billing_agent(clock=utc_now, hold_seconds=2.0)
        stated = "2 s"
    except TypeError:  # before: no hold ends
        peer, stated = billing.billing_agent(clock=utc_now), None
    attacker, honest = served(PeerApp(peer, wire_v10, token="attacker")), served(PeerApp(peer, wire_v10, token="honest"))
    try:
        states = [call(attacker.base_url, "attacker", "SendMessage", refund(f"a-{n}", f"ORD-{n}", 999_999))
                  ["result"]["task"]["status"]["state"] for n in range(300)]
        paused = sum(state == "TASK_STATE_INPUT_REQUIRED" for state in states)

        def honest_refunds(attempt: int, orders: str = "ORD-") -> int:
            return sum(call(honest.base_url, "honest", "SendMessage", refund(f"h-{n}-{attempt}", f"{orders}{n}", 25))
                       ["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED" for n in range(50))
        without = honest_refunds(0, "ORD-FREE-")  # orders nobody holds: served without the attack
        during = honest_refunds(1)
        time.sleep(2.2)
        after = honest_refunds(2)
    finally:
        attacker.stop()
        honest.stop()
    return [f"6 and 30.9: 300 paused $999,999 refunds from one token ({paused} paused, {300 - paused} refused): "
            f"{during}/50 honest $25 refunds of those orders done at once with, {without}/50 without: "
            f"{during / max(without, 1):.2f}; {after}/50 "
            f"{'after the stated hold (' + stated + ')' if stated else '2.2 s later (no hold ends)'}"]


def banner(root: Path) -> str:
    process = subprocess.Popen([sys.executable, str(root / "a2a_delegation.py"), "serve", "billing-agent", "--port", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                               env=dict(os.environ, A2A_SERVE_TOKEN="sekrit-42", PYTHONDONTWRITEBYTECODE="1"))
    lines, ends = [], time.monotonic() + 15
    while time.monotonic() < ends and not any("Ctrl-C" in line for line in lines):
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line)
    process.terminate()
    process.communicate(timeout=10)
    shown = [line.strip() for line in lines if "token" in line]
    return f"7. serve banner with $A2A_SERVE_TOKEN: token printed: {'sekrit-42' in ''.join(lines)} ({shown})"


def read_only_store(root: Path) -> str:
    folder = Path(tempfile.mkdtemp())
    path = folder / "billing.db"
    subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(root)!r}); from peers.durable import "
                    f"open_store; open_store({str(path)!r})[0].file.close()"], check=True,
                   env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    path.chmod(0o444)
    frozen = os.geteuid() == 0 and subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode == 0
    try:
        process = subprocess.Popen([sys.executable, str(root / "a2a_delegation.py"), "serve", "billing-agent", "--port",
                                    "0", "--store", str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   env=dict(os.environ, A2A_SERVE_TOKEN="tok", PYTHONDONTWRITEBYTECODE="1"))
        try:
            out, err = process.communicate(timeout=4)
            return f"8. read-only store: exit {process.returncode} at start: {(out + err).strip()[:120]}"
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            return "8. read-only store: started and served (the first refund would find it out)"
    finally:
        if frozen:
            subprocess.run(["chattr", "-i", str(path)], capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=str(HERE), help="the checkout to attack (default: this one)")
    parser.add_argument("--scale", type=int, default=1, help="stranger attacks at 500 x SCALE connections")
    parser.add_argument("--only", default="", help="a comma-separated list of the parts to run (default: all): "
                        + ", ".join(PARTS))
    options = parser.parse_args()
    root = Path(options.root).resolve()
    sys.dont_write_bytecode = True
    sys.path[:0] = [str(root), str(HERE / "tests")]
    print(f"attacking {root}")
    chosen = [name.strip() for name in options.only.split(",") if name.strip()] or list(PARTS)
    unknown = [name for name in chosen if name not in PARTS]
    if unknown:
        parser.error(f"no part called {unknown[0]!r}; the parts: {', '.join(PARTS)}")
    for name in chosen:
        part = PARTS[name](root, options)
        for line in part if isinstance(part, list) else [part]:
            print(line, flush=True)


PARTS = {"stranger": lambda root, options: stranger(options.scale), "subscriptions": lambda root, options: subscriptions(),
         "webhooks": lambda root, options: hanging_webhooks(), "guard": lambda root, options: guard(),
         "rebinding": lambda root, options: rebinding(), "holds": lambda root, options: holds(),
         "banner": lambda root, options: banner(root), "store": lambda root, options: read_only_store(root),
         "cap": lambda root, options: over_the_cap(), "page": lambda root, options: live_page(),
         "tasks": lambda root, options: task_share(), "cycled": lambda root, options: cycled_webhooks(),
         "traces": lambda root, options: opened_traces(root)}


if __name__ == "__main__":
    main()
