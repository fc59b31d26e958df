"""Run with a Python that has the official `a2a-sdk` installed (tests/test_interop_auth.py does).

The official SDK's client calls a peer served with `--auth oauth2`, `oidc` or `apikey` as a
stranger would: it resolves the card, asks once without a credential (and prints how it was
refused), then attaches the credential with the SDK's own `AuthInterceptor`, which reads the
card's securityRequirements and securitySchemes and puts a Bearer token or the API key in the
header the card names. The interceptor attaches credentials but does not get them: the
`CredentialService` below does what the card says, as nothing here knows our peer: for
oauth2 it posts client credentials to the scheme's `tokenUrl`, for openIdConnect it reads the
discovery document's `token_endpoint` first. Usage:
    python sdk_auth_client.py BASE_URL CREDENTIAL "refund $42 on ORD-42"
where CREDENTIAL is the API key, or CLIENT-ID:CLIENT-SECRET. Prints "scheme NAME KIND",
"refused ...", "token from URL" (oauth2, oidc), "header NAME" and "text ...".
"""
import asyncio
import sys
import uuid

import httpx
from a2a.client import A2ACardResolver, ClientConfig, create_client
from a2a.client.auth import AuthInterceptor, CredentialService
from a2a.types import Message, Part, Role, SendMessageRequest


class CardCredentials(CredentialService):
    """The credential for each scheme the card declares, got the way that scheme says."""

    def __init__(self, card, secret: str, http: httpx.AsyncClient) -> None:
        self.card, self.secret, self.http, self.tokens = card, secret, http, {}

    async def get_credentials(self, security_scheme_name, context):
        scheme = self.card.security_schemes[security_scheme_name]
        if scheme.HasField("api_key_security_scheme"):
            return self.secret
        if security_scheme_name not in self.tokens:
            if scheme.HasField("oauth2_security_scheme"):
                token_url = scheme.oauth2_security_scheme.flows.client_credentials.token_url
            else:
                discovery = await self.http.get(scheme.open_id_connect_security_scheme.open_id_connect_url)
                token_url = discovery.raise_for_status().json()["token_endpoint"]
            client_id, _, client_secret = self.secret.partition(":")
            answer = await self.http.post(token_url, data={"grant_type": "client_credentials"},
                                          auth=(client_id, client_secret))
            self.tokens[security_scheme_name] = answer.raise_for_status().json()["access_token"]
            print("token from", token_url)
        return self.tokens[security_scheme_name]


class ShowHeaders(httpx.AsyncClient):
    """Says which credential headers went with each request to the agent (names only)."""

    async def send(self, request, **kwargs):
        if request.method == "POST" and request.url.path.endswith("/a2a"):
            sent = [name for name in ("authorization", "x-api-key") if name in request.headers]
            print("header", ",".join(sent) or "none")
        return await super().send(request, **kwargs)


async def main(base_url: str, secret: str, text: str) -> None:
    async with ShowHeaders(timeout=10) as http:
        card = await A2ACardResolver(http, base_url).get_agent_card()
        for name, scheme in card.security_schemes.items():
            print("scheme", name, scheme.WhichOneof("scheme"))
        message = Message(message_id=f"sdk-{uuid.uuid4()}", role=Role.ROLE_USER, parts=[Part(text=text)])
        stranger = await create_client(card, ClientConfig(httpx_client=http, streaming=False))
        try:
            async for _ in stranger.send_message(SendMessageRequest(message=message)):
                print("accepted without a credential")
        except Exception as exc:  # what the SDK makes of our 401: its type and first line
            print("refused", type(exc).__name__, str(exc).splitlines()[0][:200] if str(exc) else "")
        interceptor = AuthInterceptor(CardCredentials(card, secret, http))
        client = await create_client(card, ClientConfig(httpx_client=http, streaming=False),
                                     interceptors=[interceptor])
        message = Message(message_id=f"sdk-{uuid.uuid4()}", role=Role.ROLE_USER, parts=[Part(text=text)])
        tasks = [event.task async for event in client.send_message(SendMessageRequest(message=message))
                 if event.HasField("task")]
        for task in tasks:
            print("state", task.status.state)
        print("text", "".join(part.text for task in tasks[-1:] for artifact in task.artifacts
                              for part in artifact.parts if part.text))
        await client.close()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
