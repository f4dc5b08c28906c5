from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import psycopg
import pytest

from plancord import doctor
from plancord.command import main as cli
from plancord.doctor import Check, Status, diagnose
from plancord.sandbox.layers import bubblewrap_problem
from plancord.storage.engines import migrate_database
from plancord.storage.migrations import discover
from plancord.testing.postgres_server import PostgresServer
from tests.unprivileged import UNPRIVILEGED

TOKENS = {"DISCORD_TOKEN": "discord-secret-0123", "ANTHROPIC_API_KEY": "sk-ant-secret-4567"}
LATEST = discover()[-1].version


def write_config(tmp_path: Path, text: str = "") -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(f"data_dir: state\n{text}")
    return path


def set_version(db: Path, version: int) -> None:
    with closing(sqlite3.connect(db)) as conn:
        conn.execute(f"PRAGMA user_version = {version}")
        conn.commit()


def checks(
    config: Path | None,
    *,
    environ: dict[str, str] | None = None,
    abi: int = 6,
    euid: int = 1000,
) -> list[Check]:
    return list(
        diagnose(
            config,
            environ=TOKENS if environ is None else environ,
            landlock=lambda: abi,
            euid=euid,
        )
    )


def by_what(found: list[Check], prefix: str) -> Check:
    matches = [c for c in found if c.what.startswith(prefix)]
    assert len(matches) == 1, [c.line() for c in found]
    return matches[0]


@pytest.fixture
async def ready(tmp_path: Path) -> Path:
    """A valid config whose database is migrated to the newest version."""
    config = write_config(tmp_path)
    await migrate_database(tmp_path / "state" / "plancord.db")
    return config


def test_a_healthy_setup_is_all_ok(ready: Path) -> None:
    found = checks(ready)
    expected = [Status.OK] * len(found)
    if shutil.which("rg") is None:
        expected[5] = Status.WARN
    assert [c.status for c in found] == expected, [c.line() for c in found]
    assert [c.line().split()[1] for c in found] == [
        "config",
        "data",
        "migrations:",
        "database",
        "git:",
        "ripgrep:",
        "agent",
        "Landlock",
        "DISCORD_TOKEN:",
        "ANTHROPIC_API_KEY:",
    ]
    assert by_what(found, "database").line().endswith(f"schema version {LATEST} (newest)")
    assert by_what(found, "Landlock").line() == (
        "ok  Landlock ABI 6: the read-only inner wall while planning"
    )


def test_cli_exit_status_and_line_format(
    ready: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, value in TOKENS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(doctor, "landlock_abi", lambda: 3)
    assert cli.main(["doctor", "--config", str(ready)]) == 0
    out = capsys.readouterr().out
    warnings_here = ("warn ripgrep", "warn user: running as root")
    assert all(line.startswith(("ok  ", *warnings_here)) for line in out.splitlines()), out
    assert "ok  DISCORD_TOKEN: set" in out
    assert "Landlock ABI 3" in out


def test_a_bad_config_fails_with_the_config_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = write_config(tmp_path, "plan_mode:\n  approval_timeout: 3 weeks\n")
    found = checks(config)
    line = found[0].line()
    assert line.startswith(f"FAIL config: {config}:3: plan_mode.approval_timeout: '3 weeks'")
    assert line.endswith("— fix the file and run plancord doctor again")
    assert not any(c.what.startswith(("data directory", "database")) for c in found)
    assert by_what(found, "git").status is Status.OK

    for name, value in TOKENS.items():
        monkeypatch.setenv(name, value)
    assert cli.main(["doctor", "--config", str(config)]) == 1
    assert "FAIL config:" in capsys.readouterr().out


def test_a_missing_config_file_fails(tmp_path: Path) -> None:
    found = checks(tmp_path / "nope.yaml")
    assert found[0].line().startswith(f"FAIL config: config file not found: {tmp_path}")


def test_no_config_file_means_the_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    found = checks(None)
    assert found[0].line() == "ok  config: no ./config.yaml, using the built-in defaults"
    assert by_what(found, "data directory").what == (
        f"data directory {tmp_path / 'data'} does not exist yet; plancord creates it, "
        "private (0700)"
    )


def test_a_missing_database_is_a_warning_only(tmp_path: Path) -> None:
    found = checks(write_config(tmp_path))
    database = by_what(found, "database")
    assert database.line() == (
        f"warn database {tmp_path / 'state' / 'plancord.db'}: not created yet — run plancord "
        "migrate (plancord run also creates it)"
    )
    assert not (tmp_path / "state" / "plancord.db").exists()
    assert Status.FAIL not in {c.status for c in found}


async def test_an_older_database_is_a_warning(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    db = tmp_path / "state" / "plancord.db"
    await migrate_database(db)
    set_version(db, LATEST - 1)
    database = by_what(checks(config), "database")
    assert database.status is Status.WARN
    assert f"at schema version {LATEST - 1}, the newest is {LATEST} — run plancord migrate" in (
        database.line()
    )


def test_a_newer_database_fails(ready: Path, tmp_path: Path) -> None:
    set_version(tmp_path / "state" / "plancord.db", LATEST + 5)
    database = by_what(checks(ready), "database")
    assert database.status is Status.FAIL
    assert f"at schema version {LATEST + 5}, newer than this plancord knows" in database.line()
    assert database.line().endswith("— upgrade plancord or point database at another file")


def test_the_database_check_changes_nothing(ready: Path, tmp_path: Path) -> None:
    db = tmp_path / "state" / "plancord.db"
    set_version(db, LATEST - 1)
    checks(ready)
    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == LATEST - 1


def test_a_file_that_is_not_a_database_fails(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "plancord.db").write_bytes(b"this is not sqlite" * 100)
    database = by_what(checks(config), "database")
    assert database.status is Status.FAIL
    assert "damaged or not a plancord database" in database.line()


def test_a_data_dir_that_is_a_file_fails(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    (tmp_path / "state").write_text("oops")
    data = by_what(checks(config), "data directory")
    assert data.line() == (
        f"FAIL data directory {tmp_path / 'state'}: exists but is not a directory — "
        "point data_dir at a directory"
    )


def test_a_read_only_data_dir_fails(tmp_path: Path) -> None:
    """Run as a user the folder's mode shuts out (``nobody`` when the tests run as root)."""
    config = write_config(tmp_path)
    state = tmp_path / "state"
    state.mkdir()
    state.chmod(0o500)
    try:
        done = subprocess.run(
            [
                *UNPRIVILEGED,
                sys.executable,
                "-m",
                "plancord.command.main",
                "doctor",
                "--config",
                str(config),
            ],
            cwd=tmp_path,
            env={**os.environ, **TOKENS},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        state.chmod(0o700)
    [line] = [line for line in done.stdout.splitlines() if " data directory " in line]
    assert line.startswith("FAIL data directory"), done.stdout + done.stderr
    assert "not writable" in line
    assert done.returncode == 1


def test_the_probe_file_is_removed(ready: Path, tmp_path: Path) -> None:
    before = sorted(p.name for p in (tmp_path / "state").iterdir())
    checks(ready)
    after = sorted(p.name for p in (tmp_path / "state").iterdir())
    assert not [name for name in after if name.startswith(".plancord-doctor-")]
    assert set(after) - set(before) <= {"plancord.db-wal", "plancord.db-shm"}


def test_missing_migrations_fail(
    ready: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLANCORD_MIGRATIONS_DIR", str(tmp_path / "nowhere"))
    found = checks(ready)
    migrations = by_what(found, "migrations")
    assert migrations.status is Status.FAIL
    assert "set PLANCORD_MIGRATIONS_DIR" in migrations.line()
    assert by_what(found, "database").status is Status.WARN


def test_missing_git_fails_and_missing_ripgrep_warns(
    ready: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    found = checks(ready)
    git = by_what(found, "git")
    assert git.status is Status.FAIL
    assert git.line().startswith("FAIL git: not found on PATH")
    assert "install git" in git.line()
    ripgrep = by_what(found, "ripgrep")
    assert ripgrep.status is Status.WARN
    assert "refuses until it is installed" in ripgrep.line()
    assert "install ripgrep" in ripgrep.line()


def test_no_landlock_with_the_sandbox_required_fails(ready: Path) -> None:
    landlock = by_what(checks(ready, abi=0), "Landlock")
    assert landlock.status is Status.FAIL
    assert "plan-mode shell will refuse" in landlock.line()
    assert landlock.line().endswith(
        "— enable Landlock (Linux ≥ 5.13 with lsm=landlock) or set plan_mode.shell_sandbox: off"
    )


def test_no_landlock_with_the_sandbox_off_warns(tmp_path: Path) -> None:
    config = write_config(tmp_path, "plan_mode:\n  shell_sandbox: off\n")
    landlock = by_what(checks(config, abi=0), "Landlock")
    assert landlock.status is Status.WARN
    assert "shell_sandbox is off" in landlock.line()


def test_an_agent_that_requires_the_sandbox_is_named(tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        "plan_mode:\n  shell_sandbox: off\n"
        "agents:\n  strict:\n    plan_mode:\n      shell_sandbox: required\n",
    )
    landlock = by_what(checks(config, abi=0), "Landlock")
    assert landlock.status is Status.FAIL
    assert "agents.strict.plan_mode" in landlock.line()


def test_landlock_patched_to_zero_through_the_cli(
    ready: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, value in TOKENS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(doctor, "landlock_abi", lambda: 0)
    assert cli.main(["doctor", "--config", str(ready)]) == 1
    assert "FAIL Landlock: not available (ABI 0)" in capsys.readouterr().out


def test_tokens_set_and_unset_never_show_values(ready: Path) -> None:
    found = checks(
        ready, environ={"DISCORD_TOKEN": TOKENS["DISCORD_TOKEN"], "ANTHROPIC_API_KEY": " "}
    )
    text = "\n".join(c.line() for c in found)
    assert "ok  DISCORD_TOKEN: set" in text
    assert (
        "FAIL ANTHROPIC_API_KEY: not set — export ANTHROPIC_API_KEY in the bot's environment"
        in text
    )
    assert TOKENS["DISCORD_TOKEN"] not in text
    assert Status.FAIL in {c.status for c in found}


def test_as_a_subprocess_it_prints_one_line_per_check_and_no_secret(
    ready: Path, tmp_path: Path
) -> None:
    env = {**os.environ, **TOKENS}
    result = subprocess.run(
        [sys.executable, "-m", "plancord.command.main", "doctor", "--config", str(ready)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    for secret in TOKENS.values():
        assert secret not in result.stdout + result.stderr
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    assert len(lines) == (11 if os.geteuid() == 0 else 10)
    assert all(line.startswith(("ok  ", "warn ", "FAIL ")) for line in lines)
    assert result.returncode == (1 if any(line.startswith("FAIL") for line in lines) else 0)

    env.pop("DISCORD_TOKEN")
    unset = subprocess.run(
        [sys.executable, "-m", "plancord.command.main", "doctor", "--config", str(ready)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert unset.returncode == 1
    assert "FAIL DISCORD_TOKEN: not set" in unset.stdout


def test_the_agent_sandbox_layer_is_reported(tmp_path: Path) -> None:
    found = by_what(checks(write_config(tmp_path)), "agent sandbox")
    assert (
        found.line() == "ok  agent sandbox: bubblewrap (namespaces; only the workspace is visible)"
    )


def test_a_sandbox_switched_off_is_a_warning(tmp_path: Path) -> None:
    found = by_what(checks(write_config(tmp_path, "sandbox:\n  layer: 'off'\n")), "agent sandbox")
    assert found.status is Status.WARN
    assert "can reach its secrets" in found.line()


def test_a_dollar_budget_without_a_price_is_a_warning(tmp_path: Path) -> None:
    unpriced = write_config(tmp_path, "plan_mode:\n  budget_usd: 2.5\n")
    found = by_what(checks(unpriced), "plan budgets")
    assert found.status is Status.WARN
    assert "no price for claude-" in found.line() and "budget_tokens" in found.line()
    priced = write_config(
        tmp_path,
        "plan_mode:\n  budget_usd: 2.5\nanthropic:\n  model: claude-sonnet-5-5\n"
        "  prices:\n    claude-sonnet-5-5: {input: 3, output: 15}\n",
    )
    assert by_what(checks(priced), "plan budgets").status is Status.OK


def test_a_postgres_database_is_checked_without_being_changed(
    postgres_server: PostgresServer, postgres_url: str
) -> None:
    latest = len(discover())
    assert doctor.check_database_server(postgres_url, latest).status is Status.OK
    password = postgres_server.password
    check = doctor.check_database_server(postgres_url, latest)
    assert password not in check.line() and "***" in check.line()
    empty = postgres_server.url(postgres_server.create_database())
    fresh = doctor.check_database_server(empty, latest)
    assert fresh.status is Status.WARN and "no schema yet" in fresh.line()
    with psycopg.connect(empty) as conn:
        assert conn.execute("SELECT to_regclass('plancord_schema')").fetchone() == (None,)
    newer = doctor.check_database_server(postgres_url, latest - 1)
    assert newer.status is Status.FAIL and "newer than this plancord" in newer.line()


def test_an_unreachable_postgres_database_fails(postgres_server: PostgresServer) -> None:
    url = postgres_server.url("plancord").replace(
        f":{postgres_server.port}/", f":{postgres_server.port + 1}/"
    )
    check = doctor.check_database_server(url, len(discover()))
    assert check.status is Status.FAIL and "cannot be reached" in check.line()


def test_running_as_root_is_a_warning(ready: Path) -> None:
    as_root = by_what(checks(ready, euid=0), "user")
    assert as_root.status is Status.WARN
    assert "process limit does not bind" in as_root.problem
    assert not [c for c in checks(ready, euid=1000) if c.what == "user"]


def test_the_shell_sandbox_switched_off_is_a_warning_that_names_where(tmp_path: Path) -> None:
    config = write_config(tmp_path, "agents:\n  ada:\n    plan_mode:\n      shell_sandbox: 'off'\n")
    check = by_what(checks(config), "plan-mode shell sandbox")
    assert check.status is Status.WARN
    assert "agents.ada.plan_mode" in check.problem
    assert not [c for c in checks(write_config(tmp_path)) if c.what.startswith("plan-mode shell")]


def test_a_data_dir_others_can_read_is_a_warning(ready: Path, tmp_path: Path) -> None:
    (tmp_path / "state").chmod(0o755)
    check = by_what(checks(ready), "data directory")
    assert check.status is Status.WARN
    assert "mode 0755" in check.problem
    assert check.fix == f"chmod 700 {tmp_path / 'state'}"


def test_an_empty_or_unreadable_secret_file_is_one_line_naming_it(tmp_path: Path) -> None:
    empty = tmp_path / "token"
    empty.write_text("\n")
    found = checks(None, environ={"DISCORD_TOKEN_FILE": str(empty), "ANTHROPIC_API_KEY": "k"})
    assert by_what(found, "DISCORD_TOKEN_FILE").line() == (
        f"FAIL DISCORD_TOKEN_FILE: {empty} is empty; put the secret in it"
        " — fix the variable or the file it names"
    )
    missing = tmp_path / "nope"
    found = checks(None, environ={"ANTHROPIC_API_KEY_FILE": str(missing)})
    assert str(missing) in by_what(found, "ANTHROPIC_API_KEY_FILE").problem


def test_a_postgres_database_not_created_yet_says_how_to_create_it(
    postgres_server: PostgresServer,
) -> None:
    url = postgres_server.url("not_created_yet")
    check = doctor.check_database_server(url, len(discover()))
    assert check.status is Status.FAIL and "the database does not exist" in check.line()
    assert f"createdb -O {postgres_server.user} not_created_yet" in check.line()


def test_the_network_proxy_is_shown_for_agents_whose_plans_grant_hosts(tmp_path: Path) -> None:
    assert not [c for c in checks(write_config(tmp_path)) if c.what.startswith("network proxy")]
    config = write_config(tmp_path, "agents:\n  ada:\n    network:\n      allow: [pypi.org]\n")
    proxy = by_what(checks(config), "network proxy")
    expected = Status.OK if bubblewrap_problem() is None else Status.FAIL
    assert proxy.status is expected, proxy.line()
    assert ("ada: pypi.org" in proxy.line()) is (expected is Status.OK)


def test_the_network_proxy_fails_where_only_the_fallback_runs(tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        "sandbox:\n  layer: landlock\nagents:\n  ada:\n    network:\n      allow: [pypi.org]\n",
    )
    proxy = by_what(checks(config), "network proxy (ada)")
    assert proxy.status is Status.FAIL
    assert "no plan may name hosts here" in proxy.line()
