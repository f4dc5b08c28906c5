"""The one parse of a host: every spelling the system's resolver would read differently is
either refused or turned into the value the proxy then matches, resolves and records."""

from __future__ import annotations

import contextlib
import ipaddress
import socket

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plancord.core.host_names import (
    DnsName,
    Endpoint,
    HostProblem,
    IpLiteral,
    parse_endpoint,
    parse_host,
)


def _ip(text: str) -> IpLiteral:
    return IpLiteral(ipaddress.ip_address(text))


@pytest.mark.parametrize(
    ("text", "host"),
    [
        ("Files.Test.", DnsName("files.test")),
        ("bücher.test", DnsName("xn--bcher-kva.test")),
        ("Ａ.test", DnsName("a.test")),
        ("_acme.files.test", DnsName("_acme.files.test")),
        ("2130706433", _ip("127.0.0.1")),
        ("0177.0.0.1", _ip("127.0.0.1")),
        ("0x7f.1", _ip("127.0.0.1")),
        ("127.1", _ip("127.0.0.1")),
        ("127.0.0.1.", _ip("127.0.0.1")),
        ("１２７.０.０.１", _ip("127.0.0.1")),
        ("[::ffff:127.0.0.1]", _ip("127.0.0.1")),
        ("[2001:DB8:0::1]", _ip("2001:db8::1")),
    ],
)
def test_a_host_has_one_value_whatever_its_spelling(text: str, host: object) -> None:
    assert parse_host(text) == host


@pytest.mark.parametrize(
    "text",
    [
        "198.51.100.7\0.files.test",
        "a\tb.test",
        "a b.test",
        "files.test\r\n",
        "a\x7f.test",
        "a\x85.test",
        "files.test..",
        ".files.test",
        "a..test",
        "a" * 64 + ".test",
        ("a" * 60 + ".") * 5 + "test",
        "xn--zz.test",
        "-a.test",
        "a/b.test",
        "a／b.test",
        "ex\u200dample.test",
        "1.2.3.4.5",
        "1.2.3.256",
        "08.0.0.1",
        "0x1g.test.1",
        "[fe80::1%eth0]",
        "[::1",
        "::1",
        "",
    ],
)
def test_what_is_not_a_host_is_refused(text: str) -> None:
    with pytest.raises(HostProblem):
        parse_host(text)


def test_a_value_cannot_be_made_unchecked() -> None:
    with pytest.raises(HostProblem):
        DnsName("a\0.files.test")
    with pytest.raises(HostProblem):
        DnsName("Files.test")


@pytest.mark.parametrize(
    ("text", "default", "endpoint"),
    [
        ("files.test:8080", None, Endpoint(DnsName("files.test"), 8080)),
        ("files.test", 80, Endpoint(DnsName("files.test"), 80)),
        ("[::1]:443", None, Endpoint(_ip("::1"), 443)),
    ],
)
def test_an_endpoint_is_a_host_and_a_port(
    text: str, default: int | None, endpoint: Endpoint
) -> None:
    assert parse_endpoint(text, default) == endpoint


@pytest.mark.parametrize(
    "text", ["files.test", "files.test:99999", "files.test:0", "files.test:", "files.test:+1"]
)
def test_a_connect_target_names_a_port_in_range(text: str) -> None:
    with pytest.raises(HostProblem):
        parse_endpoint(text, None)


def test_an_endpoint_shows_its_port_unless_it_is_http_or_https() -> None:
    assert parse_endpoint("files.test:443", None).shown == "files.test"
    assert parse_endpoint("[2001:db8::1]:8080", None).shown == "[2001:db8::1]:8080"


_text = st.text(
    alphabet=st.sampled_from("aZ09.-_x:[]%\0 \t\u00e9\uff10\u3002"), min_size=0, max_size=30
)


@given(_text)
def test_every_value_is_what_the_system_resolver_reads_it_as(text: str) -> None:
    """Whatever a client sends, either it is refused, or the value is plain ASCII that
    parses back to itself and, if the C library reads it as an address, is that address."""
    try:
        host = parse_host(text)
    except HostProblem:
        return
    shown = host.shown
    assert shown.isascii() and shown.isprintable() and " " not in shown
    assert parse_host(shown) == host
    if isinstance(host, DnsName):
        try:
            packed = socket.inet_aton(host.text)
        except OSError:
            return
        raise AssertionError(f"{text!r} became the name {host.text!r}, read as {packed!r}")
    with contextlib.suppress(OSError):  # not an inet_aton spelling (mapped digits, brackets)
        assert ipaddress.ip_address(socket.inet_aton(text.rstrip("."))) == host.address
