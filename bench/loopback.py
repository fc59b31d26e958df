"""What the load benchmarks share: servers as child processes, pinned, their CPU read, and a load client.

Rules: loopback only (127.0.0.1, port 0, the port read from the server's banner); every
loop bounded by a duration or a count; the load client is raw sockets with requests built
before they are timed, so it costs far less per request than the servers it measures.
- `started`: a child process, pinned to one core where the machine lets it
  (os.sched_setaffinity in the child, before it runs), its banner read for its port, the
  rest of its output drained in the background so printing never blocks it.
- `cpu_seconds`: user + system time a process has used (/proc/PID/stat); `bytes_written`:
  what it has written to files (/proc/PID/io).
- `load`: keep-alive clients on loopback, Nagle off, each sending the next request as soon
  as the last answer has arrived whole, for a duration; plain or TLS. `in_turn`: a count
  of requests, one after another, on one keep-alive connection.
- `FLOOR`: the least a JSON server over HTTP/1.1 can do, in the standard library: an
  http.server that reads each request's body with json.loads and answers json.dumps of a
  fixed answer, keep-alive, Nagle off; over TLS when given a certificate and key.
  `FLOOR_APP_ON_OUR_SERVER`: the same app behind the workbench's own server.
Used by http_load.py, proxy_load.py and cpu_per_request.py; what each measures is theirs.
"""
from __future__ import annotations

import itertools
import json
import os
import socket
import ssl
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "bench-token"
CORES = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
DEMO_CA = ROOT / "peers" / "keys" / "demo-ca.DEMO-CERT.pem"
DEMO_CERT = ROOT / "peers" / "keys" / "billing-agent.DEMO-TLS-CERT.pem"
DEMO_KEY = ROOT / "peers" / "keys" / "billing-agent.DEMO-TLS-KEY.pem"
RUN = itertools.count()  # every request refunds an order of its own: a repeated order would
                         # only be looked up in billing's ledger, which is not the work measured
MOST_REFUNDS = "999999"  # --max-effects: a load refunds more orders than the default 10,000, and a full
                         # ledger refuses new ones (it forgets none), which is not the work measured either
Request = Callable[[int, int], bytes]  # (port, client number) -> the bytes of one whole request

FLOOR = r"""
import json, ssl, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
ANSWER = {"jsonrpc": "2.0", "id": 1, "result": {"id": "task-1", "status": {"state": "completed"}}}
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    def do_POST(self):
        json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        body = json.dumps(ANSWER).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
server = ThreadingHTTPServer(("127.0.0.1", 0), H)
server.daemon_threads = True
scheme = "http"
if len(sys.argv) == 3:  # a certificate and its key: https
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(sys.argv[1], sys.argv[2])
    server.socket, scheme = context.wrap_socket(server.socket, server_side=True), "https"
print(f"[serve] floor listening on {scheme}://127.0.0.1:{server.server_address[1]}", flush=True)
server.serve_forever()
"""

# The floor's app (json.loads of the body, a fixed answer) behind the workbench's own server
# (transports/server.py), which serves every peer: what the server costs, without a peer.
FLOOR_APP_ON_OUR_SERVER = r"""
import json, sys
sys.path.insert(0, ".")
from transports.base import HttpResponse
from transports.server import PeerServer
ANSWER = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"id": "task-1", "status": {"state": "completed"}}}).encode()
def app(request):
    json.loads(request.body)
    return HttpResponse(200, {"Content-Type": "application/json"}, ANSWER)
server = PeerServer(app)
print(f"[serve] the floor's app listening on {server.base_url}", flush=True)
server.serve_forever()
"""


def http_post(port: int, path: str, frame: bytes, headers: str = "") -> bytes:
    return (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            f"Authorization: Bearer {TOKEN}\r\n{headers}Content-Length: {len(frame)}\r\n\r\n").encode() + frame


def refund_request(port: int, client: int) -> bytes:
    """The essay's tasks/send: a refund of a new order."""
    frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tasks/send", "params": {
        "skill": "process_refund", "input": {"order_id": f"ORD-{client}-{next(RUN)}", "amount": 180.0}}}).encode()
    return http_post(port, "/a2a", frame)


def started(args: list[str], core: int | None = None, marker: str = "listening on ") -> tuple[subprocess.Popen, int]:
    """A child process on `core` (where it can be pinned), its port read from the line
    holding `marker`; the rest of its output drained in the background, never blocking it."""
    pin = (lambda: os.sched_setaffinity(0, {core})) if core is not None else None
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT,
                               preexec_fn=pin)
    for _ in range(50):  # the banner's first lines
        line = process.stdout.readline()
        if marker in line:
            break
    else:
        process.kill()
        raise SystemExit(f"no {marker!r} line from {' '.join(args[:4])}")
    port = int(line.split(marker)[1].split()[0].rstrip(",").rsplit(":", 1)[1])
    threading.Thread(target=lambda: [None for _ in process.stdout], daemon=True).start()
    return process, port


def stopped(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(10)


def cpu_seconds(pid: int) -> float:
    """User + system time a process has used so far (/proc/PID/stat, in clock ticks)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bytes_written(pid: int) -> int:
    """The bytes a process has given write system calls so far (/proc/PID/io's wchar): a
    file's writes, not a socket's (sent with send, which it does not count)."""
    fields = dict(line.split(": ") for line in Path(f"/proc/{pid}/io").read_text().splitlines())
    return int(fields["wchar"])


def peak_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def client_tls() -> ssl.SSLContext:
    """A client context that trusts the demo CA, which issued the DEMO certificate served."""
    return ssl.create_default_context(cafile=str(DEMO_CA))


def exchange(port: int, request: bytes, tls: ssl.SSLContext | None = None) -> tuple[bytes, bytes]:
    """One request on a connection of its own: the answer's head and body (a sanity check)."""
    sock = _connect(port, tls)
    try:
        sock.sendall(request)
        return _answer(sock, b"")[:2]
    finally:
        sock.close()


def _connect(port: int, tls: ssl.SSLContext | None) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return tls.wrap_socket(sock, server_hostname="127.0.0.1") if tls is not None else sock


def _answer(sock: socket.socket, buffer: bytes) -> tuple[bytes, bytes, bytes]:
    """(head, body, what arrived after it) of the next answer; a body has a Content-Length."""
    while b"\r\n\r\n" not in buffer:
        if len(buffer) > 65536 or not (chunk := sock.recv(65536)):
            raise ConnectionError("closed, or no head")
        buffer += chunk
    head, _, buffer = buffer.partition(b"\r\n\r\n")
    length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
    while len(buffer) < length:
        if not (chunk := sock.recv(65536)):
            raise ConnectionError("closed mid-body")
        buffer += chunk
    return head, buffer[:length], buffer[length:]


def in_turn(port: int, request: Request, count: int, tls: ssl.SSLContext | None = None) -> int:
    """`count` requests one after another on one keep-alive connection; how many were answered 200."""
    sock, buffer, fine = _connect(port, tls), b"", 0
    try:
        for _ in range(count):
            sock.sendall(request(port, 0))
            head, _, buffer = _answer(sock, buffer)
            fine += head.startswith(b"HTTP/1.1 200")
    finally:
        sock.close()
    return fine


def load(port: int, concurrency: int, seconds: float, request: Request = refund_request,
         tls: ssl.SSLContext | None = None) -> dict[str, float]:
    """`concurrency` keep-alive clients for `seconds`: requests/s, p50 and p99 latency (ms),
    errors (answers not 200, or a connection lost), and `n`, the answers that came."""
    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def client(number: int) -> None:
        mine, failed = [], 0
        try:
            sock = _connect(port, tls)
            buffer = b""
            while time.monotonic() < deadline:
                whole = request(port, number)
                sent = time.perf_counter()
                sock.sendall(whole)
                head, _, buffer = _answer(sock, buffer)
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
    began = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(seconds + 10)
    elapsed = time.monotonic() - began
    latencies.sort()
    pick = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000 if latencies else 0.0  # noqa: E731
    return {"rps": len(latencies) / elapsed, "p50": pick(0.50), "p99": pick(0.99),
            "errors": errors[0], "n": len(latencies)}


if __name__ == "__main__":
    sys.exit("bench/loopback.py is a module: run bench/http_load.py, proxy_load.py or cpu_per_request.py")
