"""The scenes the completion-card tests share: ada executes a two-step plan through the
real bot (a scripted model), writing ``greet.py`` in step 1 and ``docs/greet.md`` in step
2, then completes; the completion card waits in the channel."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import discord

from plancord.core.execution import ExecutionRecord
from plancord.core.planning import Phase
from plancord.storage.executions import ExecutionStore
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn
from tests.world import PlanScene

PLAN = {
    "summary": "Add a greeting module",
    "steps": [
        {"description": "Write greet.py", "tools": ["create_file", "bash_execute"],
         "files": ["greet.py", "big.txt"]},
        {"description": "Document it", "tools": ["create_file"], "files": ["docs/*"]},
    ],
}  # fmt: skip

WORK = (
    tool_turn(ToolCall("create_file", {"path": "greet.py", "content": "def hello():\n    pass\n"})),
    tool_turn(ToolCall("create_file", {"path": "docs/greet.md", "content": "# hello\n"})),
    tool_turn(ToolCall("complete_plan", {"summary": "greeted"})),
    text_turn("Done."),
)


def git(workspace: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=workspace, check=True, capture_output=True, text=True
    ).stdout


async def completed(
    plan_scene: Any,
    *,
    work: tuple[Any, ...] = WORK,
    plan: dict[str, Any] = PLAN,
    prepare: Callable[[Path], None] | None = None,
    approver: str = "ana",
    after: tuple[Any, ...] = (),
    **options: Any,
) -> tuple[PlanScene, Path]:
    """The plan submitted, approved by ``approver`` and executed to its end by ada."""
    scene: PlanScene = await plan_scene(
        [tool_turn(ToolCall("submit_plan", {"plan": plan})), *work, *after], **options
    )
    workspace = scene.app.manager.workspace_of("ada")
    if prepare is not None:
        prepare(workspace)
    await scene.ana.slash(scene.channel, "plan start", task="add a greeting module")
    assert (await scene.state()).phase is Phase.SUBMITTED
    await getattr(scene, approver).click(scene.plan_message(1), label="Approve")
    await scene.app.runtime.wait_idle("ada")
    return scene, workspace


def result_cards(scene: PlanScene) -> list[discord.Message]:
    return [
        m
        for m in scene.bot_messages()
        if m.embeds and (m.embeds[0].title or "").startswith("Result: ")
    ]


def diff_of(card: discord.Message) -> discord.Attachment:
    """The card's diff; beside it the steps file lists what decided each tool call."""
    [diff] = [a for a in card.attachments if ".diff" in a.filename]
    return diff


def result_card(scene: PlanScene) -> discord.Message:
    found = result_cards(scene)
    assert found, f"no completion card in {scene.bot_texts()}"
    return found[-1]


async def record(scene: PlanScene) -> ExecutionRecord:
    found = await ExecutionStore(scene.app.db).latest("ada")
    assert found is not None
    return found


def menu(scene: PlanScene, message: discord.Message) -> dict[str, Any]:
    """The Roll back… menu the simulated Discord holds for the card, as sent."""
    stored = scene.env.backend.messages[message.channel.id][message.id]
    for row in stored.components:
        for item in row["components"]:
            if str(item.get("custom_id", "")).startswith("result:rollback:"):
                return dict(item)
    raise AssertionError("no Roll back menu on the card")


def reply(result: Any) -> str:
    """The ephemeral answer to a click on the card (deferred, then followed up)."""
    if result.followups:
        return str(result.followups[-1].content)
    return str(result.response.content if result.response else result)
