"""Run with a Python that has the official `a2a-sdk` installed (tests/test_interop_auth.py does).

The official SDK's client calls a peer served with `--auth oauth2`, `oidc`, `apikey`, `basic`
or `mtls` as a stranger would: it resolves the card, asks once without a credential (and
prints how it was refused), then asks again with one. The SDK's own `AuthInterceptor` reads
the card's securityRequirements and securitySchemes and puts a Bearer token or the API key
in the header the card names; it attaches nothing for HTTP Basic (a2a/client/auth/
interceptor.py handles Bearer, oauth2, openIdConnect and a header API key only), so for
Basic the SDK's own hook for that, a `ClientCallInterceptor`, adds the header the same way
(`BasicFromCard`). Mutual TLS is no header at all: the certificate goes in the handshake of
the httpx client the SDK is given (`--client-cert CERT KEY`, with `--ca` naming the CA that
issued the server's). The interceptor attaches credentials but does not get them: the
`CredentialService` below does what the card says, as nothing here knows our peer: for
oauth2 it posts client credentials to the scheme's `tokenUrl`, for openIdConnect it reads the
discovery document's `token_endpoint` first. Usage:
    python sdk_auth_client.py BASE_URL CREDENTIAL "refund $42 on ORD-42" [--ca FILE] [--client-cert CERT KEY]
where CREDENTIAL is the API key, USER:PASSWORD, CLIENT-ID:CLIENT-SECRET, or - (mtls). Prints
"scheme NAME KIND", "refused ...", "token from URL" (oauth2, oidc), "header NAME", "state N"
and "text ..." (or a second "refused ..." when the credential is not accepted).
"""
import asyncio
import base64
import ssl
import sys
import uuid

import httpx
from a2a.client import A2ACardResolver, ClientCallContext, ClientConfig, create_client
from a2a.client.auth import AuthInterceptor, CredentialService
from a2a.client.interceptors import ClientCallInterceptor
from a2a.types import Message, Part, Role, SendMessageRequest


class CardCredentials(CredentialService):
    """The credential for each scheme the card declares, got the way that scheme says."""

    def __init__(self, card, secret: str, http: httpx.AsyncClient) -> None:
        self.card, self.secret, self.http, self.tokens = card, secret, http, {}

    async def get_credentials(self, security_scheme_name, context):
        scheme = self.card.security_schemes[security_scheme_name]
        if scheme.HasField("api_key_security_scheme") or scheme.HasField("http_auth_security_scheme"):
            return self.secret
        if scheme.HasField("mtls_security_scheme"):
            return None  # presented in the handshake, not in a header
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


class BasicFromCard(ClientCallInterceptor):
    """What AuthInterceptor does for Bearer, done for a card's HTTP Basic scheme: the
    USER:PASSWORD the credential service holds for it, base64'd into Authorization."""

    def __init__(self, credentials: CredentialService) -> None:
        self.credentials = credentials

    async def before(self, args) -> None:
        card = args.agent_card
        for requirement in card.security_requirements:
            for name in requirement.schemes:
                scheme = card.security_schemes[name] if name in card.security_schemes else None
                if scheme is None or not scheme.HasField("http_auth_security_scheme") \
                        or scheme.http_auth_security_scheme.scheme.lower() != "basic":
                    continue
                pair = await self.credentials.get_credentials(name, args.context)
                if pair:
                    args.context = args.context or ClientCallContext()
                    args.context.service_parameters = args.context.service_parameters or {}
                    args.context.service_parameters["Authorization"] = "Basic " + base64.b64encode(
                        pair.encode()).decode()
                    return

    async def after(self, args) -> None:
        return None


class ShowHeaders(httpx.AsyncClient):
    """Says which credential headers went with each request to the agent (names only)."""

    async def send(self, request, **kwargs):
        if request.method == "POST" and request.url.path.endswith("/a2a"):
            sent = [name for name in ("authorization", "x-api-key") if name in request.headers]
            print("header", ",".join(sent) or "none")
        return await super().send(request, **kwargs)


def tls(ca: str | None, certificate: list[str] | None):
    """httpx's `verify`: the default, or a context trusting `ca` and presenting `certificate`."""
    if not ca:
        return True
    context = ssl.create_default_context(cafile=ca)
    if certificate:
        context.load_cert_chain(*certificate)
    return context


async def send(client, text: str) -> None:
    message = Message(message_id=f"sdk-{uuid.uuid4()}", role=Role.ROLE_USER, parts=[Part(text=text)])
    tasks = [event.task async for event in client.send_message(SendMessageRequest(message=message))
             if event.HasField("task")]
    for task in tasks:
        print("state", task.status.state)
    print("text", "".join(part.text for task in tasks[-1:] for artifact in task.artifacts
                          for part in artifact.parts if part.text))


async def main(base_url: str, secret: str, text: str, ca: str | None, certificate: list[str] | None) -> None:
    async with ShowHeaders(timeout=10, verify=tls(ca, None)) as http, \
            ShowHeaders(timeout=10, verify=tls(ca, certificate)) as presenting:
        card = await A2ACardResolver(http, base_url).get_agent_card()
        for name, scheme in card.security_schemes.items():
            print("scheme", name, scheme.WhichOneof("scheme"))
        for client in [await create_client(card, ClientConfig(httpx_client=http, streaming=False)),
                       await create_client(card, ClientConfig(httpx_client=presenting, streaming=False),
                                           interceptors=[AuthInterceptor(CardCredentials(card, secret, http)),
                                                         BasicFromCard(CardCredentials(card, secret, http))])]:
            try:
                await send(client, text)
            except Exception as exc:  # what the SDK makes of our 401: its type and first line
                print("refused", type(exc).__name__, str(exc).splitlines()[0][:200] if str(exc) else "")
            await client.close()


if __name__ == "__main__":
    flags = sys.argv[4:]
    ca = flags[flags.index("--ca") + 1] if "--ca" in flags else None
    certificate = flags[flags.index("--client-cert") + 1:][:2] if "--client-cert" in flags else None
    asyncio.run(main(*sys.argv[1:4], ca, certificate))
