"""The addresses a granted name must not lead to: this host's own, and its clouds'.

Why this exists: the proxy connects where a name resolves, on the host. A granted name
whose address is the host itself (any local interface's address, loopback, unspecified)
or its link (link-local, multicast, a cloud's metadata service) would let the sandbox
reach the bot's own services or the machine's credentials, whatever the grant says. So
every address is judged after resolution, the name notwithstanding: the interfaces are
read from the kernel (``/proc/net/fib_trie``'s local addresses for IPv4,
``/proc/net/if_inet6`` for IPv6; ``ioctl(SIOCGIFADDR)`` per interface when the first is
missing), kept for a few seconds; an address written inside another (IPv4-mapped, 6to4,
Teredo, NAT64) is judged as the address inside. What it cannot see: another machine of
the operator's own network (10/8, 192.168/16, …) is not this host.
"""

from __future__ import annotations

import contextlib
import fcntl
import ipaddress
import socket
import struct
import threading
import time
from pathlib import Path

from plancord.core.host_names import Address

METADATA = frozenset(
    ipaddress.ip_address(text)
    for text in (
        "169.254.169.254",  # AWS, GCP, Azure, Oracle, OpenStack, DigitalOcean, Hetzner …
        "169.254.170.2",  # AWS ECS task metadata
        "169.254.170.23",  # AWS EKS pod identity
        "100.100.100.200",  # Alibaba Cloud
        "168.63.129.16",  # Azure's WireServer
        "192.0.0.192",  # Oracle Cloud (legacy)
        "fd00:ec2::254",  # AWS over IPv6
        "fd00:ec2::253",  # AWS's DNS over IPv6
        "fd00:ec2::23",  # AWS EKS pod identity over IPv6
        "fd20:ce::254",  # GCP over IPv6
    )
)
"""The metadata services of the usual clouds (the link-local ones are refused anyway)."""

_THIS_NETWORK = ipaddress.ip_network("0.0.0.0/8")
_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
_FIB_TRIE = Path("/proc/net/fib_trie")
_IF_INET6 = Path("/proc/net/if_inet6")
_SIOCGIFADDR = 0x8915
_KEEP_SECONDS = 5.0


class HostAddresses:
    """This host's own addresses, read from the kernel and kept for a few seconds."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._read_at = -_KEEP_SECONDS
        self._own: frozenset[Address] = frozenset()

    def refusal(self, address: Address) -> str | None:
        """Why a connection to ``address`` is refused; None when it may be made."""
        for inner in _inside(address):
            why = _class_refusal(inner) or (
                "an address of this host" if inner in self.own() else None
            )
            if why is not None:
                return why
        return None

    def own(self) -> frozenset[Address]:
        with self._lock:
            now = time.monotonic()
            if now - self._read_at >= _KEEP_SECONDS:
                self._own = read_own_addresses()
                self._read_at = now
            return self._own


def _inside(address: Address) -> list[Address]:
    """``address``, and the IPv4 address written inside it, if any."""
    found: list[Address] = [address]
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            found.append(address.ipv4_mapped)
        if address.sixtofour is not None:
            found.append(address.sixtofour)
        if address.teredo is not None:
            found.extend(address.teredo)
        if any(address in network for network in _NAT64):
            found.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return found


def _class_refusal(ip: Address) -> str | None:
    if ip in METADATA:
        return "a cloud's metadata address"
    if ip.is_loopback:
        return "a loopback address of this host"
    if ip.is_unspecified or (isinstance(ip, ipaddress.IPv4Address) and ip in _THIS_NETWORK):
        return "an unspecified address (this host)"
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_multicast:
        return "a multicast address"
    if ip.is_reserved or (isinstance(ip, ipaddress.IPv6Address) and ip.is_site_local):
        return "a reserved address"
    return None


def read_own_addresses() -> frozenset[Address]:
    """Every address of every interface of this host (both families), loopback included."""
    own: set[Address] = {ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1")}
    try:
        own.update(_fib_trie_locals(_FIB_TRIE.read_text()))
    except OSError:
        own.update(_ioctl_ipv4())
    with contextlib.suppress(OSError):  # no IPv6 in this kernel: no IPv6 address either
        own.update(_if_inet6(_IF_INET6.read_text()))
    return frozenset(own)


def _fib_trie_locals(text: str) -> set[Address]:
    """The ``/32 host LOCAL`` entries of ``/proc/net/fib_trie``: the host's IPv4 addresses."""
    found: set[Address] = set()
    last: str | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("|--"):
            last = stripped[3:].strip()
        elif last is not None and stripped.endswith("host LOCAL"):
            with contextlib.suppress(ValueError):
                found.add(ipaddress.IPv4Address(last))
    return found


def _if_inet6(text: str) -> set[Address]:
    found: set[Address] = set()
    for line in text.splitlines():
        fields = line.split()
        if fields and len(fields[0]) == 32:
            with contextlib.suppress(ValueError):
                found.add(ipaddress.IPv6Address(int(fields[0], 16)))
    return found


def _ioctl_ipv4() -> set[Address]:
    found: set[Address] = set()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        for _, name in socket.if_nameindex():
            request = struct.pack("256s", name.encode()[:15])
            with contextlib.suppress(OSError):
                answer = fcntl.ioctl(probe.fileno(), _SIOCGIFADDR, request)
                found.add(ipaddress.IPv4Address(answer[20:24]))
    return found
