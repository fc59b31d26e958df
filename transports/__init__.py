"""Transports: JSON-RPC 2.0 envelopes, and the small interface that moves one frame.

Nothing in this package knows A2A. `codec` is the strict, bounded JSON codec every byte
from outside passes through; `jsonrpc` turns bytes into requests and responses (sans-IO)
and `dispatch()` is where a server's exceptions become error objects; `errors` is the
client side's one family of failures. `base` names the one-frame transport interface
and the one URL check; `inprocess` (the shim), `network` (HTTP/1.1 over sockets, with
`http11` reading a reply) and `server` (with `http11_server` reading a request,
`chunked_body` a chunked body, `server_answer` answering it and `workers` its threads) move
frames; `room` picks the connection a full server closes;
`printer` wraps any transport and is the only code that prints frames;
`stepping` pauses it for a learner. Small parts both sides share: `digests` (SHA-256,
BLAKE2b and a constant-time comparison without loading OpenSSL for small inputs),
`seconds` (a time written out once a second, safely across threads), `ports` (a loopback port
for a server started on one it is told), `escaping` (text a peer controls, made safe to print),
`lookups` (a host name's addresses, within a deadline) and `certificate_dates` (when a
certificate is valid).
Essay: Delegation over JSON-RPC ("reusing Part 12's transport").

One habit every module of the house shares: typing's names (Any, Callable, Protocol ...) are
imported under `if TYPE_CHECKING:`, where TYPE_CHECKING is the module's own False (type
checkers read the block as true), and `from __future__ import annotations` keeps every
annotation text. Importing typing costs about 16 million instructions, a tenth of the default
run's start (bench/startup.py), and no run needs a value from it but a durable store's row
check (peers/durable_codec.py). A protocol class (an interface) is a plain class at run time. And a
module named at run time (a wire format, a binding) is loaded by `imported` below, not importlib's
import_module, whose package loads warnings too: 1.5 million instructions of every start.

Must not import: anything in `peers` (A2A's objects, the peers, the support agent). The
transports are the plumbing both sides share.
"""
import sys
from types import ModuleType

TYPE_CHECKING = False  # the story file's (a2a_delegation.py): one line fewer for a learner stepping through it


def imported(name: str) -> ModuleType:
    """The module `name` (dotted), imported first if it is not yet: importlib.import_module's answer."""
    __import__(name)
    return sys.modules[name]
