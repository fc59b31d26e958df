"""Which IP addresses are public: the one table every judgement of "may this be reached" uses.

A served peer judges its webhooks by it (peers/addresses.py, A2A 1.0 section 4.3: server-side
request forgery), and `check` the interfaces a card names (peers/support/check/reach.py): a
card must not turn it inward. The rules:
- an address is public when it is in none of the special-purpose blocks below (IANA's
  IPv4 and IPv6 Special-Purpose Address Registries, RFC 6890 and its updates, plus
  multicast and the reserved 240.0.0.0/4), and neither is any IPv4 address written
  inside it: a host, a NAT64 or a 6to4 gateway delivers ::127.0.0.1 to 127.0.0.1;
- the table is ours, not the `ipaddress` module's `is_private` and `is_global`: those
  have changed between Python releases (3.11.2 and 3.13.0 call all of 2002::/16 private,
  so a 6to4 address holding 8.8.8.8 was refused there and accepted elsewhere), and a
  judgement must not depend on the interpreter it runs on.
"""
from __future__ import annotations

import ipaddress

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    Address = ipaddress.IPv4Address | ipaddress.IPv6Address

NOT_PUBLIC_V4 = tuple(ipaddress.IPv4Network(block) for block in (
    "0.0.0.0/8",  # "this network"
    "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16",  # private use (RFC 1918)
    "100.64.0.0/10",  # shared address space, carrier-grade NAT (RFC 6598)
    "127.0.0.0/8",  # loopback
    "169.254.0.0/16",  # link-local
    "192.0.0.0/24",  # IETF protocol assignments
    "192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24",  # documentation
    "192.88.99.0/24",  # 6to4 relay anycast (deprecated, RFC 7526)
    "198.18.0.0/15",  # benchmarking
    "224.0.0.0/4",  # multicast
    "240.0.0.0/4",  # reserved, and the limited broadcast 255.255.255.255
))
NOT_PUBLIC_V6 = tuple(ipaddress.IPv6Network(block) for block in (
    "::/128", "::1/128",  # unspecified, loopback
    "::ffff:0:0/96",  # IPv4-mapped: judged by the IPv4 address inside as well
    "64:ff9b:1::/48",  # local-use NAT64 (RFC 8215)
    "100::/64",  # discard-only
    "2001::/23",  # IETF protocol assignments (Teredo's 2001::/32 among them)
    "2001:db8::/32", "3fff::/20",  # documentation
    "5f00::/16",  # segment routing SIDs
    "fc00::/7",  # unique local
    "fe80::/10", "fec0::/10",  # link-local; site-local (deprecated)
    "ff00::/8",  # multicast
))


def is_public(address: Address) -> bool:
    """Whether `address`, and every IPv4 address written inside it, is public by the
    table above. Each embedding is unwrapped: RFC 4291 mapped and compatible, RFC 2765
    translated, RFC 6052 NAT64 (well-known and local-use), RFC 3056 6to4, RFC 4380
    Teredo's server and client."""
    return all(not _special(one) for one in _reached(address))


def _reached(address: Address) -> list[Address]:
    """`address` and the IPv4 addresses a gateway would deliver it to."""
    if address.version == 4:
        return [address]
    number = int(address)
    low = ipaddress.IPv4Address(number & 0xFFFFFFFF)
    inside: list[Address] = [address]
    if number >> 32 in (0, 0xFFFF, 0xFFFF0000, 0x64FF9B << 64) and number > 1:  # ::, ::ffff:, ::ffff:0:, NAT64
        inside = [low]  # only a wrapping: the IPv4 address inside is what is reached
    if number >> 80 == 0x64FF9B0001:  # local-use NAT64: the IPv4 address inside is judged too
        inside.append(low)
    if address.sixtofour is not None:
        inside.append(address.sixtofour)
    if address.teredo is not None:
        inside.extend(address.teredo)
    return inside


def _special(address: Address) -> bool:
    table = NOT_PUBLIC_V4 if address.version == 4 else NOT_PUBLIC_V6
    return any(address in block for block in table)
