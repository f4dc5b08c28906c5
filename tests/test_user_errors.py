"""Every mistake a newcomer can make on the way in ends in one line, not a traceback.

Each case runs the real ``plancord`` in a subprocess, as a user would, and checks the whole
of stderr: one line that names the path at fault and says what to do, and a non-zero exit.
Permission cases run as an unprivileged user (root writes anywhere): under root the command
is started through ``setpriv`` as ``nobody``, keeping only the right to read and search.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.unprivileged import UNPRIVILEGED


@dataclass(frozen=True)
class Said:
    status: int
    line: str


def plancord(
    *args: str, cwd: Path, env: dict[str, str] | None = None, unprivileged: bool = False
) -> Said:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("DISCORD", "ANTHROPIC"))}
    environ.update(env or {})
    prefix = UNPRIVILEGED if unprivileged else []
    done = subprocess.run(
        [*prefix, sys.executable, "-m", "plancord.command.main", *args],
        cwd=cwd,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("plancord"), lines[0]
    assert done.returncode != 0
    return Said(done.returncode, lines[0])


def data_dir_env(path: Path) -> dict[str, str]:
    return {"PLANCORD_DATA_DIR": str(path)}


# -- migrate ------------------------------------------------------------------------------


def test_migrate_with_a_data_dir_that_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "data").write_text("a file")
    said = plancord("migrate", cwd=tmp_path, env=data_dir_env(tmp_path / "data"))
    assert said.status == 2
    assert f"{tmp_path / 'data'}: exists but is not a directory" in said.line
    assert said.line.endswith("point data_dir at a directory")


@pytest.mark.skipif(os.geteuid() == 0 and shutil.which("setpriv") is None, reason="no setpriv")
def test_migrate_where_the_parent_is_not_writable(tmp_path: Path) -> None:
    parent = tmp_path / "locked"
    parent.mkdir(mode=0o555)
    said = plancord("migrate", cwd=tmp_path, env=data_dir_env(parent / "data"), unprivileged=True)
    assert said.status == 2
    assert f"{parent / 'data'}: does not exist and cannot be created" in said.line
    assert "give the bot's user write access, or change data_dir" in said.line
    assert not (parent / "data").exists()


@pytest.mark.skipif(os.geteuid() == 0 and shutil.which("setpriv") is None, reason="no setpriv")
def test_migrate_with_a_data_dir_that_is_not_writable(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o555)
    said = plancord("migrate", cwd=tmp_path, env=data_dir_env(data), unprivileged=True)
    assert said.status == 2
    assert f"{data}: not writable" in said.line
    assert said.line.endswith("give the bot's user write access, or change data_dir")


def test_migrate_creates_a_private_data_dir_and_database(tmp_path: Path) -> None:
    data = tmp_path / "fresh" / "data"
    done = subprocess.run(
        [sys.executable, "-m", "plancord.command.main", "migrate"],
        cwd=tmp_path,
        env={**os.environ, **data_dir_env(data)},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stderr == ""
    assert data.stat().st_mode & 0o777 == 0o700
    assert (data / "plancord.db").stat().st_mode & 0o777 == 0o600


# -- secrets ------------------------------------------------------------------------------


def test_run_names_every_missing_secret_at_once(tmp_path: Path) -> None:
    said = plancord("run", cwd=tmp_path, env=data_dir_env(tmp_path / "data"))
    assert said.status == 2
    assert said.line == (
        "plancord: DISCORD_TOKEN and ANTHROPIC_API_KEY are not set; export them and run again"
    )


def test_run_with_a_secret_file_that_cannot_be_read(tmp_path: Path) -> None:
    missing = tmp_path / "secrets" / "discord_token"
    env = {"DISCORD_TOKEN_FILE": str(missing), "ANTHROPIC_API_KEY": "k"}
    said = plancord("run", cwd=tmp_path, env={**env, **data_dir_env(tmp_path)})
    assert said.status == 2
    assert said.line == (
        f"plancord: DISCORD_TOKEN_FILE: cannot read {missing}: No such file or directory"
    )


def test_doctor_names_a_secret_file_that_cannot_be_read(tmp_path: Path) -> None:
    missing = tmp_path / "anthropic_key"
    done = subprocess.run(
        [sys.executable, "-m", "plancord.command.main", "doctor"],
        cwd=tmp_path,
        env={**os.environ, "ANTHROPIC_API_KEY_FILE": str(missing), "DISCORD_TOKEN": "t"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr == ""
    assert f"FAIL ANTHROPIC_API_KEY_FILE: cannot read {missing}" in done.stdout


@pytest.mark.parametrize("command", ["doctor", "run"])
def test_an_empty_secret_file_is_named(tmp_path: Path, command: str) -> None:
    empty = tmp_path / "discord_token"
    empty.write_text("\n")
    env = {"DISCORD_TOKEN_FILE": str(empty), "ANTHROPIC_API_KEY": "k", **data_dir_env(tmp_path)}
    if command == "run":
        said = plancord("run", cwd=tmp_path, env=env)
        assert said.line == f"plancord: DISCORD_TOKEN_FILE: {empty} is empty; put the secret in it"
        return
    done = subprocess.run(
        [sys.executable, "-m", "plancord.command.main", "doctor"],
        cwd=tmp_path,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    assert f"FAIL DISCORD_TOKEN_FILE: {empty} is empty" in done.stdout


# -- operator commands on a missing database ----------------------------------------------

OPERATOR_COMMANDS = [
    ["agents", "list"],
    ["agents", "list", "--json"],
    ["plan", "status", "--agent", "ada"],
    ["plan", "enter", "--agent", "ada"],
    ["plan", "approve", "--agent", "ada"],
    ["plan", "reject", "--agent", "ada"],
    ["plan", "cancel", "--agent", "ada"],
    ["plan", "diff", "--agent", "ada"],
]


@pytest.mark.parametrize("command", OPERATOR_COMMANDS, ids=" ".join)
def test_operator_commands_without_a_database(tmp_path: Path, command: list[str]) -> None:
    data = tmp_path / "nothing-here"
    said = plancord(*command, cwd=tmp_path, env=data_dir_env(data))
    assert said.line == (
        f"plancord: no database at {data / 'plancord.db'}; run plancord migrate or start the "
        "bot first (or pass the bot's --config)"
    )
    assert not data.exists()


# -- usage ---------------------------------------------------------------------------------


def test_check_bash_refuses_a_workspace_that_does_not_exist(tmp_path: Path) -> None:
    said = plancord("check-bash", "--workspace", str(tmp_path / "nope"), "ls", cwd=tmp_path)
    assert said.status == 2
    assert str(tmp_path / "nope") in said.line


def test_demo_keep_refuses_a_directory_in_use(tmp_path: Path) -> None:
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "plancord.db").write_text("")
    said = plancord("demo", "--keep", str(tmp_path / "used"), cwd=tmp_path)
    assert said.status == 2
    assert str(tmp_path / "used") in said.line


# -- the sandbox layer and Ctrl-C at start ---------------------------------------------------

TOKENS = {"DISCORD_TOKEN": "not-a-token", "ANTHROPIC_API_KEY": "k"}


def test_run_with_bubblewrap_required_and_missing_stops_before_discord(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(f"data_dir: {tmp_path / 'data'}\nsandbox:\n  layer: bubblewrap\n")
    no_programs = tmp_path / "bin"
    no_programs.mkdir()
    env = {**TOKENS, "PATH": str(no_programs)}
    said = plancord("run", "--config", str(config), cwd=tmp_path, env=env)
    assert said.status == 2
    assert said.line.startswith(
        "plancord: the agent sandbox cannot start: bubblewrap is not installed"
    )


def test_ctrl_c_while_run_starts_is_one_line(tmp_path: Path) -> None:
    """The interrupt arrives while ``run`` reads its token from a file (a pipe nobody has
    written to yet, as a slow secret store would be), before the bot's own handlers."""
    token = tmp_path / "discord_token"
    os.mkfifo(token)
    config = tmp_path / "config.yaml"
    config.write_text(f"data_dir: {tmp_path / 'data'}\n")
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("DISCORD", "ANTHROPIC"))}
    env = {**environ, "DISCORD_TOKEN_FILE": str(token), "ANTHROPIC_API_KEY": "k"}
    run = subprocess.Popen(
        [sys.executable, "-m", "plancord.command.main", "run", "--config", str(config)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    writer = None
    try:
        while writer is None and run.poll() is None:
            try:  # opens once run has opened the pipe to read it
                writer = os.open(token, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                time.sleep(0.05)
        assert writer is not None, run.communicate()
        run.send_signal(signal.SIGINT)
        _, err = run.communicate(timeout=60)
    finally:
        if writer is not None:
            os.close(writer)
        if run.poll() is None:
            run.kill()
    # Ctrl-C is how an operator stops plancord: one line, and a clean exit at any moment.
    assert run.returncode == 0, err
    assert err.splitlines() == ["plancord: SIGINT received before start; stopped"]
