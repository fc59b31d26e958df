"""Which addresses a served peer may send a webhook to: `public_address` judges a webhook URL
by the table of public addresses (transports/addresses.py): the address written in it, or each
one its host's name is found at (at delivery, peers/push.py).

Spec: A2A 1.0 section 4.3 (push notifications) leaves it to the server to refuse a
webhook that would make it reach into its own network (server-side request forgery).
"""
import ipaddress

from transports.addresses import is_public
from transports.base import parse_url
from transports.jsonrpc import InvalidParams


def public_address(url: str, allow_private: bool, *, numeric_only: bool = False) -> tuple[str, int] | None:
    """The (ip, port) a webhook URL reaches, checked; InvalidParams naming why not. With
    `numeric_only`, a host that is a name (not an address in any of its spellings:
    2130706433, 0x7f.1, [::1] ...) is not looked up: None, judged at delivery instead."""
    import socket  # here, not at the top: most runs never meet a webhook

    parsed = parse_url(url)
    if parsed is None:
        raise InvalidParams("the webhook url must be an http(s) URL")
    host = parsed.host.strip("[]")  # an IPv6 address comes bracketed in a URL
    flags = socket.AI_NUMERICHOST if numeric_only and host.lower() != "localhost" else 0
    try:
        found = socket.getaddrinfo(host, parsed.port, type=socket.SOCK_STREAM, flags=flags)
    except (OSError, UnicodeError):
        if numeric_only:
            return None  # a name: looked up, and judged, when there is something to deliver
        raise InvalidParams(f"the webhook host {parsed.host[:80]!r} does not resolve") from None
    addresses = [ipaddress.ip_address(info[4][0].split("%")[0]) for info in found]
    if not allow_private and not all(map(is_public, addresses)):
        raise InvalidParams(f"the webhook host {parsed.host[:80]!r} is a private, loopback, multicast or "
                            "reserved address; this server sends to public addresses only")
    return str(addresses[0]), parsed.port


def shown(url: str) -> str:
    """A webhook URL as the log shows it: without its query, which may carry a secret."""
    return url.split("?", 1)[0].split("#", 1)[0][:80]
