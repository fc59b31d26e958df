"""The proxy's TLS, on both of its sides (A2A section 7.1: TLS in production).

Toward the agent: `--to https://...` checks the agent's certificate and name against --ca (a PEM
file) or, without it, the system's CAs, as a run's --ca does (calling/credentials.py). Toward
the client: --tls serves https, with the DEMO certificate in peers/keys (it names 127.0.0.1 and
localhost; clients trust the DEMO CA) unless --tls-cert and --tls-key, as `serve` takes them.
Mutual TLS cannot pass through a proxy that ends TLS: the client's certificate proves the
client to the proxy, never to the agent. --client-cert and --client-key make the proxy present
its own to the agent instead, and the banner says so. Every problem is a ValueError in one
line, before the proxy listens. Loaded only when one of these flags is given or --to is https.
"""
from __future__ import annotations

import os

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

KEYS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "keys")
DEMO_CERT, DEMO_KEY = (os.path.join(KEYS, name) for name in ("billing-agent.DEMO-TLS-CERT.pem",
                                                             "billing-agent.DEMO-TLS-KEY.pem"))
DEMO_CA = "peers/keys/demo-ca.DEMO-CERT.pem"


def asked(settings: Any) -> bool:
    return bool(settings.to.lower().startswith("https:") or settings.ca or settings.tls or settings.tls_cert
                or settings.tls_key or settings.client_cert or settings.client_key)


def toward_agent(settings: Any) -> dict[str, Any]:
    """The network transport's TLS options for the agent: {} for plain http."""
    import ssl
    from peers.support.calling.files import ConfigError
    from peers.support.calling.credentials import trusting
    https = settings.to.lower().startswith("https:")
    if not https and (settings.ca or settings.client_cert or settings.client_key):
        raise ValueError("--ca, --client-cert and --client-key are for an https agent; --to is http")
    if bool(settings.client_cert) != bool(settings.client_key):
        raise ValueError("--client-cert and --client-key go together: the certificate and its private key")
    if not https:
        return {}
    try:
        context = trusting(settings.ca)
    except ConfigError as exc:
        raise ValueError(str(exc)) from None
    if settings.client_cert:
        from transports.named_files import on_disk
        try:
            on_disk(settings.client_cert, settings.client_key)
            from transports.tls import no_passphrase  # an encrypted key: refused, never a prompt that waits
            context.load_cert_chain(settings.client_cert, settings.client_key, password=no_passphrase)
        except (OSError, ssl.SSLError) as exc:
            raise ValueError(f"--client-cert {settings.client_cert[:80]}, --client-key {settings.client_key[:80]}: "
                             f"cannot use them: {_reason(exc)}") from None
        # TLS 1.2: an agent refusing the certificate says so in the handshake, before any byte of a
        # request (in 1.3 it may hang up after the request is on its way), as our runs present one.
        context.maximum_version = ssl.TLSVersion.TLSv1_2
    return {"tls": context}


def toward_client(settings: Any) -> Any:
    """The server's TLS context (--tls, --tls-cert, --tls-key), or None to serve plain http."""
    from transports import tls
    if bool(settings.tls_cert) != bool(settings.tls_key):
        raise ValueError("--tls-cert and --tls-key go together: the certificate and its private key")
    if not (settings.tls or settings.tls_cert):
        return None
    certificate, key = (settings.tls_cert, settings.tls_key) if settings.tls_cert else (DEMO_CERT, DEMO_KEY)
    try:
        return tls.server_context(certificate, key)
    except OSError as exc:  # ssl.SSLError is one
        raise ValueError(f"--tls: cannot use {certificate[-80:]}, {key[-80:]}: {_reason(exc)}") from None


def banner(settings: Any) -> list[str]:
    """What the proxy's TLS is, in a line each, said when it starts listening."""
    lines = []
    if settings.to.lower().startswith("https:"):
        lines.append(f"[proxy] the agent's certificate is checked against {settings.ca or 'the system CAs'}")
    if settings.tls or settings.tls_cert:
        lines.append(f"[proxy] https with {settings.tls_cert or 'the DEMO certificate'} (clients trust "
                     f"{'its CA' if settings.tls_cert else DEMO_CA})")
    if settings.client_cert:
        lines.append(f"[proxy] mutual TLS ends at the proxy: the agent is shown the proxy's client certificate "
                     f"({os.path.basename(settings.client_cert)}), never the client's")
    return lines


def _reason(exc: BaseException) -> str:
    from transports.tls import reason_of
    return reason_of(exc)
