#!/usr/bin/env python3
"""Where a served peer's answer goes, layer by layer: the cost per request of each stage of
one SendMessage, in process, from the whole app down to its parts.

cpu_per_request.py says how far the peer is from the floor; this says which layer the
distance is in. The peer is made as `serve billing-agent --wire 1.0 --token` makes it
(unguessable ids, a clock, a bearer token), its store filled first (a full store makes
room on every request, as a long-served one does). Each stage is then given inputs
prepared beforehand (a new order each, so every request is new work) and measured alone:
  app        the HTTP request as the server hands it over: routing, the token, the headers
  binding    JSON-RPC's answer to the body: decode, dispatch, the operation, encode
  decode     the strict JSON decode of the frame alone (transports/codec.py)
  operation  the SendMessage handler on decoded params: checks, the message read, the peer, the result
  message    the request read from params alone: the message, its configuration (wire format records)
  peer       Peer.send_message on a read message: the request read, the task, the skill, the store
  request    read_request alone: the skill, the schema check, the message's digest
  result     the completed task written for the wire
  encode     the response frame encoded
Each stage includes those indented under it in the list above, so the differences say
what a layer adds. With valgrind installed, each stage is counted in instructions by
callgrind (two runs of a child process, with and without the stage's loop: the
difference over --requests; string hashing fixed, PYTHONHASHSEED=0, and the collector
stopped while a stage runs: when it runs moves with every allocation, by a third of a stage
from one commit to the next, and cpu_per_request.py counts it whole), a count that holds; without it, in CPU time
(time.process_time, noisier). In process: no sockets, nothing listening. Under callgrind a
run takes some minutes (each child fills the store first).
Run from the project root:
    python3 bench/peer_stages.py [--requests 1000] [--only app peer ...]
"""
from __future__ import annotations

import argparse
import gc
import itertools
import os
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STAGES = ("app", "binding", "decode", "operation", "message", "peer", "request", "result", "encode")
FILLED = 1100  # requests before measuring: the store (1,000 tasks) full, as cpu_per_request.py's warm-up
NUMBERS = itertools.count()


def frame() -> bytes:
    """A SendMessage frame refunding an order of its own, as bench/cpu_per_request.py sends."""
    n = next(NUMBERS)
    return json.dumps({"jsonrpc": "2.0", "id": n, "method": "SendMessage", "params": {"message": {
        "messageId": f"stage-{n}", "role": "ROLE_USER", "metadata": {"skillId": "process_refund"},
        "parts": [{"data": {"order_id": f"ORD-{n}", "amount": 180.0}}]}}}).encode()


def prepared(stage: str, requests: int, filled: int = FILLED):
    """(work, inputs): the stage's one step, and its inputs for `requests` requests, once
    `filled` requests have been answered."""
    sys.path.insert(0, str(ROOT))
    from peers import billing
    from peers.a2a import wire_v10
    from peers.app import PeerApp
    from peers.methods import Caller
    from peers.skill import read_request
    from peers.stamps import unguessable_task_ids, utc_now
    from transports.base import request
    from transports.codec import dumps, loads_strict
    peer = billing.billing_agent(billing.BASE_URL, new_task_id=unguessable_task_ids(), clock=utc_now,
                                 log=lambda line: None)
    app = PeerApp(peer, wire_v10, token="bench-token", log=lambda line: None)
    url = billing.BASE_URL + "/a2a"
    headers = {"Content-Type": "application/json", "Authorization": "Bearer bench-token", "A2A-Version": "1.0"}
    for _ in range(filled):
        answer = app(request("POST", url, headers, frame()))
    assert b"TASK_STATE_COMPLETED" in answer.body, answer.body[:200]
    binding, _ = app.binding_for(app.endpoint_path)
    caller = Caller(app.owner, "1.0")
    frames = [frame() for _ in range(requests)]
    params = [json.loads(each)["params"] for each in frames]
    if stage in ("app", "binding"):
        made = [request("POST", url, headers, each) for each in frames]
        return (app if stage == "app" else lambda one: binding.answer(one, "", caller, {})), made
    if stage == "decode":
        return loads_strict, frames
    if stage == "operation":
        send = binding.methods.get("SendMessage")
        return (lambda one: send(one, caller)), params
    if stage == "message":
        return wire_v10.send_request, params
    messages = [wire_v10.send_request(one).message for one in params]
    if stage == "peer":
        return (lambda one: peer.send_message(one, owner=caller.owner)), messages
    if stage == "request":
        return (lambda one: read_request(peer.skills, one, "")), messages
    tasks = [peer.send_message(one, owner=caller.owner) for one in messages]
    if stage == "result":
        return (lambda one: wire_v10.send_result(one, None)), tasks
    results = [{"jsonrpc": "2.0", "id": n, "result": wire_v10.send_result(task, None)} for n, task in enumerate(tasks)]
    return dumps, results


def child(stage: str, requests: int, run: bool) -> None:
    """Prepare the stage and, if `run`, run it: the parent counts this process whole."""
    work, inputs = prepared(stage, requests)
    gc.freeze()  # what was made so far lives on, as a served peer's start-up does (session.py)
    gc.disable()  # a layer's own work: when the collector runs moves with every allocation (cpu_per_request.py counts it)
    if run:
        for one in inputs:
            work(one)


def counted(stage: str, requests: int, run: bool) -> int:
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
                           __file__, "--child", stage, str(requests), "run" if run else "prepare"],
                          cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          env={**os.environ, "PYTHONHASHSEED": "0"},
                          check=True, timeout=900)
    refs = [line for line in done.stderr.splitlines() if "I   refs:" in line or "I refs:" in line]
    return int(refs[-1].split(":")[1].replace(",", ""))


def timed(stage: str, requests: int) -> float:
    work, inputs = prepared(stage, requests)
    gc.freeze()
    gc.disable()
    start = time.process_time()
    for one in inputs:
        work(one)
    return (time.process_time() - start) / requests * 1e6


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], int(sys.argv[3]), sys.argv[4] == "run")
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1000, help="requests measured per stage")
    parser.add_argument("--only", nargs="+", choices=STAGES, default=list(STAGES))
    options = parser.parse_args()
    if not 0 < options.requests <= 100_000:
        parser.error("--requests must be 1 to 100000")
    by_instructions = shutil.which("valgrind") is not None
    unit = "instructions" if by_instructions else "CPU us"
    print(f"one SendMessage, in process, per request ({unit}; {'callgrind' if by_instructions else 'process_time'}, "
          f"{options.requests} requests a stage, after {FILLED})")
    print(f"{'stage':<12}{unit:>14}{'of app':>9}")
    costs = {}
    for stage in (s for s in STAGES if s in options.only):
        if by_instructions:
            cost = (counted(stage, options.requests, True) - counted(stage, options.requests, False)) / options.requests
        else:
            cost = timed(stage, options.requests)
        costs[stage] = cost
        share = f"{cost / costs['app']:.0%}" if "app" in costs else ""
        print(f"{stage:<12}{cost:>14,.0f}{share:>9}" if by_instructions else f"{stage:<12}{cost:>14.1f}{share:>9}",
              flush=True)


if __name__ == "__main__":
    main()
