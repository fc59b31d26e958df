"""Each protocol binding, one row each, for both sides to ask.

Spec: A2A 1.0 section 5 (a binding: how one operation travels over HTTP; the objects
are the wire format's, the same in every binding), 8 (a card's supportedInterfaces:
each a binding at a URL, in the agent's order of preference), 9 (JSON-RPC) and 11
(HTTP+JSON). A row says what both sides know of a binding, as data: its name as a card
spells it (and, lower-cased, as --binding takes it), the module that serves it on a peer
and the one that speaks it on the support agent's side (dotted names: each side imports
only its own, and only once a request or a card needs it), where a request to it arrives
under the agent's endpoint, and which protocol versions a 1.0 card lists it under. The
rows' order is the preference: a 1.0 card lists them so, and the support agent speaks
the first of them a card offers.
Not here: what truly differs by binding (matching a request, spelling one: the modules
a row names); HTTP+JSON's routes (routes.py); gRPC, which neither side speaks.
"""


class ProtocolBinding:
    """One binding's row. A plain class, not a NamedTuple: the default run loads this table,
    and making a NamedTuple's class costs more than the rest of the module (bench/startup.py)."""

    __slots__ = ("name", "served_by", "spoken_by", "below", "listed")

    def __init__(self, name: str, served_by: str, spoken_by: str, below: str | None,
                 listed: tuple[str, ...]) -> None:
        self.name = name  # a card's protocolBinding; lower-cased, what --binding takes
        self.served_by = served_by  # the peer side's module: its SERVED(methods, log, max_body) answers requests
        self.spoken_by = spoken_by  # the support agent's module: its BINDING sends an operation, reads the answer
        # Where its requests arrive: None, the endpoint itself; else any path below the endpoint
        # that begins so (the longest such prefix wins: "" takes what no other row does).
        self.below = below
        self.listed = listed  # the protocol versions a 1.0 card lists it under, in order; (): not listed


JSONRPC = ProtocolBinding("JSONRPC", "peers.jsonrpc_binding", "peers.support.calling.cards", None, ("1.0", "0.3"))
HTTP_JSON = ProtocolBinding("HTTP+JSON", "peers.rest", "peers.support.calling.http_json", "", ("1.0",))
BINDINGS = (JSONRPC, HTTP_JSON)


def arriving_at(below: str | None) -> tuple[ProtocolBinding, str] | None:
    """The binding a request belongs to by its path under the endpoint (`below`, no leading
    '/'; None: the endpoint itself), and the route that is left for it, its query cut off;
    None if no binding's requests arrive there."""
    if below is None:
        return next(((row, "") for row in BINDINGS if row.below is None), None)
    taking = [row for row in BINDINGS if row.below is not None and below.startswith(row.below)]
    if not taking:
        return None
    row = max(taking, key=lambda row: len(row.below))
    return row, below[len(row.below):].partition("?")[0]
