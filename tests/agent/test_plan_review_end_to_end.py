"""The plan reviewer on Claude Sonnet 5.5, end to end: the real bot under SimCord, the agent
and the reviewer played by the fake Messages API. Sonnet 5.5 refuses a forced tool choice
with a 400, so the reviewer asks for its findings as structured outputs; with
``require_review: true`` a plan it reviewed can be approved, an answer cut off is asked for
once more, two of them are "Review unavailable" with the reason (and hold approval), and no
request ever forces a tool on a model that refuses it."""

from __future__ import annotations

from typing import Any

from plancord.core.planning import Phase
from plancord.llm.models import capabilities_of
from plancord.testing.anthropic_server import ToolCall, Turn, max_tokens_turn, text_turn, tool_turn
from plancord.testing.fake_api.review_turns import (
    finding,
    is_review_request,
    structured_review_turn,
)
from plancord.testing.fake_api.wire import JsonObject
from tests.discord_bot.plans import PLAN
from tests.world import PlanScene, Worlds, plan_scene_in

REVIEWER = "claude-sonnet-5-5"
REQUIRED = {"review": {"mode": "advise", "require_review": True, "model": REVIEWER}}
RISKY = finding("concern", 2, "Committing without a test leaves hello() unchecked.")


async def reviewed(worlds: Worlds, *reviews: Turn) -> PlanScene:
    """ada submits ``PLAN``; each reviewer call gets the next of ``reviews``, whenever it
    comes; after approval the agent says it is on it."""
    answers = list(reviews)
    agent = [tool_turn(ToolCall("submit_plan", {"plan": PLAN})), text_turn("On it.")]

    def play(body: JsonObject) -> Turn | None:
        if is_review_request(body):
            return answers.pop(0) if answers else None
        return agent.pop(0) if agent else None

    scene = await plan_scene_in(await worlds.start(play, plan_mode=REQUIRED))
    await scene.ana.slash(scene.channel, "plan start", task="add a greeting module")
    await scene.app.runtime.reviews.wait_idle()
    await scene.env.settle()
    assert (await scene.state()).phase is Phase.SUBMITTED
    assert answers == [], "every scripted review answer was asked for"
    return scene


def review_requests(scene: PlanScene) -> list[JsonObject]:
    return [r for r in scene.world.server.requests if is_review_request(r)]


def review_embed(scene: PlanScene) -> str:
    [message] = scene.plan_messages()
    [review] = [e for e in message.embeds if e.title == "🔎 Review of v1"]
    return review.description or ""


def assert_no_forced_tool_where_refused(scene: PlanScene) -> None:
    """Every request the bot sent: none forces a tool on a model that refuses forcing."""
    requests = scene.world.server.requests
    assert any(r["model"] == REVIEWER for r in requests)
    for request in requests:
        if not capabilities_of(request["model"]).forced_tool_choice:
            assert (request.get("tool_choice") or {}).get("type") not in ("any", "tool"), request


async def approve(scene: PlanScene) -> Any:
    """ana clicks Approve; what the bot sent is then checked for forced tool choices."""
    result = await scene.ana.click(scene.plan_message(1), label="Approve")
    await scene.app.runtime.wait_idle(scene.agent)
    assert_no_forced_tool_where_refused(scene)
    return result


async def assert_approved_with(scene: PlanScene, line: str) -> None:
    assert line in review_embed(scene)
    await approve(scene)
    assert (await scene.state()).phase is Phase.EXECUTING


async def test_a_plan_reviewed_by_sonnet_5_5_can_be_approved_under_require_review(
    worlds: Worlds,
) -> None:
    scene = await reviewed(worlds, structured_review_turn(RISKY))

    [request] = review_requests(scene)
    assert request["model"] == REVIEWER
    assert request["output_config"]["format"]["type"] == "json_schema"
    assert "tool_choice" not in request and "tools" not in request
    [answer] = [r for r in scene.world.server.responses if '"findings"' in str(r["content"][-1])]
    assert [block["type"] for block in answer["content"]] == ["thinking", "text"], (
        "Sonnet 5.5 thinks by default: the thinking block before the JSON is not read"
    )
    assert "hello() unchecked" in review_embed(scene)
    await assert_approved_with(scene, "Review: 1 concern")


async def test_an_answer_cut_off_is_asked_for_once_more_and_the_plan_can_be_approved(
    worlds: Worlds,
) -> None:
    cut_off = max_tokens_turn('{"findings": [{"severity": "concern", "step": 2, "text": "Com')
    scene = await reviewed(worlds, cut_off, structured_review_turn(RISKY))

    first, again = review_requests(scene)
    note = again["messages"][0]["content"][-1]["text"]
    assert "could not be used: the reviewer's answer was cut off (max_tokens)" in note
    assert again["max_tokens"] > first["max_tokens"]
    await assert_approved_with(scene, "Review: 1 concern")


async def test_two_answers_cut_off_are_review_unavailable_with_the_reason(
    worlds: Worlds,
) -> None:
    scene = await reviewed(worlds, max_tokens_turn('{"findings": ['), max_tokens_turn('{"fi'))

    assert len(review_requests(scene)) == 2, "one retry, no more"
    shown = review_embed(scene)
    assert "Review unavailable" in shown
    assert "no usable answer after one retry" in shown and r"cut off (max\_tokens)" in shown

    result = await approve(scene)
    assert (await scene.state()).phase is Phase.SUBMITTED
    assert "requires a review" in result.response.content
    assert "no usable answer after one retry" in result.response.content
