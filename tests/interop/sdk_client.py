"""Run with a Python that has the official `a2a-sdk` installed (tests/test_interop.py does).

The official SDK's 1.0 client calls one of our served peers: it resolves the card, sends
a text message with the bearer token, and prints the text it got back. Usage:
    python sdk_client.py BASE_URL TOKEN "refund $42 on ORD-42"
"""
import asyncio
import sys

import httpx
from a2a.client import ClientConfig, create_client
from a2a.types import Message, Part, Role, SendMessageRequest


async def main(base_url: str, token: str, text: str) -> None:
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=10) as http:
        client = await create_client(base_url, ClientConfig(httpx_client=http, streaming=False))
        message = Message(message_id="sdk-msg-1", role=Role.ROLE_USER, parts=[Part(text=text)])
        texts = []
        async for event in client.send_message(SendMessageRequest(message=message)):
            task = event.task if event.HasField("task") else None
            if task is not None:
                texts += [p.text for a in task.artifacts for p in a.parts if p.text]
                print("state", task.status.state)
        print("text", "".join(texts))
        await client.close()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
