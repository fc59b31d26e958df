#!/usr/bin/env python3
"""What `proxy` costs: the served billing peer direct, and through the proxy, in one run.

Measures, side by side and alternating (issue 34's targets in brackets):
  (a) added latency at concurrency 1: the median exchange through the proxy minus the
      median direct one [at most 1 ms];
  (b) CPU per forwarded request: the proxy's own user + system time over a load, per
      request, beside the served peer's per request in the same load, with the peer
      pinned to one core and the proxy to the other [the proxy at most half the peer's];
  (c) throughput at concurrency 4: through the proxy against direct [at least 60%]; the
      load client shares the two cores with both, as it would in a test run.
The proxy prints every frame, as people run it; its output is read and thrown away here,
so the printing is in what is measured. Request and answer are the load of
bench/loopback.py (a refund of a new order each time, keep-alive, raw sockets). Every
loop is bounded by a duration. Run from the project root:
    python3 bench/proxy_load.py [--seconds 2] [--rounds 3]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from loopback import CORES, TOKEN, cpu_seconds, load, started, stopped  # noqa: E402  the same load client and request


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="per measurement (default 2)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds; medians (default 3)")
    options = parser.parse_args()
    peer_core, proxy_core = (CORES[0], CORES[1]) if len(CORES) >= 2 else (None, None)
    peer, peer_port = started([sys.executable, "a2a_delegation.py", "serve", "billing-agent", "--token", TOKEN],
                              peer_core, "listening on ")
    proxy, proxy_port = started([sys.executable, "a2a_delegation.py", "proxy", "--to",
                                 f"http://127.0.0.1:{peer_port}"], proxy_core, "listening on ")
    latency = {"direct": [], "proxy": []}
    rate = {"direct": [], "proxy": []}
    cpu = {"peer": [], "proxy": []}
    try:
        load(proxy_port, 4, 0.5)  # warm up both
        for _ in range(options.rounds):
            for name, port in (("direct", peer_port), ("proxy", proxy_port)):
                latency[name].append(load(port, 1, options.seconds)["p50"])
                before = {"peer": cpu_seconds(peer.pid), "proxy": cpu_seconds(proxy.pid)}
                done = load(port, 4, options.seconds)
                rate[name].append(done["rps"])
                if name == "proxy" and done["n"]:
                    for who, pid in (("peer", peer.pid), ("proxy", proxy.pid)):
                        cpu[who].append((cpu_seconds(pid) - before[who]) / done["n"] * 1e6)
    finally:
        for process in (proxy, peer):
            stopped(process)
    median = statistics.median
    added = median(latency["proxy"]) - median(latency["direct"])
    share = median(rate["proxy"]) / median(rate["direct"])
    ratio = median(cpu["proxy"]) / median(cpu["peer"])
    pinned = f"peer on core {peer_core}, proxy on core {proxy_core}" if peer_core is not None else "not pinned"
    print(f"{options.rounds} alternating rounds of {options.seconds:g} s each, medians; {os.cpu_count()} cores, {pinned}")
    print(f"(a) p50 at concurrency 1: direct {median(latency['direct']):.2f} ms, through the proxy "
          f"{median(latency['proxy']):.2f} ms: +{added:.2f} ms -> {'meets' if added <= 1 else 'MISSES'} (<= 1 ms)")
    print(f"(b) CPU per forwarded request at concurrency 4: proxy {median(cpu['proxy']):.0f} us, peer "
          f"{median(cpu['peer']):.0f} us: {ratio:.2f}x -> {'meets' if ratio <= 0.5 else 'MISSES'} (<= 0.5x)")
    print(f"(c) throughput at concurrency 4: direct {median(rate['direct']):.0f} req/s, through the proxy "
          f"{median(rate['proxy']):.0f} req/s: {share:.0%} -> {'meets' if share >= 0.6 else 'MISSES'} (>= 60%)")


if __name__ == "__main__":
    main()
