"""``plancord run`` as a container's PID 1: an init that reaps what it did not start.

Why this exists: in a container without ``--init`` the bot is process 1, and every orphan
of the PID namespace (bubblewrap's, a health check's) becomes its child. Python reaps only
the children it started, so each of those stayed a zombie: 20 agent commands left 22, each
health check one more, until the container's process limit was reached. Reaping them from
the bot itself (``waitpid(-1)``) would race the event loop's own waits for its commands.
So process 1 forks: the child is the bot; process 1 forwards the stop signals to it, reaps
every child that ends, and exits with the bot's status. Anywhere else (systemd, a shell,
``docker run --init``) nothing changes.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Callable

#: The signals process 1 passes on to the bot.
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT)


def run_as_init(main: Callable[[], int], *, pid: int | None = None) -> int:
    """``main()``'s status; when this process is PID 1, ``main`` runs in a child while this
    process reaps every child until that one ends."""
    if (os.getpid() if pid is None else pid) != 1:
        return main()
    sys.stdout.flush()
    sys.stderr.flush()
    child = os.fork()
    if child == 0:  # the bot
        code = 1
        try:
            code = main()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    return _reap_until(child)


def _reap_until(child: int) -> int:
    def forward(signum: int, frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signum)

    for signum in FORWARDED:
        signal.signal(signum, forward)
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            return 0
        if pid == child:
            code = os.waitstatus_to_exitcode(status)
            return 128 - code if code < 0 else code
