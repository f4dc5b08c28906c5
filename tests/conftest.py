"""Shared fixtures: a real database per test (a SQLite file, and a database on a real
PostgreSQL server: every test of the store and the service runs on both), a controllable
clock, the planning service."""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from plancord.core.agents import AgentRecord
from plancord.core.ports import PlanningChange, StaticSettings
from plancord.core.service import PlanningService
from plancord.core.settings import PlanModeSettings
from plancord.sandbox import landlock_abi
from plancord.sandbox.layers import bubblewrap_problem
from plancord.storage.backend import Backend
from plancord.storage.engines import migrate_database, open_database
from plancord.storage.store import SqlStore
from plancord.testing.postgres_server import PostgresServer, PostgresUnavailable
from tests.workspaces import WorkspaceTemplates
from tests.world import Worlds

# CI sets this: there, a machine without PostgreSQL fails the run instead of skipping.
REQUIRE_POSTGRES = os.environ.get("PLANCORD_REQUIRE_POSTGRES") == "1"
_postgres_missing: list[str] = []
# CI sets this too: there, a kernel without Landlock fails the run, instead of the plan-mode
# tests quietly running with the read-only wall off (``shell_sandbox: off``) or skipping.
REQUIRE_LANDLOCK = os.environ.get("PLANCORD_REQUIRE_LANDLOCK") == "1"

# CI sets this as well: bubblewrap that cannot build a sandbox here fails the run, instead of
# the git-config attack tests and the bubblewrap layer's tests skipping.
REQUIRE_BUBBLEWRAP = os.environ.get("PLANCORD_REQUIRE_BUBBLEWRAP") == "1"
# The newest Landlock ABI a test needs (the fallback's socket and signal scoping): under
# PLANCORD_REQUIRE_LANDLOCK an older kernel fails the run.
LANDLOCK_ABI_NEEDED = 6
# And this: a skipped test not on tests/allowed_skips.txt fails the run (tests.skip_policy).
pytest_plugins = ["tests.skip_policy"]

# Hypothesis's timing checks, off: the suite runs on four workers on a two-core machine often
# busy with other work, where an example or its generation can take seconds. What a property
# test asserts is unchanged; each test's own ``@settings`` still sets its example count.
settings.register_profile("plancord", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("plancord")


def pytest_sessionstart(session: pytest.Session) -> None:
    abi = landlock_abi()
    if REQUIRE_LANDLOCK and abi < LANDLOCK_ABI_NEEDED:
        pytest.exit(
            f"PLANCORD_REQUIRE_LANDLOCK=1, but this kernel offers Landlock ABI {abi or 'none'} "
            f"and the tests need {LANDLOCK_ABI_NEEDED}: the plan-mode tests would run without "
            "their read-only wall or skip",
            returncode=1,
        )
    problem = bubblewrap_problem() if REQUIRE_BUBBLEWRAP else None
    if problem is not None:
        pytest.exit(
            f"PLANCORD_REQUIRE_BUBBLEWRAP=1, but bubblewrap cannot build a sandbox here: {problem}",
            returncode=1,
        )


#: The tests that take ten seconds or more (a fresh install, the demo, the operator CLI as
#: processes, a soak, restarts waiting for a lease), slowest first, as a test's node id
#: (every parameter of it) or a whole file. They start first, one after the other on
#: whichever worker is free (``pytest_configure`` hands the workers one test at a time),
#: so the longest ones run side by side from the start instead of one worker
#: working through them alone at the end of the run.
SLOW_FIRST = (
    "tests/test_dockerfile.py::test_a_plain_install_migrates_passes_doctor_and_runs_the_demo",
    "tests/discord_bot/test_stale_git_locks.py::"
    "test_a_lock_a_live_process_holds_open_is_left_and_the_refusal_names_it",
    "tests/test_demo.py::test_demo_keep_leaves_a_data_directory_the_operator_commands_read",
    "tests/test_startup.py::test_run_is_up_before_discord_answers_and_a_signal_ends_it",
    "tests/test_readme.py::test_the_readme_commands_exist",
    "tests/discord_bot/test_approval_intents.py::"
    "test_the_database_locked_across_the_approval_then_the_next_click_approves",
    "tests/discord_bot/result_card/test_large_results.py::"
    "test_a_card_of_twenty_five_long_steps_fits_with_the_rest_in_its_file",
    "tests/storage/test_copy.py::test_migrate_from_sqlite_copies_a_database_with_every_table_filled",
    "tests/reliability/test_soak_short.py",
    "tests/test_demo.py::test_a_step_that_takes_more_than_ten_seconds_still_ends_the_story",
    "tests/test_demo.py::test_the_demo_tells_the_whole_story",
    "tests/discord_bot/result_card/test_intents.py::"
    "test_a_record_that_failed_is_finished_by_the_next_click",
    "tests/discord_bot/result_card/test_intents.py::"
    "test_the_database_locked_between_git_and_the_record_then_a_restart",
    "tests/core/shell/readonly/test_substitution.py::"
    "test_the_staged_script_gives_bash_the_words_bash_builds",
    "tests/command/test_operator_results.py",
    "tests/command/test_operator_cli.py",
    "tests/discord_bot/cogs/test_schedules.py::test_pause_and_delete_from_the_shell",
    "tests/discord_bot/asks/test_rules_over_time.py::"
    "test_a_revoke_from_another_process_is_read_at_the_next_call",
    "tests/discord_bot/test_stale_git_locks.py",
    "tests/security/test_network_grants_end.py::test_an_mcp_servers_tunnel_closes_when_its_grant_ends",
    "tests/e2e/test_append_only.py::test_a_whole_cycle_is_append_only_and_never_refused",
    "tests/test_skip_policy.py::test_an_unlisted_skip_fails_a_strict_run",
    "tests/core/shell/readonly/test_bash_agreement.py::test_the_filter_builds_the_argv_bash_builds",
    "tests/test_doctor.py",
    "tests/test_compose.py",
)


def slow_rank(nodeid: str) -> int:
    """Where ``nodeid`` starts: the index of the first ``SLOW_FIRST`` entry naming it, or
    after them all."""
    path, _, name = nodeid.partition("::")
    test = f"{path}::{name.partition('[')[0]}"
    for rank, entry in enumerate(SLOW_FIRST):
        if entry in (path, test):
            return rank
    return len(SLOW_FIRST)


def pytest_configure(config: pytest.Config) -> None:
    """Under xdist, tests go to the workers one at a time (``--maxschedchunk=1`` unless the
    command line says otherwise): its default hands each worker a quarter of its share at
    once, which would give the first worker every test of ``SLOW_FIRST``."""
    if getattr(config.option, "maxschedchunk", 1) is None:
        config.option.maxschedchunk = 1


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slow tests first (in the order above), the rest as collected."""
    items.sort(key=lambda item: slow_rank(item.nodeid))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One line at the end when the PostgreSQL half of the store's tests could not run."""
    if _postgres_missing:
        terminalreporter.write_line(f"PostgreSQL tests skipped: {_postgres_missing[0]}")


class ManualClock:
    """A clock that moves only when the test says so."""

    def __init__(self, start: datetime | None = None) -> None:
        self.current = start or datetime(2026, 1, 5, 9, 0, tzinfo=UTC)

    def now(self) -> datetime:
        return self.current

    def advance(self, **kwargs: float) -> datetime:
        self.current += timedelta(**kwargs)
        return self.current


class RecordingNotifier:
    def __init__(self) -> None:
        self.changes: list[PlanningChange] = []

    async def planning_changed(self, change: PlanningChange) -> None:
        self.changes.append(change)

    @property
    def actions(self) -> list[str]:
        return [c.action for c in self.changes]


@pytest.fixture(scope="session")
def workspace_templates(tmp_path_factory: pytest.TempPathFactory) -> WorkspaceTemplates:
    """``await workspace_templates.copy(path, agent)``: the workspace ``init_workspace`` makes,
    copied from one made per agent name for the session (``tests.workspaces``)."""
    return WorkspaceTemplates(tmp_path_factory.mktemp("workspace-templates"))


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "plancord.db"


@pytest.fixture(scope="session")
def migrated_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file at the newest schema, made once per worker: the tests' SQLite databases
    start as copies of it, as the PostgreSQL ones start from ``postgres_template`` (migrating
    a new file costs a few hundred milliseconds of synced writes; the migrations have tests
    of their own)."""
    path = tmp_path_factory.mktemp("migrated") / "plancord.db"
    asyncio.run(migrate_database(path))
    return path


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One real PostgreSQL server for the session, in a temporary directory."""
    try:
        server = PostgresServer.start()
    except PostgresUnavailable as exc:
        if REQUIRE_POSTGRES:
            pytest.fail(str(exc))
        _postgres_missing.append(str(exc))
        pytest.skip(f"PostgreSQL tests skipped: {exc}")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def postgres_template(postgres_server: PostgresServer) -> str:
    """A migrated database each test's database is copied from (a copy takes milliseconds)."""
    name = postgres_server.create_database()

    async def migrate() -> None:
        database = await open_database(postgres_server.url(name))
        await database.close()

    asyncio.run(migrate())
    return name


@pytest.fixture
def postgres_url(postgres_server: PostgresServer, postgres_template: str) -> Iterator[str]:
    """A fresh, migrated PostgreSQL database for one test."""
    name = postgres_server.create_database(template=postgres_template)
    try:
        yield postgres_server.url(name)
    finally:
        postgres_server.drop_database(name)


@pytest.fixture(params=["sqlite", "postgresql"])
def db_target(request: pytest.FixtureRequest, db_path: Path) -> str | Path:
    """Where the test's database lives: a migrated SQLite file, or a PostgreSQL URL."""
    if request.param == "sqlite":
        template: Path = request.getfixturevalue("migrated_sqlite")
        shutil.copyfile(template, db_path)
        return db_path
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture
async def db(db_target: str | Path) -> AsyncIterator[Backend]:
    database = await open_database(db_target)
    try:
        yield database
    finally:
        await database.close()


@pytest.fixture
def store(db: Backend) -> SqlStore:
    return SqlStore(db)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def settings() -> StaticSettings:
    return StaticSettings(PlanModeSettings(approver_roles=("reviewers",)))


@pytest.fixture
def notifier() -> RecordingNotifier:
    return RecordingNotifier()


@pytest.fixture
def service(
    store: SqlStore, clock: ManualClock, settings: StaticSettings, notifier: RecordingNotifier
) -> PlanningService:
    return PlanningService(store, clock, settings, [notifier])


def agent_record(name: str = "ada", channel_id: int | None = 1001) -> AgentRecord:
    return AgentRecord(
        name=name,
        model="claude-test",
        channel_id=channel_id,
        created_at=datetime(2026, 1, 5, 8, 0, tzinfo=UTC),
    )


@pytest.fixture
async def agent(store: SqlStore) -> str:
    await store.create_agent(agent_record())
    return "ada"


@pytest.fixture
async def worlds(tmp_path: Path, migrated_sqlite: Path) -> AsyncIterator[Worlds]:
    """The SimCord worlds of one test (``tests.world``), closed and checked at its end."""
    built = Worlds(tmp_path / "data", migrated_sqlite)
    yield built
    await built.close()
