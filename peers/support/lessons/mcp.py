"""--scenario mcp: MCP vertical, then A2A horizontal, in one run, through one printer.

Essay: "MCP vertical, A2A horizontal" (Fig 3): "one agent can reach down to its tools and
across to its peers in the same run, and both exchanges look like JSON-RPC on the wire".
The support agent first asks its own tool (orders_tool.py) what the order was charged,
over MCP: `initialize`, the `notifications/initialized` notification, `tools/list`,
`tools/call`. Then it delegates the refund of that amount across to billing over A2A,
through the trust gate. The tool has no gate: the support agent's team wired it in. The
peers do: they belong to other teams. The output says so.
"""
from __future__ import annotations

from peers.a2a.model import AgentCard
from peers.a2a.schema import check
from peers.support.calling.cards import BINDING as JSON_RPC
from peers.support.lessons import Lesson
from peers.support.lessons import orders_tool
from peers.support.lessons.orders_tool import PROTOCOL_VERSION, TOOLS_URL
from peers.support.output import Kind
from transports import jsonrpc
from transports.errors import PeerError, ProtocolViolation

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from peers.support.calling.story_steps import Steps
    from peers.support.calling.outcomes import Outcome

ORDER = "ORD-3300"
LOOKED_UP = {"type": "object", "required": ["order_id", "charged"],
             "properties": {"order_id": {"type": "string"},
                            "charged": {"type": "number", "exclusiveMinimum": 0, "maximum": 1_000_000}}}
HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": PROTOCOL_VERSION}


LESSON = Lesson(
    about="MCP vertical, A2A horizontal in one run: the support agent looks up the charge with its own "
          "tool over MCP (no gate: we wired it in), then delegates the refund to billing over A2A "
          "(gated: another team's)",
    teaches="essay: MCP vertical, A2A horizontal", order=40,
    own_apps={TOOLS_URL: orders_tool.app})


def run(story: Steps, card_urls: list[str]) -> list[Outcome]:
    """The tool call down, then the delegation across."""
    say = story.say
    say(f"[transport] {story.label}. MCP = vertical (agent -> tools);", Kind.BANNER)
    say("A2A = horizontal (agent -> agent). Same plumbing, opposite direction.", Kind.BANNER)
    say()
    say(f"[mcp] down to the support agent's own tool server at {TOOLS_URL}: wired in by us, "
        "so there is no trust gate")
    try:
        charged = lookup_order(story, ORDER)
    except PeerError as failure:
        return [story.failed(TOOLS_URL, None, f"the tool call failed: {failure}")]
    say(f"[mcp] the tool says {ORDER} was charged ${charged:,.2f}: that is the refund to ask for")
    outcomes, met = [], []
    for card_url in card_urls:  # across, to the peers: each meets the trust gate
        say()
        card = story.find(card_url)
        met += [card] if isinstance(card, AgentCard) else []
        outcomes.append(story.delegate(card, "process_refund", {"order_id": ORDER, "amount": charged})
                        if isinstance(card, AgentCard) else card)
    say()
    # Said of this run: the peers whose card was read met the gate, each over the binding its card chose.
    say("[support] the tool was called with no trust gate: we wired it in. " +
        ("Each peer met the gate:" if met else "No peer's card could be used, so none met the gate."), Kind.BANNER)
    if met:
        spoken = {(story.fetched(card).binding or JSON_RPC).NAME for card in met}
        say("we do not own it. " + ("MCP and A2A rode the same JSON-RPC envelope, through the same printer."
                                     if spoken == {JSON_RPC.NAME} else "MCP rode JSON-RPC, A2A " +
                                     " and ".join(sorted(spoken)) + ", through the same printer."), Kind.BANNER)
    return outcomes


def lookup_order(story: Steps, order_id: str) -> float:
    """initialize, initialized, tools/list, tools/call: the charge of `order_id`. Sent as
    JSON-RPC through the run's printer, its ids the run's: no credential of ours goes to
    our own tool, and no card or trust gate stands before it."""
    def call(method: str, params: dict) -> object:
        request, read = JSON_RPC.request(TOOLS_URL, method, params, HEADERS, story.request_id())
        return read(story.printer.send(request))
    call("initialize", {"protocolVersion": PROTOCOL_VERSION, "capabilities": {},
                        "clientInfo": {"name": "support-agent", "version": "1.0.0"}})
    story.printer.post(TOOLS_URL, jsonrpc.encode_notification("notifications/initialized"),
                       {"Content-Type": "application/json", **HEADERS})
    tools = call("tools/list", {})
    if not isinstance(tools, dict) or "lookup_order" not in [t.get("name") for t in tools.get("tools", [])
                                                              if isinstance(t, dict)]:
        raise ProtocolViolation("the tool server lists no lookup_order tool")
    result = call("tools/call", {"name": "lookup_order", "arguments": {"order_id": order_id}})
    found = result.get("structuredContent") if isinstance(result, dict) else None
    if check(found, LOOKED_UP, "structuredContent") or result.get("isError") is not False:
        raise ProtocolViolation(f"the tool gave no charge for {order_id}")
    return float(found["charged"])
