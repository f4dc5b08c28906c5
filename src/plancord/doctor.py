"""``plancord doctor``: tell an operator, one line per check, whether this host can run the bot.

A bot that dies at start with a traceback, or runs with plan-mode shell refusing every
command, costs an operator far more than a list of what is wrong and how to fix it. Each
check here reports ``ok``, ``warn`` (works, but not as well as it could) or ``FAIL`` (the bot
will not start or plan mode will not work), with the remedy on the same line. The checks are
local and quick (no network, nothing written except a probe file removed at once), so the
command also serves as a container health check. Secrets are reported as set or not set,
never shown.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sqlite3
import subprocess
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from urllib.parse import quote

import psycopg

from plancord.agent.mcp.probe import probe_servers
from plancord.config import Config, ConfigError, Secrets, load_config
from plancord.core.settings import ShellSandbox
from plancord.core.shell.sandbox import landlock_abi
from plancord.startup import data_dir_fix, data_dir_problem
from plancord.storage.backend import redact
from plancord.storage.db import storage_error
from plancord.storage.migrations import MigrationError, default_migrations_dir, discover

__all__ = ["Check", "Status", "diagnose", "render", "run_doctor"]

_TOOL_TIMEOUT_SECONDS = 5.0


class Status(StrEnum):
    OK = "ok"
    WARN = "warn"
    FAIL = "FAIL"


@dataclass(frozen=True, slots=True)
class Check:
    """One finding: what was checked, and for warn/FAIL what is wrong and how to fix it."""

    status: Status
    what: str
    problem: str = ""
    fix: str = ""

    def line(self) -> str:
        if self.status is Status.OK:
            return f"ok  {self.what}"
        text = f"{self.status.value} {self.what}: {self.problem}"
        return f"{text} — {self.fix}" if self.fix else text


def _ok(what: str) -> Check:
    return Check(Status.OK, what)


def _warn(what: str, problem: str, fix: str) -> Check:
    return Check(Status.WARN, what, problem, fix)


def _fail(what: str, problem: str, fix: str) -> Check:
    return Check(Status.FAIL, what, problem, fix)


def check_config(path: Path | None) -> tuple[Check, Config | None]:
    try:
        config = load_config(path)
    except ConfigError as exc:
        return _fail("config", str(exc), "fix the file and run plancord doctor again"), None
    if path is None and not Path("config.yaml").is_file():
        return _ok("config: no ./config.yaml, using the built-in defaults"), config
    return _ok(f"config {path or 'config.yaml'} is valid"), config


def check_data_dir(config: Config) -> Check:
    """The same check ``plancord run`` makes before it connects."""
    data_dir = config.data_dir
    what = f"data directory {data_dir}"
    problem = data_dir_problem(config)
    if problem is not None:
        return _fail(what, problem, data_dir_fix(problem))
    if not data_dir.exists():
        return _ok(f"{what} does not exist yet; plancord creates it")
    return _ok(f"{what} is writable")


def check_migrations() -> tuple[Check, int | None]:
    try:
        migrations = discover()
    except MigrationError as exc:
        return _fail("migrations", str(exc), "reinstall plancord or fix the folder"), None
    except OSError as exc:
        return (
            _fail(
                "migrations",
                f"cannot read {default_migrations_dir()}: {exc.strerror or exc}",
                "set PLANCORD_MIGRATIONS_DIR to the project's migrations/ folder",
            ),
            None,
        )
    if not migrations:
        return (
            _fail(
                "migrations",
                f"no migration files in {default_migrations_dir()}",
                "set PLANCORD_MIGRATIONS_DIR to the project's migrations/ folder",
            ),
            None,
        )
    latest = migrations[-1].version
    return _ok(f"migrations: newest version {latest}, in {default_migrations_dir()}"), latest


def _read_schema_version(path: Path) -> int:
    """``PRAGMA user_version`` through a read-only connection: nothing is created or migrated."""
    conn = sqlite3.connect(f"file:{quote(str(path.absolute()))}?mode=ro", uri=True, timeout=1.0)
    try:
        row = conn.execute("PRAGMA user_version").fetchone()
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    finally:
        conn.close()
    return int(row[0]) if row else 0


def check_database_server(url: str, latest: int | None) -> Check:
    """A PostgreSQL database: reachable, and at which schema version (nothing is changed)."""
    what = f"database {redact(url)}"
    try:
        with psycopg.connect(url, connect_timeout=5) as conn:
            exists = conn.execute("SELECT to_regclass('plancord_schema') IS NOT NULL").fetchone()
            row = (
                conn.execute("SELECT max(version) FROM plancord_schema").fetchone()
                if exists and exists[0]
                else None
            )
    except psycopg.Error as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return _fail(
            what, f"cannot be reached: {first}", "check the URL, the server and the password"
        )
    version = int(row[0]) if row and row[0] is not None else 0
    if version == 0:
        return _warn(
            what, "reachable, no schema yet", "run plancord migrate (plancord run also does)"
        )
    if latest is not None and version > latest:
        return _fail(
            what,
            f"at schema version {version}, newer than this plancord knows (up to {latest})",
            "upgrade plancord or point database at another server",
        )
    if latest is not None and version < latest:
        return _warn(
            what,
            f"at schema version {version}, the newest is {latest}",
            "run plancord migrate (plancord run also migrates at start)",
        )
    return _ok(f"{what} reachable, schema version {version} (newest)")


def check_database(path: Path, latest: int | None) -> Check:
    what = f"database {path}"
    if not path.exists():
        return _warn(what, "not created yet", "run plancord migrate (plancord run also creates it)")
    if path.is_dir():
        return _fail(what, "is a directory, not a file", "point database at a file")
    try:
        version = _read_schema_version(path)
    except sqlite3.Error as exc:
        return _fail(
            what,
            str(storage_error(exc, path)),
            "restore it from a backup or point database at another file",
        )
    if latest is None:
        return _warn(
            what,
            f"at schema version {version}; cannot compare without the migrations",
            "fix the migrations check above",
        )
    if version > latest:
        return _fail(
            what,
            f"at schema version {version}, newer than this plancord knows (up to {latest})",
            "upgrade plancord or point database at another file",
        )
    if version < latest:
        return _warn(
            what,
            f"at schema version {version}, the newest is {latest}",
            "run plancord migrate (plancord run also migrates at start)",
        )
    return _ok(f"{what} reachable, schema version {version} (newest)")


def _tool_version(argv: list[str]) -> str | None:
    """The first output line of ``argv`` (a ``--version`` call), or None when it cannot run."""
    if shutil.which(argv[0]) is None:
        return None
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=_TOOL_TIMEOUT_SECONDS,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    lines = done.stdout.strip().splitlines()
    return lines[0] if lines else argv[0]


def check_git() -> Check:
    version = _tool_version(["git", "--version"])
    if version is None:
        return _fail(
            "git",
            "not found on PATH (or it does not run)",
            "install git (e.g. apt-get install git); agent workspaces are git repositories",
        )
    return _ok(f"git: {version}")


def check_ripgrep() -> Check:
    version = _tool_version(["rg", "--version"])
    if version is None:
        return _warn(
            "ripgrep",
            "not found on PATH; the grep tool refuses until it is installed "
            "(the shell's grep still works)",
            "install ripgrep (e.g. apt-get install ripgrep)",
        )
    return _ok(f"ripgrep: {version}")


def _sandbox_required_by(config: Config) -> list[str]:
    """Where the config leaves ``shell_sandbox: required`` in effect: globally, per agent, per
    channel. Overrides stored in the database at runtime are not consulted."""
    places: list[str] = []
    if config.plan_mode.shell_sandbox is ShellSandbox.REQUIRED:
        places.append("plan_mode")
    for name in config.agents:
        if config.plan_mode_for(agent=name).shell_sandbox is ShellSandbox.REQUIRED:
            places.append(f"agents.{name}.plan_mode")
    for channel in config.channels:
        if config.plan_mode_for(channel_id=channel).shell_sandbox is ShellSandbox.REQUIRED:
            places.append(f"channels.{channel}.plan_mode")
    return places


def check_agent_sandbox(config: Config | None) -> Check:
    """Which layer walls in agent processes here, and why; a FAIL when none would run."""
    from plancord.core.shell.sandbox import LayerChoice, SandboxUnavailable, choose_layer
    from plancord.core.shell.sandbox.layers import bubblewrap_problem

    choice = config.sandbox.layer if config is not None else LayerChoice.AUTO
    if choice is LayerChoice.OFF:
        return _warn(
            "agent sandbox",
            "sandbox.layer is off: agent commands run as the bot's user and can reach its "
            "secrets, its database and every other agent's workspace",
            "install bubblewrap and set sandbox.layer: auto",
        )
    try:
        layer = choose_layer(choice)
    except SandboxUnavailable as exc:
        return _fail("agent sandbox", str(exc), "install bubblewrap (apt-get install bubblewrap)")
    if layer.value == "bubblewrap":
        return _ok("agent sandbox: bubblewrap (namespaces; only the workspace is visible)")
    return _warn(
        "agent sandbox",
        f"Landlock fallback only ({bubblewrap_problem()}): reads and writes are confined and "
        "TCP is off, but UDP and unix sockets are not, and agent processes share the bot's "
        "pid and network namespaces",
        "install bubblewrap and allow unprivileged user namespaces",
    )


def check_landlock(abi: int, config: Config | None) -> Check:
    if abi > 0:
        return _ok(f"Landlock ABI {abi}: the read-only inner wall while planning")
    enable = "enable Landlock (Linux ≥ 5.13 with lsm=landlock)"
    if config is None:
        return _warn(
            "Landlock",
            "not available (ABI 0); whether plan mode needs it depends on the config",
            f"fix the config, then {enable} or set plan_mode.shell_sandbox: off",
        )
    required = _sandbox_required_by(config)
    if required:
        places = ", ".join(required)
        return _fail(
            "Landlock",
            f"not available (ABI 0) and shell_sandbox is required ({places}); "
            "plan-mode shell will refuse",
            f"{enable} or set plan_mode.shell_sandbox: off",
        )
    return _warn(
        "Landlock",
        "not available (ABI 0); shell_sandbox is off, so plan-mode shell runs without the "
        "kernel sandbox and only the read-only check guards it",
        enable,
    )


def check_budget_prices(config: Config) -> Check | None:
    """A dollar budget needs a price for the model it counts; without one the plan stops
    before executing (an unchecked budget is no budget). Only when a budget is set; agents
    created through Discord with other models are not seen here."""
    budgets = [config.plan_mode.budget_usd]
    budgets += [a.plan_mode.budget_usd for a in config.agents.values()]
    budgets += [c.plan_mode.budget_usd for c in config.channels.values()]
    if all(budget is None for budget in budgets):
        return None
    models = {config.anthropic.model} | {a.model for a in config.agents.values() if a.model}
    missing = sorted(m for m in models if m not in config.anthropic.prices)
    if not missing:
        return _ok("plan budgets: every configured model has a price")
    return _warn(
        "plan budgets",
        f"plan_mode.budget_usd is set but anthropic.prices has no price for {', '.join(missing)}, "
        "so a plan on it stops before executing",
        "add anthropic.prices.<model> with input and output dollars per million tokens, or "
        "use plan_mode.budget_tokens",
    )


def check_mcp_servers(config: Config) -> list[Check]:
    """Each MCP server of each agent: whether it started, and how each tool is classified."""
    agents = {name: config.mcp_servers_for(name) for name, entry in config.agents.items()}
    agents = {name: servers for name, servers in agents.items() if servers}
    if not agents and not config.mcp_servers:
        return []
    found = asyncio.run(probe_servers(config.mcp_servers, agents, config.sandbox_settings))
    fix = "fix the server's mcp_servers entry; the agent does not start until then"
    return [
        _ok(f"MCP server {p.server} ({p.agent}): {p.detail}")
        if p.started
        else _fail(f"MCP server {p.server} ({p.agent})", p.detail, fix)
        for p in found
    ]


def check_tokens(environ: Mapping[str, str]) -> list[Check]:
    secrets = Secrets.from_env(environ)
    found = {
        "DISCORD_TOKEN": secrets.discord_token is not None,
        "ANTHROPIC_API_KEY": secrets.anthropic_api_key is not None,
    }
    return [
        _ok(f"{name}: set")
        if present
        else _fail(
            name, "not set", f"export {name} in the bot's environment; plancord run needs it"
        )
        for name, present in found.items()
    ]


def diagnose(
    config_path: Path | None,
    *,
    environ: Mapping[str, str] | None = None,
    landlock: Callable[[], int] | None = None,
) -> Iterator[Check]:
    """Every check, in order; checks that need the config are left out when it fails to load."""
    config_check, config = check_config(config_path)
    yield config_check
    if config is not None:
        yield check_data_dir(config)
    migrations_check, latest = check_migrations()
    yield migrations_check
    if config is not None:
        file = config.database_path
        if file is not None:
            yield check_database(file, latest)
        else:
            yield check_database_server(str(config.database_target), latest)
        budget = check_budget_prices(config)
        if budget is not None:
            yield budget
    yield check_git()
    yield check_ripgrep()
    yield check_agent_sandbox(config)
    yield check_landlock((landlock or landlock_abi)(), config)
    if config is not None:
        yield from check_mcp_servers(config)
    yield from check_tokens(os.environ if environ is None else environ)


def render(checks: list[Check]) -> str:
    return "\n".join(check.line() for check in checks)


def run_doctor(config_path: Path | None) -> int:
    """Print every check as it completes; 0 when none failed, 1 otherwise."""
    failed = False
    for check in diagnose(config_path):
        print(check.line(), flush=True)
        failed = failed or check.status is Status.FAIL
    return 1 if failed else 0
