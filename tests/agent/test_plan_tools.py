"""The plan tools driving the real PlanningService over a real SQLite store."""

from __future__ import annotations

from typing import Any

from plancord.agent.tools.base import ToolContext
from plancord.agent.tools.plan import (
    CompletePlanTool,
    EnterPlanModeTool,
    SubmitPlanTool,
    UpdatePlanStepTool,
)
from plancord.core.planning import Phase, PlanRef, StepStatus
from plancord.core.service import PlanningService

from .conftest import REQUESTER, FakeNotifier, MakeCtx, call

ENTER, SUBMIT = EnterPlanModeTool(), SubmitPlanTool()
UPDATE, COMPLETE = UpdatePlanStepTool(), CompletePlanTool()

GOOD_PLAN: dict[str, Any] = {
    "summary": "Rename the config loader",
    "steps": [
        {
            "description": "Rename load_config to read_config in src/config.py",
            "tools": ["str_replace"],
        },
        {"description": "Run the tests", "tools": ["bash_execute"], "risk": "low"},
        {"description": "Commit", "tools": ["git_commit"], "risk": "medium"},
    ],
    "questions": ["Keep the old name as an alias?"],
}


async def approve(service: PlanningService, agent: str) -> None:
    state = (await service.status(agent)).state
    assert state.plan_id is not None
    ref = PlanRef(
        agent=agent, plan_id=state.plan_id, revision=state.revision, sha256=state.plan_sha
    )
    await service.approve(ref, REQUESTER)


async def test_enter_plan_mode(
    ctx: ToolContext, service: PlanningService, agent: str, fake_notifier: FakeNotifier
) -> None:
    result = await call(ENTER, ctx, reason="touches the database schema")
    assert not result.is_error
    assert "now in plan mode (read-only)" in result.content
    assert "submit_plan" in result.content
    state = (await service.status(agent)).state
    assert state.phase is Phase.GATHERING
    assert state.entry_reason == "touches the database schema"
    assert state.task == "touches the database schema"
    assert state.requested_by == REQUESTER.id
    assert fake_notifier.said == [
        (agent, "I'd like to plan this out before proceeding. Reason: touches the database schema")
    ]


async def test_enter_while_planning_reports_the_phase(
    ctx: ToolContext, fake_notifier: FakeNotifier
) -> None:
    await call(ENTER, ctx, reason="first")
    again = await call(ENTER, ctx, reason="second")
    assert not again.is_error
    assert "already in plan mode (phase: gathering)" in again.content
    await call(SUBMIT, ctx, plan=GOOD_PLAN)
    waiting = await call(ENTER, ctx, reason="third")
    assert "phase: submitted" in waiting.content
    assert len(fake_notifier.said) == 1


async def test_enter_in_a_run_nobody_can_answer_is_refused(
    make_ctx: MakeCtx, service: PlanningService, agent: str
) -> None:
    result = await call(ENTER, make_ctx(interactive=False), reason="big change")
    assert result.is_error
    assert "nobody can answer" in result.content
    assert (await service.status(agent)).state.phase is Phase.INACTIVE


async def test_submit_a_bad_plan_then_a_good_one(
    ctx: ToolContext, service: PlanningService, agent: str
) -> None:
    await call(ENTER, ctx, reason="refactor")
    no_steps = await call(SUBMIT, ctx, plan={"summary": "Do it", "steps": []})
    assert no_steps.is_error
    assert "steps: give at least 1 step" in no_steps.content
    bad_risk = await call(
        SUBMIT, ctx, plan={"summary": "Do it", "steps": [{"description": "x", "risk": "huge"}]}
    )
    assert bad_risk.is_error
    assert "steps[0].risk" in bad_risk.content
    assert (await service.status(agent)).state.phase is Phase.GATHERING

    good = await call(SUBMIT, ctx, plan=GOOD_PLAN)
    assert not good.is_error
    status = await service.status(agent)
    assert status.state.phase is Phase.SUBMITTED
    assert status.revision is not None
    assert good.content == (
        f"Plan v1 (sha {status.revision.sha8}) submitted; wait for the human's decision."
    )


async def test_submit_accepts_a_plan_sent_as_json_text(
    ctx: ToolContext, service: PlanningService, agent: str
) -> None:
    await call(ENTER, ctx, reason="r")
    result = await call(SUBMIT, ctx, plan='{"summary": "S", "steps": [{"description": "d"}]}')
    assert not result.is_error
    assert (await service.status(agent)).state.phase is Phase.SUBMITTED


async def test_submit_outside_plan_mode_is_an_error(ctx: ToolContext) -> None:
    result = await call(SUBMIT, ctx, plan=GOOD_PLAN)
    assert result.is_error
    assert "Cannot submit a plan" in result.content


async def test_execute_steps_and_complete(
    ctx: ToolContext, service: PlanningService, agent: str
) -> None:
    await call(ENTER, ctx, reason="r")
    await call(SUBMIT, ctx, plan=GOOD_PLAN)
    await approve(service, agent)

    started = await call(UPDATE, ctx, step=1, status="in_progress")
    assert started.content == "Step 1 marked in_progress; 0 of 3 finished."
    done = await call(UPDATE, ctx, step=1, status="done", note="renamed in 3 files")
    assert done.content == "Step 1 marked done; 1 of 3 finished."
    state = (await service.status(agent)).state
    assert state.steps[0].status is StepStatus.DONE
    assert state.steps[0].note == "renamed in 3 files"
    missing = await call(UPDATE, ctx, step=7, status="done")
    assert missing.is_error
    assert "no step 7" in missing.content
    await call(UPDATE, ctx, step=2, status="skipped", note="no tests")

    completed = await call(COMPLETE, ctx, summary="Renamed; tests not run.")
    assert not completed.is_error
    assert completed.content == (
        "Plan complete; plan mode is over. Steps 3 were not marked done or skipped."
    )
    assert (await service.status(agent)).state.phase is Phase.INACTIVE


async def test_last_step_suggests_completing(
    ctx: ToolContext, service: PlanningService, agent: str
) -> None:
    await call(ENTER, ctx, reason="r")
    await call(SUBMIT, ctx, plan={"summary": "S", "steps": [{"description": "only"}]})
    await approve(service, agent)
    result = await call(UPDATE, ctx, step=1, status="done")
    assert result.content.endswith("call complete_plan with a summary.")


async def test_progress_tools_need_an_approved_plan(ctx: ToolContext) -> None:
    step = await call(UPDATE, ctx, step=1, status="done")
    assert step.is_error
    assert "while an approved plan is being executed" in step.content
    complete = await call(COMPLETE, ctx, summary="done")
    assert complete.is_error
    assert "Cannot complete the plan" in complete.content
