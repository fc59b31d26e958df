#!/usr/bin/env python3
"""Delegation throughput: in-process, and the served billing peer against a bare floor.

Measures, in one run, on this machine (issue 3's targets in brackets):
  (a) the in-process delegation round trip, printing off: microseconds per delegation;
  (b) `a2a_delegation.py serve billing-agent` under a keep-alive load client on loopback
      at concurrency 1, 4 and 16: delegations/s, p50 and p99 latency, errors
      [at concurrency 4: >= 70% of the floor's throughput, zero errors];
  (c) the floor: a bare standard-library http.server answering a fixed JSON body, with
      the same keep-alive and Nagle settings, under the same load;
  and the served peer's peak memory [under 30 MB];
  (d) the same served peer with `--store` (its tasks and ledger in SQLite, what a request
      changed written in one commit before its answer, synchronous=FULL): what durability
      costs, against (b) in the same run [at concurrency 4: >= 50% of (b)].

Both servers run as child processes; the load client is raw sockets on 127.0.0.1 with
pre-built requests, so it costs far less per request than the servers it measures.
Every loop is bounded by a duration. Run from the project root:
    python bench/http_load.py [--seconds 2] [--rounds 3]
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
TOKEN = "bench-token"
STORE = Path(__import__("tempfile").gettempdir()) / "a2a-bench-billing.db"
RUN = itertools.count()  # every request refunds an order of its own: a repeated order would
                         # only be looked up in billing's ledger, which is not the work measured


def refund_request(port: int, client: int) -> bytes:
    frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tasks/send", "params": {
        "skill": "process_refund", "input": {"order_id": f"ORD-{client}-{next(RUN)}", "amount": 180.0}}}).encode()
    return (f"POST /a2a HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            f"Authorization: Bearer {TOKEN}\r\nContent-Length: {len(frame)}\r\n\r\n").encode() + frame
FLOOR = r"""
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
BODY = b'{"jsonrpc": "2.0", "id": 1, "result": {"id": "task-1", "status": {"state": "completed"}}}'
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)
server = ThreadingHTTPServer(("127.0.0.1", 0), H)
server.daemon_threads = True
print(f"[serve] floor listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
server.serve_forever()
"""


def in_process_round_trip(n: int) -> float:
    """Microseconds per delegation through the shim, the real peer app and the JSON codec."""
    import a2a_delegation as story
    from peers import demo
    from peers.a2a import wire_essay
    from transports.inprocess import InProcessTransport
    network = demo.network(wire_essay)
    agent = story.SupportAgent(InProcessTransport(network.apps), [], network.credentials,
                               lambda *args, **facts: None)
    card = agent.discover("https://billing.acme.example/.well-known/agent-card.json")
    refunds = [{"order_id": f"ORD-{number}", "amount": 180.0} for number in range(n + 200)]
    for refund in refunds[:200]:  # warm up
        agent.delegate(card, story.SKILL, refund)
    start = time.perf_counter()
    for refund in refunds[200:]:  # each a refund of its own, as in the load below
        agent.delegate(card, story.SKILL, refund)
    return (time.perf_counter() - start) / n * 1e6


def start(args: list[str]) -> tuple[subprocess.Popen, int]:
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               text=True, cwd=ROOT)
    line = process.stdout.readline()  # "[serve] ... listening on http://127.0.0.1:PORT ..."
    port = int(line.split("listening on http://127.0.0.1:")[1].split()[0])
    return process, port


def load(port: int, concurrency: int, seconds: float) -> dict[str, float]:
    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def client(number: int) -> None:
        mine, failed = [], 0
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            buffer = b""
            while time.monotonic() < deadline:
                request = refund_request(port, number)
                sent = time.perf_counter()
                sock.sendall(request)
                while b"\r\n\r\n" not in buffer:
                    chunk = sock.recv(65536)
                    if not chunk:
                        raise ConnectionError("closed")
                    buffer += chunk
                head, _, buffer = buffer.partition(b"\r\n\r\n")
                length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
                while len(buffer) < length:
                    buffer += sock.recv(65536)
                buffer = buffer[length:]
                if not head.startswith(b"HTTP/1.1 200"):
                    failed += 1
                mine.append(time.perf_counter() - sent)
            sock.close()
        except (OSError, ValueError, IndexError):
            failed += 1
        with lock:
            latencies.extend(mine)
            errors[0] += failed

    threads = [threading.Thread(target=client, args=(number,)) for number in range(concurrency)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(seconds + 10)
    elapsed = time.monotonic() - started
    latencies.sort()
    pick = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000  # noqa: E731
    return {"rps": len(latencies) / elapsed, "p50": pick(0.50), "p99": pick(0.99),
            "errors": errors[0], "n": len(latencies)}


def peak_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="per load level (default 2)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="the two servers alternate this many times; medians are reported, "
                             "since loopback throughput on a shared machine drifts (default 3)")
    options = parser.parse_args()
    print(f"(a) in-process delegation round trip, printing off: "
          f"{in_process_round_trip(20_000):.1f} us per delegation")
    servers = {
        "served billing peer": [sys.executable, "a2a_delegation.py", "serve", "billing-agent",
                                "--token", TOKEN],
        "floor: bare http.server": [sys.executable, "-c", FLOOR],
        "served peer, --store": [sys.executable, "a2a_delegation.py", "serve", "billing-agent",
                                 "--token", TOKEN, "--store", str(STORE)],
    }
    runs: dict[str, dict[int, list[dict[str, float]]]] = {
        name: {1: [], 4: [], 16: []} for name in servers}
    peaks: dict[str, float] = {name: 0.0 for name in servers}
    for _ in range(options.rounds):
        for name, args in servers.items():
            for stale in STORE.parent.glob(STORE.name + "*"):  # each round on a fresh file
                stale.unlink()
            process, port = start(args)
            try:
                load(port, 4, 0.3)  # warm up
                for level in (1, 4, 16):
                    runs[name][level].append(load(port, level, options.seconds))
                peaks[name] = max(peaks[name], peak_mb(process.pid))
            finally:
                process.terminate()
                process.wait(10)
    print(f"(b, c) keep-alive load on 127.0.0.1: {options.rounds} alternating rounds of "
          f"{options.seconds:g} s per level, medians; {os.cpu_count()} cores")
    print(f"{'server':<26}{'conc':>5}{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'errors':>8}")
    median = lambda rs, key: statistics.median(r[key] for r in rs)  # noqa: E731
    for name in servers:
        for level, rs in runs[name].items():
            print(f"{name:<26}{level:>5}{median(rs, 'rps'):>9.0f}{median(rs, 'p50'):>9.2f}"
                  f"{median(rs, 'p99'):>9.2f}{sum(r['errors'] for r in rs):>8}")
    peer, floor = runs["served billing peer"][4], runs["floor: bare http.server"][4]
    share = median(peer, "rps") / median(floor, "rps")
    errors = sum(r["errors"] for level in runs["served billing peer"].values() for r in level)
    peak = peaks["served billing peer"]
    ok = share >= 0.70 and errors == 0 and peak < 30
    print(f"served peer at concurrency 4: {share:.0%} of the floor's throughput, {errors} errors "
          f"at any level, peak memory {peak:.1f} MB (floor {peaks['floor: bare http.server']:.1f} MB)"
          f" -> {'meets' if ok else 'MISSES'} the target (>= 70%, 0 errors, < 30 MB)")
    durable = runs["served peer, --store"][4]
    print(f"with --store at concurrency 4: {median(durable, 'rps'):.0f} req/s, "
          f"{median(durable, 'rps') / median(peer, 'rps'):.0%} of the in-memory peer in the same run, "
          f"peak memory {peaks['served peer, --store']:.1f} MB")


if __name__ == "__main__":
    main()
