"""--scenario auth-schemes: one refund under each security scheme a card can declare.

A card's securitySchemes say how a caller must prove who it is (A2A 4.5: an API key,
HTTP Basic, OAuth2 client credentials, OpenID Connect, mutual TLS); only the server can
make that true. Billing is served here under each in turn, at a host of its own, and
each time the same refund goes three ways. First as a caller that ignores the card
would send it, with no credential: billing answers 401 and its WWW-Authenticate says
what it wants, and no task is made. Then with a wrong credential: 401 again. Then by the
support agent, which reads the scheme from the card and takes the credential its own
store holds for that endpoint (provisioned by the platform, never read from a card): the
refund is made. For OAuth2 the token fetch is frames of its own (the client secret goes
to the token endpoint only, masked as every credential is); for OpenID Connect the
discovery document names that endpoint first. Mutual TLS happens in the TLS handshake,
so the lesson needs TLS and runs over --transport https whatever --transport says: a
certificate from another CA ends the handshake in one line, which
tests/test_auth_client.py shows; here our own is presented. It ends with
the difference between a card that declares a scheme and a server that enforces it.
"""
from __future__ import annotations

import base64
from typing import TYPE_CHECKING

from peers.a2a.model import AgentCard, Message, Part
from peers.a2a.wire_format import card_url
from peers.support.config import AllowEntry
from peers.support.lessons import Lesson
from peers.support.output import Kind
from transports import jsonrpc
from transports.printer import escape

if TYPE_CHECKING:
    from a2a_delegation import Outcome, SupportAgent

REFUND = {"order_id": "ORD-3300", "amount": 180.0}
WRONG_BASIC = "Basic " + base64.b64encode(b"support-agent:not-the-password").decode()
# Each scheme: where billing serves it, what a caller ignoring the card would try wrongly
# (None: nothing to try outside the handshake), and what the store holds for it.
CASES = (
    ("apikey", "https://apikey.billing.acme.example", {"X-API-Key": "a-key-we-guessed"}, "an API key"),
    ("basic", "https://basic.billing.acme.example", {"Authorization": WRONG_BASIC}, "a user and password"),
    ("oauth2", "https://oauth2.billing.acme.example", {"Authorization": "Bearer a-token-billing-never-issued"},
     "an OAuth2 client id and secret"),
    ("oidc", "https://oidc.billing.acme.example", {"Authorization": "Bearer a-token-billing-never-issued"},
     "an OAuth2 client id and secret"),
    ("mtls", "https://mtls.billing.acme.example", None, "a client certificate"),
)
LESSON = Lesson(
    about="one refund under each security scheme a card can declare (API key, Basic, OAuth2, OpenID Connect, "
          "mutual TLS): refused without a credential, refused with a wrong one, made with ours",
    teaches="essay: Discovery is not trust (a card declares its auth; only the server enforces it: A2A 4.5, 7)",
    order=25, flags={"--wire": "1.0"},
    needs={"--transport": ("https", "mutual TLS is proved in the TLS handshake, which plain HTTP and the "
                                    "in-process shim do not have")},
    peers={"billing-agent": {"schemes_at": {host: kind for kind, host, _, _ in CASES}}})


def run(agent: SupportAgent, card_urls: list[str]) -> list[Outcome]:
    """Each scheme in turn: without a credential, with a wrong one, then with ours."""
    agent.say(f"[transport] {agent.transport.label}. Security schemes: declared by the card, enforced by "
              "the server.", Kind.BANNER)
    outcomes = []
    for kind, host, wrong, held in CASES:
        agent.say()
        card = agent.find(card_url(host))
        if not isinstance(card, AgentCard):
            outcomes.append(card)
            continue
        declared = ", ".join(f"{scheme.name} ({scheme.type})" for scheme in card.security_schemes)
        agent.say(f"[support] billing at {host} declares {escape(declared)}; our store holds {held} for it")
        agent.allowlist = [*agent.allowlist, AllowEntry(card.name, card.url)]  # vetted at this endpoint too
        if wrong is not None:
            bare(agent, card, {}, "with no credential, as a caller that ignores the card would send it")
            bare(agent, card, wrong, "with a wrong credential")
        else:
            agent.say("[support] mutual TLS is proved in the TLS handshake, before any HTTP: a client "
                      "certificate another CA issued ends it (one line), and none at all gets a 401")
        agent.say("[support] now as the card asks, with the credential from our own store:")
        outcomes.append(agent.gate_then_delegate(card, "process_refund", REFUND))
    agent.say()
    agent.say("[support] A card that declares a scheme says what its server wants; only a server that "
              "enforces it refuses the rest. Each refusal above came before any task was made: billing "
              "enforces what its card declares. A card alone proves nothing: an extended card declared "
              "'authenticated' but served to anyone (a2a-samples #340) is a declaration, not a check.", Kind.BANNER)
    return outcomes


def bare(agent: SupportAgent, card: AgentCard, headers: dict[str, str], how: str) -> None:
    """The refund sent straight through the transport with `headers` only (not by the
    support agent, which would not send it): billing's 401 and its challenge, said."""
    agent.say(f"[support] the refund {how}:")
    spoken = agent.format_of[card.url]
    frame = jsonrpc.encode_request(next(agent.request_ids), spoken.SEND_METHOD,
                                   spoken.send_params(Message(f"msg-{next(agent.message_ids)}", "user", (
                                       Part(data=REFUND, media_type="application/json"),),
                                       metadata={"skillId": "process_refund"})))
    response = agent.transport.post(card.url, frame, {"Content-Type": "application/json", **spoken.HEADERS,
                                                      **headers})
    challenge = response.header("WWW-Authenticate") or "(none)"
    agent.say(f"[support] billing answered HTTP {response.status}, WWW-Authenticate: {escape(challenge[:200])}; "
              "no task was made", Kind.REFUSED if response.status == 401 else Kind.WARNING)

