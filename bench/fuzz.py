#!/usr/bin/env python3
"""Hostile input, measured: what tests/test_fuzz.py checks in a few seconds, at length.

1. `--cases` seeded hostile JSON-RPC frames (tests/fuzz_frames.py) to billing in process,
   and `--http-cases` of them to a served billing peer over 127.0.0.1: every answer
   counted by HTTP status and JSON-RPC code; any -32603 or traceback is a failure.
2. The slowest strict parse of a 1 MiB frame, over shapes built to be slow.
3. The served peer's peak memory after 40 frames of 1 MiB built to be amplified in memory.
4. The slowest exchange with a peer that drips its reply a byte at a time, with --timeout 1.
All traffic stays on 127.0.0.1; every loop is bounded. Run: python bench/fuzz.py [--cases 100000]
"""
from __future__ import annotations

import argparse
import collections
import json
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from fuzz_frames import cases  # noqa: E402
from peers import billing  # noqa: E402
from peers.a2a import wire_v10  # noqa: E402
from peers.app import PeerApp  # noqa: E402
from transports import sse  # noqa: E402
from transports.base import HttpResponse  # noqa: E402
from transports.codec import loads_strict  # noqa: E402
from transports.inprocess import InProcessTransport  # noqa: E402
from transports.network import HttpTransport  # noqa: E402


def answer_of(response: HttpResponse) -> str:
    """An answer in a word or two: its HTTP status and JSON-RPC code; for a streamed
    (text/event-stream) reply, each distinct code its events carried, in order."""
    status, body = response.status, response.body
    if not body:
        return f"HTTP {status}, no body"
    if sse.is_stream(response.header("content-type")):  # each event's data is a whole answer
        events = sse.decode(body)
        return f"HTTP {status}, streamed: {', '.join(dict.fromkeys(code_of(event) for event in events)) or 'no event'}"
    return f"HTTP {status}, {code_of(body)}"


def code_of(text: str | bytes) -> str:
    """A JSON-RPC response's error code, or "result"; "not JSON-RPC" for anything else
    (counted, so a peer's odd answer is seen, never a crash of the count)."""
    try:
        document = json.loads(text)
    except ValueError:
        return "not JSON"
    if not isinstance(document, dict):
        return "not JSON-RPC"
    error = document.get("error")
    return str(error.get("code")) if isinstance(error, dict) else "result" if "result" in document else "not JSON-RPC"


def fuzz_in_process(count: int) -> collections.Counter:
    logged: list[str] = []
    app = PeerApp(billing.billing_agent(), wire_v10, token="t0k", log=logged.append)
    transport = InProcessTransport({"https://peer.example": app})
    answers: collections.Counter = collections.Counter()
    for body, headers in cases(seed=1, count=count):
        response = transport.post("https://peer.example/a2a", body, headers)
        answers[answer_of(response)] += 1
    answers["internal errors logged"] = sum("internal error" in line for line in logged)
    return answers


def serve(log: IO[str]) -> tuple[subprocess.Popen, str]:
    # The log goes to a file: a pipe nobody reads fills after ~64 KiB of log lines, and
    # then the server blocks writing its next line, which looks exactly like a hang.
    process = subprocess.Popen([sys.executable, str(ROOT / "a2a_delegation.py"), "serve", "billing-agent",
                                "--wire", "1.0", "--token", "t0k"], stdout=subprocess.PIPE,
                               stderr=log, text=True)
    return process, process.stdout.readline().split("listening on ")[1].split()[0]


def fuzz_over_http(count: int) -> collections.Counter:
    with tempfile.TemporaryFile("w+") as log:
        process, base = serve(log)
        try:
            transport, answers = HttpTransport(timeout=5), collections.Counter()
            for body, headers in cases(seed=2, count=count):
                response = transport.post(base + "/a2a", body, headers)
                answers[answer_of(response)] += 1
        finally:
            process.terminate()
            process.communicate(timeout=10)
        log.seek(0)
        errors = log.read()
    answers["tracebacks in the server's log"] = errors.count("Traceback")
    return answers


def slowest_parse_ms() -> tuple[float, str]:
    size = 1 << 20
    shapes = {
        "40,000 keys and one duplicate": "{" + ", ".join(f'"k{n}": 0' for n in range(40_000)) + ', "k7": 1}',
        "an unterminated string of escapes": "[" * 40 + '"\\' * (size // 2 - 30),
        "10,000 empty arrays": "[" + "[]," * 9_999 + "[]]",
        "one long string": '"' + "x" * (size - 2) + '"',
        "digits": "[" + "1," * (size // 2 - 2) + "1]",
    }
    worst = (0.0, "")
    for name, text in shapes.items():
        started = time.perf_counter()
        try:
            loads_strict(text[:size])
        except ValueError:
            pass
        worst = max(worst, ((time.perf_counter() - started) * 1000, name))
    return worst


def peak_memory_mb_under_amplification() -> float:
    process, base = serve(subprocess.DEVNULL)
    try:
        transport = HttpTransport(timeout=10)
        lists = "[" + ",".join(["[]"] * 10_000) + "]"  # as many containers as the codec allows
        for number in range(40):
            filler = "x" * (1_000_000 - len(lists))
            frame = json.dumps({"jsonrpc": "2.0", "id": number, "method": "SendMessage", "params": {"message": {
                "messageId": f"m-{number}", "role": "ROLE_USER", "metadata": {"skillId": "process_refund",
                                                                              "lists": "LISTS", "pad": filler},
                "parts": [{"data": {"order_id": f"ORD-{number}", "amount": 1.0}}]}}}).replace('"LISTS"', lists)
            transport.post(base + "/a2a", frame.encode(), {"Content-Type": "application/json",
                                                           "Authorization": "Bearer t0k", "A2A-Version": "1.0"})
        status = Path(f"/proc/{process.pid}/status").read_text()
        return int(status.split("VmHWM:")[1].split()[0]) / 1024
    finally:
        process.terminate()
        process.communicate(timeout=10)


def slowest_dripped_exchange_s() -> float:
    server = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def drip() -> None:  # a peer that answers a byte every 0.3 s, for ever
        server.settimeout(10)
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except OSError:
                return
            with connection:
                connection.recv(65536)
                for byte in b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + b"x" * 100:
                    if stop.wait(0.3):
                        return
                    try:
                        connection.sendall(bytes([byte]))
                    except OSError:
                        break
    threading.Thread(target=drip, daemon=True).start()
    url = f"http://127.0.0.1:{server.getsockname()[1]}"
    worst = 0.0
    try:
        for _ in range(3):
            started = time.perf_counter()
            done = subprocess.run([sys.executable, str(ROOT / "a2a_delegation.py"), "--peer", url,
                                   "--timeout", "1"], capture_output=True, text=True, timeout=60)
            assert "card fetch failed" in done.stderr, done.stderr
            worst = max(worst, time.perf_counter() - started)
    finally:
        stop.set()
        server.close()
    return worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=20_000)
    parser.add_argument("--http-cases", type=int, default=3_000)
    options = parser.parse_args()
    for label, answers in ((f"{options.cases} frames in process", fuzz_in_process(options.cases)),
                           (f"{options.http_cases} frames over HTTP", fuzz_over_http(options.http_cases))):
        print(label + ":")
        for answer, count in sorted(answers.items(), key=lambda item: -item[1]):
            print(f"  {count:7d}  {answer}")
    took, shape = slowest_parse_ms()
    print(f"slowest strict parse of a 1 MiB frame: {took:.1f} ms ({shape})")
    print(f"served peer's peak memory after 40 amplifying 1 MiB frames: {peak_memory_mb_under_amplification():.1f} MB")
    print(f"slowest whole run against a peer dripping a byte every 0.3 s, --timeout 1: "
          f"{slowest_dripped_exchange_s():.2f} s (the interpreter's start included)")


if __name__ == "__main__":
    main()
