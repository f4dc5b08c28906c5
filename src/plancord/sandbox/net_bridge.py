"""Inside the sandbox: a loopback port handed to the host's proxy, then the command.

Why this exists: a sandbox whose network the plan grants has a network namespace of its own
with nothing in it but loopback, and programs find a proxy by
``HTTP_PROXY=http://127.0.0.1:PORT``. So this listens on that port of the sandbox's own
loopback and hands the listening socket to the host's proxy over the connection it was
given (``python3 -I -S net_bridge.py PORT FD -- CMD…``: listen, send the socket over FD
with one byte ``L``, close both, exec the command). The proxy then accepts on the sandbox's
loopback itself: no bridge process stays behind, no byte is copied twice, the port is bound
before the command starts (no program can race it), and the command never holds FD.
``net_bridge.c`` is the same as a native program, used where a C compiler built it (no
interpreter to start for every command). It grants nothing: the proxy on the other side
decides every connection.

Standard library only, started with ``-I -S``: it runs with the sandbox's Python install and
nothing of the bot's.
"""

from __future__ import annotations

import os
import socket
import sys


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        print("usage: net_bridge.py PORT FD -- COMMAND...", file=sys.stderr)
        return 126
    port, door, command = int(argv[0]), int(argv[1]), argv[3:]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(128)
    with socket.socket(fileno=door) as proxy:
        socket.send_fds(proxy, [b"L"], [listener.fileno()])
    listener.close()
    try:
        os.execvp(command[0], command)  # noqa: S606 - the sandboxed command, as given
    except OSError as exc:
        print(f"{command[0]}: {exc.strerror}", file=sys.stderr)
    return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
