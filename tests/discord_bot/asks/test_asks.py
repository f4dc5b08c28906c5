"""Questions and permission requests put to humans in the agent's channel: answers, clicks,
the approver policy, timeouts and restarts."""

from __future__ import annotations

from typing import Any

import discord
import pytest

from plancord.config.sections import DiscordConfig
from plancord.config.shards import ShardShare
from tests.discord_bot.agent_scene import Scene, SceneFactory
from tests.discord_bot.asks.asking import buttons, pending, tool_results
from tests.discord_bot.plan_card.answering import refusal
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn
from tests.requests_seen import last_user

QUESTION = "Which branch should I deploy?"
ASK = [tool_turn(ToolCall("ask_user", {"question": QUESTION})), text_turn("Thanks.")]
TOUCH = [
    tool_turn(ToolCall("bash_execute", {"command": "touch made.txt"})),
    text_turn("Made it."),
]


def user_texts(scene: Scene, request: int) -> list[str]:
    last = last_user(scene.server.requests[request])["content"]
    return [b["text"] for b in last if b.get("type") == "text"]


def typing_posts(scene: Scene, channel_id: int) -> int:
    path = f"/channels/{channel_id}/typing"
    return sum(1 for r in scene.env.http_requests if r.method == "POST" and r.path == path)


async def asking(scene_factory: SceneFactory) -> tuple[Scene, Any, discord.Message]:
    scene = await scene_factory(ASK)
    channel = await scene.create_agent("ada")
    await scene.ana.send(channel, "deploy it")
    question = channel.last_message
    assert QUESTION in question.content
    return scene, channel, question


async def test_ask_user_takes_the_requesters_next_message_as_the_answer(
    scene_factory: SceneFactory,
) -> None:
    scene, channel, question = await asking(scene_factory)

    assert question.content.startswith(f"❓ <@{scene.ana.id}> **ada** asks:")
    assert scene.stored(question).ping_user_ids == [scene.ana.id]
    post = [r for r in scene.env.http_requests if r.path.endswith("/messages")][-1]
    assert post.json["allowed_mentions"] == {"users": [scene.ana.id], "parse": []}
    [row] = await pending(scene)
    assert (row["kind"], row["message_id"], row["channel_id"]) == (
        "question",
        question.id,
        channel.id,
    )
    assert scene.app.runtime.is_busy("ada")

    await scene.bob.send(channel, "use main!")
    assert len(scene.server.requests) == 1
    assert scene.app.runtime.is_busy("ada")

    await scene.ana.send(channel, "the release branch")

    [result] = tool_results(scene, 1)
    assert result["content"] == (
        "The user answered: the release branch\n(answered by ana at 2026-01-01 00:00 UTC)"
    )
    assert "bob: use main!" not in user_texts(scene, 1)  # bob may not instruct ada
    assert not any("the release branch" in t for t in user_texts(scene, 1))
    assert scene.bot_texts(channel)[-1] == "Thanks."
    assert await pending(scene) == []


async def test_a_reply_to_the_question_is_the_answer(scene_factory: SceneFactory) -> None:
    scene, channel, question = await asking(scene_factory)

    await scene.ana.send(channel, "staging, please", reply_to=question)

    [result] = tool_results(scene, 1)
    assert result["content"] == (
        "The user answered: staging, please\n(answered by ana at 2026-01-01 00:00 UTC)"
    )
    assert await pending(scene) == []


async def test_an_unanswered_question_times_out(scene_factory: SceneFactory) -> None:
    scene, channel, question = await asking(scene_factory)
    typed = typing_posts(scene, channel.id)

    await scene.env.advance_time(300)
    assert typing_posts(scene, channel.id) == typed
    await scene.env.advance_time(301)

    [result] = tool_results(scene, 1)
    assert result["content"].startswith("no answer (the user did not reply within 10 minutes)")
    assert "No answer within 10 minutes" in scene.stored(question).content
    assert await pending(scene) == []


async def permission_asked(
    scene_factory: SceneFactory, script: list[Any] = TOUCH
) -> tuple[Scene, Any, discord.Message]:
    scene = await scene_factory(script, plan_mode={"approver_roles": ["reviewers"]})
    channel = await scene.create_agent("ada", profile="standard")
    await scene.ana.send(channel, "make a file")
    request = channel.last_message
    assert request.embeds, "a permission request embed"
    return scene, channel, request


async def test_permission_request_shows_the_action_and_allow_runs_it(
    scene_factory: SceneFactory,
) -> None:
    scene, channel, request = await permission_asked(scene_factory)
    workspace = scene.app.manager.workspace_of("ada")
    embed = request.embeds[0]
    assert "```\ntool:bash_execute:touch made.txt\n```" in (embed.description or "")
    assert request.content == f"<@{scene.ana.id}>"
    labels = [b["label"] for b in buttons(scene, request)]
    assert labels == ["Allow", "Deny", "Allow always…", "Deny always…"]
    [row] = await pending(scene)
    assert buttons(scene, request)[0]["custom_id"] == f"ask:allow:{row['id']}"
    assert not (workspace / "made.txt").exists()

    refused = await scene.bob.click(request, label="Allow")

    assert "server administrators" in refusal(refused)
    assert not (workspace / "made.txt").exists()
    assert len(await pending(scene)) == 1

    await scene.ana.click(request, label="Allow")

    stored = scene.stored(request)
    assert all(b.get("disabled") for b in buttons(scene, request))
    fields = {f["name"]: f["value"] for f in stored.embeds[0]["fields"]}
    assert fields["Decision"] == f"Allowed by <@{scene.ana.id}>"
    assert (workspace / "made.txt").exists()
    assert scene.bot_texts(channel)[-1] == "Made it."
    assert await pending(scene) == []
    audit = [a for a in await scene.app.store.list_audit("ada") if a.action.startswith("perm")]
    assert [(a.action, "ana" in a.actor) for a in audit] == [("permission-allowed", True)]
    assert audit[0].detail["action"] == "tool:bash_execute:touch made.txt"


async def test_a_refused_click_is_audited_like_every_refusal(
    scene_factory: SceneFactory,
) -> None:
    scene, _, request = await permission_asked(scene_factory)

    refused = await scene.bob.click(request, label="Deny")

    assert refusal(refused)
    audit = await scene.app.store.list_audit("ada")
    [row] = [a for a in audit if a.action == "ask-refused"]
    assert row.actor == f"user:{scene.bob.id}(bob)"
    assert row.detail["subject"] == "permission" and row.detail["act"] == "deny"
    assert row.detail["action"] == "tool:bash_execute:touch made.txt"
    assert "only" in row.detail["why"]
    assert not [a for a in audit if a.action.startswith("permission-")]


ASKERS = "the member who gave the agent this task"


@pytest.mark.parametrize(
    ("plan_mode", "deciders"),
    [
        (
            {"approver_roles": ["reviewers"]},
            f"{ASKERS}, members with an approver role or server administrators",
        ),
        ({}, f"{ASKERS} or server administrators"),
    ],
)
async def test_the_card_and_a_refusal_name_the_deciders_of_the_policy_in_force(
    scene_factory: SceneFactory, plan_mode: dict[str, Any], deciders: str
) -> None:
    scene = await scene_factory(TOUCH, plan_mode=plan_mode)
    scene.guild.create_role("reviewers")
    await scene.world.bot.resolve_role_names()  # the config names it; startup resolves it
    channel = await scene.create_agent("ada", profile="standard")
    await scene.ana.send(channel, "make a file")
    request = channel.last_message

    fields = {f["name"]: f["value"] for f in scene.stored(request).embeds[0]["fields"]}
    refused = await scene.bob.click(request, label="Allow")

    assert fields["Who decides"] == f"{deciders[0].upper()}{deciders[1:]}."
    assert refusal(refused) == f"Only {deciders} can decide this request."


async def test_members_with_an_approver_role_may_deny(scene_factory: SceneFactory) -> None:
    scene, _, request = await permission_asked(scene_factory)
    reviewers = scene.guild.create_role("reviewers")
    carol = scene.guild.add_member(scene.env.create_user("carol"), roles=[reviewers])
    await scene.world.bot.resolve_role_names()  # the config names it; startup resolves it

    await carol.click(request, label="Deny")

    fields = {f["name"]: f["value"] for f in scene.stored(request).embeds[0]["fields"]}
    assert fields["Decision"] == f"Denied by <@{carol.id}>"
    assert not (scene.app.manager.workspace_of("ada") / "made.txt").exists()
    [result] = tool_results(scene, 1)
    assert result["is_error"] and "denied permission" in result["content"]
    audit = [a for a in await scene.app.store.list_audit("ada") if a.action.startswith("perm")]
    assert [a.action for a in audit] == ["permission-denied"]
    assert "carol" in audit[0].actor


async def test_an_unanswered_permission_request_times_out_as_deny(
    scene_factory: SceneFactory,
) -> None:
    scene, channel, request = await permission_asked(scene_factory)
    typed = typing_posts(scene, channel.id)

    await scene.env.advance_time(300)
    assert typing_posts(scene, channel.id) == typed
    await scene.env.advance_time(301)

    stored = scene.stored(request)
    fields = {f["name"]: f["value"] for f in stored.embeds[0]["fields"]}
    assert fields["Decision"].startswith("Timed out — denied")
    assert all(b.get("disabled") for b in buttons(scene, request))
    [result] = tool_results(scene, 1)
    assert "treated as denied" in result["content"]
    assert not (scene.app.manager.workspace_of("ada") / "made.txt").exists()
    assert await pending(scene) == []
    audit = [a for a in await scene.app.store.list_audit("ada") if a.action.startswith("perm")]
    assert [(a.action, a.actor) for a in audit] == [
        ("permission-timed-out", "policy:permission_timeout")
    ]


async def test_a_second_click_acts_once(scene_factory: SceneFactory) -> None:
    scene, _, request = await permission_asked(scene_factory)
    # The click's edit and the card's own edit refused: the card stays open (its marking is
    # owed, and tried again later).
    scene.env.inject_error("PATCH", "/webhooks/*/*/messages/@original")
    scene.env.inject_error("PATCH", f"/channels/*/messages/{request.id}")

    await scene.ana.click(request, label="Allow")
    again = await scene.ana.click(request, label="Deny")

    assert again.ephemeral
    assert again.response.content.startswith("This request was already decided: Allowed by")
    assert (scene.app.manager.workspace_of("ada") / "made.txt").exists()
    audit = [a for a in await scene.app.store.list_audit("ada") if a.action.startswith("perm")]
    assert [a.action for a in audit] == ["permission-allowed"]


async def test_a_click_whose_deferral_discord_refuses_still_decides_and_marks_the_card(
    scene_factory: SceneFactory,
) -> None:
    scene, _, request = await permission_asked(scene_factory)
    scene.env.inject_error("POST", "/interactions/*/callback")

    await scene.ana.click(request, label="Allow")

    fields = {f["name"]: f["value"] for f in scene.stored(request).embeds[0]["fields"]}
    assert fields["Decision"] == f"Allowed by <@{scene.ana.id}>"
    assert all(b.get("disabled") for b in buttons(scene, request))
    assert (scene.app.manager.workspace_of("ada") / "made.txt").exists()


async def test_after_a_restart_open_asks_are_marked_expired(scene_factory: SceneFactory) -> None:
    script = [
        tool_turn(ToolCall("bash_execute", {"command": "touch made.txt"})),
        tool_turn(ToolCall("ask_user", {"question": QUESTION})),
    ]
    scene, _, request = await permission_asked(scene_factory, script)
    bea = await scene.create_agent("bea")
    await scene.ana.send(bea, "deploy it")
    question = bea.last_message
    assert len(await pending(scene)) == 2

    await scene.world.restart()

    stored = scene.stored(request)
    fields = {f["name"]: f["value"] for f in stored.embeds[0]["fields"]}
    assert fields["Decision"].startswith("Expired — plancord restarted")
    assert all(b.get("disabled") for b in buttons(scene, request))
    assert "This question expired" in scene.stored(question).content
    assert await pending(scene) == []
    audit = [a.action for a in await scene.app.store.list_audit("ada")]
    assert audit[-1] == "permission-expired"
    assert not (scene.app.manager.workspace_of("ada") / "made.txt").exists()


async def test_a_process_serving_other_shards_leaves_their_asks_alone(
    scene_factory: SceneFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two processes share one store: one starting up must not expire the questions the
    other is waiting on. The process's share is swapped in for the restart; which guilds
    the client connects for is discord.py's business."""
    scene, _, question = await asking(scene_factory)
    home = ShardShare(2).shard_of(scene.guild.id)
    monkeypatch.setattr(DiscordConfig, "share", lambda self: ShardShare(2, frozenset({1 - home})))

    await scene.world.restart()

    assert len(await pending(scene)) == 1
    assert "This question expired" not in scene.stored(question).content

    monkeypatch.setattr(DiscordConfig, "share", lambda self: ShardShare(2, frozenset({home})))
    await scene.world.restart()

    assert await pending(scene) == []
    assert "This question expired" in scene.stored(question).content


async def test_a_click_on_a_request_from_before_a_restart_is_refused(
    scene_factory: SceneFactory,
) -> None:
    scene, channel, request = await permission_asked(scene_factory)
    scene.env.inject_error("PATCH", f"/channels/{channel.id}/messages/*")
    await scene.world.restart()

    expired = await scene.ana.click(request, label="Allow")

    assert expired.ephemeral and expired.response.content.startswith("This request expired")
    assert not (scene.app.manager.workspace_of("ada") / "made.txt").exists()
    assert await pending(scene) == []
