#!/usr/bin/env python3
"""Where a served peer's CPU goes: cProfile (and tracemalloc) inside `serve billing-agent` under load.

The peer runs as `python3 a2a_delegation.py serve billing-agent --wire 1.0` does, in a
child process pinned to one core, with a profiler in every thread it runs (the loop that
reads requests, the workers that answer them); the load (bench/loopback.py's client, A2A
1.0 SendMessage, a bearer token, a refund of a new order each time, 4 keep-alive
connections) runs here, on the other core. When the load ends the child is stopped, and
the entries are printed per request (wall time, by default: a thread's waits, in poll,
epoll and a lock's acquire, show as such; --cpu: CPU time): the top --top by own time (tottime) and by time
with what they call (cumtime), in microseconds per request, with calls per request. A
profiler slows every call it sees, small ones most: read the shares, and measure the
cost itself with bench/cpu_per_request.py. With --tracemalloc, the lines that kept the
most memory over the load (after a warm-up), per request, and the peak, are printed
too. `--store` profiles the durable peer. Loopback only; every loop is bounded.
Run from the project root:
    python3 bench/profile_peer.py [--seconds 10] [--top 25] [--store] [--tracemalloc]
"""
from __future__ import annotations

import argparse
import os
import pstats
import shutil
import signal
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from loopback import CORES, MOST_REFUNDS, ROOT, TOKEN, exchange, load, started  # noqa: E402
from cpu_per_request import send_message  # noqa: E402


def child(folder: str, store: bool, trace: bool, cpu: bool) -> None:
    """The peer, served as `serve` serves it, every thread's calls profiled; the stats
    written to `folder` once SIGTERM stops it (and tracemalloc's, after SIGUSR1)."""
    import cProfile
    import threading
    import time
    import tracemalloc
    profilers: list[cProfile.Profile] = []

    def profiled(run):
        def each_thread(*args, **kwargs):
            profiler = cProfile.Profile(time.thread_time) if cpu else cProfile.Profile()
            profilers.append(profiler)
            profiler.enable()
            try:
                return run(*args, **kwargs)
            finally:
                profiler.disable()
        return each_thread
    threading.Thread.run = profiled(threading.Thread.run)
    sys.path.insert(0, str(ROOT))
    from transports.server import PeerServer
    PeerServer.serve_forever = profiled(PeerServer.serve_forever)  # the loop: the main thread
    snapshots = []
    if trace:
        tracemalloc.start(1)
        signal.signal(signal.SIGUSR1, lambda *_: snapshots.append(tracemalloc.take_snapshot()))
    import a2a_delegation
    args = ["serve", "billing-agent", "--wire", "1.0", "--token", TOKEN, "--max-effects", MOST_REFUNDS]
    a2a_delegation.main(args + (["--store", os.path.join(folder, "billing.db")] if store else []))
    if trace and snapshots:
        snapshots.append(tracemalloc.take_snapshot())
        for index, snapshot in enumerate(snapshots[:2]):
            snapshot.dump(os.path.join(folder, f"memory-{index}"))
        Path(folder, "peak").write_text(str(tracemalloc.get_traced_memory()[1]))
    stats = pstats.Stats(profilers[0])
    for profiler in profilers[1:]:
        profiler.create_stats()  # a worker's still waiting: its calls so far
        stats.add(profiler)
    stats.dump_stats(os.path.join(folder, "profile"))


def where(function: tuple[str, int, str]) -> str:
    path, line, name = function
    shown = os.path.relpath(path, ROOT) if path.startswith(str(ROOT)) else Path(path).name
    return f"{shown}:{line}({name})" if line else name


def top(stats: pstats.Stats, requests: int, key: int, count: int) -> None:
    """The `count` entries largest in column `key` (2: tottime, 3: cumtime), per request."""
    rows = sorted(stats.stats.items(), key=lambda item: item[1][key], reverse=True)[:count]
    print(f"{'tottime us':>11}{'cumtime us':>11}{'calls':>7}  function")
    for function, (_, calls, tottime, cumtime, _) in rows:
        print(f"{tottime / requests * 1e6:>11.1f}{cumtime / requests * 1e6:>11.1f}"
              f"{calls / requests:>7.1f}  {where(function)}")


def memory(folder: str, requests: int, count: int) -> None:
    import tracemalloc
    before, after = (tracemalloc.Snapshot.load(os.path.join(folder, f"memory-{n}")) for n in (0, 1))
    changes = after.compare_to(before, "lineno")
    print(f"\nmemory kept over the load, per request (tracemalloc; peak "
          f"{int(Path(folder, 'peak').read_text()) / 2**20:.1f} MiB traced):")
    print(f"{'bytes':>9}{'blocks':>8}  line")
    for change in changes[:count]:
        frame = change.traceback[0]
        print(f"{change.size_diff / requests:>9.1f}{change.count_diff / requests:>8.2f}  "
              f"{where((frame.filename, frame.lineno, ''))}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="of load (default 10)")
    parser.add_argument("--top", type=int, default=25, help="entries in each table (default 25)")
    parser.add_argument("--store", action="store_true", help="the durable peer (--store, SQLite)")
    parser.add_argument("--tracemalloc", action="store_true", help="also the memory each line kept")
    parser.add_argument("--cpu", action="store_true", help="time each call in its thread's CPU time, not "
                        "wall time (a wait then costs nothing, but each call costs the profiler more)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        return child(options.child, options.store, options.tracemalloc, options.cpu)
    core, load_core = (CORES[0], CORES[1]) if len(CORES) >= 2 else (None, None)
    if load_core is not None:
        os.sched_setaffinity(0, {load_core})
    folder = tempfile.mkdtemp(prefix="a2a-profile-")
    args = [sys.executable, str(HERE / "profile_peer.py"), "--child", folder]
    process, port = started(args + [flag for flag, asked in (("--store", options.store), ("--cpu", options.cpu),
                                                             ("--tracemalloc", options.tracemalloc)) if asked], core)
    try:
        head, body = exchange(port, send_message(port, 99))
        if b"TASK_STATE_COMPLETED" not in body:
            raise SystemExit(f"not the answer measured: {head.splitlines()[0]!r} {body[:200]!r}")
        requests = 1 + load(port, 4, 1.0, send_message)["n"]  # warm up: counted, as the profile holds it
        if options.tracemalloc:
            process.send_signal(signal.SIGUSR1)
        done = load(port, 4, options.seconds, send_message)
        requests += done["n"]
        process.send_signal(signal.SIGTERM)
        process.wait(60)
        stats = pstats.Stats(os.path.join(folder, "profile"))
        print(f"served billing-agent{' --store' if options.store else ''}, profiled: {requests} requests "
              f"({done['rps']:.0f}/s under the profiler, {done['errors']} errors); per request:")
        print(f"total profiled time {stats.total_tt / requests * 1e6:.0f} us\n\nby own time (tottime):")
        top(stats, requests, 2, options.top)
        print("\nby time with callees (cumtime):")
        top(stats, requests, 3, options.top)
        if options.tracemalloc:
            memory(folder, done["n"], options.top)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
