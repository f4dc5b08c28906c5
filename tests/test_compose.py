"""The compose recipe's header, run as written: the files it makes are the ones the
containers read, so the bot's user (uid 10001 in the image) must be able to read the config
and its own secrets, and nobody else the secrets.

No Docker engine is needed: the header's commands run in a scratch directory (as root,
which its ``sudo`` lines need); each file is then mounted as compose mounts it (the file
alone, its owner and mode kept: here a copy that keeps them, in a directory anyone may
enter) and read through ``setpriv`` as the user the container would run as.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from plancord.config import parse_config_text

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = ROOT / "compose.example.yaml"
BOT_UID = 10001
OTHER_UID = 10002

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None or shutil.which("openssl") is None,
    reason="the header's sudo lines and reading as another user need root, setpriv, openssl",
)


def header_commands() -> list[str]:
    """The commands of the header, up to the ``docker compose`` ones (no engine here)."""
    commands: list[str] = []
    for line in COMPOSE.read_text().splitlines():
        if not line.startswith("#"):
            break
        command = line.removeprefix("#").strip()
        if not line.startswith("#   ") or not command:
            continue
        if command.startswith("docker "):
            break
        commands.append(command.removeprefix("sudo "))
    return commands


@pytest.fixture
def project() -> Iterator[Path]:
    """A directory others may enter, as a checkout in a home directory usually is."""
    path = Path(tempfile.mkdtemp(prefix="plancord-compose-", dir="/tmp"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path)


def mounted(path: Path, run: Path) -> Path:
    """``path`` as a container sees it mounted at ``run``: same content, owner and mode."""
    target = run / path.name
    shutil.copy2(path, target)
    held = path.stat()
    os.chown(target, held.st_uid, held.st_gid)
    return target


def read_as(uid: int, path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "cat", str(path)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


@pytest.mark.parametrize("umask", ["022", "077"])
def test_the_header_makes_files_the_bot_reads_and_keeps_the_secrets_private(
    project: Path, umask: str
) -> None:
    commands = header_commands()
    assert any("config.yaml" in c for c in commands) and any("umask 077" in c for c in commands)
    env = {
        "PATH": os.environ["PATH"],
        "DISCORD_TOKEN": "discord-secret",
        "ANTHROPIC_API_KEY": "anthropic-secret",
    }
    script = "\n".join([f"umask {umask}", *commands])
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr

    run = project / "run"
    run.mkdir(mode=0o755)
    run.chmod(0o755)
    config = read_as(BOT_UID, mounted(project / "config.yaml", run))
    assert config.returncode == 0, config.stderr
    assert parse_config_text(config.stdout).database_label.startswith("postgresql://plancord@db")
    secrets = project / "secrets"
    for name, holds in [
        ("discord_token", "discord-secret"),
        ("anthropic_api_key", "anthropic-secret"),
        ("pgpass", "db:5432:plancord:plancord:"),
    ]:
        secret = mounted(secrets / name, run)
        read = read_as(BOT_UID, secret)
        assert read.returncode == 0, f"{name}: {read.stderr}"
        assert holds in read.stdout
        assert read_as(OTHER_UID, secret).returncode != 0, name
    assert read_as(OTHER_UID, mounted(secrets / "postgres_password", run)).returncode != 0
