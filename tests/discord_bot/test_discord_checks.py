"""The test world's own checks of Discord's limits that SimCord leaves unchecked
(``plancord.testing.discord_checks``): installed in every world, they look at what the bot
really sends (its command tree at sync, its messages), and each one refuses a payload that
breaks its rule with the error Discord gives, through the same transports the bot uses."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import discord
import pytest
from simcord.backend.errors import BackendError
from simcord.http import router

from plancord.testing.discord_checks import DiscordChecks
from tests.discord_bot.plans import submitted
from tests.world import PlanScene

MiB = 1024 * 1024


def _checks(scene: PlanScene) -> DiscordChecks:
    return scene.world.discord_checks


def _refused(scene: PlanScene, count: int = 1) -> list[str]:
    """The refusals the test meant, cleared so the world closes clean."""
    found = list(_checks(scene).refusals)
    assert len(found) == count, found
    _checks(scene).refusals.clear()
    return found


async def test_every_world_checks_what_the_bot_sends(plan_scene: Any) -> None:
    scene = await submitted(plan_scene)

    inspected = _checks(scene).inspected
    assert inspected["sync"] >= 1
    assert inspected["message"] >= 2
    assert _checks(scene).refusals == []


def _command(**changes: Any) -> dict[str, Any]:
    option = {"type": 3, "name": "what", "description": "What to do", "required": True}
    command = {"type": 1, "name": "probe", "description": "A probe", "options": [option]}
    return {**command, **changes}


def _option(**changes: Any) -> dict[str, Any]:
    return _command(options=[{"type": 3, "name": "what", "description": "What", **changes}])


BAD_TREES: dict[str, list[dict[str, Any]]] = {
    "K1 upper case": [_command(name="Probe")],
    "K1 a space": [_command(name="two words")],
    "K1 too long": [_command(name="p" * 33)],
    "K1 a user command of 33": [{"type": 2, "name": "u" * 33}],
    "K2 no description": [_command(description="")],
    "K2 a long option description": [_option(description="d" * 101)],
    "K3 26 options": [
        _command(options=[{"type": 3, "name": f"o{i}", "description": "o"} for i in range(26)])
    ],
    "K4 26 choices": [_option(choices=[{"name": f"c{i}", "value": f"{i}"} for i in range(26)])],
    "K4 a long choice value": [_option(choices=[{"name": "c", "value": "v" * 101}])],
    "K5 required after optional": [
        _command(
            options=[
                {"type": 3, "name": "a", "description": "a"},
                {"type": 3, "name": "b", "description": "b", "required": True},
            ]
        )
    ],
    "K6 one name twice": [_command(options=[{"type": 3, "name": "a", "description": "a"}] * 2)],
    "K7 autocomplete with choices": [
        _option(autocomplete=True, choices=[{"name": "c", "value": "c"}])
    ],
    "K8 max_length 6001": [_option(max_length=6001)],
    "K9 8000 characters": [
        _command(
            options=[
                {
                    "type": 3,
                    "name": f"o{i}",
                    "description": "d" * 100,
                    "choices": [{"name": "n" * 100, "value": f"{c}" * 100} for c in range(4)],
                }
                for i in range(10)
            ]
        )
    ],
    "K10 101 commands": [_command(name=f"c{i}") for i in range(101)],
    "K11 one name twice": [_command(), _command()],
}


@pytest.mark.parametrize("case", list(BAD_TREES))
async def test_a_command_tree_breaking_a_rule_is_refused_at_sync(
    plan_scene: Any, case: str
) -> None:
    scene = await plan_scene()
    bot = scene.world.bot
    assert bot.application_id is not None

    with pytest.raises(discord.HTTPException) as refused:
        await bot.http.bulk_upsert_global_commands(bot.application_id, BAD_TREES[case])

    assert refused.value.status == 400 and refused.value.code == 50035
    [text] = _refused(scene)
    assert f"{case.split()[0]})" in text, text


def _select(max_values: int) -> discord.ui.View:
    view = discord.ui.View()
    options = [discord.SelectOption(label=name) for name in ("a", "b")]
    view.add_item(discord.ui.Select(options=options, max_values=max_values))
    return view


def _file(size: int, description: str | None = None) -> discord.File:
    return discord.File(io.BytesIO(b"x" * size), filename="f.txt", description=description)


BAD_MESSAGES: dict[str, tuple[Callable[[], dict[str, Any]], int, int]] = {
    "E9 a blank field name": (
        lambda: {"embed": discord.Embed().add_field(name=" ", value="v")},
        400,
        50035,
    ),
    "A1 101 users": (
        lambda: {
            "content": "hi",
            "allowed_mentions": discord.AllowedMentions(
                users=[discord.Object(i) for i in range(1, 102)]
            ),
        },
        400,
        50035,
    ),
    "A2 101 roles": (
        lambda: {
            "content": "hi",
            "allowed_mentions": discord.AllowedMentions(
                roles=[discord.Object(i) for i in range(1, 102)]
            ),
        },
        400,
        50035,
    ),
    "C13 max_values past the options": (lambda: {"content": "m", "view": _select(3)}, 400, 50035),
    "M4 a long nonce": (lambda: {"content": "n", "nonce": "n" * 26}, 400, 50035),
    "F2 a file of 10 MiB and a byte": (lambda: {"file": _file(10 * MiB + 1)}, 413, 40005),
    "F3 27 MiB in all": (lambda: {"files": [_file(9 * MiB) for _ in range(3)]}, 413, 40005),
    "F4 a long description": (lambda: {"file": _file(1, "d" * 1025)}, 400, 50035),
}


@pytest.mark.parametrize("case", list(BAD_MESSAGES))
async def test_a_message_breaking_a_rule_is_refused(plan_scene: Any, case: str) -> None:
    scene = await plan_scene()
    channel = scene.world.bot.get_channel(scene.channel.id)
    assert isinstance(channel, discord.TextChannel)
    make, status, code = BAD_MESSAGES[case]

    with pytest.raises(discord.HTTPException) as refused:
        await channel.send(**make())

    assert (refused.value.status, refused.value.code) == (status, code)
    [text] = _refused(scene)
    assert f"{case.split()[0]})" in text, text


async def test_eleven_files_are_refused_with_30015(plan_scene: Any) -> None:
    """discord.py itself refuses more than ten files in one send, so the eleven come the
    way a request carries them, through the dispatcher both of SimCord's transports call."""
    scene = await plan_scene()
    files = [_file(1) for _ in range(11)]

    with pytest.raises(BackendError) as refused:
        router.dispatch(
            scene.env.backend,
            "POST",
            f"/channels/{scene.channel.id}/messages",
            json={"content": "files"},
            files=files,
        )

    assert (refused.value.status, refused.value.code) == (400, 30015)
    _refused(scene)


def _input(**changes: Any) -> dict[str, Any]:
    text_input = {"type": 4, "custom_id": "i", "style": 1, **changes}
    return {"type": 18, "label": "Input", "component": text_input}


BAD_CALLBACKS: dict[str, dict[str, Any]] = {
    "D6 a value of 4001": {
        "type": 9,
        "data": {"custom_id": "m", "title": "t", "components": [_input(value="v" * 4001)]},
    },
    "D9 a value past max_length": {
        "type": 9,
        "data": {
            "custom_id": "m",
            "title": "t",
            "components": [_input(value="v" * 11, max_length=10)],
        },
    },
    "D10 a disabled control": {
        "type": 9,
        "data": {"custom_id": "m", "title": "t", "components": [_input(disabled=True)]},
    },
    "X1 26 choices": {
        "type": 8,
        "data": {"choices": [{"name": f"c{i}", "value": f"{i}"} for i in range(26)]},
    },
    "X2 a long name": {"type": 8, "data": {"choices": [{"name": "n" * 101, "value": "v"}]}},
    "X2 an empty name": {"type": 8, "data": {"choices": [{"name": "", "value": "v"}]}},
}


@pytest.mark.parametrize("case", list(BAD_CALLBACKS))
async def test_an_interaction_answer_breaking_a_rule_is_refused(plan_scene: Any, case: str) -> None:
    scene = await plan_scene()

    with pytest.raises(BackendError) as refused:
        router.dispatch(
            scene.env.backend, "POST", "/interactions/1/token/callback", json=BAD_CALLBACKS[case]
        )

    assert (refused.value.status, refused.value.code) == (400, 50035)
    assert refused.value.errors is not None and "data" in refused.value.errors
    [text] = _refused(scene)
    assert f"{case.split()[0]})" in text, text
