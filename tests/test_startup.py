"""A first run that explains itself: ``plancord run`` with an unusable data directory says so
in one line before it contacts Discord, and ``doctor`` fails the same directory."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from plancord.config import parse_config_text
from plancord.doctor import check_data_dir
from plancord.process.data_dir import data_dir_problem


def run_plancord(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DISCORD_TOKEN": "not-a-token", "ANTHROPIC_API_KEY": "k"}
    return subprocess.run(
        [sys.executable, "-m", "plancord.command.main", *args],
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


#: How long the interpreter takes to import the bot's modules on an idle two-core machine.
IDLE_IMPORT_SECONDS = 1.5

#: Run inside the offline namespace: start ``plancord run``, watch its database, metrics
#: and signal handling from beside it, and print what was seen as JSON.
UP_BEFORE_DISCORD = r"""
import json, os, signal, sqlite3, subprocess, sys, time, urllib.request
config, database, port, signame, latest = sys.argv[1:6]
started = time.monotonic()
subprocess.run([sys.executable, "-c", "import plancord.command.main, plancord.discord_bot.bot, "
                "plancord.discord_bot.serving, plancord.llm.anthropic_client"], check=True)
imports = time.monotonic() - started
started = time.monotonic()
bot = subprocess.Popen([sys.executable, "-m", "plancord.command.main", "run", "--config", config],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
seen = {}
while time.monotonic() - started < 60 and len(seen) < 2:
    if "database" not in seen and os.path.exists(database):
        try:
            version = sqlite3.connect(database).execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.Error:
            version = 0
        if version == int(latest):
            seen["database"] = (time.monotonic() - started, version)
    if "metrics" not in seen:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=1) as got:
                seen["metrics"] = (time.monotonic() - started, got.read().decode())
        except OSError:
            pass
    time.sleep(0.05)
time.sleep(1.5)  # a login or two fails and is tried again meanwhile
bot.send_signal(getattr(signal, signame))
signalled = time.monotonic()
out, err = bot.communicate(timeout=30)
print(json.dumps({"seen": seen, "imports": imports, "rc": bot.returncode, "stderr": err,
                  "stop_seconds": time.monotonic() - signalled}))
"""


@pytest.mark.skipif(
    shutil.which("bwrap") is None or not _offline_works(),
    reason="needs bubblewrap with user namespaces to take the network away",
)
@pytest.mark.parametrize("signame", ["SIGTERM", "SIGINT"])
def test_run_is_up_before_discord_answers_and_a_signal_ends_it(
    tmp_path: Path, signame: str
) -> None:
    from plancord.storage.migrations import discover

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = tmp_path / "config.yaml"
    config.write_text(f"data_dir: {tmp_path / 'data'}\nmetrics:\n  enabled: true\n  port: {port}\n")
    database = tmp_path / "data" / "plancord.db"
    env = {**os.environ, "DISCORD_TOKEN": "not-a-token", "ANTHROPIC_API_KEY": "k"}
    latest = str(discover()[-1].version)
    driver = [sys.executable, "-c", UP_BEFORE_DISCORD, str(config), str(database)]
    done = subprocess.run(
        [*OFFLINE, *driver, str(port), signame, latest],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    stderr = report["stderr"]
    seen = report["seen"]
    assert set(seen) == {"database", "metrics"}, stderr
    database_at, _ = seen["database"]
    metrics_at, text = seen["metrics"]
    assert "plancord_discord_connected 0.0" in text
    # Up within 2 s of the process's start on an idle machine, where the imports alone take
    # about 1.5 s (measured just before, in the same place); a busy machine slows both alike.
    slowdown = max(1.0, report["imports"] / IDLE_IMPORT_SECONDS)
    up = max(database_at, metrics_at)
    assert up < 2 * slowdown, (database_at, metrics_at, report["imports"])
    assert report["rc"] == 0, stderr
    assert report["stop_seconds"] < 10
    assert stderr.count(f"plancord: {signame} received; stopping") == 1, stderr
    assert "Discord does not answer" in stderr
    assert "Traceback" not in stderr
    assert "voice will NOT be supported" not in stderr
    layer = [line for line in stderr.splitlines() if " plancord.run: agent sandbox: " in line]
    assert len(layer) == 1, stderr
