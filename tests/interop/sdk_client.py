"""Run with a Python that has the official `a2a-sdk` installed (tests/test_interop.py does).

The official SDK's 1.0 client calls one of our served peers: it resolves the card, sends
a text message with the bearer token, and prints the text it got back. With --approve,
a task that pauses in input-required is continued: the same task (its taskId and
contextId), a data part approving exactly what the peer's status message proposes. With
--stream, the client streams (SendStreamingMessage) and prints each event's kind. With
--rest, the client may use only the HTTP+JSON binding (A2A 1.0 section 11). Usage:
    python sdk_client.py BASE_URL TOKEN "refund $42 on ORD-42" [--approve | --stream] [--rest]
"""
import asyncio
import sys
import uuid

import httpx
from a2a.client import ClientConfig, create_client
BINDINGS = {"supported_protocol_bindings": ["HTTP+JSON"]} if "--rest" in sys.argv[4:] else {}
from a2a.types import Message, Part, Role, SendMessageRequest
from google.protobuf.json_format import MessageToDict, ParseDict


async def stream(base_url: str, token: str, text: str) -> None:
    """The SDK's own streaming client: each event as it reads it, then the artifact's text."""
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=10) as http:
        client = await create_client(base_url, ClientConfig(httpx_client=http, streaming=True, **BINDINGS))
        message = Message(message_id=f"sdk-{uuid.uuid4()}", role=Role.ROLE_USER, parts=[Part(text=text)])
        texts = []
        async for event in client.send_message(SendMessageRequest(message=message)):
            kind = next(name for name in ("task", "message", "status_update", "artifact_update")
                        if event.HasField(name))
            state = event.status_update.status.state if kind == "status_update" else ""
            print("event", kind, state)
            if kind == "artifact_update":
                texts += [part.text for part in event.artifact_update.artifact.parts if part.text]
        print("text", "".join(texts))
        await client.close()


async def main(base_url: str, token: str, text: str, approve: bool = False) -> None:
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=10) as http:
        client = await create_client(base_url, ClientConfig(httpx_client=http, streaming=False, **BINDINGS))
        message = Message(message_id=f"sdk-{uuid.uuid4()}", role=Role.ROLE_USER, parts=[Part(text=text)])
        texts = []
        tasks = [event.task async for event in client.send_message(SendMessageRequest(message=message))
                 if event.HasField("task")]
        for task in tasks:
            print("state", task.status.state, "task", task.id)
        if approve and tasks:
            asked = MessageToDict(tasks[-1].status.message)  # the peer's word, with its proposal
            approval = next(part["data"] for part in asked["parts"] if "data" in part)
            print("approving", approval)
            follow_up = ParseDict({"messageId": f"sdk-{uuid.uuid4()}", "role": "ROLE_USER", "taskId": tasks[-1].id,
                                   "contextId": tasks[-1].context_id, "parts": [{"data": approval}]}, Message())
            tasks = [event.task async for event in client.send_message(SendMessageRequest(message=follow_up))
                     if event.HasField("task")]
            for task in tasks:
                print("state", task.status.state, "task", task.id, "history", len(task.history))
        texts += [p.text for task in tasks[-1:] for a in task.artifacts for p in a.parts if p.text]
        print("text", "".join(texts))
        await client.close()


if __name__ == "__main__":
    if "--stream" in sys.argv[4:]:
        asyncio.run(stream(*sys.argv[1:4]))
    else:
        asyncio.run(main(*sys.argv[1:4], approve="--approve" in sys.argv[4:]))
