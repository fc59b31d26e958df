"""Run with a Python that has `a2a-sdk[http-server]` and `uvicorn` (tests/test_interop.py does).

An A2A 1.0 agent built with the official SDK: `echo-refunds`, which answers any message
with an artifact "sdk-agent received: <text>". It listens on 127.0.0.1:PORT and prints
"ready" once its card is served. With 0.3, it is a 0.3 agent as the SDK serves one: its one
interface at 0.3, the card carrying 0.3's fields too, JSON-RPC in 0.3's shapes.
Usage: python sdk_server.py PORT [1.0|0.3]
"""
import json
import sys

import uvicorn
from a2a.helpers import new_task
from google.protobuf.json_format import MessageToDict
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Part, TaskState
from starlette.applications import Starlette


class EchoRefunds(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue) -> None:
        # SDK 1.3: the Task must be on the queue before any status update.
        await event_queue.enqueue_event(new_task(context.task_id, context.context_id,
                                                 TaskState.TASK_STATE_SUBMITTED))
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work()
        text = context.get_user_input() or json.dumps(
            [MessageToDict(p.data) for p in context.message.parts if p.HasField("data")])
        await updater.add_artifact([Part(text=f"sdk-agent received: {text}")], name="echo")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue) -> None:
        raise NotImplementedError


def main(port: int, version: str = "1.0") -> None:
    url = f"http://127.0.0.1:{port}/"
    card = AgentCard(
        name="echo-refunds", description="Echoes refund requests (official SDK).", version="0.1.0",
        supported_interfaces=[AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version=version)],
        capabilities=AgentCapabilities(streaming=False),
        default_input_modes=["application/json", "text/plain"], default_output_modes=["text/plain"],
        skills=[AgentSkill(id="process_refund", name="Echo", description="Echo", tags=["demo"])])
    handler = DefaultRequestHandler(agent_executor=EchoRefunds(), task_store=InMemoryTaskStore(),
                                    agent_card=card)
    routes = create_jsonrpc_routes(handler, "/", enable_v0_3_compat=True) if version == "0.3" else \
        create_jsonrpc_routes(handler, "/")
    app = Starlette(routes=create_agent_card_routes(card) + routes)
    print("ready", flush=True)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main(int(sys.argv[1]), *sys.argv[2:3])
