"""Hosts a plan step may reach, and the operator's bound on them: names, patterns, matching.

Why this exists: the network is granted by the plan. A step names the hosts it needs
(``network: [pypi.org, "*.pythonhosted.org"]``), the human approves exactly that, and the
host's proxy allows a connection only to a host the current step names. The operator bounds
what any plan of an agent may name (``agents.NAME.network: {allow: [...]}``). Both sides
are host patterns judged here by one rule, so what the card shows, what the bound admits
and what the proxy lets through cannot disagree.

A pattern is an exact host name (``pypi.org``), or ``*.`` followed by a name
(``*.pythonhosted.org``): any name that ends in ``.pythonhosted.org`` (one label or more),
never ``pythonhosted.org`` itself. Names are compared in lower case without a trailing dot.
A grant is a host, whatever the port.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

MAX_HOSTS_PER_STEP = 20
MAX_HOST_CHARS = 253

_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?")


def normal_host(name: str) -> str:
    """``name`` as hosts are compared: lower case, no trailing dot, no surrounding space."""
    return name.strip().lower().rstrip(".")


def host_pattern_problem(pattern: str) -> str | None:
    """Why ``pattern`` is not a host name or ``*.name`` pattern; None when it is one."""
    name = normal_host(pattern)
    if not name or len(name) > MAX_HOST_CHARS:
        return f"each host must be 1 to {MAX_HOST_CHARS} characters"
    if "://" in name or "/" in name or ":" in name:
        return f"{pattern!r}: name a host (pypi.org), not a URL, a path or a port"
    wildcard = name.startswith("*.")
    labels = (name[2:] if wildcard else name).split(".")
    if any(_LABEL.fullmatch(label) is None for label in labels):
        return (
            f"{pattern!r} is not a host name; use a name such as pypi.org, "
            "or *.example.org for every name under example.org"
        )
    if wildcard and len(labels) < 2:
        return f"{pattern!r} is too wide; a wildcard needs a domain under it (*.example.org)"
    return None


def matches_host(patterns: Iterable[str], host: str) -> bool:
    """Whether ``host`` is one of ``patterns`` names (exactly, or under a ``*.`` pattern)."""
    wanted = normal_host(host)
    for pattern in patterns:
        name = normal_host(pattern)
        if name.startswith("*."):
            if wanted.endswith(name[1:]) and len(wanted) > len(name) - 1:
                return True
        elif wanted == name:
            return True
    return False


def pattern_within(pattern: str, bound: Iterable[str]) -> bool:
    """Whether every host ``pattern`` names is one ``bound`` admits: an exact name the
    bound matches, or ``*.x`` under a bound ``*.x`` or a wider ``*.y`` with x under y."""
    name = normal_host(pattern)
    if not name.startswith("*."):
        return matches_host(bound, name)
    suffix = name[1:]
    for allowed in bound:
        wide = normal_host(allowed)
        if wide.startswith("*.") and (suffix == wide[1:] or suffix.endswith(wide[1:])):
            return True
    return False


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
