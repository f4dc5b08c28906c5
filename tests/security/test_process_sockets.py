"""Two processes on one data directory each listen on a proxy socket of their own.

A process makes its agents' proxy sockets afresh, removing whatever file is at the path; if
two processes named the same path (the documented two-process setup, two containers on one
volume), the second would take the first one's socket away from the sandboxes it serves,
and their network calls would reach the other process's gate. Each child here is a real
process that loads the config, listens as the app does, and stays up while the other does
the same."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

CHILD = """
import asyncio, sys
from pathlib import Path
from plancord.config.loading import load_config
from plancord.sandbox.proxy import NetworkProxy

async def main() -> None:
    async def decide(*args, **kwargs):
        raise RuntimeError("no call is decided here")
    path = load_config(Path(sys.argv[1])).sandbox_settings.proxy_socket("ada")
    proxy = NetworkProxy(decide, asyncio.get_running_loop())
    await asyncio.to_thread(proxy.listen, "ada", path)
    print(path, flush=True)
    await asyncio.to_thread(sys.stdin.read)
    proxy.close()

asyncio.run(main())
"""


def _child(config: Path) -> tuple[subprocess.Popen[str], Path]:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(config)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    return child, Path(child.stdout.readline().strip())


def _accepts(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        try:
            client.connect(str(path))
        except OSError:
            return False
    return True


def test_two_processes_on_one_data_directory_listen_on_sockets_of_their_own(
    tmp_path: Path,
) -> None:
    config = tmp_path / "plancord.yaml"
    config.write_text(
        f"data_dir: {tmp_path / 'data'}\nagents:\n  ada:\n    network:\n      allow: [pypi.org]\n"
    )
    first, first_path = _child(config)
    second, second_path = _child(config)
    try:
        assert first_path != second_path
        assert _accepts(first_path), "the second process took the first one's socket"
        assert _accepts(second_path)
    finally:
        for child in (first, second):
            child.communicate(timeout=30)
    assert not first_path.exists() and not second_path.exists()
    assert not first_path.parent.exists(), "a process leaves its own folder of sockets"
