"""The support agent's own tool: an MCP server that looks up what an order was charged.

Essay: "MCP vertical, A2A horizontal ... the two compose, since one agent can reach down
to its tools and across to its peers in the same run". This is the vertical half: a
tool server the support agent's team wired in itself, speaking MCP (Model Context
Protocol, revision 2025-11-25) over the same JSON-RPC plumbing (transports/jsonrpc.py)
and the same transports as A2A. As an app it answers `initialize`, the
`notifications/initialized` notification (202, no body), `tools/list` and `tools/call`
in the MCP specification's shapes, with JSON responses (Streamable HTTP without a stream).
It is not gated: we own it. Not here: sessions, streaming, resources or prompts.
"""
from __future__ import annotations

from peers.a2a.schema import check
from transports.base import HttpRequest, HttpResponse
from transports.jsonrpc import InvalidParams, dispatch

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

TOOLS_URL = "https://tools.support.example/mcp"  # where the support agent's tool server lives
PROTOCOL_VERSION = "2025-11-25"
ORDERS = {"ORD-3300": 180.0, "ORD-77": 6000.0, "ORD-42": 42.0}  # what each order was charged
LOOKUP_INPUT = {"type": "object", "properties": {"order_id": {"type": "string", "minLength": 1}},
                "required": ["order_id"], "additionalProperties": False}
TOOL = {"name": "lookup_order", "title": "Look up an order",
        "description": "What an order was charged, from the shop's own order system",
        "inputSchema": LOOKUP_INPUT}


def initialize(params: Any, context: Any) -> dict[str, Any]:
    return {"protocolVersion": PROTOCOL_VERSION, "capabilities": {"tools": {}},
            "serverInfo": {"name": "orders-tool", "version": "1.0.0"}}


def initialized(params: Any, context: Any) -> None:
    return None  # a notification: the client is ready; nothing to answer


def list_tools(params: Any, context: Any) -> dict[str, Any]:
    return {"tools": [TOOL]}


def call_tool(params: Any, context: Any) -> dict[str, Any]:
    if not isinstance(params, dict) or params.get("name") != TOOL["name"]:
        raise InvalidParams(f"unknown tool; this server has {TOOL['name']!r}")
    arguments = params.get("arguments")
    problem = check(arguments, LOOKUP_INPUT, "arguments")
    if problem:
        raise InvalidParams(problem)
    charged = ORDERS.get(arguments["order_id"])
    if charged is None:  # a tool's own failure is a result with isError, not a protocol error
        return {"content": [{"type": "text", "text": f"no order {arguments['order_id'][:40]!r}"}],
                "isError": True}
    found = {"order_id": arguments["order_id"], "charged": charged, "currency": "USD"}
    return {"content": [{"type": "text", "text": f"{found['order_id']} was charged ${charged:,.2f}"}],
            "structuredContent": found, "isError": False}


METHODS = {"initialize": initialize, "notifications/initialized": initialized,
           "tools/list": list_tools, "tools/call": call_tool}


def app(request: HttpRequest) -> HttpResponse:
    """The tool server as an app: JSON-RPC over POST, one frame in, one frame out."""
    if request.method != "POST":
        return HttpResponse(405, {"Allow": "POST"})
    body = dispatch(request.body, METHODS)
    if body is None:  # a notification: accepted, with nothing to say (MCP: 202)
        return HttpResponse(202, {})
    return HttpResponse(200, {"Content-Type": "application/json"}, body)
