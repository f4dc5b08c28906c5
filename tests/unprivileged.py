"""Running a command as an unprivileged user, for permission cases: root writes through file
permissions, so under root the command is started through ``setpriv`` as ``nobody``, keeping
only the right to read and search (to reach the test's files under root's temporary folder)."""

from __future__ import annotations

import os

UNPRIVILEGED = (
    [
        "setpriv",
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        "--inh-caps=+dac_read_search",
        "--ambient-caps=+dac_read_search",
    ]
    if os.geteuid() == 0
    else []
)
