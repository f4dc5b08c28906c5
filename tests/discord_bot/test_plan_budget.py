"""A plan's budget: once what the plan cost (planning and execution) reaches
``budget_usd`` / ``budget_tokens``, execution stops before the next model call, by policy,
audited, with a notice in the channel and the finished steps kept."""

from __future__ import annotations

from typing import Any

from plancord.core.planning import Phase, StepStatus
from tests.discord_bot.plans import submitted_plan
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn

PLAN = {
    "summary": "Write two notes",
    "steps": [
        {"description": "Write the first note", "files": ["one.md"]},
        {"description": "Write the second note", "files": ["two.md"]},
    ],
}
EXECUTION = [
    tool_turn(ToolCall("create_file", {"path": "one.md", "content": "one\n"})),
    tool_turn(ToolCall("update_plan_step", {"step": 1, "status": "done"})),
    tool_turn(ToolCall("create_file", {"path": "two.md", "content": "two\n"})),
    tool_turn(ToolCall("update_plan_step", {"step": 2, "status": "done"})),
    tool_turn(ToolCall("complete_plan", {"summary": "Both notes written."})),
    text_turn("Done."),
]
PRICES = {"claude-sonnet-5-5": {"input": 3.0, "output": 15.0}}


async def _set_budget(scene: Any, **budget: Any) -> None:
    record = await scene.app.store.get_agent("ada")
    await scene.app.store.update_agent(record.model_copy(update={"plan_mode_overrides": budget}))


async def _tokens_so_far(scene: Any) -> int:
    usage = await scene.app.conversations.usage("ada")
    return int(sum(u.billed_input() + u.output_tokens for u in usage))


async def test_a_spent_token_budget_stops_execution_with_the_steps_kept(
    plan_scene: Any,
) -> None:
    scene = await submitted_plan(plan_scene, PLAN, *EXECUTION)
    planning_calls = len(scene.world.server.requests)
    # Room for one execution call and not two: planning, then one call, spend the budget.
    await _set_budget(scene, budget_tokens=await _tokens_so_far(scene) + 1)

    await scene.ana.click(scene.plan_message(1), label="Approve")
    await scene.app.runtime.wait_idle("ada")

    workspace = scene.app.manager.workspace_of("ada")
    assert (workspace / "one.md").exists()
    assert not (workspace / "two.md").exists()
    assert len(scene.world.server.requests) == planning_calls + 1
    state = await scene.state()
    assert state.phase is Phase.INACTIVE
    audit = await scene.app.store.list_audit("ada")
    completed = [a for a in audit if a.action == "completed"]
    assert completed[-1].actor == "policy:budget"
    assert "budget of" in completed[-1].detail["summary"]
    assert completed[-1].detail["steps"] == [StepStatus.PENDING.value] * 2
    notice = [t for t in scene.bot_texts() if t.startswith("💸 Execution stopped")]
    assert notice and "tokens is spent" in notice[0]


async def test_a_dollar_budget_counts_at_the_configured_prices(plan_scene: Any) -> None:
    scene = await submitted_plan(
        plan_scene, PLAN, *EXECUTION, config={"anthropic": {"prices": PRICES}}
    )
    await _set_budget(scene, budget_usd=1000.0)

    await scene.ana.click(scene.plan_message(1), label="Approve")
    await scene.app.runtime.wait_idle("ada")

    workspace = scene.app.manager.workspace_of("ada")
    assert (workspace / "two.md").exists()  # well within budget: the plan ran to the end
    completed = [a for a in await scene.app.store.list_audit("ada") if a.action == "completed"]
    assert completed[-1].actor == "agent:ada"


async def test_a_spent_dollar_budget_stops_before_the_first_change(plan_scene: Any) -> None:
    tight = await submitted_plan(
        plan_scene, PLAN, *EXECUTION, config={"anthropic": {"prices": PRICES}}
    )
    await _set_budget(tight, budget_usd=0.000001)
    await tight.ana.click(tight.plan_message(1), label="Approve")
    await tight.app.runtime.wait_idle("ada")
    assert not (tight.app.manager.workspace_of("ada") / "one.md").exists()
    assert any("$0.00 is spent" in t for t in tight.bot_texts())


async def test_a_dollar_budget_without_a_price_stops_rather_than_runs_unchecked(
    plan_scene: Any,
) -> None:
    scene = await submitted_plan(plan_scene, PLAN, *EXECUTION)
    planning_calls = len(scene.world.server.requests)
    await _set_budget(scene, budget_usd=5.0)

    await scene.ana.click(scene.plan_message(1), label="Approve")
    await scene.app.runtime.wait_idle("ada")

    assert len(scene.world.server.requests) == planning_calls
    assert not (scene.app.manager.workspace_of("ada") / "one.md").exists()
    assert (await scene.state()).phase is Phase.INACTIVE
    assert any("no price is configured" in t for t in scene.bot_texts())
