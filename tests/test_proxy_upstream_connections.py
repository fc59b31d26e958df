"""The proxy's connections to the agent stay as many as the server's workers alive: each
worker thread has its own transport, and the server lets an idle worker go, so a transport
whose thread has gone is closed, not kept (with its socket) for the rest of the session."""
import threading

from proxy_helpers import billing_served
from peers.support.proxy.upstream import PerThread
from transports.network import HttpTransport

THREADS = 12  # workers that came, asked once and left, one after another


def test_a_transport_whose_worker_has_gone_is_closed():
    with billing_served() as agent:
        upstream = PerThread(lambda: HttpTransport(timeout=5))
        made = []
        try:
            for _ in range(THREADS):
                worker = threading.Thread(target=lambda: made.append(upstream._mine()) or upstream.get(
                    agent + "/.well-known/agent-card.json", {}))
                worker.start()
                worker.join(5)
            kept = [sock for transport in made for sock in transport._connections.values() if sock.fileno() >= 0]
            assert len(made) == THREADS and len(upstream.made) == 1
            assert len(kept) == 1  # the last worker's kept-alive connection; the others' closed
        finally:
            upstream.close()
        assert not [sock for transport in made for sock in transport._connections.values()]
