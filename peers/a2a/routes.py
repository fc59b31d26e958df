"""A2A 1.0's HTTP+JSON routes, written once: the verb and path of each operation.

Spec: A2A 1.0 section 11.3 (the routes, as the proto's google.api.http annotations give
them), 11.5 (a GET's or DELETE's fields in the query, typed back from strings) and 5.3
(each operation's JSON-RPC method). One row per operation: the verbs it is served at
(the first is the one a client sends), its path under the agent's endpoint, whose
{names} are fields of the request taken into the path. A POST carries the rest of the
request as its body; a GET or DELETE, in the query. The served side (peers/rest.py) and
the support agent's client (peers/support/calling/http_json.py) both read `ROUTES`; what they do
with a row (match a request line, or spell one) is theirs.
Not here: the HTTP status of each error (peers/rest.py STATUS), the tenant segment,
A2A 0.3's REST paths (/v1/...), which neither side speaks.
"""

import re

from peers.a2a import wire_v10
from transports.records import Record


class Route(Record):
    operation: str  # what it asks for: a value of wire_v10.METHODS, a key of peers/methods.py OPERATIONS
    verbs: tuple[str, ...]  # GET, POST or DELETE; a client sends the first
    path: str  # section 11.3's pattern, under the endpoint, no leading '/'

    @property
    def method(self) -> str:
        """The JSON-RPC method that asks for the same operation (section 5.3)."""
        return next(method for method, operation in wire_v10.METHODS.items() if operation == self.operation)

    @property
    def in_path(self) -> tuple[str, ...]:
        """The request's fields the path carries: GetTask's `id`; a push config's `taskId` and `id`."""
        return tuple(PLACEHOLDER.findall(self.path))


# Section 11.3, in its order. SubscribeToTask is POST there and GET in a2a.proto's http
# annotation: both served, as the official SDK does; a client sends the POST (our transports stream a POST).
ROUTES = (
    Route("send", ("POST",), "message:send"),
    Route("stream", ("POST",), "message:stream"),
    Route("get", ("GET",), "tasks/{id}"),
    Route("list", ("GET",), "tasks"),
    Route("cancel", ("POST",), "tasks/{id}:cancel"),
    Route("subscribe", ("POST", "GET"), "tasks/{id}:subscribe"),
    Route("push-set", ("POST",), "tasks/{taskId}/pushNotificationConfigs"),
    Route("push-get", ("GET",), "tasks/{taskId}/pushNotificationConfigs/{id}"),
    Route("push-list", ("GET",), "tasks/{taskId}/pushNotificationConfigs"),
    Route("push-delete", ("DELETE",), "tasks/{taskId}/pushNotificationConfigs/{id}"),
    Route("extended-card", ("GET",), "extendedAgentCard"),
)
PLACEHOLDER = re.compile(r"\{(\w+)\}")
# Section 11.5: a query parameter is a string; these fields are booleans (a number's digits are
# read by the wire itself, as ProtoJSON reads an int32's: fields.count).
QUERY_BOOLEANS = ("includeArtifacts",)


def in_query(verb: str) -> bool:
    """Section 11.5: a GET or DELETE carries its fields in the query; a POST, in its body."""
    return verb in ("GET", "DELETE")


def pattern(route: Route) -> re.Pattern[str]:
    """A route's path as a regex ending where the request's path ends, each {name} one path
    segment captured under that name. The path is routed whole: a {name} never ends in one
    of the table's `:verb`s, so `tasks/t-1:cancel` is CancelTask's path (asked with GET, a
    405), never GetTask of a task "t-1:cancel". A value holding ':' is sent as %3A, which
    RFC 3986 2.2 makes data, not a delimiter: `tasks/t-1%3Acancel` is GetTask of it."""
    parts = PLACEHOLDER.split(route.path)
    return re.compile("".join(re.escape(part) if index % 2 == 0 else f"(?P<{part}>[^/]+){_NO_VERB_AT_END}"
                              for index, part in enumerate(parts)) + "$")


# The custom verbs section 11.3's paths end in: send, stream, cancel, subscribe.
VERBS = tuple(dict.fromkeys(verb for route in ROUTES for verb in re.findall(r":(\w+)$", route.path)))
_NO_VERB_AT_END = "".join(f"(?<!:{verb})" for verb in VERBS)  # checked where a {name}'s value ends
