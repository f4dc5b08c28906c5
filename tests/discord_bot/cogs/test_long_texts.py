"""What members and the config supply at its longest still gets its answer: ``/plan start``
with a task near Discord's 2000 characters announces it shortened (the agent plans the
whole task), and ``/agent info`` of an agent whose model name is past a field's 1024
characters shows it shortened with the whole in an attached file."""

from __future__ import annotations

from typing import Any

from plancord.discord_bot.shared.embed_basics import embed_size
from tests.discord_bot.agent_scene import SceneFactory
from tests.fakes.anthropic_server import text_turn


async def test_plan_start_with_a_task_of_1990_characters_is_announced(plan_scene: Any) -> None:
    scene = await plan_scene([text_turn("Exploring first.")])
    task = "Rework the parser so that " + "every token is read once " * 80
    task = task[:1990]

    result = await scene.ana.slash(scene.channel, "plan start", task=task)

    announcement = result.response.content
    assert not result.ephemeral
    assert len(announcement) <= 2000
    assert announcement.startswith("📝 ana put **ada** in plan mode: Rework the parser")
    assert announcement.endswith("It explores read-only and will post a plan here for approval.")
    assert "…" in announcement
    assert (await scene.state()).task == task


async def test_agent_info_with_a_model_name_of_1100_characters_answers(
    scene_factory: SceneFactory,
) -> None:
    scene = await scene_factory()
    model = "claude-" + "very-long-model-name-" * 60
    model = model[:1100]
    channel = await scene.create_agent("ada", model=model)

    result = await scene.ana.slash(channel, "agent info")

    assert result.ephemeral
    [embed] = result.response.embeds
    fields = {f.name: f.value for f in embed.fields}
    assert len(fields["Model"]) <= 1024 and fields["Model"].startswith("`claude-very-long")
    assert fields["Model"].endswith("…`")
    assert embed_size(embed) <= 6000
    assert "attached agent-ada.md" in (embed.footer.text or "")
    [attachment] = result.response.attachments
    assert attachment.filename == "agent-ada.md"
    assert model in (await attachment.read()).decode()
    welcome = scene.bot_texts(channel)[0]
    assert len(welcome) <= 2000 and welcome.startswith("👋 Agent **ada** lives here")
