"""Resource attacks on a served peer, and honest service measured while they run.

Each attack is a stranger's (or a token holder's) sockets on 127.0.0.1, run by one
background thread whose every loop is bounded by a deadline; `honest_ratio` counts the
honest requests answered within a second while it runs. tests/test_resource_attacks.py runs
them at the sizes issue 23 names; bench/attacks.py runs them heavier and prints the
ratios. Not here: what the server does about them (transports/server.py).
"""
from __future__ import annotations

import selectors
import socket
import threading
import time
from typing import Callable

from transports.network import HttpTransport

HEAD = b"POST /a2a HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
MOST_SECONDS = 60.0  # no attack outlives this, whatever the caller forgets


def enough_files(needed: int) -> bool:
    """Raise this process's open-file limit toward `needed` if it may; whether it is enough."""
    try:
        import resource
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft < needed:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(needed, hard), hard))
        return resource.getrlimit(resource.RLIMIT_NOFILE)[0] >= needed
    except (ImportError, OSError, ValueError):
        return False


class Attack:
    """`count` sockets to `address`, each opened by `begin` and nudged by `nudge` every
    `every` seconds from one thread; a socket the server closes is opened again, as a
    persistent attacker would. A context manager: the sockets close on leaving."""

    def __init__(self, address: tuple, count: int, every: float = 1.0) -> None:
        self.address, self.count, self.every = address[:2], count, every
        self.socks: list[socket.socket] = []
        self.reopened = 0
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def begin(self, sock: socket.socket) -> None:
        """What a new socket sends first (nothing, for an idle one)."""

    def nudge(self, sock: socket.socket, round_number: int) -> None:
        """What each socket sends every `every` seconds (nothing, for an idle one)."""

    def __enter__(self) -> "Attack":
        self.socks = [self._open() for _ in range(self.count)]
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self.thread.join(timeout=5)
        for sock in self.socks:
            sock.close()

    def _open(self) -> socket.socket:
        sock = socket.create_connection(self.address, timeout=2)
        try:
            self.begin(sock)
        except OSError:
            pass  # refused already: the next round sees it closed and opens another
        return sock

    def _run(self) -> None:
        ends, round_number = time.monotonic() + MOST_SECONDS, 0
        while not self.stopping.is_set() and time.monotonic() < ends:
            round_number += 1
            with selectors.DefaultSelector() as waiting:  # select() itself takes no fd over 1023
                for sock in self.socks:
                    waiting.register(sock, selectors.EVENT_READ)
                readable = {key.fileobj for key, _ in waiting.select(0)}
            for index, sock in enumerate(self.socks):
                if sock in readable and not self._still_open(sock):
                    sock.close()
                    self.reopened += 1
                    try:
                        self.socks[index] = sock = self._open()
                    except OSError:
                        continue
                try:
                    self.nudge(sock, round_number)
                except OSError:
                    pass
            self.stopping.wait(self.every)

    @staticmethod
    def _still_open(sock: socket.socket) -> bool:
        """Read what the server said; False once it has closed (or reset) the connection."""
        sock.setblocking(False)
        try:
            return bool(sock.recv(65536))
        except BlockingIOError:
            return True
        except OSError:
            return False
        finally:
            sock.settimeout(2)


class IdleSockets(Attack):
    """Connections that send nothing at all."""


class DrippingHeads(Attack):
    """A slowloris: each connection sends a request head one byte every `every` seconds,
    never finishing it."""

    def begin(self, sock: socket.socket) -> None:
        sock.sendall(HEAD)

    def nudge(self, sock: socket.socket, round_number: int) -> None:
        sock.send(b"X-Drip: " if round_number % 40 == 1 else b"\r\n" if round_number % 40 == 0 else b"a")


class KeptAlive(Attack):
    """Connections that make one request, read its answer, and then idle, kept alive."""

    def __init__(self, address: tuple, count: int, request: bytes, every: float = 1.0) -> None:
        super().__init__(address, count, every)
        self.request = request

    def begin(self, sock: socket.socket) -> None:
        sock.sendall(self.request)
        sock.recv(65536)


class SlowBodies(Attack):
    """A whole head announcing a body of 4,096 bytes, then the body one byte a round."""

    def begin(self, sock: socket.socket) -> None:
        sock.sendall(HEAD + b"Content-Length: 4096\r\n\r\n")

    def nudge(self, sock: socket.socket, round_number: int) -> None:
        sock.send(b" ")


class Reopening:
    """Over the cap: `count` connections to `address` held by one thread, each opened again
    as soon as the server closes it, all at once (`per_second` None) or paced at
    `per_second`. Each sends `first` (a request head begun; b"": a TLS handshake that sends
    nothing) and, with `drip`, a byte a second after it, never finishing. A context manager."""

    def __init__(self, address: tuple, count: int, first: bytes = HEAD, per_second: float | None = None,
                 drip: bool = True) -> None:
        self.address, self.count, self.first = address[:2], count, first
        self.per_second, self.drip, self.reopened = per_second, drip, 0
        self.waiting = selectors.DefaultSelector()  # select() itself takes no fd over 1023
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> "Reopening":
        for _ in range(self.count):
            self._open()
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self.thread.join(timeout=5)
        for key in list(self.waiting.get_map().values()):
            key.fileobj.close()
        self.waiting.close()

    def _open(self) -> bool:
        try:
            sock = socket.create_connection(self.address, timeout=0.5)
            sock.sendall(self.first)
            sock.setblocking(False)
        except OSError:
            return False
        self.waiting.register(sock, selectors.EVENT_READ)
        return True

    def _run(self) -> None:
        ends, closed, budget, last, dripped = time.monotonic() + MOST_SECONDS, 0, 0.0, time.monotonic(), 0.0
        while not self.stopping.is_set() and (now := time.monotonic()) < ends:
            for key, _ in self.waiting.select(0.01):
                try:
                    if key.fileobj.recv(65536):
                        continue  # an answer (408, 503): the close follows
                except BlockingIOError:
                    continue
                except OSError:
                    pass
                self.waiting.unregister(key.fileobj)
                key.fileobj.close()
                closed += 1
            budget = closed if self.per_second is None else min(closed, budget + (now - last) * self.per_second)
            last = now
            while budget >= 1 and closed and not self.stopping.is_set():
                budget, closed = budget - 1, closed - 1
                self.reopened += 1
                if not self._open():
                    closed += 1  # the backlog is full: try again next round
                    break
            if self.drip and now - dripped >= 1.0:
                dripped = now
                for key in list(self.waiting.get_map().values()):
                    try:
                        key.fileobj.send(b"a")
                    except OSError:
                        pass


def answered_within(base_url: str, frame: bytes, headers: dict[str, str], seconds: float = 1.0) -> bool:
    """One honest request on a fresh connection: answered 200 within `seconds`?"""
    transport, started = HttpTransport(timeout=seconds), time.monotonic()
    try:
        return transport.post(f"{base_url}/a2a", frame, headers).status == 200 \
            and time.monotonic() - started <= seconds
    except Exception:  # noqa: BLE001 - a refusal, a reset, a timeout: not answered
        return False
    finally:
        transport.close()


def honest_ratio(ask: Callable[[], bool], count: int, spacing: float = 0.02) -> tuple[int, int]:
    """(how many of `count` honest requests `ask` got answered, count), one after another."""
    answered = 0
    for _ in range(count):
        answered += ask()
        time.sleep(spacing)
    return answered, count


def held_open(inner: Callable, release: threading.Event) -> Callable:
    """`inner`, but GET /held answers "held" and then waits for `release` (5 s at most): a
    long answer, as an event stream is, so its connection counts as being answered."""
    from transports.base import HttpResponse

    def long_answer():
        yield b"held\n"
        release.wait(5)

    def app(request):
        return HttpResponse(200, {"Content-Type": "text/plain"}, long_answer()) if request.url.endswith("/held") \
            else inner(request)
    return app


REBOUND_HOST = "hook.rebind.test"


def rebinding_dns(real: Callable) -> Callable:
    """A getaddrinfo whose answer for REBOUND_HOST depends on who asks: the webhook guard's
    lookups (from public_address) see 127.0.0.1, any later one 127.0.0.2, as a DNS server
    rebinding the name between check and use would answer; other names as `real` answers."""
    import inspect

    def dns(host, *args, **options):
        if host != REBOUND_HOST:
            return real(host, *args, **options)
        if (options.get("flags", 0) or (args[3] if len(args) > 3 else 0)) & socket.AI_NUMERICHOST:
            raise socket.gaierror("not numeric")
        judged = any(frame.function == "public_address" for frame in inspect.stack(0))
        return real("127.0.0.1" if judged else "127.0.0.2", *args, **options)
    return dns
