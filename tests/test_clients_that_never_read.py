"""A client that asks and never reads its answer holds no worker: what it does not take at once
is left for the server's loop to write (transports/unsent.py), so another client's request is
answered at once. Before, each such connection held a worker for the write timeout, and enough
of them (a caller's large ListTasks answers, a stranger's card requests) stalled everyone else
for 29 s. Bounded: a few connections, 8 MB answers, deadlines on every wait; over TLS too."""
import socket
import ssl
import threading
import time

import pytest

from conftest import ROOT, serving
from core_waits import CoreWaits
from transports import tls
from transports.base import HttpResponse
from transports.server import PeerServer

KEYS = ROOT / "peers/keys"
CA, CERT, KEY = (str(KEYS / name) for name in ("demo-ca.DEMO-CERT.pem", "billing-agent.DEMO-TLS-CERT.pem",
                                                "billing-agent.DEMO-TLS-KEY.pem"))
LARGE = b"x" * (8 << 20)  # far more than a socket's buffers hold: a worker writing it all would wait
HEAD = 103  # the bytes of its answer's head
# A steady reader's pace, in bytes a second: LARGE takes it 2.7 s, past a 2 s write deadline. The server
# sees its progress in steps of a third of its send buffer (1.4 MB, kernel-tuned): within 2 s, not 1, a
# reader that a loaded machine slows to a third of its pace still takes a step (at 1 s, one did not).
READING_PACE = 3 << 20
# Waits for what the server is to do (a line said, answers left for its loop) end when it is done: these
# deadlines only bound a test whose server never does it, so a loaded machine's slowness is no failure.
PATIENCE = 20


def app(request):
    return HttpResponse(200, {"Content-Type": "text/plain"}, LARGE if request.url.endswith("/large") else b"small")


def opened(address, secure):
    sock = socket.create_connection(address, timeout=5)
    if secure:
        context = ssl.create_default_context(cafile=CA)
        sock = context.wrap_socket(sock, server_hostname="billing.acme.example")
    return sock


def asked(sock, path):
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())


def left_for_the_loop(server, size):
    """Once answers of `size` bytes in all are the server's loop's to write (workers gave them up):
    what the tests wait for, rather than for a time a loaded machine may outlast."""
    deadline = time.monotonic() + PATIENCE
    while server._unsent.held < size and time.monotonic() < deadline:
        time.sleep(0.01)
    assert server._unsent.held >= size, f"{server._unsent.held} bytes left for the loop, not {size}"


def honest_wait(address, secure):
    """How long another client waits for a small answer, read whole, less the time the process's threads
    (the client, the server's loop and workers) waited for a core: "at once" is the server's promise, and
    a loaded machine's delays are not its work. Stalled behind a worker, it would wait the write timeout."""
    with opened(address, secure) as honest, CoreWaits(every_thread=True) as waits:
        started = time.monotonic()
        asked(honest, "/small")
        answer = b""
        while not answer.endswith(b"small") and time.monotonic() - started < PATIENCE:
            answer += honest.recv(4096)
        took = time.monotonic() - started
    assert answer.startswith(b"HTTP/1.1 200 OK") and answer.endswith(b"small")
    return took - waits.seconds


@pytest.mark.parametrize("secure", [False, True], ids=["http", "https"])
def test_clients_that_never_read_large_answers_leave_the_workers_to_answer_another_at_once(secure):
    lines = []
    options = {"tls": tls.server_context(CERT, KEY, None)} if secure else {}
    with serving(app, log=lines.append, max_workers=2, request_timeout=5.0, **options) as server:
        silent = [opened(server.server_address, secure) for _ in range(6)]  # three times the workers
        try:
            for sock in silent:
                asked(sock, "/large")
            left_for_the_loop(server, 6 * len(LARGE))  # each taken by a worker, which wrote what the socket took
            assert honest_wait(server.server_address, secure) < 1.0, "at once, not after a stalled worker's timeout"
        finally:
            for sock in silent:
                sock.close()
        deadline = time.monotonic() + PATIENCE
        while sum("disconnected mid-response" in line for line in lines) < 6 and time.monotonic() < deadline:
            time.sleep(0.05)
    assert sum("client disconnected mid-response" in line for line in lines) == 6, lines
    assert server._unsent.held == 0, "every byte left for the loop is given back"


def test_a_large_answer_read_slowly_arrives_whole_and_is_logged_once_when_it_has():
    lines = []
    with serving(app, log=lines.append, max_workers=1) as server:
        with socket.create_connection(server.server_address, timeout=5) as sock:
            asked(sock, "/large")
            left_for_the_loop(server, len(LARGE))  # the worker has left the rest to the loop
            received, deadline = bytearray(), time.monotonic() + PATIENCE
            while len(received) < len(LARGE) and time.monotonic() < deadline:
                received += sock.recv(1 << 16)
            assert received.endswith(LARGE[-100:]) and len(received) - received.index(b"\r\n\r\n") - 4 == len(LARGE)
            asked(sock, "/small")  # the same connection, kept alive, takes the next request
            assert sock.recv(4096).endswith(b"small")
    assert [line.split('"')[1] for line in lines] == ["GET /large HTTP/1.1", "GET /small HTTP/1.1"]
    assert all(line.endswith(" 200") for line in lines)


def test_a_client_that_stops_reading_is_let_go_at_the_write_deadline_with_its_answers_line():
    lines = []
    with serving(app, log=lines.append, request_timeout=1.0) as server:
        with socket.create_connection(server.server_address, timeout=5) as sock:
            asked(sock, "/large")
            deadline = time.monotonic() + PATIENCE
            while not lines and time.monotonic() < deadline:
                time.sleep(0.05)
    (line,) = lines
    assert line.endswith('"GET /large HTTP/1.1" 200 client took none of its answer for 1 s: closed')


@pytest.mark.parametrize("secure", [False, True], ids=["http", "https"])
def test_a_client_reading_steadily_but_slowly_gets_its_whole_answer_past_the_write_deadline(secure):
    lines = []
    options = {"tls": tls.server_context(CERT, KEY, None)} if secure else {}
    with serving(app, log=lines.append, request_timeout=2.0, **options) as server:
        plain = socket.create_connection(server.server_address, timeout=5)
        plain.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
        context = ssl.create_default_context(cafile=CA)
        with (context.wrap_socket(plain, server_hostname="billing.acme.example") if secure else plain) as sock:
            asked(sock, "/large")
            received, started = bytearray(), time.monotonic()
            while len(received) < len(LARGE) + HEAD and time.monotonic() - started < PATIENCE:
                chunk = sock.recv(1 << 20)
                if not chunk:
                    break
                received += chunk
                # Slower than the socket, never stopping: a pace in bytes a second, slept to only when ahead
                # of it. A sleep after each read (TLS: 16 KB a read) slowed it to a crawl on a loaded machine,
                # each sleep lasting until a core was free, and the server rightly let a reader that slow go.
                time.sleep(max(0.0, len(received) / READING_PACE - (time.monotonic() - started)))
            assert len(received) - received.index(b"\r\n\r\n") - 4 == len(LARGE)
            assert time.monotonic() - started > 2.0, "it took longer than the write deadline"
    assert lines == ['127.0.0.1 "GET /large HTTP/1.1" 200']


def test_a_full_server_closes_for_a_newcomer_a_connection_whose_answer_its_client_stopped_taking():
    lines = []
    with serving(app, log=lines.append, max_connections=4) as server:
        stalled = [socket.create_connection(server.server_address, timeout=5) for _ in range(4)]
        try:
            for sock in stalled:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                asked(sock, "/large")
            left_for_the_loop(server, 4 * len(LARGE))  # each answer the loop's to write
            time.sleep(1.1)  # then untouched for over a second: the time room.py reads, not a wait for the server
            assert honest_wait(server.server_address, False) < 1.0
        finally:
            for sock in stalled:
                sock.close()
    assert any(line.endswith('"GET /large HTTP/1.1" 200 cut short to make room: 4 open') for line in lines), lines


@pytest.mark.parametrize("secure", [False, True], ids=["http", "https"])
def test_past_what_the_server_keeps_for_clients_not_reading_a_large_answer_closes_and_holds_no_worker(secure):
    lines = []
    options = {"tls": tls.server_context(CERT, KEY, None)} if secure else {}
    with serving(app, log=lines.append, max_workers=2, max_unsent=20 << 20, **options) as server:
        silent = [opened(server.server_address, secure) for _ in range(6)]  # 48 MB asked: room for two
        try:
            for sock in silent:
                asked(sock, "/large")
            deadline = time.monotonic() + PATIENCE
            while len(lines) < 4 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert sum("no room left to keep this answer for its client (20 MiB of answers wait for theirs): closed" in line
                       for line in lines) == 4, lines
            assert honest_wait(server.server_address, secure) < 1.0
            assert 0 < server._unsent.held <= 20 << 20, "the two answers kept, within the bound"
        finally:
            for sock in silent:
                sock.close()


def test_a_server_stopping_writes_what_a_reading_client_has_not_yet_taken_and_says_its_line():
    lines, received = [], bytearray()
    server = PeerServer(app, "127.0.0.1", 0, log=lines.append).start()
    sock = socket.create_connection(server.server_address, timeout=5)
    try:
        asked(sock, "/large")
        left_for_the_loop(server, len(LARGE))  # the rest is the loop's to write now
        stopping = threading.Thread(target=server.stop)
        stopping.start()
        deadline = time.monotonic() + PATIENCE
        while time.monotonic() < deadline:  # read on while the server stops: it finishes the answer
            chunk = sock.recv(1 << 20)  # all there is: its 2 s are the server's, not this reader's turns
            if not chunk:
                break
            received += chunk
        stopping.join(10)
    finally:
        sock.close()
    assert len(received) - received.index(b"\r\n\r\n") - 4 == len(LARGE), "the whole answer, not cut"
    assert lines == ['127.0.0.1 "GET /large HTTP/1.1" 200']


def test_a_server_stopping_gives_a_still_reading_client_two_seconds_not_the_rest_of_its_answer():
    huge = b"y" * (40 << 20)
    lines = []
    server = PeerServer(lambda request: HttpResponse(200, {}, huge), "127.0.0.1", 0, log=lines.append).start()
    sock = socket.create_connection(server.server_address, timeout=5)
    reading, taken = threading.Event(), []

    def read_steadily():  # some 6 MB a second: 40 MiB would take six or seven
        while not reading.is_set():
            try:
                chunk = sock.recv(1 << 16)
            except OSError:
                return
            if not chunk:
                return
            taken.append(len(chunk))
            time.sleep(0.01)
    try:
        asked(sock, "/huge")
        reader = threading.Thread(target=read_steadily, daemon=True)
        reader.start()
        left_for_the_loop(server, len(huge))
        # 2 s is the server's promise, and 1.5 s its own stopping's (the loop's thread joined, the workers
        # closed); the time the stopping thread waited for a core on a loaded machine is taken off.
        with CoreWaits() as waits:
            started = time.monotonic()
            server.stop()
            took = time.monotonic() - started
        assert took - waits.seconds < 3.5, "two seconds for the loop's answers, not the client's pace"
    finally:
        reading.set()
        sock.close()
    assert sum(taken) < len(huge) and lines == ['127.0.0.1 "GET /huge HTTP/1.1" 200 cut short: the server stopped']


def test_a_stream_its_client_takes_nothing_of_is_cut_at_the_write_deadline_and_said_so_not_called_a_hang_up():
    """The log said "client disconnected mid-response" of a client still connected, whose
    socket held 2 MB it had not taken."""
    def endless(request):
        return HttpResponse(200, {"Content-Type": "text/event-stream"}, (b"data: " + b"x" * 65536 + b"\n\n"
                                                                         for _ in range(10_000)))
    said = []
    with serving(endless, request_timeout=0.5, log=said.append) as server:
        with socket.create_connection(server.server_address, timeout=5) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            asked(sock, "/stream")
            deadline = time.monotonic() + 10
            while not said and time.monotonic() < deadline:
                time.sleep(0.05)
    assert said and said[0].endswith(" 200 client did not take an event within 0.5 s mid-stream: cut"), said
