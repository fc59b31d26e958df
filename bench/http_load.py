#!/usr/bin/env python3
"""Delegation throughput: in-process, and the served billing peer against a bare floor.

Measures, in one run, on this machine (issue 3's targets in brackets):
  (a) the in-process delegation round trip, printing off: microseconds per delegation;
  (b) `a2a_delegation.py serve billing-agent` under a keep-alive load client on loopback
      at concurrency 1, 4 and 16: delegations/s, p50 and p99 latency, errors
      [at concurrency 4: >= 70% of the floor's throughput, zero errors];
  (c) the floor: a bare standard-library http.server reading each request with json.loads
      and answering json.dumps of a fixed answer, with the same keep-alive and Nagle
      settings, under the same load (bench/loopback.py's FLOOR);
  and the served peer's peak memory [under 30 MB];
  (d) the same served peer with `--store` (its tasks and ledger in SQLite, what a request
      changed written in one commit before its answer, synchronous=NORMAL): what durability
      costs, against (b) in the same run [at concurrency 4: >= 50% of (b)].

Both servers run as child processes; the load client is bench/loopback.py's: raw sockets
on 127.0.0.1, so it costs far less per request than the servers it measures.
Every loop is bounded by a duration. Run from the project root:
    python bench/http_load.py [--seconds 2] [--rounds 3]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from loopback import FLOOR, MOST_REFUNDS, ROOT, TOKEN, load, peak_mb, started, stopped  # noqa: E402  shared with the other benchmarks

sys.path.insert(0, str(ROOT))
STORE = Path(tempfile.gettempdir()) / "a2a-bench-billing.db"


def in_process_round_trip(n: int) -> float:
    """Microseconds per delegation through the shim, the real peer app and the JSON codec."""
    import a2a_delegation as story
    from peers import demo
    from peers.a2a import wire_essay
    from peers.support.calling.config import load_allowlist
    from transports.inprocess import InProcessTransport
    from transports.printer import FramePrinter
    network = demo.network(wire_essay)
    allowlist = load_allowlist(str(ROOT / "allowlist.json"))  # the trust gate passes billing, as in the essay
    agent = story.SupportAgent(FramePrinter(InProcessTransport(network.apps)), allowlist, network.credentials,
                               lambda *args, **facts: None)
    contact = agent.gate(agent.discover("https://billing.acme.example/.well-known/agent-card.json"))
    refunds = [{"order_id": f"ORD-{number}", "amount": 180.0} for number in range(n + 200)]
    for refund in refunds[:200]:  # warm up
        agent.handoff(contact, story.SKILL, refund)
    start = time.perf_counter()
    for refund in refunds[200:]:  # each a refund of its own, as in the load below
        agent.handoff(contact, story.SKILL, refund)
    return (time.perf_counter() - start) / n * 1e6


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
                                "--token", TOKEN, "--max-effects", MOST_REFUNDS],
        "floor: bare http.server": [sys.executable, "-c", FLOOR],
        "served peer, --store": [sys.executable, "a2a_delegation.py", "serve", "billing-agent",
                                 "--token", TOKEN, "--max-effects", MOST_REFUNDS, "--store", str(STORE)],
    }
    runs: dict[str, dict[int, list[dict[str, float]]]] = {
        name: {1: [], 4: [], 16: []} for name in servers}
    peaks: dict[str, float] = {name: 0.0 for name in servers}
    for _ in range(options.rounds):
        for name, args in servers.items():
            for stale in STORE.parent.glob(STORE.name + "*"):  # each round on a fresh file
                stale.unlink()
            process, port = started(args)
            try:
                load(port, 4, 0.3)  # warm up
                for level in (1, 4, 16):
                    runs[name][level].append(load(port, level, options.seconds))
                peaks[name] = max(peaks[name], peak_mb(process.pid))
            finally:
                stopped(process)
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
