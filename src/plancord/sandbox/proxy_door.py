"""The door between a sandbox and its agent's proxy: a listening socket handed over.

Why this exists: the sandbox of a plan-bound network must reach the host's proxy, and
nothing inside may show where the host keeps it (the data directory). So no socket file is
bound in: before a run starts, the host connects to the agent's proxy socket (``opened``)
and passes that connection to the sandbox as a bare descriptor; the bridge inside
(``net_bridge.c``) listens on the sandbox's loopback port and hands the listening socket
over it (``HAND_OFF`` with the socket as ``SCM_RIGHTS``), then closes it before the command
starts. The proxy accepts on that listener (``received``) for as long as the host's end of
the connection stays open, which is the run's life: the runner closes it when the command
ends, an MCP server's spawn when the server stops. Which agent a connection belongs to is
still the socket it arrived on.
"""

from __future__ import annotations

import contextlib
import os
import socket
from pathlib import Path

HAND_OFF = b"L"
"""The one byte a bridge sends with its listening socket."""


def opened(path: Path) -> int:
    """A connection to the proxy listening at ``path``, as a descriptor for the sandbox's
    bridge (inheritable); raises OSError when nothing listens there."""
    door = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        door.connect(str(path))
    except OSError:
        door.close()
        raise
    fd = door.detach()
    os.set_inheritable(fd, True)
    return fd


def hand_over(door: socket.socket, listener: socket.socket) -> None:
    """What a bridge does: send ``listener`` to the proxy through ``door``."""
    socket.send_fds(door, [HAND_OFF], [listener.fileno()])


def received(door: socket.socket) -> socket.socket | None:
    """The listening TCP socket a bridge sent through ``door`` (readable now), or None for
    anything else (other bytes, no socket, another kind of socket), whose descriptors are
    closed."""
    try:
        data, fds, _, _ = socket.recv_fds(door, 1, 2)
    except (BlockingIOError, InterruptedError):
        return None
    kept: socket.socket | None = None
    for fd in fds:
        if kept is None and data == HAND_OFF and len(fds) == 1:
            kept = _listening(fd)
        else:
            os.close(fd)
    return kept


def _listening(fd: int) -> socket.socket | None:
    try:
        found = socket.socket(fileno=fd)
    except OSError:
        os.close(fd)
        return None
    try:
        ok = (
            found.family in (socket.AF_INET, socket.AF_INET6)
            and found.type == socket.SOCK_STREAM
            and found.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN) == 1
        )
    except OSError:
        ok = False
    if not ok:
        with contextlib.suppress(OSError):
            found.close()
        return None
    found.setblocking(False)
    return found
