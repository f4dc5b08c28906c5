"""This process's own name among the processes that share one data directory.

Why this exists: several processes may run on one data directory (the documented
two-process setup, the operator's shell beside the bot, two containers on one volume,
where both may be pid 1). What belongs to one process only (the proxy's unix sockets,
which a process makes afresh by removing whatever file is at the path) must live under a
name no other process uses, or the second process takes the first one's socket away from
the sandboxes it serves.
"""

from __future__ import annotations

import os
import secrets
import socket

_TOKEN = secrets.token_hex(3)
"""Random per process (drawn once, at import), so two processes with one pid differ."""


def host_identity() -> str:
    """Where this process runs, for people: ``$PLANCORD_HOST_ID``, else the host name."""
    return os.environ.get("PLANCORD_HOST_ID") or socket.gethostname()


def process_tag() -> str:
    """A short name of this process alone (its pid and a random token): a folder name for
    what is its own. Short, since a unix socket's path is at most 107 bytes."""
    return f"{os.getpid()}-{_TOKEN}"
