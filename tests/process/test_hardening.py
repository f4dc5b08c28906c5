"""The bot process keeps its secrets: not dumpable, and the tokens wiped from the environment
block that ``/proc/<pid>/environ`` shows, read from a separate process as an attacker would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from plancord.config import ConfigError, Secrets

TOKEN = "fake-token-SECRET-h4rd3n"
CHILD = """
import sys
from plancord.process.hardening import harden, is_dumpable
harden(["DISCORD_TOKEN", "DISCORD_TOKEN_FILE"])
import os
print(is_dumpable(), os.environ.get("DISCORD_TOKEN"), flush=True)
sys.stdin.read()
"""


def test_a_hardened_process_shows_no_secret_in_its_proc_environ() -> None:
    env = {**os.environ, "DISCORD_TOKEN": TOKEN, "KEEP_ME": "visible"}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().split() == ["False", "None"]
        status = Path(f"/proc/{child.pid}/status").read_text()
        if os.geteuid() == 0:
            environ = Path(f"/proc/{child.pid}/environ").read_bytes()
            assert TOKEN.encode() not in environ
            assert b"KEEP_ME=visible" in environ
        else:
            with pytest.raises(PermissionError):
                Path(f"/proc/{child.pid}/environ").read_bytes()
        assert "Name:" in status
    finally:
        assert child.stdin is not None
        assert child.stdout is not None
        child.stdin.close()
        child.wait(timeout=10)
        child.stdout.close()


def test_secrets_come_from_files_the_docker_way(tmp_path: Path) -> None:
    token = tmp_path / "discord_token"
    token.write_text(f"{TOKEN}\n")
    secrets = Secrets.from_env({"DISCORD_TOKEN_FILE": str(token)})
    assert secrets.discord_token is not None
    assert secrets.discord_token.get_secret_value() == TOKEN
    assert secrets.anthropic_api_key is None


def test_a_secret_twice_or_unreadable_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="both DISCORD_TOKEN and DISCORD_TOKEN_FILE"):
        Secrets.from_env({"DISCORD_TOKEN": "x", "DISCORD_TOKEN_FILE": "/x"})
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY_FILE: cannot read"):
        Secrets.from_env({"ANTHROPIC_API_KEY_FILE": str(tmp_path / "missing")})
