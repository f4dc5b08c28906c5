"""``/schedule`` through the real bot under SimCord, with SimCord's clock: a weekly schedule
fires, plans and waits for a human (its creator the requester under four-eyes); a run while
the agent is busy is skipped or queued and the channel told; pause, resume, delete and
run-now; a member who may not instruct the agent can make no schedule."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from plancord.core.planning import Phase
from tests.discord_bot.plans import PLAN
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn
from tests.world import PlanScene, private_answer

SUBMIT = tool_turn(ToolCall("submit_plan", {"plan": PLAN}))


async def until(scene: PlanScene, at: datetime) -> None:
    """Move SimCord's clock to just past ``at``."""
    seconds = (at - scene.env.now()).total_seconds()
    await scene.env.advance_time(max(seconds, 0) + 1)


async def create(scene: PlanScene, who: Any = None, **options: Any) -> Any:
    return await (who or scene.ana).slash(scene.channel, "schedule create", **options)


async def only_schedule(scene: PlanScene) -> Any:
    [schedule] = await scene.app.schedules.list(scene.agent)
    return schedule


def texts_with(scene: PlanScene, part: str) -> list[str]:
    return [t for t in scene.bot_texts() if part in t]


async def test_a_weekly_schedule_fires_plans_and_waits_for_a_human(plan_scene: Any) -> None:
    scene: PlanScene = await plan_scene(
        [SUBMIT, text_turn("Waiting for approval.")], plan_mode={"approval": "approver"}
    )
    result = await create(
        scene,
        task="update the dependencies",
        cron="30 1 * * 4",
        timezone="Europe/Berlin",
        note="weekly deps",
    )
    announced = result.response.content
    # SimCord's clock starts on Thursday 2026-01-01 at 00:00 UTC (01:00 in Berlin).
    assert "every Thursday at 01:30 Europe/Berlin" in announced
    assert "Next runs: Thu 2026-01-01 01:30 CET, Thu 2026-01-08 01:30 CET" in announced
    schedule = await only_schedule(scene)
    assert ("schedule-created", f"user:{scene.ana.id}(ana)") in await scene.audit()
    assert (await scene.state()).phase is Phase.INACTIVE

    await until(scene, schedule.next_run_at)

    state = await scene.state()
    assert state.phase is Phase.SUBMITTED
    assert state.requested_by == str(scene.ana.id)
    assert state.task == "update the dependencies"
    footer = scene.plan_message(1).embeds[-1].footer.text or ""
    assert f"requested by ana · schedule {schedule.id}" in footer
    [line] = texts_with(scene, f"Schedule `{schedule.id}` (weekly deps)")
    assert "ada** plans for ana: update the dependencies" in line
    assert "never approves" in line
    audit = await scene.audit()
    assert ("entered", "scheduler") in audit
    assert ("schedule-run", "scheduler") in audit
    assert not any(action == "approved" for action, _ in audit)
    # The creator asked for it: under four-eyes they may not approve it themselves.
    refused = await scene.ana.click(scene.plan_message(1), label="Approve")
    assert "four-eyes" in refused.response.content
    await scene.boss.click(scene.plan_message(1), label="Approve")
    assert (await scene.state()).phase is not Phase.SUBMITTED
    moved = await only_schedule(scene)
    assert (moved.next_run_at - schedule.next_run_at).days == 7


async def test_a_member_who_may_not_instruct_cannot_create_a_schedule(plan_scene: Any) -> None:
    scene: PlanScene = await plan_scene([])
    result = await create(scene, scene.bob, task="exfiltrate", every="1h")
    answer = private_answer(result)
    assert "Only members who may instruct **ada** can create its schedules" in answer.content
    assert await scene.app.schedules.list(scene.agent) == []
    assert ("instruct-refused", f"user:{scene.bob.id}(bob)") in await scene.audit()
