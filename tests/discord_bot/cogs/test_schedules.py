"""``/schedule`` through the real bot under SimCord, with SimCord's clock: a weekly schedule
fires, plans and waits for a human (its creator the requester under four-eyes); a run while
the agent is busy is skipped or queued and the channel told; pause, resume, delete and
run-now; a member who may not instruct the agent can make no schedule."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from datetime import datetime
from pathlib import Path
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
        [SUBMIT, text_turn("On it.")], plan_mode={"approval": "approver"}
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


async def test_a_run_while_the_agent_is_busy_is_skipped_and_the_channel_told(
    plan_scene: Any,
) -> None:
    scene: PlanScene = await plan_scene([SUBMIT])
    await scene.ana.slash(scene.channel, "plan start", task="add a greeting module")
    first = await scene.state()
    assert first.phase is Phase.SUBMITTED
    await create(scene, task="triage", cron="*/15 * * * *")
    schedule = await only_schedule(scene)

    await until(scene, schedule.next_run_at)

    assert (await scene.state()).plan_id == first.plan_id
    [line] = texts_with(scene, "skipped: **ada** is busy (a plan waits for approval)")
    assert f"Schedule `{schedule.id}`" in line and "Next run: Thu 2026-01-01 00:30 UTC" in line
    runs = [a for a in await scene.app.store.list_audit("ada") if a.action == "schedule-run"]
    assert [r.detail["outcome"] for r in runs] == ["skipped-busy"]


async def test_a_queued_run_starts_once_the_agent_is_free(plan_scene: Any) -> None:
    scene: PlanScene = await plan_scene([SUBMIT, SUBMIT])
    await scene.ana.slash(scene.channel, "plan start", task="add a greeting module")
    first = await scene.state()
    await create(scene, task="triage", cron="*/15 * * * *", when_busy="queue")
    schedule = await only_schedule(scene)
    await until(scene, schedule.next_run_at)
    assert texts_with(scene, "queued: **ada** is busy (a plan waits for approval)")

    await scene.ana.slash(scene.channel, "plan reject", reason="not now")
    assert (await scene.state()).phase is Phase.INACTIVE
    await scene.env.advance_time(61)

    state = await scene.state()
    assert state.phase is Phase.SUBMITTED and state.plan_id != first.plan_id
    assert (state.task, state.entry_reason) == ("triage", f"schedule {schedule.id}")
    assert len(texts_with(scene, "plans for ana: triage")) == 1


async def test_runs_missed_while_the_bot_was_down_run_once_at_start(plan_scene: Any) -> None:
    scene: PlanScene = await plan_scene([SUBMIT])
    await create(scene, task="triage", every="15m")
    await scene.world.bot.close()
    await scene.env.advance_time(2 * 3600)
    await scene.restart()

    assert (await scene.state()).phase is Phase.SUBMITTED
    [line] = texts_with(scene, "runs fell due while plancord was down")
    assert "running once now" in line
    audit = await scene.app.store.list_audit("ada")
    assert [a.action for a in audit].count("entered") == 1


async def test_runs_missed_while_the_bot_was_down_are_skipped_when_set(plan_scene: Any) -> None:
    scene: PlanScene = await plan_scene([], config={"schedules": {"missed": "skip"}})
    await create(scene, task="triage", every="15m")
    await scene.world.bot.close()
    await scene.env.advance_time(2 * 3600)
    await scene.restart()

    assert (await scene.state()).phase is Phase.INACTIVE
    [line] = texts_with(scene, "runs fell due while plancord was down")
    assert "skipped (`schedules.missed`)" in line
    runs = [a for a in await scene.app.store.list_audit("ada") if a.action == "schedule-run"]
    assert [r.detail["outcome"] for r in runs] == ["skipped-missed"]


async def test_pause_resume_and_delete_from_discord(plan_scene: Any) -> None:
    scene: PlanScene = await plan_scene([])
    await create(scene, task="triage", cron="*/15 * * * *")
    schedule = await only_schedule(scene)

    refused = private_answer(
        await scene.bob.slash(scene.channel, "schedule pause", schedule=schedule.id)
    )
    assert "can change its schedules" in refused.content
    paused = await scene.ana.slash(scene.channel, "schedule pause", schedule=schedule.id)
    assert paused.response.content == f"⏸️ ana paused schedule `{schedule.id}`."
    await until(scene, schedule.next_run_at)
    assert (await scene.state()).phase is Phase.INACTIVE
    assert not texts_with(scene, "plans for ana")
    listed = await scene.ana.slash(scene.channel, "schedule list")
    assert "(paused)" in listed.response.content

    resumed = await scene.ana.slash(scene.channel, "schedule resume", schedule=schedule.id)
    assert "Next runs: Thu 2026-01-01 00:30 UTC" in resumed.response.content
    deleted = await scene.ana.slash(scene.channel, "schedule delete", schedule=schedule.id)
    assert deleted.response.content == f"🗑️ ana deleted schedule `{schedule.id}`."
    assert await scene.app.schedules.list("ada") == []
    actions = [a for a, _ in await scene.audit()]
    for action in ("schedule-paused", "schedule-resumed", "schedule-deleted"):
        assert action in actions


async def test_run_now_plans_at_once(plan_scene: Any) -> None:
    scene: PlanScene = await plan_scene([SUBMIT])
    await create(scene, task="triage", every="1d")
    schedule = await only_schedule(scene)
    result = await scene.ana.slash(scene.channel, "schedule run-now", schedule=schedule.id)
    assert result.response.content == f"⏰ ana runs schedule `{schedule.id}` now."
    state = await scene.state()
    assert state.phase is Phase.SUBMITTED and state.requested_by == str(scene.ana.id)
    assert (await only_schedule(scene)).next_run_at == schedule.next_run_at


async def test_pause_and_delete_from_the_shell(plan_scene: Any, tmp_path: Path) -> None:
    scene: PlanScene = await plan_scene([])
    await create(scene, task="triage", cron="*/15 * * * *")
    schedule = await only_schedule(scene)
    config = tmp_path / "plancord.yaml"
    config.write_text(f"data_dir: {scene.world.data_dir}\n")

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "plancord.command.main",
                "schedules",
                *args,
                "--config",
                str(config),
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    listed = await asyncio.to_thread(cli, "list")
    assert listed.returncode == 0 and schedule.id in listed.stdout and "active" in listed.stdout
    paused = await asyncio.to_thread(cli, "pause", schedule.id)
    assert paused.returncode == 0, paused.stderr
    assert paused.stdout.startswith(f"paused schedule {schedule.id} of ada")
    await until(scene, schedule.next_run_at)
    assert (await scene.state()).phase is Phase.INACTIVE
    runs = [a for a in await scene.app.store.list_audit("ada") if a.action == "schedule-run"]
    assert runs == []
    unknown = await asyncio.to_thread(cli, "delete", "ffffff")
    assert unknown.returncode == 1 and "There is no schedule `ffffff`" in unknown.stderr
    deleted = await asyncio.to_thread(cli, "delete", schedule.id)
    assert deleted.returncode == 0, deleted.stderr
    assert await scene.app.schedules.list("ada") == []
    assert ("schedule-deleted", "operator") in await scene.audit()


async def test_a_task_that_reads_like_a_schedule_does_not_make_a_plan_a_schedules(
    plan_scene: Any,
) -> None:
    scene: PlanScene = await plan_scene([SUBMIT])
    await scene.ana.slash(scene.channel, "plan start", task="schedule 3fa9c1")
    footer = scene.plan_message(1).embeds[-1].footer.text or ""
    assert footer.endswith("requested by ana")
