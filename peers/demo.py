"""The essay's demo network: billing-agent and refund-bot-9000, in process or on real sockets.

In the story these peers belong to other teams; here one process plays them so the run
needs nothing installed. Billing enforces the bearer auth its card declares, with a token
made fresh per run and handed to the support agent's credential store, keyed by
billing's endpoint, the way a platform provisions an audience-bound credential. The
rogue declares `auth: none` and takes anything.

`serve_demo` starts each peer as an HTTP server on 127.0.0.1 (ephemeral ports) and returns
a `resolve` map from the registry's hostnames to those ports. `serve_forever` runs one
peer standalone for `python a2a_delegation.py serve NAME`.
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from types import ModuleType
from typing import Any, Callable, Iterator, NamedTuple
from urllib.parse import urlsplit

from peers import billing, rogue
from peers.app import PeerApp, log_to_stderr
from peers.peer import Peer, utc_now

# name -> (the base URL it has in the essay, how to make it, whether it checks a token)
PEERS: dict[str, tuple[str, Callable[..., Peer], bool]] = {
    "billing-agent": (billing.BASE_URL, billing.billing_agent, True),
    "refund-bot-9000": (rogue.BASE_URL, rogue.refund_bot_9000, False),
}


def new_token() -> str:
    return os.urandom(16).hex()  # 128 random bits; os is already loaded, secrets is not


def random_task_ids() -> Callable[[], str]:
    """Unguessable ids for a served peer: one client cannot read another's task by guessing.

    96 random bits each, drawn from a pool the OS refills 256 ids at a time: os.urandom is
    a system call that lets other threads run mid-request, and paying that per task
    halved the served peer's throughput under concurrent load (bench/http_load.py).
    """
    import threading
    pool, lock = bytearray(), threading.Lock()

    def new_id() -> str:
        with lock:  # two threads must never take the same bytes
            if len(pool) < 12:
                pool.extend(os.urandom(12 * 256))
            chunk = bytes(pool[:12])
            del pool[:12]
        return f"task-{chunk.hex()}"
    return new_id


class DemoNetwork(NamedTuple):
    apps: dict[str, PeerApp]  # base URL -> app
    credentials: dict[str, str]  # endpoint -> bearer token, for the support agent's store


def in_process(wire: ModuleType, *, log: Callable[[str], None] = log_to_stderr,
               scenario: str | None = None) -> DemoNetwork:
    apps, credentials = {}, {}
    for name, (base_url, make, checks_token) in PEERS.items():
        peer = make(base_url)
        if scenario == "injection" and name == "refund-bot-9000":
            peer.card = peer.card._replace(description=rogue.INJECTED_DESCRIPTION)  # trick 6
        token = new_token() if checks_token else None
        apps[base_url] = PeerApp(peer, wire, token=token, log=log)
        if token:
            credentials[peer.card.url] = token
    return DemoNetwork(apps, credentials)


@contextmanager
def transport(kind: str, wire: ModuleType, *, timeout: float,
              scenario: str | None = None) -> Iterator[tuple[Any, dict[str, str]]]:
    """The transport a run uses, with the demo peers behind it: "in-process", or "http"
    with each peer served on 127.0.0.1 until the run ends. Yields it and the credentials
    the support agent was provisioned with."""
    network = in_process(wire, scenario=scenario)
    if kind != "http":
        from transports.inprocess import InProcessTransport
        yield InProcessTransport(network.apps), network.credentials
        return
    from transports.network import HttpTransport
    servers, resolve = serve_demo(network)
    try:
        yield (HttpTransport(resolve=resolve, connect_timeout=timeout, read_timeout=timeout),
               network.credentials)
    finally:
        for server in servers:
            server.stop()


def serve_demo(network: DemoNetwork, *, log: Callable[[str], None] = lambda line: None):
    """Serve every app of `network` on 127.0.0.1; returns (servers, resolve map)."""
    from transports.server import PeerServer
    servers, resolve = [], {}
    try:
        for base_url, app in network.apps.items():
            server = PeerServer(app, "127.0.0.1", 0, log=log).start()
            servers.append(server)
            resolve[urlsplit(base_url).hostname] = server.server_address[:2]
    except OSError:
        for server in servers:
            server.stop()
        raise
    return servers, resolve


def serve_command(args: Any, wire: ModuleType, say: Callable[..., None]) -> int:
    """`a2a_delegation.py serve NAME`: exit status 0, or 2 when the port cannot be had."""
    try:
        serve_forever(args.peer, wire, host=args.host, port=args.port, url=args.url,
                      token=args.token, say=say)
    except OSError as exc:
        say(f"cannot serve {args.peer} on {args.host}:{args.port}: {exc.strerror or exc}",
            error=True)
        return 2
    return 0


def _stop(signum: int, frame: object) -> None:
    import signal
    # SIGTERM ends the server the same clean way Ctrl-C does; once is enough, so a second
    # signal (a supervisor repeating itself) cannot interrupt the clean-up.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise KeyboardInterrupt


def serve_forever(name: str, wire: ModuleType, *, host: str, port: int, url: str | None,
                  token: str | None, say: Callable[[str], None]) -> None:
    """Run one peer as a standalone A2A server until Ctrl-C or SIGTERM."""
    import signal
    from transports.server import PeerServer
    _, make, checks_token = PEERS[name]
    log = lambda line: log_to_stderr(f"[{name}] {line}")  # noqa: E731 - one log for server and app
    server = PeerServer(None, host, port, log=log)  # bind first: the port names the card URL
    try:
        base_url = (url or server.base_url).rstrip("/")  # what the card advertises
        peer = make(base_url, new_task_id=random_task_ids(), clock=utc_now)
        token = (token or new_token()) if checks_token else None
        server.app = PeerApp(peer, wire, token=token, log=log_to_stderr)  # it adds the name
        say(f"[serve] {name} listening on {server.base_url} (wire: {wire.NAME})")
        say(f"[serve] card:     {base_url}/.well-known/agent-card.json")
        say(f"[serve] endpoint: {peer.card.url} (JSON-RPC over POST)")
        if token:
            say(f"[serve] bearer token: {token}  (callers need 'Authorization: Bearer <token>')")
        say("[serve] Ctrl-C or SIGTERM stops it.")
        signal.signal(signal.SIGTERM, _stop)
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut clean-up short
        say(f"[serve] {name} stopped.")
    finally:
        server.server_close()
