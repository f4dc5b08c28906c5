"""Which process carries out an intent, and whether it still can.

Why this exists: an open intent (``core.intents``) is either being carried out right now or
was left by a process that is gone (killed, restarted, or one whose database write failed
after git ran). Only the second may be finished or undone by someone else, and finishing a
live one would run git twice at once. The owner names the host, the process id with the
process's start time (a pid is reused; its start time is not) and the results service inside
it (a test, or a process that reopened its services, holds more than one over time).
"""

from __future__ import annotations

import os
import socket
import uuid

_LIVE: set[str] = set()
"""The owners of this process's results services that are open."""


def _started(pid: int) -> str | None:
    """The start time of process ``pid`` in clock ticks since boot; None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            text = handle.read().decode("ascii", "replace")
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces: count after it.
    fields = text.rpartition(")")[2].split()
    return fields[19] if len(fields) > 19 else None


def new_owner() -> str:
    """A fresh owner for a results service of this process, live until ``release``."""
    owner = f"{socket.gethostname()}:{os.getpid()}:{_started(os.getpid())}:{uuid.uuid4().hex}"
    _LIVE.add(owner)
    return owner


def release(owner: str) -> None:
    """The results service ``owner`` closed: its open intents are left for recovery."""
    _LIVE.discard(owner)


def owner_alive(owner: str) -> bool:
    """Whether ``owner`` may still be carrying out its intent. A process on another host
    cannot run git on this host's workspaces, so only this host's processes count."""
    host, _, rest = owner.partition(":")
    pid_text, _, rest = rest.partition(":")
    started, _, _ = rest.partition(":")
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return owner in _LIVE
    return _started(pid) == started


class IntentCarrier:
    """One service's name as the owner of intents, and the intents it carries out now.

    An open intent of this owner that it is not carrying out was left behind (its record
    failed, its task was killed): like one of a process that is gone, it is an orphan for
    recovery. The result decisions and the approvals' starts each hold one.
    """

    def __init__(self) -> None:
        self.owner = new_owner()
        self._running: set[str] = set()

    def carrying(self, intent_id: str) -> None:
        """The service carries the intent out from now on."""
        self._running.add(intent_id)

    def finished(self, intent_id: str) -> None:
        """The service no longer carries the intent out (done, undone, or left open)."""
        self._running.discard(intent_id)

    def is_orphan(self, intent_id: str, owner: str) -> bool:
        """Whether the open intent ``intent_id`` of ``owner`` is nobody's to carry out."""
        if intent_id in self._running:
            return False
        return owner == self.owner or not owner_alive(owner)

    def close(self) -> None:
        """The service ends: what it left open is another's to recover."""
        release(self.owner)
