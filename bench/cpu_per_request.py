#!/usr/bin/env python3
"""CPU per request, each server pinned to one core and the load to the other, beside the floor.

Requests per second swing by a quarter between runs on a shared 2-core machine; the CPU a
server spends per request holds within a few percent. So each server here is a child
process pinned to one core (os.sched_setaffinity in the child), the load client (this
process: bench/loopback.py's) pinned to the other, and its user + system time read from
/proc/PID/stat before and after each load, divided by the answers that came. Each load
is on a fresh process, warmed up first: two processes of the same code differ by up to a
fifth (where memory lands), so one process per server would fix that luck for the run.
Measured, in one run, alternating, medians of --rounds, with their spread (the rounds' range
over the median; issue 36's targets in brackets):
  - the floor: a standard-library http.server reading each request with json.loads and
    answering json.dumps of a fixed answer (loopback.FLOOR), keep-alive, Nagle off;
  - the floor's app behind the workbench's own server (transports/server.py), which every
    served peer runs on: the server's cost, apart from the peer's;
  - the one-function yardstick (bench/flat_peer.py): the same checks and answer as the peer's
    below, written as one function on the same server: the work, without the layers;
  - the served billing-agent (`serve billing-agent --wire 1.0 --token`), A2A 1.0
    SendMessage over JSON-RPC, a bearer token, a refund of a new order every request,
    4 keep-alive connections [at most 1.5x the floor];
  - the same over the HTTP+JSON binding (POST /a2a/message:send);
  - the same peer with `--store` (SQLite) [at most 1.6x the in-memory peer];
  - the peer and the floor over TLS (the DEMO certificate in peers/keys);
  - `proxy --to` a peer: the proxy's own CPU per forwarded request (the peer behind it
    runs on the load's core; the proxy prints every frame, as people run it).
Every answer is checked once before the measuring (a completed task, for the peer), so
what is measured is the work meant. Loopback only; every loop is bounded by a duration.

CPU time still moves with what shares the machine: on a busy day one server's runs spread
from 280 to 680 us a request. `--instructions` counts, instead, what each server executes
per request under valgrind's callgrind (where valgrind is installed): each server is
warmed up by WARM_UP requests (the store full), its counters zeroed, then MEASURED
requests are sent one after another on one keep-alive connection and its counters read
(callgrind_control). The count is the same run after run, so two commits compare on a
busy machine; it leaves out the kernel's share (system calls, a commit's writes), which
CPU time has, and a load's contention between threads. Beside it, the bytes each server
writes to files per request (/proc/PID/io): a durable peer's log, the part of the
kernel's share that grows with the pages a commit writes.
Run from the project root:
    python3 bench/cpu_per_request.py [--seconds 2] [--rounds 5] [--instructions]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
from loopback import (CORES, DEMO_CERT, DEMO_KEY, FLOOR, FLOOR_APP_ON_OUR_SERVER, MOST_REFUNDS, RUN, TOKEN, Request,  # noqa: E402
                      bytes_written, client_tls, cpu_seconds, exchange, http_post, in_turn, load, started, stopped)

V10 = "A2A-Version: 1.0\r\n"


def send_message(port: int, client: int) -> bytes:
    """A2A 1.0 SendMessage over JSON-RPC: a refund of a new order, a new messageId."""
    number = next(RUN)
    frame = json.dumps({"jsonrpc": "2.0", "id": number, "method": "SendMessage", "params": _message(client, number)})
    return http_post(port, "/a2a", frame.encode(), V10)


def rest_send(port: int, client: int) -> bytes:
    """The same over HTTP+JSON: the SendMessageRequest as the body of POST /a2a/message:send."""
    return http_post(port, "/a2a/message:send", json.dumps(_message(client, next(RUN))).encode(), V10)


def _message(client: int, number: int) -> dict:
    return {"message": {"messageId": f"m-{client}-{number}", "role": "ROLE_USER",
                        "metadata": {"skillId": "process_refund"},
                        "parts": [{"data": {"order_id": f"ORD-{client}-{number}", "amount": 180.0}}]}}


class Case(NamedTuple):
    name: str
    server: str  # which server's CPU is read, and where the load goes (`started_for`)
    request: Request
    tls: bool = False
    completes: bool = True  # the answer is a completed task (the floor's is fixed)


CASES = (
    Case("floor: http.server + json", "floor", send_message, completes=False),
    Case("our server, the floor's app", "server", send_message, completes=False),
    Case("one-function yardstick", "flat", send_message),
    Case("served peer, JSON-RPC", "peer", send_message),
    Case("served peer, HTTP+JSON", "peer", rest_send),
    Case("served peer, --store", "durable", send_message),
    Case("floor over TLS", "floor-tls", send_message, tls=True, completes=False),
    Case("served peer over TLS", "peer-tls", send_message, tls=True),
    Case("proxy --to a peer", "proxy", send_message),
)
# (what, measured case, baseline case, the target, if there is one)
RATIOS = (("served peer / floor", "served peer, JSON-RPC", "floor: http.server + json", 1.5),
          ("our server / floor", "our server, the floor's app", "floor: http.server + json", None),
          ("yardstick / floor", "one-function yardstick", "floor: http.server + json", None),
          ("served peer / yardstick", "served peer, JSON-RPC", "one-function yardstick", None),
          ("HTTP+JSON / floor", "served peer, HTTP+JSON", "floor: http.server + json", None),
          ("--store / in-memory peer", "served peer, --store", "served peer, JSON-RPC", 1.6),
          ("--store / floor", "served peer, --store", "floor: http.server + json", None),
          ("TLS peer / TLS floor", "served peer over TLS", "floor over TLS", None),
          ("proxy's own / floor", "proxy --to a peer", "floor: http.server + json", None),
          ("proxy's own / the peer", "proxy --to a peer", "served peer, JSON-RPC", None))


def started_for(server: str, core: int | None, load_core: int | None, store: str, wrap: tuple[str, ...] = ()) -> list:
    """The processes a case needs, the measured one first: [(process, port), ...], the
    measured one run under `wrap` (a command that runs it: valgrind). The proxy's peer runs
    on the load's core: only the proxy's CPU is read in its case."""
    serve = [sys.executable, "a2a_delegation.py", "serve", "billing-agent", "--wire", "1.0", "--token", TOKEN,
             "--max-effects", MOST_REFUNDS]
    if server == "proxy":
        behind = started(serve, load_core)
        try:
            return [started([*wrap, sys.executable, "a2a_delegation.py", "proxy", "--to",
                             f"http://127.0.0.1:{behind[1]}"], core), behind]
        except BaseException:
            stopped(behind[0])
            raise
    for stale in Path(store).parent.glob(Path(store).name + "*"):  # each durable peer on a fresh file
        stale.unlink()
    return [started([*wrap, *{"floor": [sys.executable, "-c", FLOOR],
                               "server": [sys.executable, "-c", FLOOR_APP_ON_OUR_SERVER],
                               "flat": [sys.executable, "bench/flat_peer.py", TOKEN, MOST_REFUNDS],
                               "floor-tls": [sys.executable, "-c", FLOOR, str(DEMO_CERT), str(DEMO_KEY)],
                               "peer": serve, "durable": serve + ["--store", store],
                               "peer-tls": serve + ["--tls"]}[server]], core)]


def check(case: Case, port: int) -> None:
    """One exchange: a 200, and for a peer a completed task; else the benchmark stops."""
    head, body = exchange(port, case.request(port, 99), client_tls() if case.tls else None)
    if not head.startswith(b"HTTP/1.1 200") or (case.completes and b"TASK_STATE_COMPLETED" not in body):
        raise SystemExit(f"{case.name}: not the answer measured: {head.splitlines()[0]!r} {body[:200]!r}")


WARM_UP, MEASURED = 1100, 300  # --instructions: requests before the counters are zeroed (the store full), and after
CALLGRIND = ("valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null")


def instructions_per_request(case: Case, core: int | None, load_core: int | None,
                             store: str) -> tuple[float, float]:
    """What the case's server executes per request, in instructions, counted by callgrind
    over MEASURED requests in turn after WARM_UP (every thread's, summed); and the bytes it
    writes to files per request (a durable peer's log and store file)."""
    running = started_for(case.server, core, load_core, store, CALLGRIND)
    try:
        (process, port), tls = running[0], client_tls() if case.tls else None
        check(case, port)
        in_turn(port, case.request, WARM_UP, tls)
        subprocess.run(["callgrind_control", "--zero", str(process.pid)], capture_output=True, check=True, timeout=60)
        written = bytes_written(process.pid)
        if in_turn(port, case.request, MEASURED, tls) != MEASURED:
            raise SystemExit(f"{case.name}: an answer was not 200")
        shown = subprocess.run(["callgrind_control", "-e", "Ir", str(process.pid)], capture_output=True, text=True,
                               check=True, timeout=60).stdout
        written = bytes_written(process.pid) - written
    finally:
        for process, _ in running:
            stopped(process)
    counts = [int(line.split()[-1].replace(",", "")) for line in shown.splitlines() if line.strip().startswith("Th ")]
    if not counts:
        raise SystemExit(f"{case.name}: callgrind_control showed no counts: {shown[:200]!r}")
    return sum(counts) / MEASURED, written / MEASURED


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="per load (default 2)")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds; medians (default 5)")
    parser.add_argument("--warm-up", type=float, default=1.0, help="seconds of load before each measured one: "
                        "the peer's store full (1,000 tasks), as after a while in a test run (default 1)")
    parser.add_argument("--only", nargs="+", choices=sorted({case.server for case in CASES}), metavar="SERVER",
                        help="measure these servers alone (floor, server, flat, peer, durable, floor-tls, peer-tls, proxy); "
                        "a ratio is printed when both its sides were measured")
    parser.add_argument("--instructions", action="store_true", help="count instructions per request under valgrind "
                        "(callgrind) instead: the same from run to run, the kernel's share left out")
    options = parser.parse_args()
    cases = [case for case in CASES if options.only is None or case.server in options.only]
    if options.instructions:
        return count_instructions(cases)
    core, load_core = (CORES[0], CORES[1]) if len(CORES) >= 2 else (None, None)
    if load_core is not None:
        os.sched_setaffinity(0, {load_core})  # the load client's threads, and nothing of the servers'
    folder = tempfile.mkdtemp(prefix="a2a-bench-")
    cpu: dict[str, list[float]] = {case.name: [] for case in cases}
    rate: dict[str, list[float]] = {case.name: [] for case in cases}
    errors = dict.fromkeys(cpu, 0)
    try:
        for _ in range(options.rounds):
            for case in cases:  # a fresh process each time: one process's cost differs from another's by
                running = started_for(case.server, core, load_core, os.path.join(folder, "billing.db"))  # up to 20%
                try:
                    (process, port), tls = running[0], client_tls() if case.tls else None
                    check(case, port)
                    load(port, 4, options.warm_up, case.request, tls)  # the store full, as a peer runs for long
                    before = cpu_seconds(process.pid)
                    done = load(port, 4, options.seconds, case.request, tls)
                    used = cpu_seconds(process.pid) - before
                finally:
                    for process, _ in running:
                        stopped(process)
                errors[case.name] += done["errors"]
                if done["n"]:
                    cpu[case.name].append(used / done["n"] * 1e6)
                    rate[case.name].append(done["rps"])
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    median = {name: statistics.median(values) if values else float("nan") for name, values in cpu.items()}
    pinned = f"servers on core {core}, load on core {load_core}" if core is not None else "not pinned (one core)"
    print(f"CPU per request at concurrency 4: {options.rounds} alternating rounds of {options.seconds:g} s, "
          f"medians; {os.cpu_count()} cores, {pinned}")
    print(f"{'server':<28}{'CPU us/req':>11}{'spread':>8}{'req/s':>8}{'errors':>8}")
    for case in cases:  # spread: the rounds' range over their median, how far one round can be trusted
        spread = (max(cpu[case.name]) - min(cpu[case.name])) / median[case.name] if cpu[case.name] else float("nan")
        print(f"{case.name:<28}{median[case.name]:>11.0f}{spread:>8.0%}{statistics.median(rate[case.name] or [0]):>8.0f}"
              f"{errors[case.name]:>8}")
    print_ratios(median)


def print_ratios(measured: dict[str, float], judged: bool = True) -> None:
    """Each ratio whose two sides were measured; judged against its target (a target of CPU time)."""
    for what, case, baseline, target in RATIOS:
        if case not in measured or baseline not in measured:
            continue
        ratio = measured[case] / measured[baseline]
        verdict = "" if target is None or not judged else \
            f"  -> {'meets' if ratio <= target else 'MISSES'} (<= {target}x)"
        print(f"{what:<28}{ratio:>10.2f}x{verdict}")


def count_instructions(cases: list[Case]) -> None:
    """--instructions: each case's server once, under callgrind (the count does not move)."""
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        raise SystemExit("--instructions needs valgrind (and its callgrind_control): not installed here")
    core, load_core = (CORES[0], CORES[1]) if len(CORES) >= 2 else (None, None)
    folder = tempfile.mkdtemp(prefix="a2a-bench-")
    try:
        counted = {case.name: instructions_per_request(case, core, load_core, os.path.join(folder, "billing.db"))
                   for case in cases}
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"instructions per request (callgrind, user space): {MEASURED} requests in turn on one keep-alive "
          f"connection, after {WARM_UP}")
    print(f"{'server':<28}{'instructions':>13}{'file bytes':>12}")
    for case in cases:
        count, written = counted[case.name]
        print(f"{case.name:<28}{count:>13,.0f}{written:>12,.0f}")
    print_ratios({name: count for name, (count, _) in counted.items()}, judged=False)  # the targets are CPU time's, which has the kernel's share too


if __name__ == "__main__":
    main()
