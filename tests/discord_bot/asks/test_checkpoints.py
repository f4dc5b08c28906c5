"""Checkpoints on high-risk steps: with ``confirm_high_risk_steps``, the host asks for an
approver's Continue before the first call of a 🔴 step runs, whether or not the agent
announced the step. Stop, no answer, or a restart while the card waits end execution and
the agent's turn: the step never runs, and no further model call is made in that turn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from plancord.core.execution import StepOutcome
from plancord.core.planning import Phase
from plancord.storage.executions import ExecutionStore
from tests.discord_bot.asks.checkpointing import DROP, PLAN, WRITE
from tests.discord_bot.plans import submitted_plan
from tests.e2e.workspace import git_subjects
from tests.fakes.anthropic_server import text_turn
from tests.world import PlanScene, buttons


async def _executing(plan_scene: Any, *after: Any) -> tuple[PlanScene, Path]:
    """Step 1 done, then step 2's tool used without announcing the step."""
    scene = await submitted_plan(
        plan_scene, PLAN, WRITE, DROP, *after, plan_mode={"confirm_high_risk_steps": True}
    )
    await scene.ana.click(scene.plan_message(1), label="Approve")
    return scene, scene.app.manager.workspace_of("ada")


async def _outcomes(scene: PlanScene) -> tuple[StepOutcome, ...]:
    record = await ExecutionStore(scene.app.db).latest("ada")
    assert record is not None
    return record.steps


async def test_the_card_comes_before_the_unannounced_step_runs(plan_scene: Any) -> None:
    scene, workspace = await _executing(plan_scene, text_turn("stopped"))
    card = scene.channel.last_message
    assert set(buttons(card)) == {"Continue", "Stop"}
    assert "step 2" in str(card.embeds[0].to_dict())
    assert (workspace / "migration.sql").exists()
    assert not (workspace / "dropped").exists()
    assert (await scene.state()).phase is Phase.EXECUTING


async def test_stop_ends_execution_and_the_turn_with_no_further_model_call(
    plan_scene: Any,
) -> None:
    scene, workspace = await _executing(plan_scene, text_turn("I will go on anyway"))
    calls = len(scene.world.server.requests)

    await scene.ana.click(scene.channel.last_message, label="Stop")
    await scene.app.runtime.wait_idle("ada")

    assert not (workspace / "dropped").exists()
    assert (await scene.state()).phase is Phase.INACTIVE
    assert len(scene.world.server.requests) == calls
    assert await _outcomes(scene) == (StepOutcome.DONE, StepOutcome.STOPPED)
    # The next message starts outside execution.
    await scene.ana.send(scene.channel, "what now?")
    await scene.app.runtime.wait_idle("ada")
    assert (await scene.state()).phase is Phase.INACTIVE
    last = scene.world.server.requests[-1]["messages"]
    assert "do not continue the plan" in str(last)


async def test_continue_lets_the_step_run_and_commits_step_one(plan_scene: Any) -> None:
    scene, workspace = await _executing(plan_scene, text_turn("done"))
    await scene.ana.click(scene.channel.last_message, label="Continue")
    await scene.app.runtime.wait_idle("ada")
    assert (workspace / "dropped").exists()
    record = await ExecutionStore(scene.app.db).latest("ada")
    assert record is not None and record.current_step == 1
    assert record.steps == (StepOutcome.DONE, StepOutcome.CURRENT)
    assert git_subjects(workspace)[0] == "Write the migration"


async def test_a_restart_while_the_checkpoint_waits_ends_execution(plan_scene: Any) -> None:
    scene, workspace = await _executing(plan_scene, text_turn("resumed"))
    calls = len(scene.world.server.requests)

    await scene.restart()
    await scene.app.runtime.wait_idle("ada")

    assert not (workspace / "dropped").exists()
    assert (await scene.state()).phase is Phase.INACTIVE
    assert len(scene.world.server.requests) == calls
    assert await _outcomes(scene) == (StepOutcome.DONE, StepOutcome.STOPPED)
    assert any("checkpoint of high-risk step 2 waited" in t for t in scene.bot_texts())
