"""`python3 a2a_delegation.py serve NAME`: one peer as a standalone A2A server.

Essay: The Agent Card (a card served at its well-known URL) and Delegation over JSON-RPC,
on a real socket, for other clients (the official SDKs, the conformance kit, curl). The
peer is assembled here from what the serve flags (peers/demo.py SERVE_FLAGS) ask for, and
given its parts at once: unguessable task ids and a clock, its log, where its pushes may
go and how they are spelled, a durable store and ledger (--store: durable.py, then restart.py settles what a
restart interrupted), and, only when asked, a test double (peers/doubles.py). Not here:
the server (transports/server.py), the app (app.py), the demo network (demo.py).
"""
from __future__ import annotations

import os

from peers.a2a.security_schemes import BEARER, SCHEME_KINDS
from peers.a2a.wire_format import WireFormat, card_url
from peers.app import PeerApp, log_to_stderr
from peers.app import token_for
from peers.ledger import Ledger
from peers.peer import Peer
from peers.push_payload import PushSettings
from peers.stamps import unguessable_task_ids, utc_now

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable

# The demo TLS files (made with openssl, published: they prove nothing outside the lessons).
DEMO_CERT, DEMO_KEY = "billing-agent.DEMO-TLS-CERT.pem", "billing-agent.DEMO-TLS-KEY.pem"
DEMO_CA = "peers/keys/demo-ca.DEMO-CERT.pem"


def serve_one(make: Callable[..., Peer], options: Any, card_format: WireFormat, *,
              say: Callable[[str], None], fail: Callable[[str], None], shape: dict[str, Any] | None = None) -> int:
    """The peer `make` makes (in the card `shape` asked for, if any), served until Ctrl-C
    or SIGTERM as the serve flags say; the exit status: 0, or 2 (said through `fail`) when
    a flag's file or the address cannot be had."""
    from transports.server import PeerServer
    name, host, port, url, token = options.peer, options.host, options.port, options.url, options.token or None
    # An empty --token or $A2A_SERVE_TOKEN (`A2A_SERVE_TOKEN= ...`) is none: one is made and shown, where
    # a fresh one nobody was told of was required, said to be "from --token".
    if options.crash_at and options.store is None:
        fail("--crash-at needs --store: a crash test is about what the store file keeps")
        return 2
    key = _signing_key(options.signing_key, card_format, fail) if options.signing_key else None
    if key == 2:
        return 2
    asked_tls = options.tls or _in_handshake(options.auth) or options.tls_cert or options.tls_key or options.client_ca
    tls = _tls_context(options, fail) if asked_tls else None  # a TLS file given alone is checked, not ignored
    if tls == 2:
        return 2

    def log(line: str) -> None:  # one log for the server and the peer
        log_to_stderr(f"[{name}] {line}")
    try:
        server = PeerServer(None, host, port, log=log, tls=tls)  # bind first: the port names the card URL
    except OSError as exc:
        fail(f"cannot serve {name} on {host}:{port}: {exc.strerror or exc}")
        return 2
    try:
        from transports.signals import stopped_by_signals  # only a standalone server handles signals
        stopped_by_signals(server)  # from now a signal asks the loop to stop (raised, it could land mid-start-up,
        # the store file opened and never closed); asked before the loop, the loop ends at once
        base_url = (url or server.base_url).rstrip("/")  # what the card advertises
        parts = {"new_task_id": unguessable_task_ids(), "clock": utc_now, "log": log,
                 "allow_private_webhooks": options.allow_private_webhooks,
                 "push": PushSettings(options.push_payload, options.push_media_type), **(shape or {})}
        if options.cut_streams_after is not None:
            from peers.doubles import CutStreams
            parts["streams"] = CutStreams(options.cut_streams_after)
        kept: list[str] = []
        store_file = None  # --store's file, closed as the server stops
        if options.store is None:
            peer = make(base_url, ledger=Ledger(options.max_effects), **parts)
        else:  # tasks and ledger in SQLite: what a client was told survives a restart
            from peers.durable import DurableError, open_store
            try:
                store, ledger = open_store(options.store, max_effects=options.max_effects)
            except DurableError as exc:
                fail(str(exc))
                return 2
            store_file = store.file
            if options.crash_at:
                from peers.doubles import CrashingLedger
                ledger = CrashingLedger(ledger, options.crash_at, store.flush)
            peer = make(base_url, store=store, ledger=ledger, **parts)
        if options.tenant:  # the card names them; the app serves what its card names (peers/tenants.py)
            from peers.tenants import declared, refused
            peer.card = peer.card._replace(tenants=tuple(options.tenant))
            if peer.extended_card is not None:  # the fuller card lists the same interfaces
                peer.extended_card = peer.extended_card._replace(tenants=tuple(options.tenant))
            why = refused(options.tenant) or (None if declared(card_format.card_to_wire(peer.card)) == set(
                options.tenant) else f"the {card_format.NAME} wire's card names no tenants; serve with --wire 1.0")
            if why:
                fail(f"--tenant: {why}")
                return 2
        if options.store is not None:  # what a restart interrupted, settled once every flag is judged
            from peers.durable import UnreadableEffect
            from peers.restart import restarted
            try:
                kept = restarted(peer, options.store)
            except UnreadableEffect as exc:  # an effect's row it read, edited by hand: the file named, in one line
                fail(f"{options.store}: {exc.message.removeprefix('Internal error: ')}")
                return 2
        made = token is None  # no --token and no $A2A_SERVE_TOKEN: one is made, and shown once
        scheme = None
        if options.auth not in (None, BEARER.kind):
            made_scheme = scheme_for(options.auth, token, base_url, peer, None, fail)  # never the card's key
            if made_scheme is None:
                return 2
            scheme, secret = made_scheme
            token = None  # the scheme holds the secret, and says who is calling
        elif options.auth == BEARER.kind and BEARER.kind not in peer.card.auth_schemes:
            declare_on_cards(peer, auth_schemes=(BEARER.kind,))  # asked of a card that declares none
        token = token_for(peer.card, token) if scheme is None else None
        if options.other_token and (token is None or options.other_token == token):
            fail("--other-token is a second bearer token: it needs the bearer scheme" if token is None else
                 "--other-token is a second caller's token: the same as the first, they would be one caller")
            return 2
        others = (options.other_token,) if options.other_token else ()
        server.app = PeerApp(peer, card_format, token=token, signing_key=key, scheme=scheme, other_tokens=others)
        say(f"[serve] {name} listening on {server.base_url} (wire format: {card_format.NAME})")
        say(f"[serve] card:     {card_url(base_url)}")
        say(f"[serve] endpoint: {peer.card.url} (JSON-RPC over POST; HTTP+JSON routes below it)")
        if tls is not None:
            say(f"[serve] https with {options.tls_cert or 'the DEMO certificate'} (clients trust "
                f"{'its CA' if options.tls_cert else DEMO_CA})")
        if options.tenant:
            say(f"[serve] tenants: {', '.join(repr(name) if not name else name for name in options.tenant)} "
                "(each a partition of its own; a request naming another is refused)")
        for line in kept:
            say(line)
        if token:  # a token it was given is never printed: stdout ends up in logs and CI output
            source = ("made for this run, shown this once: " + token if made else
                      "from $A2A_SERVE_TOKEN" if token == os.environ.get("A2A_SERVE_TOKEN") else "from --token")
            say(f"[serve] bearer token {source}  (callers need 'Authorization: Bearer <token>')")
        if scheme is not None:
            say(f"[serve] {options.auth}: {SCHEME_KINDS[options.auth].calls(scheme.declared)}")
            if made and secret:  # as with the bearer token: a secret it was given is never printed
                say(f"[serve] its secret, made for this run, shown this once: {secret}")
        say("[serve] Ctrl-C or SIGTERM stops it.")
        server.serve_forever(poll_interval=0.2)
        say(f"[serve] {name} stopped.")
    except KeyboardInterrupt:  # a Ctrl-C before the handlers were set
        say(f"[serve] {name} stopped.")
    finally:
        server.server_close()
        if store_file is not None:  # what is staged committed and the log folded into FILE.db: closed
            store_file.close()  # here, not left to a finalizer at exit (which may never run)
    return 0


def scheme_for(kind: str, secret: str | None, base_url: str, peer: Peer, token_key: Any,
               fail: Callable[[str], None]) -> tuple[Any, str] | None:
    """--auth KIND: the scheme (peers/schemes), declared on the peer's cards, and the
    secret it holds; None when
    --token is not the secret that scheme takes (said through `fail`). Without --token a
    secret is made (shown once). oauth2 and oidc sign their access tokens (RS256) with
    `token_key` when one is given, else with a key made now: never the card's --signing-key,
    which may be a published DEMO key (with it anyone could sign a token this peer takes),
    and a key serves one purpose. A token outlives no restart, so neither need its key: a
    client refused one with 401 invalid_token fetches another."""
    from peers.app import new_token
    from peers.schemes.by_kind import make_scheme
    from peers.signing import rs256
    if SCHEME_KINDS[kind].issues_tokens and not isinstance(token_key, rs256.PrivateKey):
        if token_key is not None:
            fail(f"--auth {kind}: its access tokens are signed RS256, by an RSA key")
            return None
        from peers.signing.new_key import new_private_key
        token_key = new_private_key()
    if secret is None:
        secret = SCHEME_KINDS[kind].new_secret(new_token())
    try:
        scheme = make_scheme(kind, secret or "", base_url, peer.card.url, peer.card.name, signing_key=token_key)
    except ValueError as exc:
        fail(f"--auth {kind}: {exc}")
        return None
    # The card says what the server enforces: this scheme, and no other, with the scopes its
    # tokens must carry (what a caller asks its token endpoint for: oauth_tokens.py).
    declare_on_cards(peer, auth_schemes=(scheme.declared.name,), security_schemes=(scheme.declared,),
                     security_requirements=({scheme.declared.name: tuple(s for s, _ in scheme.declared.scopes)},))
    return scheme, secret


def declare_on_cards(peer: Peer, **security: Any) -> None:
    """The scheme the server enforces, said on both cards: a client that takes the extended card
    in place of the public one (spec 3.1.11) must still be told how to authenticate."""
    peer.card = peer.card._replace(**security)
    if peer.extended_card is not None:
        peer.extended_card = peer.extended_card._replace(**security)


def _tls_context(options: Any, fail: Callable[[str], None]) -> Any:
    """--tls (implied by --auth mtls): the server's TLS context, from --tls-cert and --tls-key
    (default: the DEMO certificate in peers/keys) and, for mtls, --client-ca (default: the
    DEMO CA); 2 (said through `fail`) when a file cannot be used."""
    from transports import tls
    if bool(options.tls_cert) != bool(options.tls_key):
        fail("--tls-cert and --tls-key go together: the certificate and its private key")
        return 2
    if options.client_ca and not _in_handshake(options.auth):
        fail("--client-ca names the CA of the client certificates --auth mtls requires")
        return 2
    if _in_handshake(options.auth) and options.tls_cert and not options.client_ca:  # a server of one's own
        fail("--auth mtls with --tls-cert needs --client-ca: the default, the DEMO CA, vouches for client "
             "certificates whose keys are published in peers/keys, so anyone could call")
        return 2
    cert, key = (options.tls_cert, options.tls_key) if options.tls_cert else (_demo(DEMO_CERT), _demo(DEMO_KEY))
    client_ca = options.client_ca or _demo("demo-ca.DEMO-CERT.pem") if _in_handshake(options.auth) else None
    try:
        return tls.server_context(cert, key, client_ca)
    except OSError as exc:  # ssl.SSLError is one: a file that is not a certificate or its key
        fail(f"--tls: cannot use {cert}, {key}{', ' + client_ca if client_ca else ''}: {tls.reason_of(exc)}")
    return 2


def _in_handshake(auth: str | None) -> bool:
    """Whether --auth names a scheme proved in the TLS handshake (mutual TLS): it needs TLS, and a client CA."""
    return auth in SCHEME_KINDS and SCHEME_KINDS[auth].in_handshake


def _demo(name: str) -> str:
    return os.path.join(os.path.dirname(__file__), "keys", name)


def _signing_key(path: str, card_format: WireFormat, fail: Callable[[str], None]) -> Any:
    """--signing-key FILE: the private key the card is signed with, or 2 (said through `fail`): an
    RSA key in a PEM file (RS256), or a JWK object with "d" of an EC P-256 (ES256, the spec's own
    example) or Ed25519 (EdDSA) key, the kinds a pinned key may be (peers/signing/algorithms.py)."""
    from peers.signing import rs256
    from peers.signing.algorithms import private_from_jwk
    if not card_format.SIGNED_CARDS:
        fail("--signing-key: the essay's card has no signatures; serve it with --wire 1.0 or --wire 0.3")
        return 2
    from transports.codec import loads_strict
    from transports.named_files import read_named
    try:
        text = read_named(path, 64 * 1024)[:64 * 1024].decode("ascii")  # a FIFO no one writes: empty, at once
        if not text.lstrip().startswith("{"):
            return rs256.private_from_pem(text)
        try:  # strictly, as every JSON file: of two "d"s a lenient reader signs with the last
            jwk = loads_strict(text)
        except ValueError as exc:
            raise rs256.BadKey(f"neither a PEM file nor a JWK: not JSON, read as a JWK ({exc})") from None
        return private_from_jwk(jwk)
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"--signing-key {path}: cannot read it ({getattr(exc, 'strerror', None) or exc})")
    except rs256.BadKey as exc:
        fail(f"--signing-key {path}: {exc}")
    return 2


