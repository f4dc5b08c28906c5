"""bubblewrap's options handed over in a memory file, and host files copied in, not bound,
so the sandbox never reads a host path it was not given.

Why this exists: inside the sandbox, pid 1 is bubblewrap's own process, and
``/proc/1/cmdline`` is readable there: with the options on the command line it would show
every host path the sandbox is built from (the helpers' cache folder, the config view's
folder). bubblewrap reads its options from a descriptor instead (``--args FD``,
NUL-separated) and closes it before the command starts, so its command line is only
``bwrap --args FD -- COMMAND…``: what the sandbox already sees.

The mount table (``/proc/self/mountinfo``) names each bind's source as its path in the
host's file system, so a file bound under another name (the native helpers from the bot's
cache folder, the Python bridge and trampoline, each config view and the empty file over
``info/attributes``) would show where the host keeps it. Each such file is copied instead
into a memory file that bubblewrap writes into its own private file system and binds
read-only at the same place (``--ro-bind-data``, executable when the file was): the table
then shows bubblewrap's own temporary name, never a host path. What is bound at its own
path (the system's directories, the workspace, the shared directories) stays a bind.
"""

from __future__ import annotations

import os
import stat


def hidden(argv: list[str]) -> tuple[list[str], tuple[int, ...]]:
    """``argv`` with a bubblewrap run's options moved into a memory file and each file bound
    under another name copied in, and the memory files' descriptors (to pass to the child,
    then close); an argv of another layer as it is."""
    if not argv or argv[0] != "bwrap" or "--" not in argv:
        return argv, ()
    end = argv.index("--")
    fds: list[int] = []
    try:
        options = _copied_in(argv[1:end], fds)
        fds.append(_memory_file("bwrap-args", b"".join(os.fsencode(o) + b"\0" for o in options)))
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    return ["bwrap", "--args", str(fds[-1]), *argv[end:]], tuple(fds)


def _copied_in(options: list[str], fds: list[int]) -> list[str]:
    """``options`` with each ``--ro-bind FILE PLACE`` of a regular file at another place
    turned into ``--perms MODE --ro-bind-data FD PLACE`` of a copy (its descriptor added to
    ``fds``)."""
    shown: list[str] = []
    at = 0
    while at < len(options):
        option = options[at]
        if option == "--ro-bind" and at + 2 < len(options):
            source, place = options[at + 1], options[at + 2]
            if source != place and _regular(source):
                with open(source, "rb") as file:
                    data = file.read()
                fds.append(_memory_file("bound", data))
                mode = "0555" if os.access(source, os.X_OK) else "0444"
                shown += ["--perms", mode, "--ro-bind-data", str(fds[-1]), place]
                at += 3
                continue
        shown.append(option)
        at += 1
    return shown


def _regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def _memory_file(name: str, data: bytes) -> int:
    fd = os.memfd_create(name, os.MFD_CLOEXEC)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd
