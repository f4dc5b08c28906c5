"""The demo's story and its variants, end to end through the real bot under SimCord: what the
channel shows, what the model was told, and what ends up on disk and in the audit log."""

from __future__ import annotations

import json
from typing import Any

from plancord.core.planning import Phase
from plancord.demo import GREET, PLAN, TASK, demo_script, executing_turns, exploring_turns
from plancord.testing.anthropic_server import ToolCall, text_turn, tool_turn
from tests.e2e.workspace import empty_commits, git_subjects, workspace_of
from tests.world import PlanScene, buttons

SEEDED = ["Add app.py", "Initial commit"]
# The plan ran on its own branch, one commit per step that changed something: step 1 wrote
# greet.py and the agent's own commit ended it, so its message names the step's commit;
# step 2 changed nothing, so it has no commit.
STEP_COMMITS = ["Add greeting module"]
PLAN_V2 = {
    **PLAN,
    "summary": "Add a greeting module with a default name",
    "steps": [
        {
            "description": "Create greet.py with hello(name='world')",
            "tools": ["create_file"],
            "risk": "low",
        },
        {"description": "Commit it", "tools": ["git_commit"], "risk": "medium"},
    ],
}
REFUSAL = "Only the requester (ana) or server administrators can {} this plan."


def tool_results(scene: PlanScene) -> list[dict[str, Any]]:
    """Every tool_result the bot sent the model, in order (the last request holds them all)."""
    messages = scene.world.server.requests[-1]["messages"]
    return [
        block
        for message in messages
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


def approver(audit: list[tuple[str, str]], action: str) -> str:
    return next(actor for done, actor in audit if done == action)


async def started(story: Any, script: Any, **options: Any) -> PlanScene:
    scene: PlanScene = await story(script, **options)
    response = await scene.ana.slash(scene.channel, "plan start", task=TASK)
    assert response.response.content.startswith(f"📝 ana put **ada** in plan mode: {TASK}")
    assert (await scene.state()).phase is Phase.SUBMITTED
    return scene


async def test_the_demo_story(story: Any) -> None:
    scene = await started(story, demo_script())

    results = tool_results(scene)
    assert [r.get("is_error", False) for r in results[:3]] == [False, False, False]
    assert "hello-service" in str(results[0]["content"])
    refusal = json.loads(results[3]["content"])
    assert (refusal["error"], refusal["tool_name"], refusal["tool_kind"]) == (
        "plan_mode_refusal",
        "create_file",
        "mutating",
    )
    assert not (workspace_of(scene) / "greet.py").exists()
    assert any("✗ create_file(greet.py)" in text for text in scene.bot_texts())
    assert "Here is my plan." in scene.bot_texts()

    message = scene.plan_message(1)
    embed = message.embeds[0]
    revision = await scene.app.planning.current_revision("ada")
    assert revision is not None
    assert embed.title == "Plan: Add a greeting module"
    assert [(f.name, f.value) for f in embed.fields] == [
        ("🟢 Step 1 · low risk", "Create greet.py with hello(name)\nTools: `create_file`"),
        ("🟡 Step 2 · medium risk", "Commit it\nTools: `git_commit`"),
    ]
    assert embed.footer.text == f"v1 · {revision.sha8} · requested by ana"
    assert message.content == f"<@{scene.ana.id}>, **ada** submitted plan v1 for review."

    refused = await scene.bob.click(message, label="Approve")
    assert refused.ephemeral
    assert refused.response.content == REFUSAL.format("approve")
    assert (await scene.state()).phase is Phase.SUBMITTED

    approved = await scene.ana.click(message, label="Approve")
    assert approved.ephemeral
    assert approved.response.content.startswith(f"Approved plan v1 ({revision.sha8})")

    assert not any(buttons(scene.plan_message(1)).values())
    progress = scene.progress_message()
    assert progress.embeds[0].title == "Plan v1 complete: Add a greeting module"
    assert progress.embeds[0].description == (
        "✅ 1. Create greet.py with hello(name)\n✅ 2. Commit it"
    )
    assert scene.bot_texts()[-2:] == [
        "✅ Plan v1 complete: Add a greeting module\n> plan v1: greet.py committed",
        "Done: greet.py is committed.",
    ]
    assert (workspace_of(scene) / "greet.py").read_text() == GREET
    assert git_subjects(workspace_of(scene)) == [*STEP_COMMITS, *SEEDED]
    assert empty_commits(workspace_of(scene)) == []
    [committed] = [r for r in tool_results(scene) if "Committed the work of step" in str(r)]
    assert not committed.get("is_error", False)
    assert not any("Nothing to commit" in str(r) for r in tool_results(scene))
    assert not any("Nothing to commit" in text for text in scene.bot_texts())
    assert [action for action, _ in await scene.audit()] == [
        "agent-created",
        "entered",
        "submitted",
        "decision-refused",  # bob's click
        "approved",
        "step-updated",
        "step-updated",
        "step-updated",
        "completed",
    ]
    assert approver(await scene.audit(), "approved") == f"user:{scene.ana.id}(ana)"
    assert (await scene.state()).phase is Phase.INACTIVE
    assert scene.world.server.rejections == []
    assert not scene.world.server.script_exhausted


async def test_edit_then_approve_the_second_revision(story: Any) -> None:
    scene = await started(
        story,
        [
            *exploring_turns(),
            tool_turn(ToolCall("submit_plan", {"plan": PLAN_V2}), text="Revised."),
            *executing_turns(2),
        ],
    )
    first = scene.plan_message(1)

    shown = await scene.ana.click(first, label="Edit")
    assert shown.modal is not None
    sent = await scene.ana.submit_modal(shown, {"feedback": "default the name to world"})
    assert sent.response.content == "Sent plan v1 back to **ada** with your feedback."

    second = scene.plan_message(2)
    assert second.embeds[0].title == "Plan: Add a greeting module with a default name"
    assert (second.embeds[0].footer.text or "").startswith("v2 · ")
    assert not any(buttons(scene.plan_message(1)).values())

    approved = await scene.ana.click(second, label="Approve")
    assert approved.response.content.startswith("Approved plan v2")
    assert scene.progress_message().embeds[0].title == (
        "Plan v2 complete: Add a greeting module with a default name"
    )
    assert scene.bot_texts()[-2] == (
        "✅ Plan v2 complete: Add a greeting module with a default name\n"
        "> plan v2: greet.py committed"
    )
    assert git_subjects(workspace_of(scene)) == ["Add greeting module", *SEEDED]
    actions = [action for action, _ in await scene.audit()]
    assert actions.count("submitted") == 2
    assert actions.count("approved") == 1
    assert actions[-1] == "completed"
    assert (await scene.state()).phase is Phase.INACTIVE


async def test_reject(story: Any) -> None:
    scene = await started(story, [*exploring_turns(), text_turn("Understood, I will stop.")])
    message = scene.plan_message(1)

    form = await scene.bob.click(message, label="Reject")  # opens before anything is read
    refused = await scene.bob.submit_modal(form, {"reason": "mine"})
    assert refused.response.content == REFUSAL.format("reject")
    shown = await scene.ana.click(message, label="Reject")
    assert shown.modal is not None
    rejected = await scene.ana.submit_modal(shown, {"reason": "Not this sprint"})

    assert rejected.response.content == "Rejected plan v1; nothing will be executed."
    decided = scene.plan_message(1)
    assert not any(buttons(decided).values())
    assert (decided.embeds[0].description or "").startswith("❌ **Rejected** by ana")
    assert (await scene.state()).phase is Phase.INACTIVE
    assert approver(await scene.audit(), "rejected") == f"user:{scene.ana.id}(ana)"
    assert not (workspace_of(scene) / "greet.py").exists()
    assert git_subjects(workspace_of(scene)) == SEEDED


async def test_the_approval_deadline_passes(story: Any) -> None:
    scene = await started(story, exploring_turns(), plan_mode={"approval_timeout": "10m"})

    await scene.env.advance_time(9 * 60)
    assert (await scene.state()).phase is Phase.SUBMITTED
    await scene.env.advance_time(61)

    assert (await scene.state()).phase is Phase.INACTIVE
    message = scene.plan_message(1)
    assert not any(buttons(message).values())
    assert (message.embeds[0].description or "").startswith("⌛ **Timed out")
    assert scene.bot_texts()[-1] == (
        "⌛ Plan v1 for **ada** got no decision in time — planning cancelled. Nothing was changed."
    )
    assert (await scene.audit())[-1] == ("timed-out", "scheduler")
    assert not (workspace_of(scene) / "greet.py").exists()
    assert git_subjects(workspace_of(scene)) == SEEDED


async def test_a_restart_while_waiting_for_approval(story: Any) -> None:
    scene = await started(story, demo_script())
    message = scene.plan_message(1)

    await scene.restart()

    assert [m.id for m in scene.plan_messages()] == [message.id]
    assert (await scene.state()).phase is Phase.SUBMITTED
    refused = await scene.bob.click(message, label="Approve")
    assert refused.response.content == REFUSAL.format("approve")
    approved = await scene.ana.click(message, label="Approve")
    assert approved.response.content.startswith("Approved plan v1")

    assert scene.progress_message().embeds[0].title == "Plan v1 complete: Add a greeting module"
    assert (workspace_of(scene) / "greet.py").read_text() == GREET
    assert git_subjects(workspace_of(scene)) == [*STEP_COMMITS, *SEEDED]
    assert (await scene.state()).phase is Phase.INACTIVE
