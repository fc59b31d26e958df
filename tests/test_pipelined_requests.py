"""Pipelined requests (RFC 9112 9.3): a client may send its next requests before the answers.

A server reads them in turn, as it answers them; what it reads ahead must stay bounded
however fast the client sends, or one connection holds the server's memory.
"""
import socket
import threading
import time

from conftest import serving
from transports.base import HttpResponse

READ_AT_ONCE = 65536  # what one read of a socket takes (server.py, server_answer.py)


def test_a_client_sending_pipelined_requests_without_pause_has_at_most_one_request_and_one_read_held():
    with serving(lambda request: HttpResponse(200, {}, b"ok")) as server:
        requests = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" * 2000  # 52 KiB a write, for as long as it is taken
        sock = socket.create_connection(server.server_address, timeout=3)
        stop, answered = threading.Event(), [0]

        def read() -> None:  # every answer read as it comes: the server is never held up writing
            while not stop.is_set():
                try:
                    answered[0] += sock.recv(1 << 20).count(b"HTTP/1.1 200")
                except TimeoutError:
                    continue
                except OSError:
                    return

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        most, deadline = 0, time.monotonic() + 1.5  # held unbounded, 5 writes pass 4 reads
        try:
            while time.monotonic() < deadline and most <= 4 * READ_AT_ONCE:
                sock.sendall(requests)
                most = max([most, *(len(conn.buffer) for conn in list(server._open.values()))])
        except OSError:
            pass
        finally:
            stop.set()
            sock.close()
            reader.join(5)
        assert answered[0] > 0, "no pipelined request was answered"
        assert most <= 2 * READ_AT_ONCE, f"{most} bytes of pipelined requests held by one connection"
