"""What our side knows of a card that the card itself does not say, and how we reach its agent.

Essay: "Discovering it, though, is not the same as trusting it." An AgentCard
(peers/a2a/model.py) is the peer's own words, the same object on both sides. Where we
fetched it, what its signatures cover, the wire we will speak to its agent and the
binding that carries it are our facts about it (`FetchedCard`); whether we may send it
a payload is our decision (`refusal`). Neither belongs in the shared protocol: a peer
never has them.

A binding (A2A 1.0 section 5: JSON-RPC, gRPC, HTTP+JSON) is how one operation travels
over HTTP; the wire format (peers/a2a/) is how its objects are spelled, the same in
every binding. A 1.0 card lists its interfaces, each a binding at a URL, in its order of
preference. We speak those of the protocol's table (peers/a2a/bindings.py), each in the
module its row names (`Binding` below): JSON-RPC (here: the essay's, every card offers
it but a 1.0 card may not) and HTTP+JSON (http_json.py, loaded only for a card that
needs it). `chosen` picks the first in the table's order the card offers (JSON-RPC where
offered, else HTTP+JSON), or the one --binding forces; a valid card offering none of
them is `Unspeakable`, naming what it offers, never called malformed. Not here: the
allowlist's verdict (config.py, and the trust gate in the story); gRPC.
"""

from __future__ import annotations


from peers.a2a import bindings
from peers.a2a.model import AgentCard, clip
from peers.a2a.schema import check
from peers.a2a.security_schemes import BEARER, kind_of
from peers.a2a.wire_format import WireFormat
from peers.support.calling.config import token_for
from peers.support.calling.contracts import CONTRACTS
from transports import imported, jsonrpc, sse
from transports.base import ClientRequest, HttpResponse
from transports.codec import loads_strict
from transports.errors import HttpRefusal, PeerError
from transports.printer import is_secret_header
from transports.records import Record

MOST_REFUSAL_READ = 64 << 10  # bytes a refusal's body may be to be read for its error: an error object is a few hundred
TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable, Protocol
else:  # an interface below is a documented class at run time, and typing's Protocol to a checker
    Protocol = object

JSONRPC, HTTP_JSON = bindings.JSONRPC.name, bindings.HTTP_JSON.name  # as a card's supportedInterfaces name them
SPOKEN = {row.name: row.spoken_by for row in bindings.BINDINGS}  # binding -> the module with it, preferred first
EITHER = f"{', '.join(list(SPOKEN)[:-1])} or {list(SPOKEN)[-1]}"  # what a card must offer for us to speak to it
# The methods answered with a stream, as 1.0 and 0.3 name them: asked for with Accept: text/event-stream.
STREAMED = frozenset(("SendStreamingMessage", "SubscribeToTask", "message/stream", "tasks/resubscribe"))


class Binding(Protocol):
    """How the support agent sends one A2A operation to an interface, and reads its answer."""

    NAME: str  # as cards name it: "JSONRPC", "HTTP+JSON"
    ENVELOPE: str  # how it carries an operation, in a few words (a lesson sets the two side by side)

    def at(self, url: str, tenant: str | None) -> "tuple[Binding, str]":
        """For an interface at `url` serving `tenant` (None: the default): the binding as it
        speaks to that interface, and where its requests go. Spec 8.3.2 rule 4: every
        request names the interface's tenant, each binding in its own place."""

    def request(self, url: str, method: str, params: Any, headers: dict[str, str],
                request_id: int) -> "tuple[ClientRequest, Callable[[HttpResponse, bool], Any]]":
        """`method` (the wire's JSON-RPC name for an operation) with `params` (its request,
        as the wire spells it) at the interface `url`, as a request to send (sans-IO: the
        binding sends nothing), and how to read its answer: `read(response, attached)` is
        the result, as JSON-RPC's `result` would hold it (for a stream, an iterator of them
        as they arrive), or raises PeerError; `attached`: whether a credential went with it."""


class Unspeakable(PeerError):
    """A card we read and could trust, whose agent we cannot reach by any binding we speak:
    nothing was sent, and the same card will be refused again."""

    def retry_advice(self) -> str:
        return f"nothing was sent; the same card will be refused again until its agent offers {EITHER}"


class FetchedCard(Record):
    """A card as our side found it: the card, and our own facts about it."""

    card: AgentCard  # its url: the interface we will call, by `binding`
    fetched_from: str | None  # the URL we fetched it from (the trust gate compares origins)
    signed: Any  # what its signatures cover, and them (peers/signing/card_signature.py); None: unsigned
    wire: WireFormat  # how we speak to its agent: the card's version, or --wire where it offers that too
    binding: Binding | None = None  # how our frames reach it; None: JSON-RPC, as every card before 1.0


def chosen(offered: list[tuple[str, str, str | None]], forced: str | None = None) -> tuple[Binding, str]:
    """The binding we speak to an agent offering `offered` ((binding, url, tenant), in the
    card's order), as it speaks to that interface (naming its tenant), and where its requests
    go: the first the table prefers (JSON-RPC where offered, the essay's; else HTTP+JSON); or
    `forced` (--binding). Raises Unspeakable naming what the card offers."""
    urls = {name: (url, tenant) for name, url, tenant in reversed(offered)}  # the first of each: the preferred
    wanted = [forced] if forced else list(SPOKEN)
    for name in wanted:
        if name in urls and name in SPOKEN:
            binding: Binding = imported(SPOKEN[name]).BINDING
            return binding.at(*urls[name])
    listed = ", ".join(dict.fromkeys(name[:40] for name, _, _ in offered)) or "no interface"
    asked = f"the {forced} asked for" if forced else EITHER
    raise Unspeakable(f"the card is not supported: it offers {listed[:200]}, not {asked}")


class JsonRpc:
    """A2A's JSON-RPC binding (1.0 section 9; the essay's): every operation a POST of one
    envelope to the one endpoint, the method inside it; a stream, one envelope per event.
    Made for an interface serving a tenant, it names that tenant in every request."""

    NAME = JSONRPC
    ENVELOPE = "one envelope POSTed to the endpoint, the operation named inside it (\"method\")"

    def __init__(self, tenant: str | None = None) -> None:
        self.tenant = tenant  # the interface's (spec 8.3.2 rule 4); None: it names none, and neither do we

    def at(self, url: str, tenant: str | None) -> "tuple[JsonRpc, str]":
        """The one endpoint is the interface's URL; a tenant rides in each request's params."""
        return (JsonRpc(tenant) if tenant else self), url

    def request(self, url: str, method: str, params: Any, headers: dict[str, str],
                request_id: int) -> "tuple[ClientRequest, Callable[[HttpResponse, bool], Any]]":
        if self.tenant:  # a field of every 1.0 request message (a2a.proto, first): the card's value, exactly
            params = {"tenant": self.tenant, **{key: value for key, value in (params or {}).items()
                                                if key != "tenant"}}
        headers = {"Content-Type": "application/json", **({"Accept": sse.MEDIA_TYPE} if method in STREAMED else {}),
                   **headers}
        sent = ClientRequest("POST", url, headers, jsonrpc.encode_request(request_id, method, params), self.NAME)

        def read(response: HttpResponse, attached: bool = False) -> Any:
            if response.status != 200:
                raise refused(response.status, headers, url, attached, response.header("Retry-After"), response.body)
            if sse.is_stream(response.header("Content-Type")):
                return sse.events(response.body, lambda event: jsonrpc.decode_response(event, request_id))
            return jsonrpc.decode_response(response.body, request_id)
        return sent, read


BINDING = JsonRpc()


def refused(status: int, headers: dict[str, str], url: str, attached: bool = False,
            wait: str | None = None, body: Any = b"") -> HttpRefusal:
    """An HTTP error with no A2A answer in it, saying whether a credential went with it: in
    `headers`, or `attached` by the transport that sent it (transports/credentialed.py); `wait`,
    its Retry-After; and what the error object in its `body` says, if it holds one (`error_in`)."""
    sent = attached or any(is_secret_header(name) for name in headers)
    code, said = error_in(body)
    return HttpRefusal(status, credentials_sent=sent, wait=wait, said=said, code=code,
                       hint="" if sent else f"give the support agent a credential for {url} with --credentials")


def error_in(body: Any) -> tuple[Any, str | None]:
    """The code and message of the error object a refusal's body holds, JSON-RPC's or HTTP+JSON's (google.rpc.Status,
    its code HTTP's), as (None, None) for any other body: read strictly, and only if at most MOST_REFUSAL_READ bytes."""
    if not isinstance(body, bytes) or len(body) > MOST_REFUSAL_READ:
        return None, None
    try:
        error = loads_strict(body).get("error")
    except (ValueError, AttributeError):  # not JSON, past a limit, or not an object: it names no error
        return None, None
    message = error.get("message") if isinstance(error, dict) else None
    return error.get("code") if isinstance(error, dict) else None, message if isinstance(message, str) else None


def only_bearer(card: AgentCard) -> bool:
    """Whether the card asks for nothing but the essay's bearer token, if anything. A card
    that also lets a caller in with nothing (an empty requirement) is credentials.py's to judge."""
    return set(card.auth_schemes) <= {BEARER.kind, "none"} and all(card.security_requirements) and all(
        kind_of(scheme) is BEARER for scheme in card.security_schemes)


def unheld(card: AgentCard, store: dict[str, Any]) -> str | None:
    """Why the support agent holds no credential the card asks for, saying what would be
    needed; None when it holds one, or the card asks for none. A card asking for more
    than a bearer token is judged by credentials.py, loaded only for such a card."""
    if only_bearer(card) or not card.security_schemes:  # the essay's card names its schemes, no more
        required = [scheme for scheme in card.auth_schemes if scheme != "none"]
        if required and not (BEARER.kind in required and token_for(store, card.url)):
            return f"its card requires {clip(required)} and the support agent holds no credential for it"
        return None
    from peers.support.calling.credentials import choose
    from peers.support.calling.held import Unheld
    try:
        choose(card, store)
    except Unheld as refusal:
        return str(refusal)
    return None


def refusal(card: AgentCard, skill_id: str, payload: Any, *, unheld: str | None = None,
            media_type: str = "application/json") -> str | None:
    """Why, by its own card, this agent cannot be sent `payload` for `skill_id`; None if it
    can. Essay: the card is "everything a caller needs to know to decide whether and how to
    talk to this agent": the skill, the modes, the input contract, the auth."""
    skill = next((s for s in card.skills if s.id == skill_id), None)
    if skill is None:
        return f"its card offers no {skill_id!r} skill (it offers {clip(card.skill_ids)})"
    if media_type not in skill.input_modes and "*/*" not in skill.input_modes:
        return f"its {skill_id!r} skill takes {clip(list(skill.input_modes))}, not {media_type}"
    schema = skill.input_schema if skill.input_schema is not None else CONTRACTS.get(skill_id)  # else our own copy
    problem = check(payload, schema, "payload") if schema else None
    if problem:  # seed 000: a payload that breaks the contract never leaves
        return f"the payload breaks its {skill_id!r} skill's input contract: {problem}"
    return unheld  # the auth: a credential we hold for what the card asks (`unheld` says why not)


def smuggled(payload: Any, metadata: dict[str, Any], credentials: dict[str, Any]) -> str | None:
    """Seed 004: what we send never carries a credential (the transferor's credentials are
    what a handoff "does not send"): where one sits in `payload` or `metadata` (the
    envelope), and why it stays, or None. `credentials`: our own store, whose secrets are
    looked for by value too, however their member is named."""
    from peers.contracts.no_credentials import credential_in
    held = frozenset(secret for value in credentials.values()
                     for secret in ((value,) if isinstance(value, str) else value if isinstance(value, tuple) else ())
                     if isinstance(secret, str) and len(secret) >= 4)
    found = credential_in(payload, "payload", held) or credential_in(metadata, "metadata", held)
    return f"{found}; the support agent puts none in what it sends" if found else None
