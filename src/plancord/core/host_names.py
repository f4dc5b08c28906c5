"""One host value, parsed once: what the proxy matches, resolves, connects to and records.

Why this exists: a host name judged by one parser and used by another is a hole (with
``*.files.test`` granted, ``198.51.100.7\\0.files.test`` matched the grant as text while the
system's resolver read it up to the NUL). Every host a request or a grant names is turned
into one of two frozen values here, and only those values travel on: a :class:`DnsName`
(ASCII, lower case, IDNA's A-labels, no trailing dot, labels of 1 to 63 characters, at
most 253 in all, no control character or space anywhere) or an :class:`IpLiteral` (an
address, whatever its spelling: ``2130706433``, ``0177.0.0.1``, ``0x7f.1``, ``127.1`` and
``[::ffff:127.0.0.1]`` are all ``127.0.0.1``; an IPv6 zone id is refused). A name whose
last label is a number is an address or nothing, as in a browser's URL parser (WHATWG
URL, "ends in a number"), so no spelling the system's resolver reads as an address passes
as a name. Non-ASCII names go through UTS-46 (the ``idna`` package, non-transitional).
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from dataclasses import dataclass

import idna

MAX_NAME_CHARS = 253
MAX_LABEL_CHARS = 63
DEFAULT_PORTS = frozenset({80, 443})
"""The ports a grant without ``:port`` allows: HTTP and HTTPS."""

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?")
_HEX = re.compile(r"0[xX][0-9a-fA-F]*")


class HostProblem(ValueError):
    """Why a text is not a host (or a host and port); the message says so."""


@dataclass(frozen=True, slots=True)
class DnsName:
    """A host name as DNS asks for it: checked again on construction, so no other value
    of this type exists."""

    text: str

    def __post_init__(self) -> None:
        problem = _name_problem(self.text)
        if problem is not None:
            raise HostProblem(problem)

    @property
    def shown(self) -> str:
        return self.text

    def under(self, domain: DnsName) -> bool:
        """Whether this name is a subdomain of ``domain`` (one label or more deeper)."""
        return self.text.endswith("." + domain.text)


@dataclass(frozen=True, slots=True)
class IpLiteral:
    """An address named as such; an IPv4-mapped IPv6 address is its IPv4 address."""

    address: Address

    def __post_init__(self) -> None:
        if isinstance(self.address, ipaddress.IPv6Address) and (
            self.address.scope_id is not None or self.address.ipv4_mapped is not None
        ):
            raise HostProblem("an IPv6 address with a zone id or an IPv4 address inside")

    @property
    def shown(self) -> str:
        if isinstance(self.address, ipaddress.IPv6Address):
            return f"[{self.address}]"
        return str(self.address)


Host = DnsName | IpLiteral


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A host and the port a connection goes to."""

    host: Host
    port: int

    @property
    def shown(self) -> str:
        """``host`` for HTTP's and HTTPS's ports, ``host:port`` for any other."""
        if self.port in DEFAULT_PORTS:
            return self.host.shown
        return f"{self.host.shown}:{self.port}"

    def authority(self, default_port: int) -> str:
        """``host`` or ``host:port``, as an HTTP ``Host`` header names it."""
        if self.port == default_port:
            return self.host.shown
        return f"{self.host.shown}:{self.port}"


def parse_host(text: str) -> Host:
    """The host ``text`` names (a name, ``[IPv6]``, or IPv4 in any spelling)."""
    if not text:
        raise HostProblem("no host named")
    if any(_forbidden(c) for c in text):
        raise HostProblem("a host name holds a control character or a space")
    if text.startswith("["):
        if not text.endswith("]"):
            raise HostProblem(f"{text!r}: an IPv6 address ends with ]")
        return IpLiteral(_ipv6(text[1:-1]))
    if ":" in text:
        raise HostProblem(f"{text!r}: an IPv6 address is written in brackets ([2001:db8::1])")
    name = _ascii(text)
    if name.endswith("."):
        name = name[:-1]
    labels = name.split(".")
    if _ends_in_number(labels):
        return IpLiteral(_ipv4(text, labels))
    return DnsName(name)


def parse_endpoint(text: str, default_port: int | None) -> Endpoint:
    """``host:port`` (or ``host`` alone when ``default_port`` is given)."""
    host_text, port_text = split_port(text)
    if port_text is None:
        if default_port is None:
            raise HostProblem(f"{text!r}: no port named")
        return Endpoint(parse_host(host_text), default_port)
    return Endpoint(parse_host(host_text), parse_port(port_text))


def split_port(text: str) -> tuple[str, str | None]:
    """``(host, port)`` of ``host:port``, ``[v6]:port``, ``host`` or ``[v6]``."""
    if text.startswith("["):
        end = text.find("]")
        if end < 0:
            raise HostProblem(f"{text!r}: an IPv6 address ends with ]")
        rest = text[end + 1 :]
        if not rest:
            return text, None
        if not rest.startswith(":"):
            raise HostProblem(f"{text!r}: only :port may follow an IPv6 address")
        return text[: end + 1], rest[1:]
    host, colon, port = text.rpartition(":")
    if not colon:
        return text, None
    if ":" in host:
        raise HostProblem(f"{text!r}: an IPv6 address is written in brackets ([2001:db8::1])")
    return host, port


def parse_port(text: str) -> int:
    if not text.isascii() or not text.isdigit() or len(text) > 5 or not 0 < int(text) < 65536:
        raise HostProblem(f"{text!r} is not a port (1 to 65535)")
    return int(text)


def _forbidden(char: str) -> bool:
    """Control characters (NUL, DEL, C1), spaces and line or paragraph separators."""
    return unicodedata.category(char) in ("Cc", "Zs", "Zl", "Zp") or char.isspace()


def _ascii(text: str) -> str:
    """``text`` in lower case with every label an A-label (UTS-46 for non-ASCII text)."""
    if text.isascii():
        return text.lower()
    try:
        return idna.encode(text, uts46=True, transitional=False).decode("ascii").lower()
    except (UnicodeError, ValueError) as exc:
        raise HostProblem(f"{text!r} is not a host name IDNA allows: {exc}") from None


def _name_problem(name: str) -> str | None:
    if not name or len(name) > MAX_NAME_CHARS:
        return f"a host name is 1 to {MAX_NAME_CHARS} characters"
    for label in name.split("."):
        if _LABEL.fullmatch(label) is None:
            return (
                f"{name!r} is not a host name (each label 1 to {MAX_LABEL_CHARS} letters, "
                "digits, hyphens or underscores, in lower case)"
            )
        if label.startswith("xn--") and not _alabel(label):
            return f"{name!r}: {label!r} is not an IDNA A-label"
    return None


def _alabel(label: str) -> bool:
    try:
        return idna.encode(idna.decode(label)).decode("ascii") == label
    except (UnicodeError, ValueError):
        return False


def _ends_in_number(labels: list[str]) -> bool:
    last = labels[-1]
    return bool(last) and (last.isdigit() or _HEX.fullmatch(last) is not None)


def _ipv4(text: str, parts: list[str]) -> ipaddress.IPv4Address:
    """An IPv4 address in any spelling inet_aton reads (WHATWG's IPv4 parser)."""
    if len(parts) > 4:
        raise HostProblem(
            f"{text!r}: a name ending in a number is an IPv4 address, and this is none"
        )
    numbers = [_ipv4_number(text, part) for part in parts]
    *leading, last = numbers
    if any(n > 255 for n in leading) or last >= 256 ** (5 - len(numbers)):
        raise HostProblem(f"{text!r} is not an IPv4 address (a part is too large)")
    value = last
    for index, number in enumerate(leading):
        value += number * 256 ** (3 - index)
    return ipaddress.IPv4Address(value)


def _ipv4_number(text: str, part: str) -> int:
    try:
        if _HEX.fullmatch(part):
            return int(part[2:] or "0", 16)
        if len(part) > 1 and part.startswith("0"):
            return int(part[1:], 8)
        if part.isdigit():
            return int(part)
    except ValueError:
        pass
    raise HostProblem(f"{text!r}: a name ending in a number is an IPv4 address, and this is none")


def _ipv6(text: str) -> Address:
    if "%" in text:
        raise HostProblem(f"[{text}]: an IPv6 zone id is refused")
    try:
        address = ipaddress.IPv6Address(text)
    except ValueError:
        raise HostProblem(f"[{text}] is not an IPv6 address") from None
    mapped = address.ipv4_mapped
    return mapped if mapped is not None else address
