"""bash_execute: real commands through run_shell, in the agent's sandbox, read-only while
planning."""

from __future__ import annotations

from pathlib import Path

import pytest

from plancord.agent.tools import shell
from plancord.agent.tools.base import ShellSettings, ToolContext
from plancord.agent.tools.shell import BashExecuteInput, BashExecuteTool
from plancord.core.planning import Phase
from plancord.sandbox import SandboxUnavailable, landlock_abi

from .conftest import MakeCtx, call

BASH = BashExecuteTool()
needs_landlock = pytest.mark.skipif(landlock_abi() == 0, reason="the kernel has no Landlock")


async def test_runs_in_the_workspace_and_reports_the_exit_code(
    ctx: ToolContext, workspace: Path
) -> None:
    (workspace / "hello.txt").write_text("hi\n")
    result = await call(BASH, ctx, command="ls && cat hello.txt")
    assert not result.is_error
    assert result.content == "hello.txt\nhi\n[exit code 0]"


async def test_a_failing_command_is_not_a_tool_error(ctx: ToolContext) -> None:
    result = await call(BASH, ctx, command="echo oops >&2; exit 3")
    assert not result.is_error
    assert result.content == "oops\n[exit code 3]"


async def test_no_output_is_said(ctx: ToolContext) -> None:
    assert (await call(BASH, ctx, command="true")).content == "(no output)\n[exit code 0]"


async def test_writes_work_outside_plan_mode(ctx: ToolContext, workspace: Path) -> None:
    result = await call(BASH, ctx, command="echo x > f")
    assert result.content == "(no output)\n[exit code 0]"
    assert (workspace / "f").read_text() == "x\n"


@needs_landlock
async def test_sandboxed_ls_runs(make_ctx: MakeCtx, workspace: Path) -> None:
    (workspace / "visible.txt").write_text("")
    result = await call(BASH, make_ctx(inner_wall=True, phase=Phase.GATHERING), command="ls")
    assert not result.is_error
    assert result.content == ("visible.txt\n[exit code 0] [ran in the read-only sandbox]")


@needs_landlock
async def test_the_sandbox_blocks_writes(make_ctx: MakeCtx, workspace: Path) -> None:
    result = await call(
        BASH, make_ctx(inner_wall=True, phase=Phase.GATHERING), command="echo x > f"
    )
    assert not (workspace / "f").exists()
    assert "[exit code 0]" not in result.content
    assert "[ran in the read-only sandbox]" in result.content


async def test_a_missing_sandbox_is_an_error_result(
    make_ctx: MakeCtx, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def unavailable(*args: object, **kwargs: object) -> None:
        raise SandboxUnavailable("Landlock is not available; enable it or set shell_sandbox")

    monkeypatch.setattr(shell, "run_shell", unavailable)
    result = await call(BASH, make_ctx(inner_wall=True, phase=Phase.GATHERING), command="ls")
    assert result.is_error
    assert result.content == "Not run: Landlock is not available; enable it or set shell_sandbox."


async def test_timeout_kills_and_is_an_error(ctx: ToolContext) -> None:
    result = await call(BASH, ctx, command="echo started; sleep 20", timeout_seconds=0.5)
    assert result.is_error
    assert result.content == (
        "started\n[timed out after 0.5 s; the command and its children were killed]"
    )


async def test_the_model_cannot_extend_the_operator_timeout(make_ctx: MakeCtx) -> None:
    ctx = make_ctx(shell=ShellSettings(timeout_seconds=0.5))
    result = await call(BASH, ctx, command="sleep 20", timeout_seconds=600)
    assert result.is_error
    assert "timed out after 0.5 s" in result.content


async def test_output_is_capped(make_ctx: MakeCtx) -> None:
    ctx = make_ctx(shell=ShellSettings(max_output_bytes=50))
    result = await call(BASH, ctx, command="seq 1 10000")
    assert not result.is_error
    assert result.content.startswith("1\n2\n3\n")
    assert "truncated" in result.content
    assert result.content.endswith("[exit code 0]")


def test_shell_verdict_and_detail_come_from_the_command() -> None:
    read = BashExecuteInput(command="ls -la")
    write = BashExecuteInput(command="rm -rf build")
    assert BASH.shell_verdict(read, Path.cwd()).allowed is True
    assert BASH.shell_verdict(write, Path.cwd()).allowed is False
    assert BASH.detail(write) == "rm -rf build"
