"""A test double for the proxy's tests (issue 34): the workbench's own main(), as a learner
runs it, but with --transport http each demo app (billing, the rogue, our own tools) is
served behind a real proxy of its own (peers/support/proxy, as `proxy --to URL` builds it,
on 127.0.0.1 port 0): the support agent's frames cross the proxy to reach the peer. The
run prints what the workbench prints; then, on stderr after PROXY_LINES, what each proxy
said, proxy by proxy. Run it as the workbench: `python tests/demo_through_proxies.py --scenario NAME
--transport http`."""
import contextlib
import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parent)]

from peers import demo  # noqa: E402 - the path first: run as a script
from proxy_helpers import proxy_to  # noqa: E402

PROXY_LINES = "=== what the proxies said ==="
SAID = {}  # hostname -> the Lines of the proxy in front of it


class ServedThroughProxies(demo.Served):
    """demo.Served's apps on 127.0.0.1 as ever, each hostname then resolved to a proxy in front
    of its server instead of to the server itself; each proxy stopped before the servers."""

    def __init__(self, apps, tls=False):
        if tls:
            raise SystemExit("demo_through_proxies: plain HTTP only (a terminating proxy breaks mutual TLS)")
        super().__init__(apps, tls=False)
        self.proxies = contextlib.ExitStack()
        for host, (address, port) in list(self.resolve.items()):
            base, SAID[host] = self.proxies.enter_context(proxy_to(f"http://{address}:{port}", timeout=10.0,
                                                                   allow_host=(host,)))  # reached by the peer's name
            self.resolve[host] = ("127.0.0.1", int(base.rsplit(":", 1)[1]))

    def stop(self):
        self.proxies.close()
        super().stop()


if __name__ == "__main__":
    demo.Served = ServedThroughProxies  # the one part changed: where each hostname leads
    import a2a_delegation
    status = a2a_delegation.main(sys.argv[1:])
    sys.stdout.flush()
    print(PROXY_LINES, file=sys.stderr)
    for host, lines in SAID.items():
        print(f"[{host}]", lines.text(), sep="\n", file=sys.stderr)
    sys.exit(status)
