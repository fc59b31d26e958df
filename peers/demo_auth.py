"""The demo network's security beyond billing's bearer token: its keys, TLS certificates, and every scheme.

Spec 4.5 (SecurityScheme), 7.1 (TLS). For --transport https each demo host serves the
DEMO certificate that names it (peers/keys, every one issued by the demo CA), and a peer
whose scheme is mutual TLS asks for a client certificate from that CA (`served_tls`). For
a lesson, billing is also served under each scheme a card can declare, at base URLs the
lesson names (`under_schemes`), each with a fresh secret that is provisioned to the support
agent's store as plain data, the way a platform provisions a credential: an API key, a
Basic pair, OAuth2 client credentials, our DEMO client certificate. A peer asked to sign
its card signs with its published DEMO key, or one of each kind asked (`demo_key`). Not here: the
schemes themselves (peers/schemes), serving (demo.py), the support agent's side.
"""
from __future__ import annotations

import os

from peers.a2a.security_schemes import BEARER, SCHEME_KINDS, kind_of
from peers.a2a.wire_format import WireFormat
from peers.app import PeerApp, new_token

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable

KEYS = os.path.join(os.path.dirname(__file__), "keys")
DEMO_CA = os.path.join(KEYS, "demo-ca.DEMO-CERT.pem")
# Whose DEMO certificate (peers/keys/NAME.DEMO-TLS-CERT.pem) each demo host serves: billing's own
# names (".name": any host below it), the rogue's (its look-alike domains too: anyone can get a
# certificate for a name they own), and the support agent's tool server.
TLS_NAMES = {"billing-agent": ("billing.acme.example", ".billing.acme.example"),
             "refund-bot-9000": ("refunds-r-us.example", "billing-acme.example", "billing.acme-payments.example",
                                 "acme-billing.example"),
             "support-agent": ("tools.support.example",)}
OUR_CLIENT_CERTIFICATE = {"certificate": os.path.join(KEYS, "support-agent.DEMO-CLIENT-CERT.pem"),
                          "key": os.path.join(KEYS, "support-agent.DEMO-CLIENT-KEY.pem")}


def demo_key(name: str, algorithms: Any = True) -> Any:
    """The peer's published demo signing key (peers/keys/NAME.DEMO-KEY.pem, RS256): for sign_card
    only, never access tokens (anyone could sign one). Given a list of JWS algs (RS256, ES256, EdDSA), its demo key for each, as a list: the
    EC and Ed25519 ones are private JWKs (NAME.DEMO-KEY.ES256.json, NAME.DEMO-KEY.EdDSA.json)."""
    import json
    from peers.signing import algorithms as kinds, rs256
    if not isinstance(algorithms, list):
        with open(os.path.join(KEYS, f"{name}.DEMO-KEY.pem"), encoding="ascii") as file:
            return rs256.private_from_pem(file.read())
    keys = []
    for algorithm in algorithms:
        if not isinstance(algorithm, str) or algorithm not in kinds.ALGORITHMS:
            raise ValueError(f"sign_card: {str(algorithm)[:20]!r} is none of {', '.join(kinds.ALGORITHMS)}")
        if algorithm == "RS256":
            keys.append(demo_key(name))
            continue
        with open(os.path.join(KEYS, f"{name}.DEMO-KEY.{algorithm}.json"), encoding="ascii") as file:
            keys.append(kinds.private_from_jwk(json.load(file)))
    return keys


def served_tls(host: str, app: Any) -> Any:
    """The server TLS context for `host`: the DEMO certificate whose names cover it, asking
    for a client certificate from the demo CA when the app's scheme is mutual TLS."""
    from transports import tls
    owner = next((owner for owner, names in TLS_NAMES.items()
                  if any(host == name or name.startswith(".") and host.endswith(name) for name in names)), None)
    if owner is None:
        raise ValueError(f"no DEMO certificate names {host}: --transport https serves only the demo's hosts")
    scheme = app.scheme if isinstance(app, PeerApp) else None
    row = kind_of(scheme.declared) if scheme is not None else None
    client_ca = DEMO_CA if row is not None and row.in_handshake else None
    return tls.server_context(os.path.join(KEYS, f"{owner}.DEMO-TLS-CERT.pem"),
                              os.path.join(KEYS, f"{owner}.DEMO-TLS-KEY.pem"), client_ca)


_TOKEN_KEYS: dict[str, Any] = {}  # a scheme kind -> the key its demo host signs access tokens with


def _token_key(kind: str) -> Any:
    """A key made the first time this process serves a demo host issuing tokens of `kind` (none: it issues none),
    never a DEMO one, as `serve` makes one (serving.py): each costs about 0.25 s in pure Python, and a lesson run
    again in one process (the live page's, a test's) made two anew each time. So a token one run was issued may be
    taken by the same host in a later run of this process, within its 300 s: these are the lesson's own in-process
    hosts, and our own agent holds their tokens. No host takes another kind's: each kind has a key of its own."""
    if not SCHEME_KINDS[kind].issues_tokens:
        return None
    from peers.signing.new_key import new_private_key
    return _TOKEN_KEYS.get(kind) or _TOKEN_KEYS.setdefault(kind, new_private_key())


def under_schemes(make: Callable[..., Any], schemes_at: dict[str, str], card_format: WireFormat,
                  log: Callable[[str], None]) -> dict[str, tuple[PeerApp, dict[str, Any]]]:
    """base URL -> (billing served there under that scheme, the credential for its endpoint,
    as a credentials file spells it). Raises ValueError for a scheme there is none of."""
    from peers.serving import scheme_for
    served, kinds = {}, [kind for kind in SCHEME_KINDS if kind != BEARER.kind]  # bearer is peers/app.py's own
    for base_url, kind in schemes_at.items():
        if kind not in kinds:
            raise ValueError(f"the demo network serves billing under {', '.join(kinds)}, not {kind!r}")
        row = SCHEME_KINDS[kind]
        secret = row.new_secret(new_token())
        peer = make(base_url, allow_private_webhooks=True, log=lambda line, url=base_url: log(f"[{url}] {line}"))
        failed: list[str] = []
        scheme, _ = scheme_for(kind, secret, base_url, peer, _token_key(kind), failed.append)
        credential = {row.credential: OUR_CLIENT_CERTIFICATE if row.in_handshake else secret}
        served[base_url] = (PeerApp(peer, card_format, scheme=scheme, log=log), credential)
    return served
