"""The addresses no granted name may lead to: this host's own (read from the kernel) and
its clouds' metadata services, in every form an address can be written inside another."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest

from plancord.sandbox.host_addresses import HostAddresses, read_own_addresses


def _interfaces() -> list[str]:
    """This host's addresses as ``ip`` would list them, read independently of the code."""
    found = []
    last = ""
    for line in Path("/proc/net/fib_trie").read_text().splitlines():
        if "|--" in line:
            last = line.split("|--")[1].strip()
        elif "host LOCAL" in line:
            found.append(last)
    with_v6 = Path("/proc/net/if_inet6")
    if with_v6.exists():
        for line in with_v6.read_text().splitlines():
            found.append(str(ipaddress.IPv6Address(int(line.split()[0], 16))))
    return found


def test_every_interface_address_is_one_of_this_hosts() -> None:
    own = read_own_addresses()
    for address in _interfaces():
        assert ipaddress.ip_address(address) in own
        assert HostAddresses().refusal(ipaddress.ip_address(address)) is not None


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "127.8.9.10",
        "::1",
        "0.0.0.0",
        "0.1.2.3",
        "::",
        "169.254.169.254",
        "fe80::1",
        "fd00:ec2::254",
        "fd20:ce::254",
        "100.100.100.200",
        "168.63.129.16",
        "224.0.0.1",
        "ff02::1",
        "255.255.255.255",
        "::ffff:169.254.169.254",
        "64:ff9b::a9fe:a9fe",
        "2002:7f00:1::",
    ],
)
def test_the_host_itself_and_its_clouds_are_refused(address: str) -> None:
    assert HostAddresses().refusal(ipaddress.ip_address(address)) is not None


@pytest.mark.parametrize("address", ["198.51.100.7", "2001:db8::7", "10.1.2.3"])
def test_another_machine_is_not_this_host(address: str) -> None:
    assert HostAddresses().refusal(ipaddress.ip_address(address)) is None
