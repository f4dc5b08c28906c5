"""A 🔴 step reached by its files alone: the agent's call uses a tool the current step has,
but changes only what a later high-risk step's files cover. The host cannot ask before such
a call (nothing said where it would write), so it undoes the change the moment it sees it:
while the checkpoint card waits the workspace is as before the call, Continue puts the
change back exactly (content and mode), and Stop or a restart leaves it undone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from plancord.core.execution import StepOutcome
from plancord.core.planning import Phase
from plancord.storage.executions import ExecutionStore
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn
from tests.world import PlanScene, buttons

PLAN = {
    "summary": "Migrate the database",
    "steps": [
        {
            "description": "Write the migration",
            "tools": ["bash_execute"],
            "files": ["migration.sql"],
        },
        {
            "description": "Rewrite the schema",
            "tools": ["bash_execute"],
            "files": ["schema.sql"],
            "risk": "high",
        },
    ],
}
REVIEWED = "create table users;\n"
REWRITTEN = "drop table users;\n"


def _bash(command: str) -> Any:
    return tool_turn(ToolCall("bash_execute", {"command": command}))


async def _waiting(plan_scene: Any, *after: Any) -> tuple[PlanScene, Path]:
    """Step 1's call, then a call that writes only step 2's file; the card is up."""
    scene: PlanScene = await plan_scene(
        [
            tool_turn(ToolCall("submit_plan", {"plan": PLAN})),
            _bash("echo 'alter table;' > migration.sql"),
            _bash(f"printf '{REWRITTEN}' > schema.sql && chmod 600 schema.sql"),
            *after,
        ],
        plan_mode={"confirm_high_risk_steps": True},
    )
    workspace = scene.app.manager.workspace_of("ada")
    (workspace / "schema.sql").write_text(REVIEWED)
    (workspace / "schema.sql").chmod(0o644)
    await scene.ana.slash(scene.channel, "plan start", task="migrate")
    assert (await scene.state()).phase is Phase.SUBMITTED
    await scene.ana.click(scene.plan_message(1), label="Approve")
    return scene, workspace


def _schema(workspace: Path) -> tuple[str, int]:
    path = workspace / "schema.sql"
    return path.read_text(), path.stat().st_mode & 0o777


async def _steps(scene: PlanScene) -> tuple[StepOutcome, ...]:
    record = await ExecutionStore(scene.app.db).latest("ada")
    assert record is not None
    return record.steps


async def test_the_change_waits_undone_and_continue_puts_it_back(plan_scene: Any) -> None:
    scene, workspace = await _waiting(plan_scene, text_turn("done"))
    card = scene.channel.last_message
    assert set(buttons(card)) == {"Continue", "Stop"}
    assert "step 2" in str(card.embeds[0].to_dict())
    assert _schema(workspace) == (REVIEWED, 0o644)  # undone while the card waits
    assert (workspace / "migration.sql").exists()

    await scene.ana.click(card, label="Continue")
    await scene.app.runtime.wait_idle("ada")

    assert _schema(workspace) == (REWRITTEN, 0o600)
    assert await _steps(scene) == (StepOutcome.DONE, StepOutcome.CURRENT)
    record = await ExecutionStore(scene.app.db).latest("ada")
    assert record is not None
    events = await ExecutionStore(scene.app.db).events(record.plan_id)
    assert any(e.step == 2 and "schema.sql" in e.paths for e in events)


async def test_stop_leaves_the_change_undone(plan_scene: Any) -> None:
    scene, workspace = await _waiting(plan_scene, text_turn("I go on anyway"))
    calls = len(scene.world.server.requests)
    await scene.ana.click(scene.channel.last_message, label="Stop")
    await scene.app.runtime.wait_idle("ada")
    assert _schema(workspace) == (REVIEWED, 0o644)
    assert (await scene.state()).phase is Phase.INACTIVE
    assert len(scene.world.server.requests) == calls
    assert await _steps(scene) == (StepOutcome.DONE, StepOutcome.STOPPED)


async def test_a_restart_while_the_card_waits_leaves_the_change_undone(plan_scene: Any) -> None:
    scene, workspace = await _waiting(plan_scene, text_turn("resumed"))
    await scene.restart()
    await scene.app.runtime.wait_idle("ada")
    assert _schema(workspace) == (REVIEWED, 0o644)
    assert (await scene.state()).phase is Phase.INACTIVE
