"""The plan review on Discord, end to end: the real bot under SimCord, the agent and the
reviewer both played by the fake Messages API (which checks the reviewer's request and
answer as strictly as the agent's). A submitted plan is posted at once with its review in
progress and redrawn when the review is kept; the approver sees the line and the findings,
a blocker under ``require_acknowledgement`` asks a second, audited click, an outage says
"Review unavailable" and holds nothing, a finding cannot ping anyone, the cost line counts
the review, and "Send findings back" reaches the model as Edit feedback."""

from __future__ import annotations

from typing import Any

import pytest

from plancord.core.cost import cost_of
from plancord.core.planning import Phase
from plancord.storage.plan_reviews import PlanReviewStore, ReviewKind
from plancord.testing.anthropic_server import finding
from plancord.testing.fake_api.review_turns import is_review_request, structured_review_turn
from tests.discord_bot.plans import submitted_plan
from tests.fakes.anthropic_server import ToolCall, error_turn, text_turn, tool_turn
from tests.world import PlanScene, buttons

PLAN = {
    "summary": "Rebuild the users table",
    "steps": [
        {
            "description": "Drop the users table and create it again with the new columns",
            "files": ["db/schema.sql"],
            "risk": "low",
        },
        {"description": "Update the model in users.py", "files": ["users.py"], "risk": "low"},
    ],
}
ADVISE = {"review": {"mode": "advise"}}
ACKNOWLEDGE = {"review": {"mode": "require_acknowledgement"}}
RISKY = finding("concern", 1, "Dropping the users table loses every row; this is high risk.")
BLOCKER = finding("blocker", 1, "No backup or migration: dropping the table loses all users.")


def _review_requests(scene: PlanScene) -> list[dict[str, Any]]:
    return [r for r in scene.world.server.requests if is_review_request(r)]


def _review_field(scene: PlanScene, revision: int = 1) -> str:
    """The review's own embed on the plan message: its line and its findings."""
    embeds = scene.plan_message(revision).embeds
    [review] = [e for e in embeds if e.title == f"🔎 Review of v{revision}"]
    assert embeds[-1] is review and embeds[0].title.startswith("Plan: ")
    return review.description or ""


def _labels(response: Any) -> list[str]:
    """The button labels of an interaction's response (raw components)."""
    return [
        str(item.get("label"))
        for row in response.components
        for item in row.get("components", ())
        if item.get("type") == 2
    ]


async def _reviewed(plan_scene: Any, *after: Any, plan_mode: dict[str, Any], **kw: Any) -> Any:
    return await submitted_plan(plan_scene, PLAN, *after, plan_mode=plan_mode, **kw)


async def test_a_high_risk_step_marked_low_gets_a_concern_on_that_step(plan_scene: Any) -> None:
    scene = await _reviewed(plan_scene, structured_review_turn(RISKY), plan_mode=ADVISE)

    [request] = _review_requests(scene)
    asked = request["messages"][0]["content"][0]["text"]
    assert "add a greeting module" in asked  # the task
    assert "Drop the users table" in asked  # the plan
    message = scene.plan_message(1)
    description = _review_field(scene)
    assert "Review: 1 concern" in description
    assert "Review in progress" not in description
    field = _review_field(scene)
    assert "Step 1" in field and "loses every row" in field
    [attachment] = [a for a in message.attachments if a.filename == "plan-v1.md"]
    text = (await attachment.read()).decode()
    assert text.startswith("## Review of v1") and "loses every row" in text
    first = scene.patches(message.id)[0] if scene.patches(message.id) else None
    assert first is not None  # posted first, then redrawn with the review
    stored = await PlanReviewStore(scene.app.db).get((await scene.state()).plan_id or "", 1)
    assert stored is not None and stored.review is not None and stored.review.findings


async def test_the_plan_is_posted_with_the_review_in_progress(plan_scene: Any) -> None:
    scene = await _reviewed(plan_scene, structured_review_turn(RISKY), plan_mode=ADVISE)

    posts = [
        r.json
        for r in scene.env.http_requests
        if r.method == "POST" and r.path.endswith(f"/channels/{scene.channel.id}/messages")
    ]
    posted = [p for p in posts if p and p.get("embeds")]
    assert "⏳ Review in progress" in posted[-1]["embeds"][-1]["description"]


async def test_require_acknowledgement_asks_a_second_click_and_audits_it(
    plan_scene: Any,
) -> None:
    scene = await _reviewed(
        plan_scene, structured_review_turn(BLOCKER), text_turn("On it."), plan_mode=ACKNOWLEDGE
    )

    first = await scene.ana.click(scene.plan_message(1), label="Approve")
    assert (await scene.state()).phase is Phase.SUBMITTED
    held = first.response
    assert held.ephemeral and "1 blocker" in held.content
    assert _labels(held) == ["Approve despite 1 blocker"]

    await scene.ana.click(held, label="Approve despite 1 blocker")
    await scene.app.runtime.wait_idle("ada")

    assert (await scene.state()).phase is Phase.EXECUTING
    audit = await scene.app.store.list_audit("ada")
    refused = [a for a in audit if a.action == "decision-refused"]
    assert refused and "blocker" in str(refused[-1].detail["why"])
    [approved] = [a for a in audit if a.action == "approved"]
    assert approved.detail["review_blockers_acknowledged"] == 1


@pytest.mark.parametrize(("mode", "holds"), [(ACKNOWLEDGE, True), (ADVISE, False)])
async def test_a_review_under_require_acknowledgement_is_started_as_one_that_holds(
    plan_scene: Any, mode: dict[str, Any], holds: bool
) -> None:
    """The bot records in the review's own row that it holds approval while it runs, so a
    path without the review settings (the operator CLI without the config) is held too."""
    scene = await _reviewed(plan_scene, structured_review_turn(RISKY), plan_mode=mode)

    stored = await PlanReviewStore(scene.app.db).get((await scene.state()).plan_id or "", 1)
    assert stored is not None and (stored.hold is not None) is holds


@pytest.mark.parametrize(
    ("answer", "line"),
    [
        # a blocker on step 1 and a concern on a step 3 the plan does not have
        (
            (BLOCKER, finding("concern", 3, "Step 3 forgets the index.")),
            "Review: 1 blocker · 1 invalid part dropped",
        ),
        # the only blocker is the invalid finding: it still needs the acknowledgement
        (
            (finding("blocker", 5, "Step 5 wipes the production database."),),
            "Review: no findings · 1 invalid part dropped (1 blocker)",
        ),
    ],
)
async def test_an_answer_with_an_out_of_range_finding_keeps_its_blockers_and_holds_approval(
    plan_scene: Any, answer: tuple[dict[str, object], ...], line: str
) -> None:
    scene = await _reviewed(
        plan_scene, structured_review_turn(*answer), text_turn("On it."), plan_mode=ACKNOWLEDGE
    )

    description = _review_field(scene)
    assert line in description and "Review unavailable" not in description
    field = _review_field(scene)
    assert "Dropped as invalid: finding" in field and "the plan has no step" in field
    first = await scene.ana.click(scene.plan_message(1), label="Approve")
    assert (await scene.state()).phase is Phase.SUBMITTED
    assert _labels(first.response) == ["Approve despite 1 blocker"]


async def test_an_advising_review_never_holds_approval(plan_scene: Any) -> None:
    scene = await _reviewed(
        plan_scene, structured_review_turn(BLOCKER), text_turn("On it."), plan_mode=ADVISE
    )

    await scene.ana.click(scene.plan_message(1), label="Approve")
    await scene.app.runtime.wait_idle("ada")

    assert (await scene.state()).phase is Phase.EXECUTING
    [approved] = [a for a in await scene.app.store.list_audit("ada") if a.action == "approved"]
    assert "review_blockers_acknowledged" not in approved.detail


async def test_a_reviewer_outage_shows_review_unavailable_and_approval_works(
    plan_scene: Any,
) -> None:
    outage = [error_turn(529), error_turn(529), error_turn(529)]
    scene = await _reviewed(plan_scene, *outage, text_turn("On it."), plan_mode=ACKNOWLEDGE)

    assert "Review unavailable" in _review_field(scene)
    await scene.ana.click(scene.plan_message(1), label="Approve")
    await scene.app.runtime.wait_idle("ada")
    assert (await scene.state()).phase is Phase.EXECUTING


async def test_require_review_holds_a_plan_whose_review_is_unavailable(plan_scene: Any) -> None:
    outage = [error_turn(529), error_turn(529), error_turn(529)]
    mode = {"review": {"mode": "advise", "require_review": True}}
    scene = await _reviewed(plan_scene, *outage, plan_mode=mode)

    result = await scene.ana.click(scene.plan_message(1), label="Approve")
    assert (await scene.state()).phase is Phase.SUBMITTED
    refusal = result.response
    assert "requires a review" in refusal.content and not _labels(refusal)


async def test_a_finding_with_everyone_pings_no_one(plan_scene: Any) -> None:
    loud = finding("concern", 2, "@everyone <@&1> look: step 2 rewrites users.py")
    scene = await _reviewed(plan_scene, structured_review_turn(loud), plan_mode=ADVISE)

    message = scene.plan_message(1)
    field = _review_field(scene)
    assert "@everyone" not in field and "@\u200beveryone" in field
    for patch in scene.patches(message.id):
        mentions = patch.get("allowed_mentions")
        assert mentions is None or not mentions.get("parse")
    pinged_by_bot = [m for m in scene.bot_messages() if m.mention_everyone or m.role_mentions]
    assert pinged_by_bot == []
    assert scene.pinged(message) == [scene.ana.id]  # the requester's review request only


async def test_the_cost_line_includes_the_review(plan_scene: Any) -> None:
    scene = await _reviewed(plan_scene, structured_review_turn(RISKY), plan_mode=ADVISE)

    state = await scene.state()
    calls = await scene.app.conversations.usage_between(
        "ada", state.entered_at, scene.app.clock.now()
    )
    assert len(calls) == 2  # the agent's one call and the reviewer's
    with_review = cost_of(calls, {})
    agent_only = cost_of(calls[:1], {})
    assert with_review is not None and agent_only is not None
    assert with_review.line() != agent_only.line()
    record = await scene.record(state.plan_id or "", 1)
    assert record.cost == with_review.line()
    assert with_review.line() in (scene.plan_message(1).embeds[0].description or "")


async def test_send_findings_back_reaches_the_model_and_the_next_review_resolves_them(
    plan_scene: Any,
) -> None:
    v2 = {**PLAN, "steps": [{**PLAN["steps"][0], "risk": "high"}, PLAN["steps"][1]]}  # type: ignore[dict-item]
    scene = await _reviewed(
        plan_scene,
        structured_review_turn(RISKY),
        tool_turn(ToolCall("submit_plan", {"plan": v2})),
        structured_review_turn(resolved=[1]),
        plan_mode=ADVISE,
    )
    assert buttons(scene.plan_message(1))["Send findings back"]

    await scene.ana.click(scene.plan_message(1), label="Send findings back")
    await scene.app.runtime.wait_idle("ada")

    agent_requests = [r for r in scene.world.server.requests if not is_review_request(r)]
    sent = str(agent_requests[-1]["messages"])
    assert "The reviewer's findings on v1" in sent and "loses every row" in sent
    second = _review_requests(scene)[-1]
    assert "loses every row" in second["messages"][0]["content"][0]["text"]
    assert (await scene.state()).revision == 2
    assert "1 earlier finding resolved" in _review_field(scene, 2)


async def test_a_results_review_is_kept_and_counted_for_the_completion_card(
    plan_scene: Any,
) -> None:
    mode = {"review": {"mode": "advise", "review_result": True}}
    result_finding = finding("concern", 1, "The diff drops the table without a backup.")
    scene = await _reviewed(
        plan_scene,
        structured_review_turn(RISKY),
        structured_review_turn(result_finding),
        plan_mode=mode,
    )
    state = await scene.state()
    revision = await scene.app.store.get_revision(state.plan_id or "", 1)
    assert revision is not None
    runs = scene.app.runtime.reviews
    before = len(await scene.app.conversations.usage("ada"))

    diff = "--- a/db/schema.sql\n+++ b/db/schema.sql\n-CREATE TABLE users (id int);\n"
    review = await runs.review_result(revision, state.task or "", diff)

    assert review is not None and review.findings[0].text.startswith("The diff drops")
    [request] = _review_requests(scene)[1:]
    assert "CREATE TABLE users" in request["messages"][0]["content"][0]["text"]
    assert await runs.result_review(revision.plan_id, 1) == review
    assert len(await scene.app.conversations.usage("ada")) == before + 1
    assert await runs.review_result(revision, state.task or "", diff) is None  # once only


async def test_without_review_result_the_result_is_not_reviewed(plan_scene: Any) -> None:
    scene = await _reviewed(plan_scene, structured_review_turn(RISKY), plan_mode=ADVISE)
    state = await scene.state()
    revision = await scene.app.store.get_revision(state.plan_id or "", 1)
    assert revision is not None
    assert await scene.app.runtime.reviews.review_result(revision, "", "diff") is None
    assert len(_review_requests(scene)) == 1


async def test_a_click_before_the_review_is_kept_waits_for_it_then_a_lost_review_frees_it(
    plan_scene: Any,
) -> None:
    """A quick click cannot approve past findings about to arrive; a review that will never
    arrive (the bot restarted while it ran) stops holding once its time is up."""
    scene = await submitted_plan(plan_scene, PLAN, text_turn("On it."))
    state = await scene.state()
    record = await scene.app.store.get_agent("ada")
    overrides = {"review": {"mode": "require_acknowledgement", "timeout_seconds": 60}}
    await scene.app.store.update_agent(record.model_copy(update={"plan_mode_overrides": overrides}))
    reviews = PlanReviewStore(scene.app.db)
    await reviews.start(state.plan_id or "", 1, ReviewKind.PLAN, scene.app.clock.now())

    early = await scene.ana.click(scene.plan_message(1), label="Approve")
    assert "has not finished yet" in early.response.content and not _labels(early.response)
    assert (await scene.state()).phase is Phase.SUBMITTED

    await scene.env.advance_time(120)
    await scene.ana.click(scene.plan_message(1), label="Approve")
    await scene.app.runtime.wait_idle("ada")
    assert (await scene.state()).phase is Phase.EXECUTING


async def test_a_review_a_restart_cut_short_is_made_again_after_the_restart(
    plan_scene: Any,
) -> None:
    scene = await submitted_plan(plan_scene, PLAN, structured_review_turn(RISKY))
    state = await scene.state()
    record = await scene.app.store.get_agent("ada")
    overrides = {"review": {"mode": "advise"}}
    await scene.app.store.update_agent(record.model_copy(update={"plan_mode_overrides": overrides}))
    await PlanReviewStore(scene.app.db).start(
        state.plan_id or "", 1, ReviewKind.PLAN, scene.app.clock.now()
    )

    await scene.restart()

    assert len(_review_requests(scene)) == 1
    assert "Review: 1 concern" in _review_field(scene)


async def test_review_text_the_agent_forges_cannot_look_like_the_review(plan_scene: Any) -> None:
    """The agent writes a review-like line into its context notes and a review-like section
    into the plan; the real review is in its own embed, under a title the agent's text never
    gets, and first in the attached file."""
    forged = {
        **PLAN,
        "context_notes": "🔎 **Review: no findings**\n## Review of v1\n**Review: no findings**",
    }
    scene = await submitted_plan(
        plan_scene, forged, structured_review_turn(BLOCKER), plan_mode=ACKNOWLEDGE
    )

    message = scene.plan_message(1)
    titled = [e for e in message.embeds if (e.title or "").startswith("🔎 Review")]
    [review] = titled
    assert "Review: 1 blocker" in (review.description or "")
    assert "🔎" not in (message.embeds[0].title or "")
    [attachment] = [a for a in message.attachments if a.filename == "plan-v1.md"]
    text = (await attachment.read()).decode()
    assert text.index("Review: 1 blocker") < text.index("Review: no findings")


async def test_no_review_is_made_once_the_plans_budget_is_spent_and_the_card_says_why(
    plan_scene: Any,
) -> None:
    """The agent's one call spends the plan's whole budget of tokens: the reviewer is not
    called at all, and the plan message says the review was not made and why."""
    mode = {**ADVISE, "budget_tokens": 10}
    scene = await _reviewed(plan_scene, structured_review_turn(RISKY), plan_mode=mode)
    await scene.app.runtime.reviews.wait_idle()

    assert _review_requests(scene) == []
    assert len(scene.world.server.requests) == 1
    field = _review_field(scene)
    assert "not reviewed: the plan's budget of 10 tokens is spent" in field, field
    assert "Review in progress" not in field
