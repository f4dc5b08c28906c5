"""The bot process keeps its secrets to itself: not dumpable, and no tokens left in its
environment once they are read.

Why this exists: ``/proc/<pid>/environ`` shows a process's environment as it was when the
process started, whatever it later unsets, and any process of the same user may read it.
The sandbox keeps agent processes from seeing the bot's ``/proc`` at all; this is the wall
behind it, for whatever else runs as the bot's user:

* ``PR_SET_DUMPABLE`` 0 makes ``/proc/<bot>/environ``, ``mem``, ``maps`` and ptrace out of
  reach of other processes of the same user (root keeps ``CAP_SYS_PTRACE``, hence the next);
* the secrets' bytes in the original environment block are overwritten in place, and the
  variables removed from ``os.environ`` and the C environment, so no later child inherits
  them and even root reading ``/proc/<bot>/environ`` finds only ``x``s.
"""

from __future__ import annotations

import ctypes
import logging
import os
import sys
from collections.abc import Iterable

log = logging.getLogger(__name__)

_PR_SET_DUMPABLE = 4
_PR_GET_DUMPABLE = 3


def _libc() -> ctypes.CDLL | None:
    if sys.platform != "linux":
        return None
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def make_undumpable() -> bool:
    """Mark this process not dumpable; True when the kernel took it."""
    libc = _libc()
    if libc is None:
        return False
    done = libc.prctl(
        ctypes.c_int(_PR_SET_DUMPABLE),
        ctypes.c_ulong(0),
        ctypes.c_ulong(0),
        ctypes.c_ulong(0),
        ctypes.c_ulong(0),
    )
    return int(done) == 0


def is_dumpable() -> bool:
    libc = _libc()
    if libc is None:
        return True
    return bool(libc.prctl(ctypes.c_int(_PR_GET_DUMPABLE), 0, 0, 0, 0))


def _wipe_original(names: set[bytes]) -> None:
    """Overwrite the values of ``names`` where the C environment holds them, in place."""
    libc = _libc()
    if libc is None:
        return
    environ = ctypes.POINTER(ctypes.c_char_p).in_dll(libc, "environ")
    index = 0
    while True:
        address = ctypes.cast(environ, ctypes.POINTER(ctypes.c_void_p))[index]
        if not address:
            return
        entry = ctypes.string_at(address)
        name, equals, value = entry.partition(b"=")
        if equals and name in names and value:
            ctypes.memset(address + len(name) + 1, ord("x"), len(value))
        index += 1


def drop_secrets(names: Iterable[str]) -> None:
    """Remove ``names`` from this process's environment, overwriting their values first."""
    wanted = {name for name in names if name in os.environ}
    if not wanted:
        return
    try:
        _wipe_original({name.encode() for name in wanted})
    except (OSError, ValueError) as exc:  # pragma: no cover - a libc without ``environ``
        log.warning("could not overwrite the secrets in the environment block: %s", exc)
    for name in wanted:
        os.environ.pop(name, None)


def harden(secret_names: Iterable[str]) -> None:
    """Both walls, once the secrets are read: call it before anything else starts."""
    if not make_undumpable():
        log.warning("could not mark the bot process undumpable (not Linux?)")
    drop_secrets(secret_names)
