"""bubblewrap's options handed over in a memory file, so the sandbox never reads them.

Why this exists: inside the sandbox, pid 1 is bubblewrap's own process, and
``/proc/1/cmdline`` is readable there: with the options on the command line it would show
every host path the sandbox is built from (the helpers' cache folder, the proxy socket's
path, the config view's folder). bubblewrap reads its options from a descriptor instead
(``--args FD``, NUL-separated) and closes it before the command starts, so its command line
is only ``bwrap --args FD -- COMMAND…``: what the sandbox already sees.
"""

from __future__ import annotations

import os


def hidden(argv: list[str]) -> tuple[list[str], int | None]:
    """``argv`` with a bubblewrap run's options moved into a memory file, and that file's
    descriptor (to pass to the child, then close); an argv of another layer as it is."""
    if not argv or argv[0] != "bwrap" or "--" not in argv:
        return argv, None
    end = argv.index("--")
    options = argv[1:end]
    fd = os.memfd_create("bwrap-args", os.MFD_CLOEXEC)
    try:
        data = b"".join(os.fsencode(option) + b"\0" for option in options)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return ["bwrap", "--args", str(fd), *argv[end:]], fd
