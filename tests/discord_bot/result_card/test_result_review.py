"""The result review on the completion card: whoever decides Merge reads its findings there,
as the plan's review is read on the plan message (``plan_mode.review.review_result``)."""

from __future__ import annotations

from typing import Any

from plancord.core.planning import Phase
from plancord.testing.anthropic_server import finding
from plancord.testing.fake_api.review_turns import is_review_request, structured_review_turn
from tests.discord_bot.result_card.completed import PLAN, WORK, result_card
from tests.fakes.anthropic_server import ToolCall, tool_turn
from tests.world import PlanScene

PLAN_REVIEW = structured_review_turn()
RESULT_FINDING = finding("blocker", 1, "greet.py defines hello() but nothing calls or tests it.")


def reviewer_or_agent(agent_turns: list[Any]) -> Any:
    """The agent's turns in order; each reviewer call gets its own answer (the plan's first,
    then the result's), whenever it comes."""
    reviews = [PLAN_REVIEW, structured_review_turn(RESULT_FINDING)]

    def play(body: dict[str, Any]) -> Any:
        if is_review_request(body):
            return reviews.pop(0) if reviews else None
        return agent_turns.pop(0) if agent_turns else None

    return play


async def test_the_completion_card_shows_the_result_reviews_findings(plan_scene: Any) -> None:
    mode = {"review": {"mode": "advise", "review_result": True}}
    agent = [tool_turn(ToolCall("submit_plan", {"plan": PLAN})), *WORK]
    scene: PlanScene = await plan_scene(reviewer_or_agent(agent), plan_mode=mode)
    scene.world.env.settle_timeout = 60.0
    await scene.ana.slash(scene.channel, "plan start", task="add a greeting module")
    assert (await scene.state()).phase is Phase.SUBMITTED
    await scene.ana.click(scene.plan_message(1), label="Approve")
    await scene.app.runtime.wait_idle("ada")
    await scene.app.runtime.reviews.wait_idle()
    await scene.world.env.settle()

    card = result_card(scene)
    description = card.embeds[0].description or ""
    assert "Result review: 1 blocker" in description
    [field] = [f for f in card.embeds[0].fields if f.name == "🔎 Result review"]
    assert "nothing calls or tests it" in (field.value or "")
