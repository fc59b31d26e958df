"""What the proxy's tests share: a served billing peer and a proxy in front of it, on 127.0.0.1
port 0, each stopped after its test; the proxy's lines collected as it says them."""
import contextlib
import threading
from types import SimpleNamespace

from peers import billing
from peers.a2a import wire_v10
from peers.app import PeerApp
from peers.support.proxy.faults import Faults, parse
from peers.support.proxy.run import build
from transports.server import PeerServer

TOKEN = "proxy-test-token"
TLS_FLAGS = ("ca", "tls", "tls_cert", "tls_key", "client_cert", "client_key")  # unset unless a test gives them


class Lines:
    """A console for the proxy: what it says and every frame line, in order (threads share it)."""

    def __init__(self):
        self.lines, self.lock, self.listeners = [], threading.Lock(), []

    def say(self, text="", kind=None, **facts):
        with self.lock:
            self.lines.append(text)

    def frame(self, text, frame):
        self.say(text)

    def text(self):
        with self.lock:
            return "\n".join(self.lines)


@contextlib.contextmanager
def billing_served(wire=wire_v10, seen=None, tls=None, private_webhooks=False, log=None, **options):
    """The real billing app; `seen` (a list) gets each HttpRequest it is handed, as it came;
    `tls`: a server TLS context, to serve https; `private_webhooks`: it pushes to 127.0.0.1;
    `log` (a list) gets its server's lines (each request line as it came off the wire)."""
    server = PeerServer(None, "127.0.0.1", 0, idle_timeout=2.0, tls=tls,
                        log=log.append if log is not None else lambda line: None)
    peer = billing.billing_agent(server.base_url, allow_private_webhooks=private_webhooks)
    app = PeerApp(peer, wire, token=TOKEN, log=lambda line: None, **options)
    server.app = app if seen is None else (lambda request: seen.append(request) or app(request))
    server.start()
    try:
        yield server.base_url
    finally:
        server.stop()


@contextlib.contextmanager
def proxy_to(to, *faults, seed=0, keep_card=False, timeout=5.0, read=None, **settings):
    """A proxy forwarding to `to`: (its base URL, its Lines, whose `app` is the proxy's: its
    printer holds what the proxy kept); `read` answers --step's prompts."""
    lines = Lines()
    settings = SimpleNamespace(**{"to": to, "port": 0, "verbose": False, "keep_card": keep_card, "timeout": timeout,
                                  "step": read is not None, "webhook": False, "allow_host": (), **dict.fromkeys(TLS_FLAGS), **settings})
    server, lines.app, upstream = build(settings, lines, Faults([parse(spec, seed) for spec in faults]), read=read)
    server.start()
    try:
        yield server.base_url, lines
    finally:
        server.stop()
        upstream.close()


def broken_off_through_the_proxy(events, *faults, timeout, proxy_timeout=None):
    """What a client reads of an agent's stream (`events()` its chunks) through a proxy told `faults`, one of
    which breaks it off (a TransportError, which the client must get): the bytes, and the proxy's lines."""
    import pytest
    from transports.base import HttpResponse
    from transports.errors import TransportError
    from transports.network import HttpTransport
    agent = PeerServer(lambda request: HttpResponse(200, {"Content-Type": "text/event-stream"}, events()),
                       "127.0.0.1", 0, idle_timeout=2.0).start()
    got = bytearray()
    extra = {} if proxy_timeout is None else {"timeout": proxy_timeout}
    try:
        with proxy_to(agent.base_url, *faults, **extra) as (proxy, lines):
            stream = HttpTransport(timeout=timeout).stream(proxy + "/a2a", b'{"jsonrpc": "2.0", "id": 5, "method": "x"}',
                                                           {"Content-Type": "application/json"})
            with pytest.raises(TransportError):
                for chunk in stream.body:
                    got += chunk
    finally:
        agent.stop()
    return got, lines
