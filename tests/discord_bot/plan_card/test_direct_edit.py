"""A member edits the waiting plan from its message: the step picker, the step's form, the
result as revision n+1 authored by them, bound to its sha, audited and shown with what
changed; a mistake is one line and the form comes back holding the text; the agent is told
and may answer with a revision of its own; four-eyes counts the editor as an author; an edit
racing an Approve never approves the unedited text."""

from __future__ import annotations

from typing import Any

import discord
import pytest

from plancord.core.errors import StalePlan
from plancord.core.plan import (
    MAX_DESCRIPTION_CHARS,
    MAX_FILES_PER_STEP,
    MAX_STEPS,
    MAX_SUMMARY_CHARS,
)
from plancord.core.planning import Actor, Phase, PlanRef, RevisionAuthor
from tests.discord_bot.plans import ALL_BUTTONS, PLAN, assert_within_limits, submitted_plan
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn
from tests.requests_seen import last_user
from tests.world import PlanScene, buttons

FOUR_EYES = {"approval": "approver"}


async def open_step(scene: PlanScene, who: Any, number: int) -> Any:
    """``who`` taps Edit directly on the newest plan message and picks step ``number``."""
    picked = await who.click(scene.plan_message(), label="Edit directly")
    picker = picked.response
    assert picker.ephemeral
    first = (number - 1) // 25 * 25
    return await who.select(picker.message, [str(number)], custom_id=f"plan:pick-step:{first}")


async def pick_wide(scene: PlanScene, who: Any, choice: str) -> Any:
    picked = await who.click(scene.plan_message(), label="Edit directly")
    picker = picked.response
    return await who.select(picker.message, [choice], custom_id="plan:pick-wide")


def fields(modal: dict[str, Any]) -> dict[str, Any]:
    """The form's inputs by custom id, with what each holds to start with."""
    found = {}
    for label in modal["components"]:
        component = label["component"]
        if "options" in component:
            found[component["custom_id"]] = [
                o["value"] for o in component["options"] if o.get("default")
            ]
        else:
            found[component["custom_id"]] = component.get("value")
    return found


async def test_a_direct_step_edit_is_revision_two_by_its_editor(plan_scene: Any) -> None:
    scene = await submitted_plan(
        plan_scene, PLAN, text_turn("The edit is right; I will wait for approval.")
    )
    shown = await open_step(scene, scene.ana, 1)
    assert shown.modal is not None and shown.modal["title"] == "Step 1 of plan v1"
    assert fields(shown.modal) == {
        "description": "Create greet.py with hello()",
        "files": None,
        "risk": ["low"],
        "tools": "create_file",
        "network": None,
    }

    sent = await scene.ana.submit_modal(
        shown,
        {
            "description": "Create greet.py with hello(name)",
            "files": "greet.py",
            "risk": ["medium"],
            "tools": "create_file",
        },
    )

    assert sent.response.content.startswith("Edited plan v1 into v2 (")
    revision = await scene.app.planning.current_revision("ada")
    assert revision is not None and revision.revision == 2
    assert revision.author is RevisionAuthor.HUMAN_EDIT
    assert (revision.edited_by, revision.edited_by_name) == (str(scene.ana.id), "ana")
    assert revision.plan.steps[0].files == ("greet.py",)
    state = await scene.state()
    assert (state.phase, state.revision, state.plan_sha) == (Phase.SUBMITTED, 2, revision.sha256)
    second = scene.plan_message(2)
    assert second.content.startswith(f"<@{scene.ana.id}>, ana edited plan v1 of **ada** directly")
    description = second.embeds[0].description or ""
    assert "**Changes since v1 (by ana (direct edit)):** 1 step reworded" in description
    assert "⚠️ **Widens the plan:** new files `greet.py`; step 1 medium risk (was low)" in (
        description
    )
    assert buttons(second) == ALL_BUTTONS
    assert not any(buttons(scene.plan_message(1)).values())
    [submitted] = [e for e in await scene.app.store.list_audit("ada") if e.revision == 2]
    assert submitted.actor == f"user:{scene.ana.id}(ana)"
    assert submitted.detail["author"] == "human-edit"
    assert submitted.detail["revises"] == 1
    told = last_user(scene.world.server.requests[-1])["content"]
    text = "\n".join(b.get("text", "") for b in told)
    assert "ana edited your plan directly: v2" in text
    assert "~~hello()~~ **hello(name)**" in text
    assert (await scene.state()).revision == 2  # the agent accepted: no v3

    diff = await scene.ana.slash(scene.channel, "plan diff")
    assert diff.response.content.startswith("**Changes since v1 (by ana (direct edit)):**")


async def test_add_and_remove_a_step(plan_scene: Any) -> None:
    scene = await submitted_plan(plan_scene, PLAN, text_turn("Fine."), text_turn("Fine."))
    shown = await pick_wide(scene, scene.ana, "add")
    assert shown.modal["title"] == "New step of plan v1"
    await scene.ana.submit_modal(shown, {"description": "Run the tests", "risk": ["low"]})
    revision = await scene.app.planning.current_revision("ada")
    assert [s.description for s in revision.plan.steps] == [
        "Create greet.py with hello()",
        "Commit it",
        "Run the tests",
    ]
    shown = await pick_wide(scene, scene.ana, "arrange")
    moved = await scene.ana.submit_modal(shown, {"step": "2", "to": ""})
    assert moved.response.content.startswith("Edited plan v2 into v3")
    revision = await scene.app.planning.current_revision("ada")
    assert [s.description for s in revision.plan.steps] == [
        "Create greet.py with hello()",
        "Run the tests",
    ]
    assert "1 step removed" in (scene.plan_message(3).embeds[0].description or "")


async def test_an_invalid_edit_is_one_line_and_the_form_comes_back(plan_scene: Any) -> None:
    scene = await submitted_plan(plan_scene, PLAN, text_turn("Fine."))
    shown = await open_step(scene, scene.ana, 2)
    typed = {"description": "Commit it", "files": "../outside.py", "risk": ["high"], "tools": ""}
    refused = await scene.ana.submit_modal(shown, typed)

    line = refused.response.content
    assert line.startswith("❌ Step 2 files: files are paths inside the workspace")
    assert "\n" not in line
    assert (await scene.state()).revision == 1
    answer = refused.response
    again = await scene.ana.click(answer.message, label="Fix it")
    assert fields(again.modal)["files"] == "../outside.py"
    assert fields(again.modal)["risk"] == ["high"]
    fixed = await scene.ana.submit_modal(again, {**typed, "files": "commit.txt"})
    assert fixed.response.content.startswith("Edited plan v1 into v2")


async def test_the_agent_answers_an_edit_with_revision_three(plan_scene: Any) -> None:
    better = {
        **PLAN,
        "steps": [
            {
                "description": "Create greet.py with hello(name)",
                "tools": ["create_file"],
                "risk": "low",
            },
            {"description": "Commit it", "tools": ["git_commit"], "risk": "medium"},
        ],
    }
    scene = await submitted_plan(
        plan_scene,
        PLAN,
        tool_turn(ToolCall("submit_plan", {"plan": better}), text="The edit drops the tool."),
        text_turn("Waiting."),
    )
    shown = await open_step(scene, scene.ana, 1)
    await scene.ana.submit_modal(
        shown, {"description": "Create greet.py with hello(name)", "risk": ["low"], "tools": ""}
    )
    state = await scene.state()
    assert (state.phase, state.revision) == (Phase.SUBMITTED, 3)
    third = await scene.app.planning.current_revision("ada")
    assert third is not None and third.author is RevisionAuthor.AGENT
    assert (
        scene.plan_message(3).content == f"<@{scene.ana.id}>, **ada** submitted plan v3 for review."
    )


async def test_four_eyes_counts_the_editor_as_an_author(plan_scene: Any) -> None:
    scene = await submitted_plan(
        plan_scene, PLAN, text_turn("Fine."), text_turn("Working."), plan_mode=FOUR_EYES
    )
    shown = await open_step(scene, scene.boss, 1)
    await scene.boss.submit_modal(shown, {"description": "Create greet.py", "risk": ["low"]})
    second = scene.plan_message(2)

    for who in (scene.ana, scene.boss):
        refused = await who.click(second, label="Approve")
        assert "four-eyes rule" in refused.response.content, who.name
    assert "whoever edited this plan" in refused.response.content
    assert (await scene.state()).phase is Phase.SUBMITTED
    admins = scene.guild.create_role(
        "more-admins", permissions=discord.Permissions(administrator=True)
    )
    carol = scene.guild.add_member(scene.env.create_user("carol"), roles=[admins])
    approved = await carol.click(second, label="Approve")
    assert approved.response.content.startswith("Approved plan v2")


async def test_an_edit_racing_approve_never_approves_the_unedited_text(plan_scene: Any) -> None:
    scene = await submitted_plan(plan_scene, PLAN, text_turn("Fine."), text_turn("Fine."))
    v1 = await scene.app.planning.current_revision("ada")
    assert v1 is not None
    shown = await open_step(scene, scene.ana, 1)
    await scene.ana.submit_modal(
        shown, {"description": "Create greet.py with hi()", "risk": ["low"]}
    )

    # An Approve of v1 that arrives after the edit (its click was on the old card) names v1
    # and its sha: refused, and nothing executes.
    late = PlanRef(agent="ada", plan_id=v1.plan_id, revision=1, sha256=v1.sha256)
    with pytest.raises(StalePlan, match="superseded by v2"):
        await scene.app.planning.approve(late, Actor.user(scene.ana.id, "ana"))
    state = await scene.state()
    assert (state.phase, state.revision) == (Phase.SUBMITTED, 2)


async def test_an_approve_before_the_edit_refuses_the_edit(plan_scene: Any) -> None:
    scene = await submitted_plan(plan_scene, PLAN, text_turn("Working."), text_turn("Done."))
    shown = await open_step(scene, scene.ana, 1)
    approved = await scene.boss.click(scene.plan_message(1), label="Approve")
    assert approved.response.content.startswith("Approved plan v1")

    late = await scene.ana.submit_modal(shown, {"description": "Create greet.py", "risk": ["low"]})

    assert "already approved by boss" in late.response.content
    state = await scene.state()
    assert (state.phase, state.revision) == (Phase.EXECUTING, 1)


async def test_a_file_upload_edit_and_a_broken_file(plan_scene: Any) -> None:
    scene = await submitted_plan(plan_scene, PLAN, text_turn("Fine."))
    v1 = await scene.app.planning.current_revision("ada")
    assert v1 is not None
    edited = v1.markdown.replace("2. [medium] Commit it", "2. [high] Commit and push it")

    sent = await scene.ana.slash(
        scene.channel, "plan edit", file=("plan-v1.md", edited.encode("utf-8"))
    )

    assert sent.response.content.startswith("Edited plan v1 into v2 (")
    v2 = await scene.app.planning.current_revision("ada")
    assert v2 is not None and v2.plan.steps[1].description == "Commit and push it"
    assert v2.markdown == edited
    assert "step 2 high risk (was medium)" in (scene.plan_message(2).embeds[0].description or "")

    broken = edited.replace("[high]", "[urgent]")
    refused = await scene.ana.slash(scene.channel, "plan edit", file=("p.md", broken.encode()))
    assert refused.response.content.startswith("❌ Step 2 risk: must be one of low, medium, high")
    assert "\n" not in refused.response.content
    assert (await scene.state()).revision == 2


async def test_every_discord_limit_holds_for_a_plan_of_the_largest_size(plan_scene: Any) -> None:
    steps = [
        {
            "description": f"{i}. " + "d" * (MAX_DESCRIPTION_CHARS - 4),
            "files": [
                f"src/{i:02d}/" + "f" * 188 + f"{n:02d}.py" for n in range(MAX_FILES_PER_STEP)
            ],
            "tools": ["str_replace"],
            "risk": "high",
        }
        for i in range(1, MAX_STEPS + 1)
    ]
    big = {"summary": "s" * MAX_SUMMARY_CHARS, "steps": steps, "context_notes": "n" * 4000}
    scene = await submitted_plan(
        plan_scene, big, text_turn("Fine."), plan_mode={"max_plan_bytes": 1_048_576}
    )
    picked = await scene.ana.click(scene.plan_message(), label="Edit directly")
    menus = [c for row in picked.response.message.components for c in row.children]
    assert [len(m.options) for m in menus] == [25, 25, 3]
    assert all(len(o.label) <= 100 for m in menus for o in m.options)
    shown = await scene.ana.select(picked.response.message, ["50"], custom_id="plan:pick-step:25")
    form = fields(shown.modal)
    assert "files" not in form  # 20 long paths: more than one input holds, kept as they are
    assert len(form["description"]) <= 4000
    sent = await scene.ana.submit_modal(
        shown, {"description": "50. shorter", "risk": ["low"], "tools": "view"}
    )
    assert sent.response.content.startswith("Edited plan v1 into v2")
    v2 = await scene.app.planning.current_revision("ada")
    assert v2 is not None and v2.plan.steps[49].files == tuple(steps[49]["files"])
    assert_within_limits(scene.plan_message(2).embeds)
    title = await pick_wide(scene, scene.ana, "title")
    assert [len(v or "") for v in fields(title.modal).values()] == [MAX_SUMMARY_CHARS, 4000]
