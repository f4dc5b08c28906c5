"""Hosts a plan step may reach, and the operator's bound on them: patterns and matching.

Why this exists: the network is granted by the plan. A step names the hosts it needs
(``network: [pypi.org, "*.pythonhosted.org"]``), the human approves exactly that, and the
host's proxy allows a connection only to a host the current step names. The operator bounds
what any plan of an agent may name (``agents.NAME.network: {allow: [...]}``). Both sides
are host patterns judged here by one rule, so what the card shows, what the bound admits
and what the proxy lets through cannot disagree.

A pattern is a host (``pypi.org``, ``198.51.100.7``, ``[2001:db8::1]``), or ``*.`` followed
by a name (``*.pythonhosted.org``): any name that ends in ``.pythonhosted.org`` (one label
or more), never ``pythonhosted.org`` itself and never an address. Either may end in
``:port``; without one a pattern grants ports 80 and 443 only, with one that port only.
Hosts are parsed once (``core.host_names``): a name is compared as its lower-case ASCII
form without a trailing dot, an address as an address (its spelling does not matter), and
an address is matched only by an address pattern.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from plancord.core.host_names import (
    DEFAULT_PORTS,
    MAX_NAME_CHARS,
    DnsName,
    Endpoint,
    Host,
    HostProblem,
    parse_host,
    parse_port,
    split_port,
)

MAX_HOSTS_PER_STEP = 20
MAX_HOST_CHARS = MAX_NAME_CHARS + len("*.") + len(":65535")


@dataclass(frozen=True, slots=True)
class HostPattern:
    """One host pattern: ``host`` exactly, or (``wildcard``) every name under it; at
    ``port``, or at 80 and 443 when it names none."""

    host: Host
    wildcard: bool = False
    port: int | None = None

    @property
    def text(self) -> str:
        """The pattern as the plan and the card show it."""
        star = "*." if self.wildcard else ""
        port = f":{self.port}" if self.port is not None else ""
        return f"{star}{self.host.shown}{port}"

    @property
    def ports(self) -> frozenset[int]:
        return DEFAULT_PORTS if self.port is None else frozenset({self.port})

    def admits(self, endpoint: Endpoint) -> bool:
        return endpoint.port in self.ports and self._admits_host(endpoint.host)

    def within(self, bound: HostPattern) -> bool:
        """Whether every host and port this pattern names is one ``bound`` admits."""
        if not self.ports <= bound.ports:
            return False
        if not self.wildcard:
            return bound._admits_host(self.host)
        return bound.wildcard and (self.host == bound.host or _under(self.host, bound.host))

    def _admits_host(self, host: Host) -> bool:
        if self.wildcard:
            return _under(host, self.host)
        return host == self.host


def _under(host: Host, domain: Host) -> bool:
    return isinstance(host, DnsName) and isinstance(domain, DnsName) and host.under(domain)


@lru_cache(maxsize=4096)
def parse_pattern(pattern: str) -> HostPattern:
    """The pattern ``pattern`` names (surrounding space ignored); HostProblem says why not."""
    text = pattern.strip()
    if not text or len(text) > MAX_HOST_CHARS:
        raise HostProblem(f"each host must be 1 to {MAX_NAME_CHARS} characters")
    if "/" in text or "@" in text or "\\" in text:
        raise HostProblem(f"{pattern!r}: name a host (pypi.org), not a URL or a path")
    wildcard = text.startswith("*.")
    host_text, port_text = split_port(text[2:] if wildcard else text)
    port = parse_port(port_text) if port_text is not None else None
    try:
        host = parse_host(host_text)
    except HostProblem as exc:
        raise HostProblem(
            f"{pattern!r} is not a host name ({exc}); use a name such as pypi.org, "
            "or *.example.org for every name under example.org"
        ) from None
    if wildcard and (not isinstance(host, DnsName) or "." not in host.text):
        raise HostProblem(
            f"{pattern!r} is too wide; a wildcard needs a domain under it (*.example.org)"
        )
    return HostPattern(host, wildcard, port)


def normal_host(pattern: str) -> str:
    """``pattern`` as patterns are compared and shown (``PyPI.org.`` is ``pypi.org``,
    ``0x7f.1`` is ``127.0.0.1``); it must be a pattern (:func:`host_pattern_problem`)."""
    return parse_pattern(pattern).text


def host_pattern_problem(pattern: str) -> str | None:
    """Why ``pattern`` is not a host pattern; None when it is one."""
    try:
        parse_pattern(pattern)
    except HostProblem as exc:
        return str(exc)
    return None


def matches_host(patterns: Iterable[str], endpoint: Endpoint) -> bool:
    """Whether one of ``patterns`` admits ``endpoint`` (its host and its port)."""
    return any(parse_pattern(pattern).admits(endpoint) for pattern in patterns)


def pattern_within(pattern: str, bound: Iterable[str]) -> bool:
    """Whether every host and port ``pattern`` names is one ``bound`` admits: an exact host
    a bound pattern matches, or ``*.x`` under a bound ``*.x`` or a wider ``*.y`` with x under
    y; each at ports the bound pattern allows."""
    try:
        named = parse_pattern(pattern)
    except HostProblem:
        return False
    return any(named.within(parse_pattern(allowed)) for allowed in bound)


@dataclass(frozen=True, slots=True)
class NetworkBound:
    """What the operator lets an agent's plans ask for: ``anything`` (``network: true``,
    no proxy, the host's network while executing), or the host patterns of ``allow``
    (empty: no plan may name a host). ``unavailable``: why no plan may name a host on
    this host whatever the list says (the sandbox layer cannot hold the network to a plan).
    """

    allow: tuple[str, ...] = ()
    anything: bool = False
    unavailable: str | None = None

    @property
    def by_plan(self) -> bool:
        """Whether the network is granted step by step through the proxy."""
        return bool(self.allow) and not self.anything

    def problems(self, steps: Sequence[Sequence[str]]) -> list[str]:
        """Why a plan whose steps name these hosts (each step's ``network``) may not be
        submitted: each host outside this bound, named with its step; empty when it may."""
        if self.anything:
            return []
        named = [(number, host) for number, hosts in enumerate(steps, start=1) for host in hosts]
        if named and self.unavailable is not None:
            return [f"steps[{named[0][0] - 1}].network: {self.unavailable}"]
        if named and not self.allow:
            return [
                f"steps[{named[0][0] - 1}].network: this agent may not reach the network "
                "(the operator allows no host); drop the step's network list"
            ]
        return [
            f"steps[{number - 1}].network: {host} is not among the hosts the operator "
            f"allows this agent ({', '.join(self.allow)})"
            for number, host in named
            if not pattern_within(host, self.allow)
        ]
