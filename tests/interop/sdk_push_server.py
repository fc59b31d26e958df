"""Run with a Python that has `a2a-sdk[http-server]` and `uvicorn` (tests/test_interop.py does).

An A2A 1.0 agent built with the official Python SDK that takes its time, so that a caller
who does not hold the connection open (--no-wait, --push) really has to follow the task:
`slow-refunds` declares streaming and push notifications, keeps push configs in the SDK's
InMemoryPushNotificationConfigStore and delivers them with its BasePushNotificationSender.
Its executor takes a refund request (a data part, or text), says the task is working,
waits WORK_SECONDS, emits one artifact, "sdk refund of <amount> for <order> (ref
SDK-<order>)", and completes.

It binds 127.0.0.1 (PORT, or 0 for a free one), then prints "listening on BASE_URL" once
the socket is bound. It accepts any push URL (the SDK's default: no URL screening), which
is what lets our webhook on 127.0.0.1 be told. It does not check a token, cancel, or keep
anything after it stops. With --rest-only it serves the SDK's REST routes only
(create_rest_routes) under /rest, and its card lists one interface, HTTP+JSON there: an
agent a JSON-RPC-only client cannot reach. With `--api-key KEY` its card declares an API
key in the X-API-Key header (the SDK's APIKeySecurityScheme) and requires it, and with
`--basic USER:PASSWORD` HTTP Basic; every request to /a2a and /rest without it is answered
401 (the SDK leaves checking a credential to the app: this is a Starlette middleware).
Usage: python sdk_push_server.py [PORT] [--rest-only] [--api-key KEY | --basic USER:PASSWORD]
"""
import asyncio
import base64
import hmac
import json
import socket
import sys

import httpx
import uvicorn
from a2a.helpers import new_task
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import (BasePushNotificationSender, InMemoryPushNotificationConfigStore,
                              InMemoryTaskStore, TaskUpdater)
from a2a.types import (AgentCapabilities, AgentCard, AgentInterface, AgentSkill, APIKeySecurityScheme,
                       HTTPAuthSecurityScheme, Part, SecurityRequirement, SecurityScheme, StringList, TaskState)
from google.protobuf.json_format import MessageToDict
from starlette.applications import Starlette
from starlette.responses import JSONResponse

NAME, RPC_PATH, REST_PATH = "slow-refunds", "/a2a", "/rest"
WORK_SECONDS = 0.5  # long enough that the first answer to --no-wait and --push is not the last


def refund_of(context: RequestContext) -> str:
    """The result for the refund asked for: from a data part {"order_id", "amount"}, else the text."""
    for part in context.message.parts:
        if part.HasField("data"):
            request = MessageToDict(part.data)
            if isinstance(request, dict) and "order_id" in request:
                order = str(request["order_id"])
                return f"sdk refund of {request.get('amount')} for {order} (ref SDK-{order})"
    text = context.get_user_input() or "(no text)"
    return f"sdk refund for: {text}"


class SlowRefunds(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue) -> None:
        # SDK 1.3: the Task must be on the queue before any status update.
        await event_queue.enqueue_event(new_task(context.task_id, context.context_id,
                                                 TaskState.TASK_STATE_SUBMITTED))
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work()
        await asyncio.sleep(WORK_SECONDS)
        await updater.add_artifact([Part(text=refund_of(context))], name="refund")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue) -> None:
        raise NotImplementedError


def scheme_of(flags: list[str]) -> tuple[str, SecurityScheme, str, str, str] | None:
    """The one scheme asked for: its name on the card, the card's SecurityScheme, and the
    header, value and challenge a request must carry; None for no scheme."""
    if "--api-key" in flags:
        key = flags[flags.index("--api-key") + 1]
        return ("apiKey", SecurityScheme(api_key_security_scheme=APIKeySecurityScheme(location="header",
                                                                                      name="X-API-Key")),
                "x-api-key", key, "ApiKey")
    if "--basic" in flags:
        pair = base64.b64encode(flags[flags.index("--basic") + 1].encode()).decode()
        return ("basic", SecurityScheme(http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="Basic")),
                "authorization", f"Basic {pair}", f'Basic realm="{NAME}"')
    return None


def guarded(app, scheme):
    """`app`, answering 401 to a request to the agent's endpoints without the credential."""
    name, _, header, value, challenge = scheme

    async def guard(scope, receive, send) -> None:
        carried = dict(scope.get("headers", [])).get(header.encode(), b"")
        if scope["type"] == "http" and scope["path"].startswith((RPC_PATH, REST_PATH)) \
                and not hmac.compare_digest(carried, value.encode()):
            refused = JSONResponse({"error": f"{name} is required"}, 401, headers={"WWW-Authenticate": challenge})
            return await refused(scope, receive, send)
        return await app(scope, receive, send)
    return guard


def agent_card(base: str, rest_only: bool = False, scheme=None) -> AgentCard:
    interface = AgentInterface(url=base + REST_PATH, protocol_binding="HTTP+JSON", protocol_version="1.0") \
        if rest_only else AgentInterface(url=base + RPC_PATH, protocol_binding="JSONRPC", protocol_version="1.0")
    return AgentCard(
        name=NAME, description="Refunds, slowly (official Python SDK, push and streaming).", version="0.1.0",
        supported_interfaces=[interface],
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        default_input_modes=["application/json", "text/plain"], default_output_modes=["text/plain"],
        skills=[AgentSkill(id="process_refund", name="Refund", description="Issues a refund", tags=["demo"],
                           input_modes=["application/json", "text/plain"],
                           output_modes=["application/json", "text/plain"])],
        security_schemes={scheme[0]: scheme[1]} if scheme else {},
        security_requirements=[SecurityRequirement(schemes={scheme[0]: StringList()})] if scheme else [])


def main(port: int, rest_only: bool = False, scheme=None) -> None:
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))  # bound before the card is made: the card names the port
    base = f"http://127.0.0.1:{listener.getsockname()[1]}"
    card = agent_card(base, rest_only, scheme)
    configs = InMemoryPushNotificationConfigStore()
    sender = BasePushNotificationSender(httpx.AsyncClient(timeout=5.0), configs)
    handler = DefaultRequestHandler(agent_executor=SlowRefunds(), task_store=InMemoryTaskStore(), agent_card=card,
                                    push_config_store=configs, push_sender=sender)
    served = create_rest_routes(handler, path_prefix=REST_PATH) if rest_only else create_jsonrpc_routes(handler, RPC_PATH)
    app = Starlette(routes=create_agent_card_routes(card) + served)
    server = uvicorn.Server(uvicorn.Config(guarded(app, scheme) if scheme else app, log_level="warning"))
    listener.listen(64)  # connections queue from here on, before uvicorn starts taking them
    endpoint = base + (REST_PATH if rest_only else RPC_PATH)
    print(f"listening on {base} {json.dumps({'name': NAME, 'endpoint': endpoint})}", flush=True)
    server.run(sockets=[listener])


if __name__ == "__main__":
    numbers = [arg for arg in sys.argv[1:] if arg.isdigit()]
    main(int(numbers[0]) if numbers else 0, "--rest-only" in sys.argv[1:], scheme_of(sys.argv[1:]))
