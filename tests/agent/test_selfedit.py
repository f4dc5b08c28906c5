"""self_edit_system_prompt and self_edit_docs: what they change and what they refuse."""

from __future__ import annotations

from pathlib import Path

import pytest

from plancord.agent.tools.base import ToolContext
from plancord.agent.tools.selfedit import SelfEditDocsTool, SelfEditSystemPromptTool
from plancord.storage.store import SqlStore

from .conftest import call

PROMPT, DOCS = SelfEditSystemPromptTool(), SelfEditDocsTool()


async def test_system_prompt_is_replaced_in_the_store(
    ctx: ToolContext, store: SqlStore, agent: str
) -> None:
    result = await call(PROMPT, ctx, new_prompt="Always write tests first.")
    assert not result.is_error
    stored = await store.get_agent(agent)
    assert stored.system_prompt == "Always write tests first."
    assert stored.model == "claude-test"
    assert ctx.agent.system_prompt == "Always write tests first."


async def test_system_prompt_limits(ctx: ToolContext, store: SqlStore, agent: str) -> None:
    blank = await call(PROMPT, ctx, new_prompt="   ")
    assert blank.is_error
    assert (await store.get_agent(agent)).system_prompt == ""


@pytest.mark.parametrize("path", ["AGENTS.md", "docs/notes.md", "docs/deep/design.md"])
async def test_docs_may_be_written(ctx: ToolContext, workspace: Path, path: str) -> None:
    result = await call(DOCS, ctx, path=path, content="# Notes\n")
    assert not result.is_error
    assert (workspace / path).read_text() == "# Notes\n"
    again = await call(DOCS, ctx, path=path, content="# Newer\n")
    assert not again.is_error
    assert (workspace / path).read_text() == "# Newer\n"


@pytest.mark.parametrize(
    "path", ["README.md", "src/x.md", "docs/x.txt", "docs.md", "sub/AGENTS.md", "../docs/x.md"]
)
async def test_other_paths_are_refused(ctx: ToolContext, workspace: Path, path: str) -> None:
    result = await call(DOCS, ctx, path=path, content="x")
    assert result.is_error
    assert not (workspace / path).exists()
    assert not (workspace.parent / "docs").exists()


async def test_a_docs_symlink_elsewhere_is_refused(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "src").mkdir()
    (workspace / "docs").symlink_to(workspace / "src")
    result = await call(DOCS, ctx, path="docs/x.md", content="x")
    assert result.is_error
    assert "leads through a symbolic link to src/x.md" in result.content
    assert not (workspace / "src" / "x.md").exists()
