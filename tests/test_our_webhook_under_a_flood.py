"""Our --push webhook (peers/support/calling/webhook.py) listens on 127.0.0.1 while a task is
followed, and anyone on the machine can reach it: a flood of connections that send nothing
must not cost a thread each, and one that drips its request a byte at a time must be cut
off within seconds (a deadline for the whole request, not for each read), while the peer's
real push is still taken. A hostile round's finding: the receiver was http.server's, a
thread per connection, each read with its own 2 s timeout, so a drip every second held one
forever. Every socket here has a timeout and every loop a deadline."""
import select
import socket
import threading
import time

from peers.support.calling.follow import listening
from transports.network import HttpTransport

FLOOD, DRIPS = 150, 20


def port_of(receiver):
    return int(receiver.url.split(":")[2].split("/")[0])


def silent_connections(port, count):
    """`count` connections begun at once (not waited on), that will never send a byte."""
    flood = []
    for _ in range(count):
        connection = socket.socket()
        connection.setblocking(False)
        connection.connect_ex(("127.0.0.1", port))
        flood.append(connection)
    return flood


def test_a_flood_of_silent_connections_costs_no_thread_each_and_a_real_push_is_still_taken_at_once():
    with listening(True) as receiver:
        before = threading.active_count()
        flood = silent_connections(port_of(receiver), FLOOD)
        try:
            time.sleep(0.3)  # the receiver has taken them in by now
            threads = threading.active_count() - before
            http, started = HttpTransport(timeout=5), time.monotonic()
            answered = http.post(receiver.url, b'{"task": {}}', {"Content-Type": "application/json",
                                                                 "X-A2A-Notification-Token": receiver.token})
            took = time.monotonic() - started
            http.close()
        finally:
            for connection in flood:
                connection.close()
        assert threads < 20, f"{threads} threads for {FLOOD} silent connections"
        assert answered.status == 200 and took < 1, f"the push was answered after {took:.1f} s"
        assert receiver.next_push(1).body == b'{"task": {}}'


def test_pushes_dripped_a_byte_at_a_time_are_cut_off_within_seconds_and_hold_no_thread_each():
    with listening(True) as receiver:
        before, started = threading.active_count(), time.monotonic()
        drips = [socket.create_connection(("127.0.0.1", port_of(receiver)), timeout=2) for _ in range(DRIPS)]
        for drip in drips:
            drip.sendall(b"POST /a2a-push HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        threads, open_drips = 0, list(drips)
        try:
            while open_drips and time.monotonic() - started < 8:  # bounded: 8 s at most
                threads = max(threads, threading.active_count() - before)
                readable, _, _ = select.select(open_drips, [], [], 0.4)
                for drip in readable:  # an answer (a 408) or the end: either way, the receiver let it go
                    open_drips.remove(drip)
                for drip in open_drips:
                    try:
                        drip.sendall(b"X")  # one more byte of a header name, never ending
                    except OSError:  # reset: let go too
                        open_drips.remove(drip)
            took = time.monotonic() - started
        finally:
            for drip in drips:
                drip.close()
        assert not open_drips and took < 5, f"{len(open_drips)} of {DRIPS} still held after {took:.1f} s"
        assert threads < 10, f"{threads} threads for {DRIPS} dripping connections"
