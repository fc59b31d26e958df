"""A loopback port nothing listens on, for a server a program starts on a port it names (and may start again
on the same port): the crash lesson's billing, and the tests' servers started as processes.

Why not the kernel's pick (a port-0 bind): that draws from the ephemeral range, which every other port-0 bind
and every outgoing connection on the machine draws from too, so a port found free there may be handed to
another program before the server binds it, or between its death and its restart (a stranger then answers in
its place). Drawn below that range instead, where only programs that name a port go; Linux's range is read
from /proc, and where it cannot be read, or leaves no room below, the kernel's pick it is.
"""
from __future__ import annotations

import random
import socket

RANGE = "/proc/sys/net/ipv4/ip_local_port_range"
LOWEST, TRIES = 20_000, 50


def spare_port() -> int:
    """A port on 127.0.0.1 free as this returns (a later bind may still find it taken: rare below the range)."""
    try:
        with open(RANGE) as ranges:
            low = int(ranges.read().split()[0])
    except (OSError, ValueError, IndexError):  # no Linux /proc
        low = 0
    for port in [random.randrange(LOWEST, low) for _ in range(TRIES)] if low > LOWEST + 1000 else []:
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
