"""Which database a config names: a ``postgresql://`` URL, or else a SQLite file."""

from __future__ import annotations

import re
from pathlib import Path

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def is_postgres(target: str | Path) -> bool:
    return isinstance(target, str) and target.startswith(POSTGRES_SCHEMES)


def redact(url: str) -> str:
    """``url`` with its password replaced, for messages and logs: the one after the user
    name, and a ``password=`` parameter."""
    scheme, sep, rest = url.partition("://")
    credentials, at, host = rest.rpartition("@")
    if at and ":" in credentials:
        rest = f"{credentials.split(':', 1)[0]}:***@{host}"
    return scheme + sep + re.sub(r"(?i)([?&]password=)[^&]*", r"\1***", rest)
