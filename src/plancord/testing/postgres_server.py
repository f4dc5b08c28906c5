"""A throwaway PostgreSQL server for the tests and the benchmarks.

``PostgresServer.start()`` runs ``initdb`` in a fresh temporary directory and starts the
server on a free loopback port with password authentication; ``stop()`` shuts it down and
removes the directory. PostgreSQL refuses to run as root, so under root the cluster belongs
to the unprivileged ``nobody`` account. The binaries come from Debian's ``postgresql``
package (``/usr/lib/postgresql/<version>/bin``), ``pg_config --bindir``, ``$PATH``, or
``$PLANCORD_PG_BINDIR``.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

HOW_TO_INSTALL = (
    "PostgreSQL server binaries not found: install Debian's postgresql package "
    "(apt-get install postgresql) or set PLANCORD_PG_BINDIR to the folder holding initdb"
)
START_TIMEOUT_S = 30.0
UNPRIVILEGED = "nobody"


class PostgresUnavailable(RuntimeError):
    pass


def find_bindir() -> Path | None:
    """The folder holding ``initdb`` and ``postgres``, or None."""
    candidates: list[Path] = []
    if os.environ.get("PLANCORD_PG_BINDIR"):
        candidates.append(Path(os.environ["PLANCORD_PG_BINDIR"]))
    versions = sorted(
        Path("/usr/lib/postgresql").glob("*/bin"),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
        reverse=True,
    )
    candidates += versions
    pg_config = shutil.which("pg_config")
    if pg_config:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            out = subprocess.run(
                [pg_config, "--bindir"], capture_output=True, text=True, timeout=10, check=True
            )
            candidates.append(Path(out.stdout.strip()))
    initdb = shutil.which("initdb")
    if initdb:
        candidates.append(Path(initdb).resolve().parent)
    for folder in candidates:
        if (folder / "initdb").is_file() and (folder / "postgres").is_file():
            return folder
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class PostgresServer:
    """A running server; ``url(name)`` for a database on it."""

    root: Path
    port: int
    password: str
    process: subprocess.Popen[bytes]
    user: str = "plancord"
    _made: int = field(default=0)

    @classmethod
    def start(cls, *, durable: bool = False) -> PostgresServer:
        """A new cluster and server. ``durable`` keeps fsync on (the benchmarks measure it);
        the tests turn it off, since a crash of the test machine loses nothing of value."""
        bindir = find_bindir()
        if bindir is None:
            raise PostgresUnavailable(HOW_TO_INSTALL)
        root = Path(tempfile.mkdtemp(prefix="plancord-pg-"))
        as_root = os.geteuid() == 0
        owner: dict[str, Any] = {"user": UNPRIVILEGED} if as_root else {}
        data, run = root / "data", root / "run"
        password = secrets.token_hex(16)
        try:
            root.chmod(0o755)
            data.mkdir(mode=0o700)
            run.mkdir(mode=0o700)
            secret = root / "pwfile"
            secret.write_text(password + "\n")
            if as_root:
                for path in (data, run, secret):
                    shutil.chown(path, UNPRIVILEGED)
            subprocess.run(
                [
                    str(bindir / "initdb"),
                    "-D",
                    str(data),
                    "-U",
                    "plancord",
                    f"--pwfile={secret}",
                    "--auth=scram-sha-256",
                    "--encoding=UTF8",
                    "--locale=C",
                    "--no-sync",
                ],
                capture_output=True,
                check=True,
                timeout=120,
                **owner,
            )
            secret.unlink()
            port = _free_port()
            settings = [
                "listen_addresses=127.0.0.1",
                f"port={port}",
                f"unix_socket_directories={run}",
                "max_connections=200",
                "shared_buffers=32MB",
            ]
            if not durable:
                settings += ["fsync=off", "synchronous_commit=off", "full_page_writes=off"]
            args = [str(bindir / "postgres"), "-D", str(data)]
            for setting in settings:
                args += ["-c", setting]
            with (root / "server.log").open("wb") as log:
                process = subprocess.Popen(
                    args, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, **owner
                )
        except (OSError, subprocess.SubprocessError) as exc:
            detail = getattr(exc, "stderr", b"") or b""
            shutil.rmtree(root, ignore_errors=True)
            raise PostgresUnavailable(
                f"could not start PostgreSQL from {bindir}: {exc} {detail.decode(errors='replace')}"
            ) from exc
        server = cls(root, port, password, process)
        server._wait_ready()
        return server

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                with psycopg.connect(self.url("postgres"), connect_timeout=2):
                    return
            except psycopg.OperationalError as exc:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    log = (self.root / "server.log").read_text(errors="replace")[-2000:]
                    self.stop()
                    raise PostgresUnavailable(f"PostgreSQL did not start: {exc}\n{log}") from exc
                time.sleep(0.05)

    def url(self, database: str = "postgres") -> str:
        return (
            f"postgresql://{self.user}:{self.password}@127.0.0.1:{self.port}/{database}"
            "?sslmode=disable"
        )

    def admin(self, statement: str) -> None:
        """Run one statement outside a transaction (``CREATE DATABASE`` needs that)."""
        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(statement.encode("utf-8"))

    def create_database(self, template: str | None = None) -> str:
        """A new empty database (or a copy of ``template``); its name."""
        self._made += 1
        name = f"plancord_{os.getpid()}_{self._made}"
        copy = f" TEMPLATE {template}" if template else ""
        self.admin(f"CREATE DATABASE {name}{copy}")
        return name

    def drop_database(self, name: str) -> None:
        self.admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def stop(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGINT)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
        shutil.rmtree(self.root, ignore_errors=True)
