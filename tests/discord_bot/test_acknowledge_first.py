"""Handlers acknowledge an interaction before they read the database: under load a read can
take seconds, and Discord fails an interaction that has no response after 3 s.

A ``Timeline`` interleaves what the bot sent for the interaction (the callback, followups,
edits and deletes of the original response) with the database reads it did, in the order
they happened, so each test states the exact order and what the person finally sees.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from plancord.core.planning import Actor, Phase
from plancord.discord_bot.plan_card.buttons import plan_buttons
from plancord.discord_bot.shared.common import NO_AGENT
from tests.discord_bot.plans import ALL_BUTTONS, PLAN_V2, submitted
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn
from tests.world import PlanScene, buttons, private_answer

EPHEMERAL = 1 << 6
CALLBACKS = {4: "reply", 5: "defer", 9: "modal"}


class Timeline:
    """The interaction traffic and the watched reads since it was made, oldest first."""

    def __init__(self, scene: PlanScene, monkeypatch: pytest.MonkeyPatch) -> None:
        self.requests = scene.env.http_requests
        self.start = len(self.requests)
        self.reads: list[tuple[int, str]] = []
        self.monkeypatch = monkeypatch

    def watch(self, owner: object, *names: str) -> Timeline:
        for name in names:
            original: Callable[..., Awaitable[Any]] = getattr(owner, name)

            @functools.wraps(original)
            async def spy(
                *args: Any, _original: Any = original, _name: str = name, **kwargs: Any
            ) -> Any:
                self.reads.append((len(self.requests), f"read {_name}"))
                return await _original(*args, **kwargs)

            self.monkeypatch.setattr(owner, name, spy)
        return self

    def events(self) -> list[str]:
        out: list[str] = []
        for index in range(self.start, len(self.requests) + 1):
            out += [what for at, what in self.reads if at == index]
            if index < len(self.requests):
                label = describe(self.requests[index])
                if label is not None:
                    out.append(label)
        return out


def describe(request: Any) -> str | None:
    """How an interaction request reads in a timeline; None for any other request."""
    path: str = request.path
    body = request.json if isinstance(request.json, dict) else {}
    if request.method == "POST" and path.endswith("/callback"):
        data = body.get("data") or {}
        label = CALLBACKS.get(body.get("type", 0), f"callback {body.get('type')}")
        return label + (" ephemeral" if int(data.get("flags") or 0) & EPHEMERAL else "")
    if "/webhooks/" not in path:
        return None
    if request.method == "POST":
        return "followup" + (" ephemeral" if int(body.get("flags") or 0) & EPHEMERAL else "")
    if path.endswith("/messages/@original"):
        return {"PATCH": "edit original", "DELETE": "delete original"}.get(request.method)
    return None


def sent(events: list[str]) -> list[str]:
    """The events that are responses, without the reads."""
    return [e for e in events if not e.startswith("read ")]


def timeline(scene: PlanScene, monkeypatch: pytest.MonkeyPatch) -> Timeline:
    app = scene.app
    return (
        Timeline(scene, monkeypatch)
        .watch(app.store, "find_agent_by_channel", "get_revision")
        .watch(app.planning, "status")
        .watch(app.runtime, "start_planning")
        .watch(app.manager, "list")
    )


# -- /plan status --------------------------------------------------------------------------


async def test_plan_status_defers_before_reading(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    scene: PlanScene = await plan_scene()
    seen = timeline(scene, monkeypatch)

    result = await scene.ana.slash(scene.channel, "plan status")

    assert seen.events() == [
        "defer ephemeral",
        "read find_agent_by_channel",
        "read status",
        "followup ephemeral",
    ]
    assert result.ephemeral
    assert result.response.embeds[0].title == "Plan mode · ada"


@pytest.mark.parametrize(
    ("command", "options"),
    [
        ("plan status", {}),
        ("plan cancel", {}),
        ("plan approve", {}),
        ("plan edit", {"feedback": "x"}),
        ("plan reject", {}),
    ],
)
async def test_plan_commands_defer_before_finding_no_agent(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch, command: str, options: dict[str, Any]
) -> None:
    scene: PlanScene = await plan_scene()
    lobby = scene.guild.create_text_channel("lobby")
    seen = timeline(scene, monkeypatch)

    result = await scene.ana.slash(lobby, command, **options)

    assert seen.events() == [
        "defer ephemeral",
        "read find_agent_by_channel",
        "followup ephemeral",
    ]
    assert result.ephemeral
    assert result.response.content == NO_AGENT


async def test_a_refused_decision_command_defers_before_reading(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    scene: PlanScene = await plan_scene()
    seen = timeline(scene, monkeypatch)

    result = await scene.ana.slash(scene.channel, "plan approve")

    assert seen.events() == [
        "defer ephemeral",
        "read find_agent_by_channel",
        "read status",
        "followup ephemeral",
    ]
    assert result.ephemeral
    assert result.response.content == "Cannot approve: the agent is not in plan mode."


# -- /plan start ---------------------------------------------------------------------------


def seen_by(scene: PlanScene, viewer: Any, channel: Any = None) -> list[int]:
    return [m.id for m in (channel or scene.channel).history(viewer=viewer)]


async def test_plan_start_defers_publicly_then_announces(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command is acknowledged before the channel's agent is looked up, and so before
    the transition is written."""
    scene: PlanScene = await plan_scene([text_turn("Exploring.")])
    seen = timeline(scene, monkeypatch)

    result = await scene.ana.slash(scene.channel, "plan start", task="tidy up")

    events = seen.events()
    assert events[:4] == [
        "defer",
        "read find_agent_by_channel",
        "read start_planning",
        "followup",
    ]
    assert sent(events) == ["defer", "followup"]
    assert not result.ephemeral
    announcement = result.response
    assert announcement.content.startswith("📝 ana put **ada** in plan mode: tidy up\n")
    assert not announcement.ephemeral
    assert announcement.id in seen_by(scene, scene.bob)
    assert (await scene.state()).phase is not Phase.INACTIVE


async def test_plan_start_already_planning_answers_privately_after_deferring(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    scene = await submitted(plan_scene, plan_mode={"access": {"everyone": True}})
    before = seen_by(scene, scene.ana)
    seen = timeline(scene, monkeypatch)

    result = await scene.bob.slash(scene.channel, "plan start", task="something else")

    events = seen.events()
    assert events[:4] == [
        "defer",
        "read find_agent_by_channel",
        "read start_planning",
        "read status",
    ]
    assert sent(events) == ["defer", "edit original", "followup ephemeral", "delete original"]
    answer = private_answer(result)
    assert answer.ephemeral
    assert answer.content == "**ada** is already in plan mode; nothing changed."
    assert answer.embeds[0].title == "Plan mode · ada"
    assert seen_by(scene, scene.ana) == before
    assert answer.id in seen_by(scene, scene.bob)


async def test_plan_start_without_an_agent_defers_then_answers_privately(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Finding that a channel has no agent is a read too (the store remembers only the
    agents it holds), so it comes after the public deferral, and the answer is private."""
    scene: PlanScene = await plan_scene()
    lobby = scene.guild.create_text_channel("lobby")
    seen = timeline(scene, monkeypatch)

    result = await scene.ana.slash(lobby, "plan start", task="x")

    assert seen.events() == [
        "defer",
        "read find_agent_by_channel",
        "edit original",
        "followup ephemeral",
        "delete original",
    ]
    assert private_answer(result).content == NO_AGENT
    assert seen_by(scene, scene.bob, lobby) == []


async def test_plan_start_refused_answers_privately_after_deferring(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    scene: PlanScene = await plan_scene(plan_mode={"enabled": False})
    before = seen_by(scene, scene.bob)
    seen = timeline(scene, monkeypatch)

    result = await scene.ana.slash(scene.channel, "plan start")

    assert seen.events() == [
        "defer",
        "read find_agent_by_channel",
        "read start_planning",
        "edit original",
        "followup ephemeral",
        "delete original",
    ]
    answer = private_answer(result)
    assert answer.ephemeral
    assert answer.content == "Plan mode is disabled for agent 'ada' (plan_mode.enabled: false)."
    assert seen_by(scene, scene.bob) == before
    assert (await scene.state()).phase is Phase.INACTIVE


async def test_plan_start_answer_still_arrives_if_the_placeholder_cannot_be_completed(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    scene: PlanScene = await plan_scene(plan_mode={"enabled": False})
    scene.env.inject_error("PATCH", "/webhooks/*/*/messages/@original", status=403)
    seen = timeline(scene, monkeypatch)

    result = await scene.ana.slash(scene.channel, "plan start")

    assert sent(seen.events()) == ["defer", "edit original", "followup ephemeral"]
    assert result.response.content == (
        "Plan mode is disabled for agent 'ada' (plan_mode.enabled: false)."
    )
    assert not result.response.ephemeral  # Discord keeps the deferral's visibility
    assert not result.followups


# -- the plan buttons ------------------------------------------------------------------------


async def test_approve_click_defers_before_reading(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    scene = await submitted(plan_scene, text_turn("On it."))
    message = scene.plan_message(1)
    seen = timeline(scene, monkeypatch)

    result = await scene.ana.click(message, label="Approve")

    events = seen.events()
    assert events[:2] == ["defer ephemeral", "read get_revision"]
    assert sent(events) == ["defer ephemeral", "followup ephemeral"]
    assert result.ephemeral
    assert result.response.content.startswith("Approved plan v1")
    assert (await scene.state()).phase is Phase.EXECUTING


async def test_a_double_click_defers_each_time_and_approves_once(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    scene = await submitted(plan_scene, text_turn("On it."))
    message = scene.plan_message(1)
    scene.env.inject_error("PATCH", f"/channels/*/messages/{message.id}", status=500, times=None)
    await scene.ana.click(message, label="Approve")
    seen = timeline(scene, monkeypatch)

    again = await scene.ana.click(message, label="Approve, fresh context")

    events = seen.events()
    assert events[:2] == ["defer ephemeral", "read get_revision"]
    assert sent(events) == ["defer ephemeral", "followup ephemeral"]
    assert again.ephemeral
    assert again.response.content == "Plan v1 was already approved by ana."
    assert [a for a, _ in await scene.audit()].count("approved") == 1


async def test_a_stale_approve_click_is_refused_after_deferring(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    scene = await submitted(plan_scene, tool_turn(ToolCall("submit_plan", {"plan": PLAN_V2})))
    first = scene.plan_message(1)
    scene.env.inject_error("PATCH", f"/channels/*/messages/{first.id}", status=500, times=None)
    await scene.ana.slash(scene.channel, "plan edit", feedback="greet by name")
    second = scene.plan_message(2)
    assert buttons(scene.plan_message(1)) == ALL_BUTTONS
    seen = timeline(scene, monkeypatch)

    refused = await scene.ana.click(first, label="Approve")

    events = seen.events()
    assert events[:2] == ["defer ephemeral", "read get_revision"]
    assert sent(events) == ["defer ephemeral", "followup ephemeral"]
    assert refused.ephemeral
    assert refused.response.content == (
        "Plan v1 was superseded by v2; decide on v2 instead.\n"
        f"The current plan (v2): {second.jump_url}"
    )
    assert (await scene.state()).phase is Phase.SUBMITTED


async def test_forged_and_misplaced_approve_clicks_are_refused_after_deferring(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    scene = await submitted(plan_scene)
    revision = await scene.app.planning.current_revision("ada")
    assert revision is not None
    other = scene.guild.create_text_channel("bea")
    await scene.app.manager.create(
        "bea", actor=Actor.user(scene.ana.id, "ana"), channel_id=other.id, profile="open"
    )
    channel = scene.world.bot.get_partial_messageable(scene.channel.id)
    forged = await channel.send("forged", view=plan_buttons("abc123", 7))
    elsewhere = await scene.world.bot.get_partial_messageable(other.id).send(
        "copy", view=plan_buttons(revision.plan_id, 1)
    )
    audit = await scene.audit()

    for message, events, text in (
        (
            forged,
            ["defer ephemeral", "read get_revision", "followup ephemeral"],
            "Plan v7 no longer exists.",
        ),
        (
            elsewhere,
            # The card reads the revision; the service reads it again and judges the place.
            ["defer ephemeral", "read get_revision", "read get_revision", "followup ephemeral"],
            "This plan belongs to another channel; decide on it there.",
        ),
    ):
        seen = timeline(scene, monkeypatch)
        refused = await scene.ana.click(message, label="Approve")
        assert seen.events() == events, text
        assert refused.ephemeral
        assert refused.response.content == text

    # The misplaced click is refused by the authority, and audited like every refusal.
    refused = ("decision-refused", f"user:{scene.ana.id}(ana)")
    assert sorted(await scene.audit()) == sorted([*audit, refused])
    assert (await scene.state()).phase is Phase.SUBMITTED


async def test_edit_and_reject_open_their_form_before_reading_and_read_on_submit(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A form can only be a click's first answer, so it opens from what the click carries;
    its submission is acknowledged before the revision is read and decided."""
    scene = await submitted(plan_scene, text_turn("Understood."))
    message = scene.plan_message(1)

    for label in ("Edit", "Reject"):
        seen = timeline(scene, monkeypatch)
        shown = await scene.ana.click(message, label=label)
        assert seen.events() == ["modal"]
        assert shown.modal is not None
    values = {"reason": "not now"}

    seen = timeline(scene, monkeypatch)
    rejected = await scene.ana.submit_modal(shown, values)

    events = seen.events()
    assert events[:2] == ["defer ephemeral", "read get_revision"]
    assert sent(events) == ["defer ephemeral", "followup ephemeral"]
    assert rejected.response.content == "Rejected plan v1; nothing will be executed."


# -- /agent list and /agent info -----------------------------------------------------------


async def test_agent_list_and_info_defer_before_reading(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    scene: PlanScene = await plan_scene()
    lobby = scene.guild.create_text_channel("lobby")

    seen = timeline(scene, monkeypatch)
    listed = await scene.bob.slash(lobby, "agent list")
    assert seen.events()[:2] == ["defer ephemeral", "read list"]
    assert seen.events()[-1] == "followup ephemeral"
    assert listed.ephemeral and listed.response.content.startswith("**ada** · ")

    seen = timeline(scene, monkeypatch)
    info = await scene.bob.slash(scene.channel, "agent info")
    assert seen.events() == [
        "defer ephemeral",
        "read find_agent_by_channel",
        "followup ephemeral",
    ]
    assert info.ephemeral and info.response.embeds[0].title == "Agent ada"

    seen = timeline(scene, monkeypatch)
    nowhere = await scene.bob.slash(lobby, "agent info")
    assert seen.events() == [
        "defer ephemeral",
        "read find_agent_by_channel",
        "followup ephemeral",
    ]
    assert nowhere.ephemeral and nowhere.response.content == NO_AGENT
