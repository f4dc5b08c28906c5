"""A first run that explains itself: ``plancord run`` with an unusable data directory says so
in one line before it contacts Discord, and ``doctor`` fails the same directory."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from plancord.config import parse_config_text
from plancord.doctor import check_data_dir
from plancord.startup import data_dir_problem


def run_plancord(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DISCORD_TOKEN": "not-a-token", "ANTHROPIC_API_KEY": "k"}
    return subprocess.run(
        [sys.executable, "-m", "plancord.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_run_refuses_an_unusable_data_dir_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "data").write_text("a file, not a directory")
    config = tmp_path / "config.yaml"
    config.write_text("data_dir: data\n")

    done = run_plancord("run", "--config", str(config), cwd=tmp_path)

    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "cannot use the data directory" in lines[0]
    assert "is not a directory" in lines[0]


def test_doctor_fails_a_data_dir_whose_agents_folder_is_unusable(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "agents").write_text("not a folder")
    config = parse_config_text(f"data_dir: {data}\n")

    check = check_data_dir(config)

    assert check.status.name == "FAIL"
    assert "agents" in (data_dir_problem(config) or "")


def test_a_fresh_data_dir_is_fine(tmp_path: Path) -> None:
    config = parse_config_text(f"data_dir: {tmp_path / 'new'}\n")
    assert data_dir_problem(config) is None
    assert check_data_dir(config).status.name == "OK"


#: The bot runs in a network namespace of its own (bubblewrap, everything else of the host
#: as it is), so it cannot reach Discord whatever the host's network allows.
OFFLINE = ["bwrap", "--dev-bind", "/", "/", "--unshare-user", "--unshare-net", "--"]


def _offline_works() -> bool:
    probe = subprocess.run([*OFFLINE, "true"], capture_output=True, check=False)
    return probe.returncode == 0


@pytest.mark.skipif(
    shutil.which("bwrap") is None or not _offline_works(),
    reason="needs bubblewrap with user namespaces to take the network away",
)
def test_run_that_cannot_reach_discord_says_so_in_one_line(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(f"data_dir: {tmp_path / 'data'}\n")
    env = {**os.environ, "DISCORD_TOKEN": "not-a-token", "ANTHROPIC_API_KEY": "k"}
    done = subprocess.run(
        [*OFFLINE, sys.executable, "-m", "plancord.cli", "run", "--config", str(config)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert done.returncode in (1, 2), done.stderr
    layer = [line for line in done.stderr.splitlines() if " plancord.run: agent sandbox: " in line]
    assert len(layer) == 1, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("plancord: "), done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert "voice will NOT be supported" not in done.stderr
