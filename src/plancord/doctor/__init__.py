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

import os
import shutil
import sqlite3
import subprocess
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from urllib.parse import quote

import psycopg

from plancord.config import Config, ConfigError, Secrets, load_config
from plancord.core.settings import PlanModeSettings
from plancord.doctor.findings import Check, Status, failed, passed, warned
from plancord.doctor.metrics import check_metrics
from plancord.doctor.models import check_models
from plancord.doctor.servers import check_mcp_servers
from plancord.doctor.walls import (
    check_agent_sandbox,
    check_inner_wall,
    check_landlock,
    check_network_proxy,
    check_shell_sandbox,
    check_user,
)
from plancord.doctor.workspaces import check_workspace_roots
from plancord.process.data_dir import data_dir_fix, data_dir_problem, exposed_to_others
from plancord.sandbox import landlock_abi, native_wall
from plancord.storage.backend import redact
from plancord.storage.db import storage_error
from plancord.storage.migrations import MigrationError, default_migrations_dir, discover
from plancord.storage.postgres import create_database_fix

__all__ = ["Check", "Status", "diagnose", "render", "run_doctor"]

_TOOL_TIMEOUT_SECONDS = 5.0


def check_config(path: Path | None) -> tuple[Check, Config | None]:
    try:
        config = load_config(path)
    except ConfigError as exc:
        fix = "fix the file and run plancord doctor again"
        if len(exc.problems) > 1:
            listed = "; ".join(f"({n}) {p}" for n, p in enumerate(exc.problems, 1))
            return failed("config", f"{len(exc.problems)} problems: {listed}", fix), None
        return failed("config", str(exc), fix), None
    if path is None and not Path("config.yaml").is_file():
        return passed("config: no ./config.yaml, using the built-in defaults"), config
    return passed(f"config {path or 'config.yaml'} is valid"), config


def check_data_dir(config: Config) -> Check:
    """The same check ``plancord run`` makes before it connects, and whether others can
    read what it holds (conversations, plans, workspaces)."""
    data_dir = config.data_dir
    what = f"data directory {data_dir}"
    problem = data_dir_problem(config)
    if problem is not None:
        return failed(what, problem, data_dir_fix(problem))
    if not data_dir.exists():
        return passed(f"{what} does not exist yet; plancord creates it, private (0700)")
    exposed = [
        (path, mode)
        for path in (data_dir, config.database_path)
        if path is not None and (mode := exposed_to_others(path)) is not None
    ]
    if exposed:
        path, mode = exposed[0]
        return warned(
            what,
            f"{path} is mode {mode}: other users of this host may read the conversations and plans",
            f"chmod {'700' if path.is_dir() else '600'} {path}",
        )
    return passed(f"{what} is writable and private")


def check_migrations() -> tuple[Check, int | None]:
    try:
        migrations = discover()
    except MigrationError as exc:
        return failed("migrations", str(exc), "reinstall plancord or fix the folder"), None
    except OSError as exc:
        return (
            failed(
                "migrations",
                f"cannot read {default_migrations_dir()}: {exc.strerror or exc}",
                "set PLANCORD_MIGRATIONS_DIR to the project's migrations/ folder",
            ),
            None,
        )
    if not migrations:
        return (
            failed(
                "migrations",
                f"no migration files in {default_migrations_dir()}",
                "set PLANCORD_MIGRATIONS_DIR to the project's migrations/ folder",
            ),
            None,
        )
    latest = migrations[-1].version
    return passed(f"migrations: newest version {latest}, in {default_migrations_dir()}"), latest


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
        create = create_database_fix(exc, url)
        if create is not None:
            return failed(what, "reachable, but the database does not exist", create)
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return failed(
            what, f"cannot be reached: {first}", "check the URL, the server and the password"
        )
    version = int(row[0]) if row and row[0] is not None else 0
    if version == 0:
        return warned(
            what, "reachable, no schema yet", "run plancord migrate (plancord run also does)"
        )
    if latest is not None and version > latest:
        return failed(
            what,
            f"at schema version {version}, newer than this plancord knows (up to {latest})",
            "upgrade plancord or point database at another server",
        )
    if latest is not None and version < latest:
        return warned(
            what,
            f"at schema version {version}, the newest is {latest}",
            "run plancord migrate (plancord run also migrates at start)",
        )
    return passed(f"{what} reachable, schema version {version} (newest)")


def check_database(path: Path, latest: int | None) -> Check:
    what = f"database {path}"
    if not path.exists():
        return warned(
            what, "not created yet", "run plancord migrate (plancord run also creates it)"
        )
    if path.is_dir():
        return failed(what, "is a directory, not a file", "point database at a file")
    try:
        version = _read_schema_version(path)
    except sqlite3.Error as exc:
        return failed(
            what,
            str(storage_error(exc, path)),
            "restore it from a backup or point database at another file",
        )
    if latest is None:
        return warned(
            what,
            f"at schema version {version}; cannot compare without the migrations",
            "fix the migrations check above",
        )
    if version > latest:
        return failed(
            what,
            f"at schema version {version}, newer than this plancord knows (up to {latest})",
            "upgrade plancord or point database at another file",
        )
    if version < latest:
        return warned(
            what,
            f"at schema version {version}, the newest is {latest}",
            "run plancord migrate (plancord run also migrates at start)",
        )
    return passed(f"{what} reachable, schema version {version} (newest)")


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
        return failed(
            "git",
            "not found on PATH (or it does not run)",
            "install git (e.g. apt-get install git); agent workspaces are git repositories",
        )
    return passed(f"git: {version}")


def check_ripgrep() -> Check:
    version = _tool_version(["rg", "--version"])
    if version is None:
        return warned(
            "ripgrep",
            "not found on PATH; the grep tool refuses until it is installed "
            "(the shell's grep still works)",
            "install ripgrep (e.g. apt-get install ripgrep)",
        )
    return passed(f"ripgrep: {version}")


def check_budget_prices(config: Config) -> Check | None:
    """A dollar budget needs a price for the model it counts; without one the plan stops
    before executing (an unchecked budget is no budget). Only when a budget is set; agents
    created through Discord with other models are not seen here."""
    layers = [a.plan_mode for a in config.agents.values()]
    layers += [c.plan_mode for c in config.channels.values()]
    budgets = [config.plan_mode.budget_usd]
    budgets += [layer.apply_to(PlanModeSettings()).budget_usd for layer in layers]
    if all(budget is None for budget in budgets):
        return None
    models = {config.anthropic.model} | {a.model for a in config.agents.values() if a.model}
    missing = sorted(m for m in models if m not in config.anthropic.prices)
    if not missing:
        return passed("plan budgets: every configured model has a price")
    return warned(
        "plan budgets",
        f"plan_mode.budget_usd is set but anthropic.prices has no price for {', '.join(missing)}, "
        "so a plan on it stops before executing",
        "add anthropic.prices.<model> with input and output dollars per million tokens, or "
        "use plan_mode.budget_tokens",
    )


def check_tokens(environ: Mapping[str, str]) -> list[Check]:
    """Each secret on its own line: an unreadable token file does not hide the other."""
    return [_check_token(name, environ) for name in ("DISCORD_TOKEN", "ANTHROPIC_API_KEY")]


def _check_token(name: str, environ: Mapping[str, str]) -> Check:
    own = {key: value for key, value in environ.items() if key in (name, f"{name}_FILE")}
    try:
        secrets = Secrets.from_env(own)
    except ConfigError as exc:
        what = exc.key or name
        problem = str(exc).removeprefix(f"{what}: ")
        return failed(what, problem, "fix the variable or the file it names")
    present = (
        secrets.discord_token if name == "DISCORD_TOKEN" else secrets.anthropic_api_key
    ) is not None
    if present:
        return passed(f"{name}: set")
    return failed(name, "not set", f"export {name} in the bot's environment; plancord run needs it")


def diagnose(
    config_path: Path | None,
    *,
    environ: Mapping[str, str] | None = None,
    landlock: Callable[[], int] | None = None,
    euid: int | None = None,
) -> Iterator[Check]:
    """Every check, in order; checks that need the config are left out when it fails to load."""
    config_check, config = check_config(config_path)
    yield config_check
    data_dir_usable = True
    if config is not None:
        data_check = check_data_dir(config)
        data_dir_usable = data_check.status is not Status.FAIL
        yield data_check
        yield from check_workspace_roots(config, euid)
    migrations_check, latest = check_migrations()
    yield migrations_check
    if config is not None:
        file = config.database_path
        if file is not None:
            # A database inside an unusable data directory has nothing more to say: the
            # fix above comes first (not "run plancord migrate").
            if data_dir_usable or config.data_dir not in file.parents:
                yield check_database(file, latest)
        else:
            yield check_database_server(str(config.database_target), latest)
        budget = check_budget_prices(config)
        if budget is not None:
            yield budget
        yield from check_models(config)
    yield check_git()
    yield check_ripgrep()
    yield check_agent_sandbox(config)
    proxy = check_network_proxy(config) if config is not None else None
    if proxy is not None:
        yield proxy
    abi = (landlock or landlock_abi)()
    yield check_landlock(abi, config)
    inner = check_inner_wall(abi, native_wall() if abi else None)
    if inner is not None:
        yield inner
    if config is not None:
        shell = check_shell_sandbox(config)
        if shell is not None:
            yield shell
        yield from check_mcp_servers(config)
        yield from check_metrics(config)
    user = check_user(os.geteuid() if euid is None else euid)
    if user is not None:
        yield user
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
