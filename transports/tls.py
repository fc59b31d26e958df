"""TLS for the server: https, and mutual TLS (a client certificate from a named CA).

Spec: A2A section 7.1 makes TLS a MUST for production use. The selectors loop of
server.py never blocks, so a handshake is driven there a step at a time as bytes
arrive (`handshake`), under the same deadline a request has; a client that stops
halfway, speaks plain HTTP to the TLS port, or presents a client certificate from
another CA is one line in the log and a closed connection, never a stuck loop. Each is
closed, not answered: there is no TLS yet to answer in, and an answer in plain text
would tell a client that http works here (the downgrade 7.1 forbids). A server full
(`max_connections`) closes a TLS client cleanly before the handshake rather than send
the 503 a plain one gets: a plain 503 reads as a broken record, and a TLS one costs the
handshake a full server is shedding. `read` takes every decrypted byte the TLS layer
holds, since the selector sees only the socket's. Loaded only by a server told to use
TLS: the default run and plain HTTP never import `ssl`. Not here: certificates (made
with `openssl`: peers/keys), the client side, which settings are trusted (Python's
defaults, TLS 1.2 at least).
"""
from __future__ import annotations

import socket
import ssl

MOST_AT_ONCE = 1 << 20  # bytes read from the TLS layer in one go: the loop's buffer caps the rest


def server_context(certificate: str, key: str, client_ca: str | None = None) -> ssl.SSLContext:
    """A context serving `certificate` (PEM) with its `key`; with `client_ca`, a client
    certificate is asked for, and one that CA did not issue ends the handshake. OSError
    (ssl.SSLError is one) for files that cannot be used, a certificate outside its dates too."""
    from transports.named_files import on_disk
    on_disk(certificate, key, *([client_ca] if client_ca is not None else []))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(certificate, key, password=no_passphrase)
    within_dates(certificate)
    if client_ca is not None:
        context.load_verify_locations(client_ca)
        # Optional, not required: a client without one still reads the card (which says what
        # to present) and is refused by the app with a 401; one from another CA fails here.
        context.verify_mode = ssl.CERT_OPTIONAL
    return context


def within_dates(certificate: str) -> None:
    """OSError (one line: its dates, and now) for a certificate expired or not valid yet, checked
    by this machine's clock as its peer checks it: served, or presented as a client's, every
    handshake would fail later, in the peer's words. One OpenSSL took but our reader cannot read
    is not judged."""
    import datetime
    import errno
    from transports.certificate_dates import MOST, outside_dates
    from transports.named_files import read_named
    try:
        why = outside_dates(read_named(certificate, MOST), datetime.datetime.now(datetime.timezone.utc))
    except ValueError:
        return
    if why:
        raise OSError(errno.EINVAL, why, certificate)


def no_passphrase() -> bytes:
    """The password callback for a key file: an encrypted key is refused. Without a callback
    OpenSSL asks for the passphrase on the terminal, or reads it from stdin, and a server
    started with stdin an open pipe (a service manager's, a test's) waited there forever."""
    import errno
    raise OSError(errno.EINVAL, "the key is encrypted (it asks a passphrase): give one without, "
                                "as `openssl pkey -in KEY -out PLAIN-KEY` writes it")


def reason_of(exc: BaseException) -> str:
    """Why a TLS file could not be used, in a few words: ssl's reason ("PEM_LIB" -> "pem lib"),
    else the OS's (a file's name in it kept as it is spelled)."""
    reason = getattr(exc, "reason", None)
    if reason:
        return str(reason).lower().replace("_", " ")
    said = str(getattr(exc, "strerror", None) or exc.__class__.__name__)
    return said[:1].lower() + said[1:]  # "No such file or directory" -> "no such ...", as ssl's read


def wrap(context: ssl.SSLContext, sock: socket.socket) -> ssl.SSLSocket:
    """An accepted (non-blocking) socket, to be handshaken by `handshake` in the loop."""
    return context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)


def handshake(sock: ssl.SSLSocket) -> str | None:
    """One step of the handshake: None when done, "" when it waits for the client, else
    why it failed, in one line."""
    try:
        sock.do_handshake()
    except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
        return ""  # a handshake's records are small: the socket takes ours, we wait for theirs
    except ssl.SSLError as exc:  # plain HTTP to this port too ("http request"): closed at once, unanswered
        # Which check a client certificate failed (OpenSSL's own words: "certificate has expired",
        # "unsuitable certificate purpose"): "verify failed" alone left its holder guessing.
        why = getattr(exc, "verify_message", None)
        return "TLS handshake failed: " + (exc.reason or "error").lower().replace("_", " ") + (f" ({why})" if why else "")
    except OSError as exc:
        return f"TLS handshake failed: {exc.strerror or 'connection lost'}"
    return None


SHORT_NAMES = {"commonName": "CN", "organizationName": "O", "organizationalUnitName": "OU", "countryName": "C",
               "localityName": "L", "stateOrProvinceName": "ST", "streetAddress": "STREET",
               "domainComponent": "DC", "userId": "UID"}  # RFC 4514 section 3


def client_subject(sock: socket.socket) -> str:
    """Who the verified client certificate names, unambiguously: its subject as RFC 4514
    writes it (values escaped, so O="acme, CN=alice" is never read as O=acme, CN=alice)
    and the certificate's SHA-256 fingerprint; "" without one. Two certificates are the
    same caller only if they are the same certificate."""
    import hashlib
    certificate = sock.getpeercert() if isinstance(sock, ssl.SSLSocket) else None
    der = sock.getpeercert(binary_form=True) if certificate else None
    if not der:
        return ""
    rdns = ["+".join(f"{SHORT_NAMES.get(name, name)}={_escaped(value)}" for name, value in rdn)
            for rdn in reversed(certificate.get("subject", ()))]  # RFC 4514 writes the last RDN first
    return f"{','.join(rdns)} sha256:{hashlib.sha256(der).hexdigest()}"


def _escaped(value: str) -> str:
    """An attribute value as RFC 4514 section 2.4 escapes it (and "=" too, which it allows)."""
    text = "".join("\\" + c if c in '"+,;<>\\=' else "\\00" if c == "\0" else c for c in value)
    if text.startswith(("#", " ")):
        text = "\\" + text
    return text[:-1] + "\\ " if value.endswith(" ") and len(value) > 1 else text


def read(sock: ssl.SSLSocket) -> bytes:
    """What has arrived, decrypted; b"" at end of stream; BlockingIOError for nothing yet."""
    try:
        data = sock.recv(65536)
        while data and sock.pending() and len(data) < MOST_AT_ONCE:
            data += sock.recv(sock.pending())
    except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
        raise BlockingIOError from None
    except ssl.SSLZeroReturnError:
        return b""  # the client said close_notify
    return data
