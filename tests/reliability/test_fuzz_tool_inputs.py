"""Tool input as a model might send it, through ``AgentRuntime.dispatch``, for every tool.

The model writes tool input as JSON, and nothing stops it from sending the wrong types, a
megabyte of text, a path with ``..``, an absolute path, a NUL byte, a symlink that leads out
of the workspace, a missing field or one too many. Whatever it sends, ``dispatch`` must answer
with a ``ToolResult`` (an error is fine) and never raise, and no file outside the workspace
may change: a sibling directory, the agent's own directory and every ancestor are watched.
No tool but the shell may show the content of a file outside the workspace. While
gathering, the workspace itself must not change either (the gate and the sandbox).

Each tool is fuzzed in the phases ``gathering`` and ``executing`` with the ``open``
permission profile, so nothing but the gate and the tools' own checks stands in the way. The
phase is restored before every example. Shell commands while executing come from a fixed
list of harmless ones: an unsandboxed shell may legitimately write anywhere the bot can.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from plancord.agent.interruptions import MARKER
from plancord.agent.manager import AgentManager
from plancord.agent.runtime import AgentRuntime, AgentSession, RuntimeSettings
from plancord.agent.tools import default_registry
from plancord.agent.tools.base import ShellSettings, ToolResult
from plancord.core.authority import Answer
from plancord.core.errors import ModelCallFailed
from plancord.core.planning import Actor, EntrySource, Phase, PlanRef
from plancord.core.ports import (
    ModelReply,
    ModelRequest,
    PermissionRequest,
    PlanningChange,
    Question,
)
from plancord.core.service import PlanningService
from plancord.storage.db import Database
from plancord.storage.store import SqlStore
from tests.runtime.builders import build_runtime, plain_core

ANA = Actor.user(42, "ana")
OPERATOR = Actor.operator()
MARK = "zq"
SECRET = "zq-secret-4f1c9e"
TOOL_NAMES = [tool.name for tool in default_registry()]
VALID_PLAN = {"summary": "Fuzz", "steps": [{"description": "Fuzz the tools", "risk": "low"}]}
WELL_FORMED_EXAMPLES = 10
MALFORMED_EXAMPLES = 5

SAFE_COMMANDS = (
    "ls",
    "ls -la out/",
    "pwd",
    "true",
    "false",
    "git status --short",
    "cat README.md",
    "cat out/secret.txt",
    f"echo made > {MARK}inside.txt",
    "printf '%s\\n' ü 日本",
    "head -c 200000 /dev/zero | wc -c",
    "sleep 0.05",
    "exit 3",
    "echo $HOME",
)
SHELL_TRICKS = (
    f"touch ../../{MARK}pwn",
    f"echo x > ../{MARK}pwn",
    f"cat README.md > out/{MARK}copy",
    f"cp out_file {MARK}copy",
    f"ln -s / {MARK}link",
    f"mkdir {MARK}dir",
    "rm -rf out/",
    "rm README.md",
    "find . -name README.md -delete",
    "sed -i s/fuzz/pwned/ README.md",
    f"sort -o ../../{MARK}pwn README.md",
    f"tee ../{MARK}pwn < README.md",
    f"python3 -c \"open('../{MARK}pwn', 'w')\"",
    f"git -c core.pager='touch {MARK}pager' log",
    f"echo $(touch {MARK}sub)",
    f"bash -c 'touch {MARK}bash'",
    "git commit --allow-empty -m x",
    f"cat README.md >> ../../../{MARK}pwn",
    f"ls > /dev/null; touch {MARK}after",
    "chmod 000 README.md",
    "git config user.name pwned",
)
SEGMENTS = (
    "..",
    ".",
    "",
    "out",
    "out_file",
    "loop",
    ".git",
    ".GIT",
    "docs",
    "README.md",
    "AGENTS.md",
    f"{MARK}new.txt",
    f"{MARK}new.md",
    "a b",
    "ü",
    "~",
    "\x00",
    "config",
    "hooks",
)


class NoModel:
    async def create(self, request: ModelRequest) -> ModelReply:
        raise ModelCallFailed("dispatch makes no model calls")


class SilentChannel:
    """Nobody answers questions; every permission is granted (the profile is open anyway)."""

    async def planning_changed(self, change: PlanningChange) -> None:
        return None

    async def say(self, agent: str, text: str) -> None:
        return None

    async def activity(self, agent: str, line: str) -> None:
        return None

    async def progress_line(self, agent: str, key: str, line: str, *, final: bool = False) -> None:
        return None

    async def ask_user(self, question: Question) -> str | None:
        return None

    async def ask_permission(self, request: PermissionRequest) -> Answer:
        return Answer.ALLOWED


class FixedClock:
    def now(self) -> datetime:
        return datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


@dataclass
class World:
    """One agent in a workspace with traps around it, and an event loop to drive it."""

    runner: asyncio.Runner
    root: Path
    db: Database
    store: SqlStore
    service: PlanningService
    runtime: AgentRuntime
    session: AgentSession
    phase: Phase

    @property
    def workspace(self) -> Path:
        return self.runtime.workspace_of("ada")

    def dispatch(self, call: dict[str, Any]) -> ToolResult:
        return self.runner.run(self.runtime.dispatch(self.session, call))

    def reset_phase(self) -> None:
        self.runner.run(self._reset_phase())

    async def _reset_phase(self) -> None:
        for _ in range(4):
            state = await self.store.load_state("ada")
            if state.phase is self.phase:
                return
            if state.phase is Phase.INACTIVE:
                await self.service.enter("ada", source=EntrySource.USER, actor=ANA, task="fuzz")
            elif state.phase is Phase.GATHERING and self.phase is Phase.EXECUTING:
                await self.service.submit("ada", VALID_PLAN)
            elif state.phase is Phase.SUBMITTED and self.phase is Phase.EXECUTING:
                ref = PlanRef(agent="ada", plan_id=state.plan_id or "", revision=state.revision)
                await self.service.approve(ref, ANA)
            else:
                await self.service.cancel("ada", OPERATOR, "fuzz reset")
        raise AssertionError(f"could not bring the agent back to {self.phase}")


async def build_world(runner: asyncio.Runner, root: Path, phase: Phase) -> World:
    db = await Database.open(root / "data" / "plancord.db")
    clock = FixedClock()
    channel = SilentChannel()
    agents_dir = root / "agents"
    core = plain_core(db, clock, agents_dir)
    store, service = core.store, core.planning
    runtime = build_runtime(
        core,
        notifier=channel,
        model=NoModel(),
        clock=clock,
        settings=RuntimeSettings(
            default_model="claude-sonnet-5-5",
            shell=ShellSettings(timeout_seconds=3.0, max_output_bytes=20_000),
            ask_timeout_seconds=0.1,
            permission_timeout_seconds=0.1,
        ),
    )
    manager = AgentManager(store, agents_dir, "claude-sonnet-5-5", clock)
    await manager.create("ada", actor=ANA, profile="open", channel_id=1001)
    workspace = runtime.workspace_of("ada")
    sibling = root / "sibling"
    sibling.mkdir()
    (sibling / "secret.txt").write_text(SECRET + "\n")
    (workspace.parent / "notes.txt").write_text("the agent's directory, outside its workspace\n")
    (workspace / "README.md").write_text("# fuzz\nfuzz target\n")
    (workspace / "docs").mkdir()
    (workspace / "docs" / "guide.md").write_text("# guide\n")
    (workspace / "out").symlink_to(sibling, target_is_directory=True)
    (workspace / "out_file").symlink_to(sibling / "secret.txt")
    (workspace / "loop").symlink_to(workspace / "loop")
    session = runtime.session("ada")
    session.requester = ANA
    world = World(runner, root, db, store, service, runtime, session, phase)
    await world._reset_phase()
    return world


@pytest.fixture(scope="module", params=[Phase.GATHERING, Phase.EXECUTING], ids=str)
def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[World]:
    root = tmp_path_factory.mktemp(f"fuzz-{request.param.value}")
    with asyncio.Runner() as runner:
        built = runner.run(build_world(runner, root, request.param))
        try:
            yield built
        finally:
            runner.run(built.runtime.shutdown())
            runner.run(built.db.close())


# -- what is watched -----------------------------------------------------------------------


def snapshot(top: Path, skip: tuple[Path, ...]) -> dict[str, tuple[str, ...]]:
    """Every entry under ``top`` (not following symlinks) with its kind, mode and content."""
    seen: dict[str, tuple[str, ...]] = {}
    for directory, dirnames, filenames in os.walk(top):
        here = Path(directory)
        dirnames[:] = [d for d in dirnames if here / d not in skip]
        for name in [*dirnames, *filenames]:
            path = here / name
            info = path.lstat()
            relative = str(path.relative_to(top))
            if path.is_symlink():
                seen[relative] = ("link", os.readlink(path))
            elif path.is_dir():
                seen[relative] = ("dir", oct(info.st_mode))
            else:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                seen[relative] = ("file", oct(info.st_mode), digest)
    return seen


def outside(world: World) -> dict[str, tuple[str, ...]]:
    """Everything but the database and the workspace; the runtime's own turn marker (written
    when ``approve`` resumes the agent, not by a tool) is not a tool's doing."""
    seen = snapshot(world.root, (world.root / "data", world.workspace))
    return {path: entry for path, entry in seen.items() if Path(path).name != MARKER}


def inside(world: World) -> dict[str, tuple[str, ...]]:
    return snapshot(world.workspace, (world.workspace / ".git",))


def marked_in_ancestors(world: World) -> list[str]:
    """Entries named like the fuzzer's files in any directory above the test's root."""
    found = []
    for ancestor in world.root.parents:
        try:
            names = os.listdir(ancestor)
        except OSError:
            continue
        found += [str(ancestor / n) for n in names if n.startswith(MARK)]
    return found


def strings_in(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from strings_in(key)
            yield from strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)


def paths_outside(world: World, call: dict[str, Any]) -> dict[str, bool]:
    """Each string of the input read as a path that lies outside the workspace, and whether
    something is there now."""
    found = {}
    workspace = str(world.workspace)
    for text in strings_in(call.get("input")):
        if "\x00" in text or len(text) > 4096:
            continue
        candidate = os.path.normpath(text if os.path.isabs(text) else os.path.join(workspace, text))
        if candidate != workspace and not candidate.startswith(workspace + os.sep):
            found[candidate] = os.path.lexists(candidate)
    return found


# -- what the model might send -------------------------------------------------------------


def json_values(max_leaves: int = 6) -> st.SearchStrategy[Any]:
    leaves = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=30),
    )
    return st.recursive(
        leaves,
        lambda children: st.one_of(
            st.lists(children, max_size=3),
            st.dictionaries(st.text(max_size=8), children, max_size=3),
        ),
        max_leaves=max_leaves,
    )


def huge_text() -> st.SearchStrategy[str]:
    return st.sampled_from([4096, 4097, 20_000, 20_001, 100_001, 1_000_001]).map(
        lambda size: "x" * size
    )


def path_text(world: World) -> st.SearchStrategy[str]:
    """Relative paths built from tricky segments, and absolute ones that stay under the test's
    temporary directory, so that even a broken jail could not damage the machine."""
    relative = st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=5).map("/".join)
    absolute = st.one_of(
        relative.map(lambda p: str(world.workspace) + "/" + p),
        relative.map(lambda p: str(world.root) + "/" + p),
        st.sampled_from(
            [
                str(world.root / "sibling" / "secret.txt"),
                str(world.root / "sibling" / f"{MARK}new.txt"),
                str(world.workspace.parent / "notes.txt"),
                str(world.workspace / ".git" / "config"),
                str(world.workspace / ".git" / "hooks" / f"{MARK}hook"),
            ]
        ),
    )
    return st.one_of(relative, relative, absolute, st.text(min_size=1, max_size=40), huge_text())


def command_text(phase: Phase) -> st.SearchStrategy[str]:
    if phase is Phase.EXECUTING:
        return st.one_of(*[st.sampled_from(SAFE_COMMANDS)] * 4, st.sampled_from(["", "x" * 20_001]))
    return st.one_of(
        *[st.sampled_from(SHELL_TRICKS + SAFE_COMMANDS)] * 3,
        st.text(min_size=1, max_size=60),
        huge_text(),
    )


def plan_values() -> st.SearchStrategy[Any]:
    step = st.fixed_dictionaries(
        {},
        optional={
            "description": st.one_of(st.text(max_size=40), huge_text(), json_values(3)),
            "tools": st.one_of(st.lists(st.text(max_size=12), max_size=3), json_values(3)),
            "risk": st.one_of(
                st.sampled_from(["low", "medium", "high", "HIGH", ""]), json_values(2)
            ),
        },
    )
    plan = st.fixed_dictionaries(
        {},
        optional={
            "summary": st.one_of(st.text(max_size=40), huge_text(), json_values(2)),
            "steps": st.one_of(st.lists(step, max_size=4), json_values(3)),
            "questions": st.one_of(st.lists(st.text(max_size=20), max_size=3), json_values(3)),
            "context_notes": st.one_of(st.text(max_size=40), huge_text(), st.none()),
            "owner": json_values(2),
        },
    )
    return st.one_of(plan, st.just(VALID_PLAN), st.text(max_size=60), json_values())


PATHISH = {"path", "pattern", "glob", "ref", "name", "start_point", "remote", "branch"}


def good_values(field: str, world: World) -> st.SearchStrategy[Any]:
    """The right type for ``field``, with hostile content: path tricks, shell tricks, huge text."""
    if field in PATHISH:
        return path_text(world)
    if field == "paths":
        return st.lists(path_text(world), min_size=1, max_size=3)
    if field == "command":
        return command_text(world.phase)
    if field == "plan":
        return plan_values()
    if field in ("content", "old_str", "new_str", "new_prompt", "message", "question"):
        return st.one_of(*[st.text(min_size=1, max_size=80)] * 4, huge_text())
    if field in ("start_line", "end_line", "max_results", "max_count", "step"):
        return st.one_of(*[st.integers(min_value=1, max_value=60)] * 3, st.integers(-5, 3000))
    if field == "timeout_seconds":
        return st.floats(min_value=0.01, max_value=7200)
    if field == "status":
        return st.sampled_from(["in_progress", "done", "skipped"])
    if field in ("overwrite", "staged", "create", "ignore_case"):
        return st.booleans()
    return st.text(min_size=1, max_size=40)


def calls_of(tool_name: str, payload: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(lambda p: {"id": "toolu_fuzz", "name": tool_name, "input": p}, payload)


PLAIN_VALUES: dict[str, Any] = {
    "pattern": "zq",
    "content": "zq\n",
    "old_str": "secret",
    "new_str": "pwned",
    "message": "zq commit",
    "name": "zq-branch",
    "ref": "main",
    "command": "ls",
    "new_prompt": "zq",
    "question": "zq?",
    "reason": "zq",
    "summary": "zq",
    "plan": VALID_PLAN,
    "step": 1,
    "status": "done",
}


def trap_calls(tool_name: str, world: World) -> list[dict[str, Any]]:
    """For each path-like field of the tool, one call per trap: the cases a jail must stop."""
    tool = world.runtime.registry.get(tool_name)
    assert tool is not None
    fields = tool.Input.model_fields
    base = {name: PLAIN_VALUES.get(name, "zq") for name, f in fields.items() if f.is_required()}
    traps = [
        "out/secret.txt",
        "out_file",
        f"out/{MARK}new.txt",
        "../notes.txt",
        f"../../../sibling/{MARK}new.txt",
        str(world.root / "sibling" / "secret.txt"),
        ".git/hooks/pre-commit",
        "loop/x",
    ]
    calls = []
    for name in fields:
        if name in ("path", "glob", "paths"):
            for trap in traps:
                value = [trap] if name == "paths" else trap
                calls.append(
                    {"id": "toolu_trap", "name": tool_name, "input": {**base, name: value}}
                )
    return calls


def well_formed_calls(tool_name: str, world: World) -> st.SearchStrategy[dict[str, Any]]:
    """Every required field, some optional ones, each of the right type: these reach ``run``."""
    tool = world.runtime.registry.get(tool_name)
    assert tool is not None
    fields = tool.Input.model_fields
    required = {n: good_values(n, world) for n, f in fields.items() if f.is_required()}
    optional = {n: good_values(n, world) for n, f in fields.items() if not f.is_required()}
    return calls_of(tool_name, st.fixed_dictionaries(required, optional=optional))


def malformed_calls(tool_name: str, world: World) -> st.SearchStrategy[dict[str, Any]]:
    """Wrong types, missing and extra fields, no object at all, a misspelt tool name."""
    tool = world.runtime.registry.get(tool_name)
    assert tool is not None
    anything = {
        n: st.one_of(good_values(n, world), json_values(4)) for n in tool.Input.model_fields
    }
    partial = st.fixed_dictionaries({}, optional=anything)
    extra = st.dictionaries(st.text(max_size=10), json_values(2), min_size=1, max_size=2)
    payload = st.one_of(
        partial, st.tuples(partial, extra).map(lambda p: {**p[0], **p[1]}), json_values()
    )
    renamed = st.builds(
        lambda n, p: {"id": "toolu_fuzz", "name": n, "input": p},
        st.sampled_from([tool_name.upper(), "", "no_such_tool", None]),
        payload,
    )
    return st.one_of(calls_of(tool_name, payload), renamed)


# -- the property ----------------------------------------------------------------------------


def check_dispatch(world: World, call: dict[str, Any]) -> ToolResult:
    """One call: a ``ToolResult`` comes back and nothing outside (or, planning, inside) moved."""
    world.reset_phase()
    before_outside = outside(world)
    before_inside = inside(world) if world.phase is Phase.GATHERING else None
    targets = paths_outside(world, call)
    result = world.dispatch(call)
    assert isinstance(result, ToolResult)
    assert isinstance(result.content, str)
    assert isinstance(result.is_error, bool)
    if call.get("name") != "bash_execute":
        assert SECRET not in result.content
    assert outside(world) == before_outside
    assert marked_in_ancestors(world) == []
    created = [p for p, existed in targets.items() if not existed and os.path.lexists(p)]
    assert created == []
    if before_inside is not None:
        assert inside(world) == before_inside
    return result


FUZZ_SETTINGS = settings(
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.mark.parametrize("tool_name", TOOL_NAMES)
def test_well_formed_hostile_input_stays_in_the_workspace(world: World, tool_name: str) -> None:
    @settings(FUZZ_SETTINGS, max_examples=WELL_FORMED_EXAMPLES)
    @given(call=well_formed_calls(tool_name, world))
    def check(call: dict[str, Any]) -> None:
        check_dispatch(world, call)

    for call in trap_calls(tool_name, world):
        check = example(call=call)(check)
    check()


def refusal_expected(world: World, tool_name: str, call: dict[str, Any]) -> str | None:
    """How the result of a malformed call must begin, or None for the few generated calls
    that happen to be well formed (every field optional, or all the required ones drawn)."""
    if call.get("name") != tool_name:
        return "Unknown tool"
    tool = world.runtime.registry.get(tool_name)
    assert tool is not None
    try:
        tool.Input.model_validate(call.get("input") or {})
    except ValidationError:
        return f"Invalid input for {tool_name}"
    return None


@pytest.mark.parametrize("tool_name", TOOL_NAMES)
def test_malformed_input_is_an_error_result(world: World, tool_name: str) -> None:
    refused: list[str] = []

    @settings(FUZZ_SETTINGS, max_examples=MALFORMED_EXAMPLES)
    @given(call=malformed_calls(tool_name, world))
    def check(call: dict[str, Any]) -> None:
        result = check_dispatch(world, call)
        expected = refusal_expected(world, tool_name, call)
        if expected is not None:
            assert result.is_error, (call, result.content)
            assert result.content.startswith(expected), (call, result.content)
            refused.append(expected)

    check()
    # Most generated calls are malformed, so the assertion above was exercised.
    assert len(refused) >= MALFORMED_EXAMPLES // 2, len(refused)


def test_the_traps_are_real(world: World) -> None:
    """The watched paths exist and the symlinks lead out, so the property above means something."""
    assert (world.workspace / "out" / "secret.txt").read_text() == SECRET + "\n"
    assert (world.workspace / "out_file").resolve() == world.root / "sibling" / "secret.txt"
    assert "agents/ada/notes.txt" in outside(world)
    assert "sibling/secret.txt" in outside(world)
    before = outside(world)
    (world.root / "sibling" / f"{MARK}probe").write_text("x")
    try:
        assert outside(world) != before
    finally:
        (world.root / "sibling" / f"{MARK}probe").unlink()
