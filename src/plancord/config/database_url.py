"""Which database a config names: a ``postgresql://`` URL, or else a SQLite file."""

from __future__ import annotations

from pathlib import Path

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def is_postgres(target: str | Path) -> bool:
    return isinstance(target, str) and target.startswith(POSTGRES_SCHEMES)


def redact(url: str) -> str:
    """``url`` with its password replaced, for messages and logs."""
    scheme, sep, rest = url.partition("://")
    credentials, at, host = rest.rpartition("@")
    if not at or ":" not in credentials:
        return url
    user = credentials.split(":", 1)[0]
    return f"{scheme}{sep}{user}:***@{host}"
