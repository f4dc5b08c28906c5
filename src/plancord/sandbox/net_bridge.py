"""Inside the sandbox: a loopback port that leads to the host's proxy socket, then the command.

Why this exists: a sandbox whose network the plan grants has a network namespace of its own
with nothing in it but loopback, and the host's proxy is a unix socket bound into it.
Programs find a proxy by ``HTTP_PROXY=http://127.0.0.1:PORT``, so this listens on that port
of the sandbox's own loopback and copies each connection to the unix socket. It binds the
port before the command starts (``python3 -I -S net_bridge.py PORT SOCKET -- CMD…``: listen,
serve from a detached grandchild, exec the command), so no program can race it, and the
command's own ``wait`` never waits for it. ``net_bridge.c`` is the same as a native program,
used where a C compiler built it (no interpreter to start for every command). It grants
nothing: the proxy on the other side decides every connection, and a process that kills this
bridge is left with no way out at all.

Standard library only, started with ``-I -S``: it runs with the sandbox's Python install and
nothing of the bot's.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading

CHUNK = 64 * 1024


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(CHUNK):
            sink.sendall(data)
        sink.shutdown(socket.SHUT_WR)
    except OSError:
        for end in (source, sink):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)


def _carry(client: socket.socket, path: str) -> None:
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError:
        client.close()
        upstream.close()
        return
    back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
    back.start()
    _pump(client, upstream)
    back.join()
    client.close()
    upstream.close()


def _serve(listener: socket.socket, path: str) -> None:
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        # Each write goes out at once (no wait for the client's delayed acknowledgement).
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=_carry, args=(client, path), daemon=True).start()


def _detach(listener: socket.socket, path: str) -> None:
    """Serve in a grandchild, its stdio on /dev/null, so the command never waits for it."""
    middle = os.fork()
    if middle == 0:
        if os.fork() == 0:
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            _serve(listener, path)
        os._exit(0)
    os.waitpid(middle, 0)


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        print("usage: net_bridge.py PORT SOCKET -- COMMAND...", file=sys.stderr)
        return 126
    port, path, command = int(argv[0]), argv[1], argv[3:]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    _detach(listener, path)
    listener.close()
    try:
        os.execvp(command[0], command)  # noqa: S606 - the sandboxed command, as given
    except OSError as exc:
        print(f"{command[0]}: {exc.strerror}", file=sys.stderr)
    return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
