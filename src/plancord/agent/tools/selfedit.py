"""Self-editing: the agent may rewrite its own system prompt and its notes for later runs.

Both change what future turns start from, so both are ``mutating`` (refused in plan mode, and
subject to the permission profile otherwise). The system prompt lives in the agent's database
row; documentation is limited to Markdown under the workspace's ``docs/`` and ``AGENTS.md``,
so this tool cannot be used as a general file writer.
"""

from __future__ import annotations

import asyncio
from pathlib import Path, PurePosixPath
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from plancord.agent.tools.base import Tool, ToolContext, ToolResult
from plancord.agent.tools.edit import (
    ALLOWED_DOCS,
    is_guarded_doc,
    write_text_file,
    written_path,
)
from plancord.agent.tools.paths import PathOutsideWorkspace, display_path, resolve_in_workspace
from plancord.core.errors import PlancordError
from plancord.core.gate import ToolKind
from plancord.core.holding import KnownWrites

MAX_SYSTEM_PROMPT_CHARS = 20_000
MAX_DOC_BYTES = 200_000


class SelfEditSystemPromptInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    new_prompt: str = Field(
        min_length=1,
        max_length=MAX_SYSTEM_PROMPT_CHARS,
        description=(
            "Your complete new system prompt; it replaces the current one entirely "
            f"(at most {MAX_SYSTEM_PROMPT_CHARS:,} characters)."
        ),
    )


class SelfEditSystemPromptTool(Tool[SelfEditSystemPromptInput]):
    name: ClassVar[str] = "self_edit_system_prompt"
    description: ClassVar[str] = (
        "Replace your own standing instructions (the agent's system prompt) with new_prompt. "
        "Takes effect from your next turn and persists across restarts. Pass the complete "
        "text: anything you leave out is gone. Use it only when asked to change how you work "
        "from now on."
    )
    kind: ClassVar[ToolKind] = ToolKind.MUTATING
    Input: ClassVar[type[BaseModel]] = SelfEditSystemPromptInput

    def detail(self, args: SelfEditSystemPromptInput) -> str:
        return f"system prompt ({len(args.new_prompt)} chars)"

    async def run(self, args: SelfEditSystemPromptInput, ctx: ToolContext) -> ToolResult:
        if not args.new_prompt.strip():
            return ToolResult.error("The new system prompt is empty.")
        try:
            current = await ctx.store.get_agent(ctx.agent.name)
            updated = await ctx.store.update_agent(
                current.model_copy(update={"system_prompt": args.new_prompt})
            )
        except PlancordError as exc:
            return ToolResult.error(str(exc))
        ctx.agent = updated
        return ToolResult(
            f"System prompt replaced ({len(args.new_prompt):,} characters); "
            "it applies from your next turn."
        )


class SelfEditDocsInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(
        min_length=1,
        max_length=1024,
        description=f"Which document to write: {ALLOWED_DOCS}, e.g. docs/conventions.md.",
    )
    content: str = Field(
        max_length=MAX_DOC_BYTES,
        description=f"The complete Markdown content (at most {MAX_DOC_BYTES:,} bytes).",
    )


class SelfEditDocsTool(Tool[SelfEditDocsInput]):
    name: ClassVar[str] = "self_edit_docs"
    description: ClassVar[str] = (
        "Write your own notes for future runs as Markdown: AGENTS.md at the workspace root "
        "or any .md file under docs/. Creates or replaces the whole file. Other paths are "
        "refused; use create_file or str_replace for project files."
    )
    kind: ClassVar[ToolKind] = ToolKind.MUTATING
    Input: ClassVar[type[BaseModel]] = SelfEditDocsInput

    def detail(self, args: SelfEditDocsInput) -> str:
        return args.path

    def writes(self, args: SelfEditDocsInput, workspace: Path) -> KnownWrites | None:
        return written_path(workspace, args.path)

    async def run(self, args: SelfEditDocsInput, ctx: ToolContext) -> ToolResult:
        try:
            target = await asyncio.to_thread(
                resolve_in_workspace, ctx.workspace, args.path, write=True
            )
        except PathOutsideWorkspace as exc:
            return ToolResult.error(str(exc))
        relative = PurePosixPath(display_path(ctx.workspace, target))
        if not is_guarded_doc(relative):
            return ToolResult.error(
                f"{relative} is not a document this tool may write; allowed: {ALLOWED_DOCS}."
            )
        return await write_text_file(ctx.workspace, str(relative), args.content, overwrite=True)
