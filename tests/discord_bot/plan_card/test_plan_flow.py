"""The plan cycle as people in the channel live it: ``/plan start``, the agent explores and
submits, the plan message with its buttons, a decision, execution progress, completion; and
Edit into a second revision, whose predecessor refuses stale clicks with a pointer."""

from __future__ import annotations

from typing import Any

from plancord.core.planning import Actor, ApprovalMode, Phase
from plancord.discord_bot.plan_card.buttons import plan_buttons
from plancord.storage.plan_messages import MessageStatus
from tests.discord_bot.plans import (
    ALL_BUTTONS,
    PLAN,
    PLAN_V2,
    assert_within_limits,
    fifty_step_plan,
    submitted,
    submitted_plan,
)
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn
from tests.requests_seen import last_user
from tests.world import PlanScene, buttons

EXECUTE = [
    tool_turn(
        ToolCall("update_plan_step", {"step": 1, "status": "in_progress"}),
        ToolCall("create_file", {"path": "greet.py", "content": "def hello():\n    return 'hi'\n"}),
    ),
    tool_turn(
        ToolCall("update_plan_step", {"step": 1, "status": "done"}),
        ToolCall("git_commit", {"message": "Add greeting module"}),
        ToolCall("update_plan_step", {"step": 2, "status": "done"}),
    ),
    tool_turn(ToolCall("complete_plan", {"summary": "greet.py added and committed"})),
    text_turn("Done: greet.py is committed."),
]


async def test_start_submit_approve_progress_complete(plan_scene: Any) -> None:
    scene: PlanScene = await plan_scene(
        [
            tool_turn(ToolCall("glob", {"pattern": "*"})),
            tool_turn(ToolCall("submit_plan", {"plan": PLAN}), text="Here is my plan."),
            *EXECUTE,
        ]
    )

    started = await scene.ana.slash(scene.channel, "plan start", task="add a greeting module")

    assert not started.ephemeral
    assert started.response.content.startswith("📝 ana put **ada** in plan mode: add a greeting")
    message = scene.plan_message()
    embed = message.embeds[0]
    assert embed.title == "Plan: Add a greeting module"
    revision = await scene.app.planning.current_revision("ada")
    assert revision is not None
    assert embed.footer.text == f"v1 · {revision.sha8} · requested by ana"
    assert [f.name for f in embed.fields] == [
        "🟢 Step 1 · low risk",
        "🟡 Step 2 · medium risk",
        "❓ Open questions",
    ]
    assert embed.fields[0].value == "Create greet.py with hello()\nTools: `create_file`"
    assert "The workspace holds only the initial commit." in (embed.description or "")
    assert buttons(message) == ALL_BUTTONS
    assert message.content == f"<@{scene.ana.id}>, **ada** submitted plan v1 for review."
    assert scene.pinged(message) == [scene.ana.id]
    assert not message.attachments
    assert (await scene.state()).phase is Phase.SUBMITTED
    record = await scene.record(revision.plan_id, 1)
    assert (record.message_id, record.status) == (message.id, MessageStatus.PENDING)

    clicked = await scene.ana.click(message, label="Approve")

    assert clicked.ephemeral
    assert clicked.response.content.startswith("Approved plan v1")
    decided = scene.plan_message(1)
    assert not any(buttons(decided).values())
    assert "approved by ana" in (decided.embeds[0].footer.text or "")
    assert (decided.embeds[0].description or "").startswith("✅ **Approved** by ana")
    progress = scene.progress_message()
    assert progress.embeds[0].title == "Plan v1 complete: Add a greeting module"
    assert progress.embeds[0].description == ("✅ 1. Create greet.py with hello()\n✅ 2. Commit it")
    edits = scene.patches(progress.id)
    assert 1 <= len(edits) <= 4
    assert "Plan v1 complete" in str(edits[-1])
    assert scene.bot_texts()[-2:] == [
        "✅ Plan v1 complete: Add a greeting module\n> greet.py added and committed",
        "Done: greet.py is committed.",
    ]
    assert all(scene.pinged(m) == [] for m in scene.bot_messages() if m.id != message.id)
    assert (await scene.state()).phase is Phase.INACTIVE
    assert (scene.app.manager.workspace_of("ada") / "greet.py").exists()
    actions = [a for a, _ in await scene.audit()]
    assert actions.count("approved") == 1
    assert actions[-1] == "completed"
    record = await scene.record(revision.plan_id, 1)
    assert record.status is MessageStatus.DECIDED
    assert (record.outcome, record.outcome_by) == ("approved", "ana")
    assert record.progress_message_id == progress.id


async def test_edit_makes_revision_two_and_supersedes_the_first(plan_scene: Any) -> None:
    scene = await submitted(
        plan_scene,
        tool_turn(ToolCall("submit_plan", {"plan": PLAN_V2})),
        text_turn("Working on it."),
    )
    first = scene.plan_message(1)

    shown = await scene.ana.click(first, label="Edit")
    assert shown.modal is not None
    assert shown.modal["title"] == "Edit plan v1"
    typo = await scene.ana.submit_modal(shown, {"feedback": "name it", "step": "one"})
    assert typo.response.content == "The step must be a number such as 2, not 'one'."
    assert (await scene.state()).phase is Phase.SUBMITTED
    shown = await scene.ana.click(first, label="Edit")
    sent = await scene.ana.submit_modal(
        shown, {"feedback": "hello() should greet someone by name", "step": "1"}
    )

    assert sent.ephemeral
    assert sent.response.content == "Sent plan v1 back to **ada** with your feedback."
    assert (
        "✏️ ana asked for changes to plan v1 (step 1):\n> hello() should greet someone by name\n"
        "**ada** is revising the plan; v2 will be posted here."
    ) in scene.bot_texts()
    second = scene.plan_message(2)
    assert second.embeds[0].title == "Plan: Add a greeting module with a name"
    assert buttons(second) == ALL_BUTTONS
    old = scene.plan_message(1)
    assert not any(buttons(old).values())
    description = old.embeds[0].description or ""
    assert description.startswith("✏️ **Changes requested** by ana")
    assert ": hello() should greet someone by name" in description
    assert f"⏭ **Superseded by [v2]({second.jump_url})**" in description
    assert "superseded by v2" in (old.embeds[-1].footer.text or "")
    revision = await scene.app.planning.current_revision("ada")
    assert revision is not None and revision.revision == 2
    assert (await scene.record(revision.plan_id, 1)).status is MessageStatus.SUPERSEDED
    assert (await scene.record(revision.plan_id, 2)).status is MessageStatus.PENDING
    request = last_user(scene.world.server.requests[1])["content"]
    assert any("hello() should greet someone by name" in b.get("text", "") for b in request)

    approved = await scene.ana.click(second, label="Approve")

    assert approved.response.content.startswith("Approved plan v2")
    state = await scene.state()
    assert (state.phase, state.revision) == (Phase.EXECUTING, 2)
    assert [a for a, _ in await scene.audit()].count("approved") == 1


async def test_a_stale_client_clicking_the_old_revision_is_pointed_at_the_new_one(
    plan_scene: Any,
) -> None:
    scene = await submitted(plan_scene, tool_turn(ToolCall("submit_plan", {"plan": PLAN_V2})))
    first = scene.plan_message(1)
    scene.env.inject_error("PATCH", f"/channels/*/messages/{first.id}", status=500, times=None)
    await scene.ana.slash(scene.channel, "plan edit", feedback="greet by name")
    second = scene.plan_message(2)
    assert buttons(scene.plan_message(1)) == ALL_BUTTONS
    audit = await scene.audit()

    refused = await scene.ana.click(first, label="Approve")

    assert refused.ephemeral
    assert refused.response.content == (
        "Plan v1 was superseded by v2; decide on v2 instead.\n"
        f"The current plan (v2): {second.jump_url}"
    )
    assert [e for e in await scene.audit() if e[0] != "decision-refused"] == audit
    assert (await scene.state()).phase is Phase.SUBMITTED


async def test_reject_with_a_reason(plan_scene: Any) -> None:
    scene = await submitted(plan_scene, text_turn("Understood."))
    message = scene.plan_message(1)

    shown = await scene.ana.click(message, label="Reject")
    assert shown.modal is not None
    rejected = await scene.ana.submit_modal(shown, {"reason": "Not this sprint"})

    assert rejected.response.content == "Rejected plan v1; nothing will be executed."
    decided = scene.plan_message(1)
    assert not any(buttons(decided).values())
    assert (decided.embeds[0].description or "").startswith("❌ **Rejected** by ana")
    assert "Not this sprint" in (decided.embeds[0].description or "")
    assert "rejected by ana" in (decided.embeds[-1].footer.text or "")
    assert (await scene.state()).phase is Phase.INACTIVE
    audit = await scene.app.store.list_audit("ada")
    assert audit[-1].action == "rejected"
    assert audit[-1].detail["reason"] == "Not this sprint"
    revision = await scene.app.store.get_revision(audit[-1].plan_id or "", 1)
    assert revision is not None
    record = await scene.record(revision.plan_id, 1)
    assert (record.outcome, record.outcome_note) == ("rejected", "Not this sprint")


async def test_only_an_approver_may_decide(plan_scene: Any) -> None:
    scene = await submitted(plan_scene, text_turn("On it."))
    message = scene.plan_message(1)
    audit = await scene.audit()
    state = await scene.state()
    refusal = "Only the requester (ana) or server administrators can {} this plan."

    refused = await scene.bob.click(message, label="Approve")
    assert refused.ephemeral
    assert refused.response.content == refusal.format("approve")
    # A form opens before anything is read; the refusal comes when it is submitted.
    for label, verb, values in (
        ("Edit", "edit", {"feedback": "my way"}),
        ("Reject", "reject", {"reason": "no"}),
    ):
        shown = await scene.bob.click(message, label=label)
        assert shown.modal is not None
        refused = await scene.bob.submit_modal(shown, values)
        assert refused.ephemeral
        assert refused.response.content == refusal.format(verb)
    refused = await scene.bob.click(message, label="Approve, fresh context")
    assert refused.response.content == refusal.format("approve")
    refusals = [actor for action, actor in await scene.audit() if action == "decision-refused"]
    assert len(refusals) == 4
    assert all("bob" in actor for actor in refusals)

    assert [e for e in await scene.audit() if e[0] != "decision-refused"] == audit
    assert await scene.state() == state
    assert buttons(scene.plan_message(1)) == ALL_BUTTONS

    approved = await scene.boss.click(message, label="Approve")
    assert approved.response.content.startswith("Approved plan v1")
    assert (await scene.state()).approved_by_name == "boss"


async def test_a_double_click_approves_once(plan_scene: Any) -> None:
    scene = await submitted(plan_scene, text_turn("On it."))
    message = scene.plan_message(1)
    scene.env.inject_error("PATCH", f"/channels/*/messages/{message.id}", status=500, times=None)

    first = await scene.ana.click(message, label="Approve")
    second = await scene.ana.click(message, label="Approve")

    assert first.response.content.startswith("Approved plan v1")
    assert second.ephemeral
    assert second.response.content == "Plan v1 was already approved by ana."
    actions = [a for a, _ in await scene.audit()]
    assert actions.count("approved") == 1
    assert (await scene.state()).phase is Phase.EXECUTING


async def test_progress_shows_the_running_step_and_cancel_finalises_it(plan_scene: Any) -> None:
    scene = await submitted(
        plan_scene,
        tool_turn(
            ToolCall("update_plan_step", {"step": 1, "status": "in_progress"}),
            ToolCall("create_file", {"path": "greet.py", "content": "x = 1\n"}),
        ),
    )
    message = scene.plan_message(1)

    await scene.ana.click(message, label="Approve, confirm each edit")

    state = await scene.state()
    assert state.approval_mode is ApprovalMode.CONFIRM_EACH_EDIT
    assert "confirm each edit" in (scene.plan_message(1).embeds[0].description or "")
    progress = scene.progress_message()
    assert progress.embeds[0].title == "Executing plan v1: Add a greeting module"
    assert progress.embeds[0].description == "⏳ 1. Create greet.py with hello()\n⬜ 2. Commit it"
    assert "confirm each edit" in (progress.embeds[0].footer.text or "")
    ask = scene.bot_messages()[-1]
    assert buttons(ask) == {"Allow": True, "Deny": True}

    cancelled = await scene.ana.slash(scene.channel, "plan cancel")
    await scene.ana.click(ask, label="Deny")

    assert cancelled.response.content == "Cancelled plan mode for **ada**."
    final = scene.progress_message()
    assert final.embeds[0].title == "Plan v1 cancelled by ana: Add a greeting module"
    assert "⏳ 1. Create greet.py" in (final.embeds[0].description or "")
    assert (
        "🚫 Execution of the approved plan was cancelled by ana; **ada** stops."
        in scene.bot_texts()
    )
    assert (await scene.state()).phase is Phase.INACTIVE
    assert not (scene.app.manager.workspace_of("ada") / "greet.py").exists()


async def test_a_fifty_step_plan_is_posted_within_limits_with_the_full_file(
    plan_scene: Any,
) -> None:
    plan = fifty_step_plan()
    scene = await submitted_plan(plan_scene, plan.model_dump(mode="json"))

    message = scene.plan_message(1)

    assert_within_limits(message.embeds)
    assert len([f for e in message.embeds for f in e.fields if " Step " in (f.name or "")]) == 50
    assert "The whole plan is attached as `plan-v1.md`" in (message.embeds[0].description or "")
    [attachment] = message.attachments
    assert attachment.filename == "plan-v1.md"
    revision = await scene.app.planning.current_revision("ada")
    assert revision is not None
    assert (await attachment.read()).decode() == revision.markdown
    approved = await scene.ana.click(message, label="Approve")
    assert approved.response.content.startswith("Approved plan v1")
    assert scene.plan_message(1).attachments[0].filename == "plan-v1.md"
    assert_within_limits(scene.progress_message().embeds)


async def test_buttons_work_only_in_the_agent_channel(plan_scene: Any) -> None:
    scene = await submitted(plan_scene)
    revision = await scene.app.planning.current_revision("ada")
    assert revision is not None
    other = scene.guild.create_text_channel("bea")
    await scene.app.manager.create(
        "bea", actor=Actor.user(scene.ana.id, "ana"), channel_id=other.id, profile="open"
    )
    bot = scene.world.bot
    copy = await bot.get_partial_messageable(other.id).send(
        "copy", view=plan_buttons(revision.plan_id, 1)
    )
    in_dm = await (await bot.fetch_user(scene.ana.id)).send(
        "copy", view=plan_buttons(revision.plan_id, 1)
    )
    audit = await scene.audit()

    elsewhere = await scene.ana.click(copy, label="Approve")
    direct = await scene.ana.user.click(in_dm, label="Approve")

    assert elsewhere.ephemeral
    assert elsewhere.response.content == (
        "This plan belongs to another channel; decide on it there."
    )
    assert direct.response.content == "Plan buttons work only in the agent's channel."
    assert [e for e in await scene.audit() if e[0] != "decision-refused"] == audit
    assert (await scene.state()).phase is Phase.SUBMITTED


async def test_a_role_that_starts_in_plan_mode_is_announced(plan_scene: Any) -> None:
    scene: PlanScene = await plan_scene([text_turn("Exploring first.")])
    lead = scene.guild.create_text_channel("lead")
    await scene.app.manager.create(
        "lead",
        actor=Actor.user(scene.ana.id, "ana"),
        channel_id=lead.id,
        role="coordinator",
        profile="open",
    )

    await scene.ana.send(lead, "reorganise the docs")

    texts = [m.content for m in scene.bot_messages(lead)]
    assert texts[0] == (
        "📝 **lead** is in plan mode (role coordinator starts in plan mode): it explores "
        "read-only and will submit a plan for approval before changing anything."
    )
    assert (await scene.app.store.load_state("lead")).phase is Phase.GATHERING


async def test_without_required_approval_nobody_is_asked_to_review(plan_scene: Any) -> None:
    """``require_approval: false``: the plan is posted for the record without a review
    request or a ping, approved by the policy at once, and executed."""
    scene: PlanScene = await plan_scene(
        [tool_turn(ToolCall("submit_plan", {"plan": PLAN})), text_turn("Working on it.")],
        plan_mode={"require_approval": False},
    )
    await scene.ana.slash(scene.channel, "plan start", task="add a greeting module")

    message = scene.plan_message(1)
    assert message.content == (
        "**ada** submitted plan v1; it is approved automatically "
        "(`plan_mode.require_approval` is off)."
    )
    assert scene.pinged(message) == []
    assert "for review" not in " ".join(scene.bot_texts())
    assert not any(buttons(message).values())
    assert (message.embeds[0].description or "").startswith("✅ **Approved** by policy")
    assert (await scene.state()).phase is Phase.EXECUTING
    audit = await scene.app.store.list_audit("ada")
    submitted_row = next(a for a in audit if a.action == "submitted")
    assert submitted_row.detail["auto_approved"] is True
    assert audit[-1].actor == "policy:require_approval=false"
