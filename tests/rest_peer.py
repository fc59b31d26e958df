"""A test double: an agent that offers only A2A's HTTP+JSON binding, played by a real
billing peer behind a translation of each REST request into the JSON-RPC frame of the
same operation (and of its answer back). It says what it is: a stand-in for an agent we
do not own (the official SDK's REST-only server is the real one, tests/test_interop.py),
so the support agent's HTTP+JSON binding can be tested without it. The frames the
support agent sends and reads are real bytes through the real transports; only this
double's own translation is not the server side's code.
"""
import json
from urllib.parse import parse_qsl

from transports import sse
from transports.base import Body, HttpResponse, parse_url, request

STATUS = {-32001: (404, "NOT_FOUND"), -32002: (400, "FAILED_PRECONDITION"), -32003: (400, "UNIMPLEMENTED"),
          -32004: (400, "UNIMPLEMENTED"), -32005: (415, "INVALID_ARGUMENT"), -32009: (400, "FAILED_PRECONDITION"),
          -32602: (400, "INVALID_ARGUMENT"), -32600: (400, "INVALID_ARGUMENT"), -32601: (404, "NOT_FOUND")}
NUMBERS = ("historyLength", "pageSize")


class RestOnly:
    """`app` (a PeerApp serving a 1.0 card) as an agent whose card lists one HTTP+JSON
    interface, at the same URL, and which answers nothing else (with `jsonrpc_too`, its
    JSON-RPC interface as well)."""

    def __init__(self, app, tenant=None, jsonrpc_too=False):
        self.app, self.base = app, parse_url(app.peer.card.url).path.rstrip("/")
        self.requests = []  # (verb, path): what reached it, in order
        card = json.loads(app.card_body)
        card["supportedInterfaces"] = [{"url": app.peer.card.url, "protocolBinding": "HTTP+JSON",
                                        "protocolVersion": "1.0", **({"tenant": tenant} if tenant else {})}]
        if jsonrpc_too:  # the app's own JSON-RPC interface too, first: an agent offering both
            card["supportedInterfaces"].insert(0, {**card["supportedInterfaces"][0], "protocolBinding": "JSONRPC"})
        self.card = json.dumps(card).encode()
        self.tenant, self.jsonrpc_too = tenant, jsonrpc_too

    def __call__(self, http):
        url = parse_url(http.url)
        if url.path.endswith("/agent-card.json"):
            return HttpResponse(200, {"Content-Type": "application/json"}, self.card)
        if self.jsonrpc_too and url.path.rstrip("/") == self.base:
            return self.app(self.untenanted(http))  # a JSON-RPC frame, to the app as it is, less its tenant
        path = url.path[len(self.base):] if url.path.startswith(self.base + "/") else None
        if self.tenant and path is not None:
            path = path[len(self.tenant) + 1:] if path.startswith(f"/{self.tenant}/") else None
        self.requests.append((http.method, path))
        route = path and self.route(http.method, path, dict(parse_qsl(url.target.partition("?")[2])), http.body)
        if route is None:
            return HttpResponse(404, {"Content-Type": "application/json"}, b'{"error": {"code": 404}}')
        method, params = route
        frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
        headers = {**http.headers, "content-type": "application/json"}
        answer = self.app(request("POST", self.app.peer.card.url, headers, frame))
        if answer.status != 200:
            return answer
        if sse.is_stream(answer.header("Content-Type")):
            return answer._replace(body=Body(unwrapped(answer.body), lambda completed: None))
        return reply(json.loads(answer.body))

    def untenanted(self, http):
        """A JSON-RPC frame naming this double's tenant in its params, as the untenanted app
        behind it takes it: without (as a REST path loses it above). Another is passed on as
        it is, and the app refuses a tenant its card does not name."""
        frame = json.loads(http.body) if self.tenant else None
        params = frame.get("params") if isinstance(frame, dict) else None
        if isinstance(params, dict) and params.get("tenant") == self.tenant:
            del params["tenant"]
            return http._replace(body=json.dumps(frame).encode())
        return http

    def route(self, verb, path, query, body):
        params = {key: int(value) if key in NUMBERS else {"true": True, "false": False}.get(value, value)
                  for key, value in query.items()}
        sent = json.loads(body) if body else {}
        if verb == "POST" and path in ("/message:send", "/message:stream"):
            return ("SendMessage" if path.endswith("send") else "SendStreamingMessage"), sent
        parts = path.split("/")
        if verb == "GET" and path == "/tasks":
            return "ListTasks", params
        if len(parts) == 3 and parts[1] == "tasks":
            task, _, action = parts[2].partition(":")
            named = {("GET", ""): "GetTask", ("POST", "cancel"): "CancelTask",
                     ("POST", "subscribe"): "SubscribeToTask"}.get((verb, action))
            return named and (named, {**params, **sent, "id": task})
        if len(parts) == 4 and parts[1] == "tasks" and parts[3] == "pushNotificationConfigs" and verb == "POST":
            return "CreateTaskPushNotificationConfig", {**sent, "taskId": parts[2]}
        return None


def reply(envelope):
    """A JSON-RPC response as HTTP+JSON's: the result as the body, or the error's status."""
    if "result" in envelope:
        return HttpResponse(200, {"Content-Type": "application/a2a+json"}, json.dumps(envelope["result"]).encode())
    error = envelope["error"]
    status, name = STATUS.get(error["code"], (500, "INTERNAL"))
    body = {"error": {"code": status, "status": name, "message": error["message"], "details": error.get("data") or []}}
    return HttpResponse(status, {"Content-Type": "application/a2a+json"}, json.dumps(body).encode())


def unwrapped(chunks):
    """A JSON-RPC stream's events, each its bare result (HTTP+JSON streams StreamResponses)."""
    decoder = sse.Decoder()
    for chunk in chunks:
        events = decoder.feed(chunk)
        if events:
            yield sse.encode([json.dumps(json.loads(event)["result"]).encode() for event in events])
