"""Completion cards of large results, through the real bot: twenty-five steps with long
descriptions writing twelve files each post a card within Discord's 6,000 characters as
Discord counts them, with every step in full in the attached file; a card Discord refuses
for what it holds is posted smaller (or the channel is told), never owed again as it was."""

from __future__ import annotations

from typing import Any

from plancord.discord_bot.shared.embed_basics import embeds_size
from tests.discord_bot.plans import assert_within_limits
from tests.discord_bot.result_card.completed import completed, record, result_card, result_cards
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn
from tests.world import PlanScene, buttons

STEPS = 25
FILES = 12


def _description(step: int) -> str:
    return (f"Step {step}: rework the 🧩 module_{step} package " + "carefully " * 40)[:400].strip()


PLAN = {
    "summary": "Rework every module in twenty-five steps " + "x" * 200,
    "steps": [
        {"description": _description(i), "tools": ["create_file"], "files": [f"m{i}/*"]}
        for i in range(1, STEPS + 1)
    ],
}
WORK = (
    *(
        tool_turn(
            *(
                ToolCall(
                    "create_file",
                    {"path": f"m{i}/file_{f}_{'n' * 60}.py", "content": f"x = {f}\n"},
                )
                for f in range(FILES)
            )
        )
        for i in range(1, STEPS + 1)
    ),
    tool_turn(ToolCall("complete_plan", {"summary": "reworked"})),
    text_turn("Done."),
)
LARGE = {"plan_mode": {"max_plan_bytes": 1_048_576}}


async def large(plan_scene: Any) -> PlanScene:
    scene, _ = await completed(plan_scene, plan=PLAN, work=WORK, **LARGE)
    return scene


async def test_a_card_of_twenty_five_long_steps_fits_with_the_rest_in_its_file(
    plan_scene: Any,
) -> None:
    scene = await large(plan_scene)

    card = result_card(scene)
    assert_within_limits(card.embeds)
    assert embeds_size(card.embeds) <= 6000
    names = [a.filename for a in card.attachments]
    assert names[1:] == ["result-v1-steps.md"] and names[0].endswith(".diff")
    assert "Every step in full is in the attached `result-v1-steps.md`" in (
        card.embeds[0].description or ""
    )
    assert buttons(card) == {"Merge": True, "Discard": True}
    steps = (await card.attachments[1].read()).decode()
    for step in range(1, STEPS + 1):
        assert f"## {step}. {_description(step)}" in steps
        assert f"- `m{step}/file_{FILES - 1}_{'n' * 60}.py` +1 −0" in steps
    assert (await record(scene)).card_message == card.id
    assert not scene.world.bot.notifier.results.owed.owed()


async def test_a_card_discord_refuses_is_posted_compact_not_owed_again(plan_scene: Any) -> None:
    scene, _ = await completed(plan_scene)
    found = await record(scene)
    scene.env.inject_error(
        "POST", "/channels/*/messages", status=400, code=50035, message="Invalid Form Body"
    )

    posted = await scene.world.bot.notifier.results.post(found.plan_id)

    assert posted is not None
    card = result_card(scene)
    assert card.id == posted.id
    assert [f.name for f in card.embeds[0].fields] == ["Steps 1 to 2"]
    assert "Every step in full" in (card.embeds[0].description or "")
    assert [a.filename.endswith(".diff") for a in card.attachments] == [True, False]
    assert buttons(card) == {"Merge": True, "Discard": True}
    assert (await record(scene)).card_message == card.id
    assert not scene.world.bot.notifier.results.owed.owed()


async def test_a_card_refused_in_every_form_leaves_a_line_with_the_buttons(
    plan_scene: Any,
) -> None:
    scene, _ = await completed(plan_scene)
    found = await record(scene)
    before = len(result_cards(scene))
    scene.env.inject_error(
        "POST", "/channels/*/messages", status=400, code=50035, message="Invalid Form Body", times=3
    )

    posted = await scene.world.bot.notifier.results.post(found.plan_id)

    assert posted is not None and not posted.embeds
    assert "waits for Merge or Discard" in posted.content
    assert "(Discord answered 400)" in posted.content
    line = scene.bot_messages()[-1]
    assert line.id == posted.id and buttons(line) == {"Merge": True, "Discard": True}
    assert len(result_cards(scene)) == before
    assert (await record(scene)).card_message == posted.id


async def test_a_card_refused_even_as_a_line_tells_the_channel_how_to_decide(
    plan_scene: Any,
) -> None:
    scene, _ = await completed(plan_scene)
    found = await record(scene)
    scene.env.inject_error(
        "POST", "/channels/*/messages", status=400, code=50035, message="Invalid Form Body", times=4
    )

    posted = await scene.world.bot.notifier.results.post(found.plan_id)

    assert posted is not None
    assert "plancord plan merge --agent ada" in posted.content
    assert (await record(scene)).card_message == posted.id
    assert not scene.world.bot.notifier.results.owed.owed()


async def test_a_transient_failure_is_still_owed_and_posted_later(plan_scene: Any) -> None:
    scene, _ = await completed(plan_scene)
    found = await record(scene)
    results = scene.world.bot.notifier.results
    scene.env.inject_error("POST", "/channels/*/messages", status=503, code=0, times=1)

    await results.result_ready("ada", found.plan_id)

    assert results.owed.owed() == (found.plan_id,)
