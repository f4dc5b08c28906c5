"""Asks answered from the operator's shell (``plancord asks list|answer``) through the core's
one ask service: the model's call waits on its card in SimCord, the shell answers from its
own connection to the database, the waiting bot reads the answer, the call runs (or not),
the outcome is audited with the operator as the actor, and the card shows it settled."""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

import discord
import pytest

from plancord.command.operator import OperatorError, open_services
from plancord.command.operator_asks import asks_answer, asks_json, asks_list, asks_text
from plancord.core.asks.service import POLL_SECONDS
from tests.discord_bot.agent_scene import Scene, SceneFactory
from tests.discord_bot.asks.asking import buttons, pending, tool_results
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn

TOUCH = [
    tool_turn(ToolCall("bash_execute", {"command": "touch made.txt"})),
    text_turn("Made it."),
]
QUESTION = "Which branch should I deploy?"
ASK = [
    tool_turn(ToolCall("ask_user", {"question": QUESTION, "choices": ["main", "release"]})),
    text_turn("Thanks."),
]


async def asked(scene_factory: SceneFactory, script: list[Any]) -> tuple[Scene, Any, Any]:
    scene = await scene_factory(script, plan_mode={"approver_roles": ["reviewers"]})
    channel = await scene.create_agent("ada", profile="standard")
    await scene.ana.send(channel, "make a file" if script is TOUCH else "deploy it")
    return scene, channel, channel.last_message


async def shell(scene: Scene, ask_id: str, *choice: str, name: str | None = None) -> str:
    """What ``plancord asks answer ID CHOICE… [--as NAME]`` prints (or its error)."""
    async with open_services(scene.app.config) as services:
        try:
            return await asks_answer(services, ask_id, " ".join(choice), name)
        except OperatorError as exc:
            return f"error: {exc}"


async def read_answer(scene: Scene) -> None:
    """Let the waiting bot look at the ask's row (it does every ``POLL_SECONDS``)."""
    await scene.env.advance_time(POLL_SECONDS + 0.5)
    await scene.app.runtime.wait_idle("ada")
    await scene.env.settle()


def decision_of(scene: Scene, card: discord.Message) -> str:
    fields = {f["name"]: f["value"] for f in scene.stored(card).embeds[0]["fields"]}
    return str(fields["Decision"])


async def test_the_shell_allows_a_waiting_call_and_the_card_shows_it_settled(
    scene_factory: SceneFactory,
) -> None:
    scene, channel, card = await asked(scene_factory, TOUCH)
    workspace = scene.app.manager.workspace_of("ada")
    [row] = await pending(scene)
    async with open_services(scene.app.config) as services:
        listed = await asks_list(services, "ada")
        assert asks_text(listed).startswith(f"{row['id']}  ada  permission  until ")
        assert f"plancord asks answer {row['id']} allow|deny" in asks_text(listed)
        assert asks_json(listed)[0]["what"] == "bash_execute: tool:bash_execute:touch made.txt"
    assert not (workspace / "made.txt").exists()

    printed = await shell(scene, row["id"], "allow", name="root")

    assert printed.startswith(f"answered ask {row['id']} of agent ada: Allowed by root;")
    assert "audited as operator" in printed
    await read_answer(scene)
    assert (workspace / "made.txt").exists()
    assert scene.bot_texts(channel)[-1] == "Made it."
    assert await pending(scene) == []
    assert all(b.get("disabled") for b in buttons(scene, card))
    assert decision_of(scene, card) == "Allowed by root"
    audit = [a for a in await scene.app.store.list_audit("ada") if a.action.startswith("perm")]
    assert [(a.action, a.actor) for a in audit] == [("permission-allowed", "operator")]
    assert audit[0].detail["ask_id"] == row["id"]


async def test_a_shell_deny_runs_nothing(scene_factory: SceneFactory) -> None:
    scene, _, card = await asked(scene_factory, TOUCH)
    [row] = await pending(scene)

    assert (await shell(scene, row["id"], "deny")).startswith(
        f"answered ask {row['id']} of agent ada: Denied by operator;"
    )
    await read_answer(scene)

    assert not (scene.app.manager.workspace_of("ada") / "made.txt").exists()
    [result] = tool_results(scene, 1)
    assert "denied" in str(result["content"]).lower()
    assert decision_of(scene, card) == "Denied by operator"


async def test_the_shell_refuses_an_answer_the_ask_does_not_take(
    scene_factory: SceneFactory,
) -> None:
    scene, _, card = await asked(scene_factory, TOUCH)
    [row] = await pending(scene)

    printed = await shell(scene, row["id"], "continue")

    assert printed == "error: this permission ask takes allow or deny; nothing was answered"
    assert len(await pending(scene)) == 1
    assert not all(b.get("disabled") for b in buttons(scene, card))


async def test_an_ask_already_decided_on_its_card_takes_no_second_answer(
    scene_factory: SceneFactory,
) -> None:
    """A click and the shell race for one ask: the first settles it, the second is told so
    and changes nothing (the call ran once, one outcome audited)."""
    scene, _, card = await asked(scene_factory, TOUCH)
    [row] = await pending(scene)
    await scene.ana.click(card, label="Deny")

    printed = await shell(scene, row["id"], "allow")

    assert printed.startswith(f"error: no ask {row['id']} waits for an answer")
    await read_answer(scene)
    assert not (scene.app.manager.workspace_of("ada") / "made.txt").exists()
    audit = [a for a in await scene.app.store.list_audit("ada") if a.action.startswith("perm")]
    assert [a.action for a in audit] == ["permission-denied"]


@pytest.mark.parametrize(("answer", "given"), [("2", "release"), ("use staging", "use staging")])
async def test_the_shell_answers_a_question(
    scene_factory: SceneFactory, answer: str, given: str
) -> None:
    scene, channel, question = await asked(scene_factory, ASK)
    [row] = await pending(scene)
    async with open_services(scene.app.config) as services:
        text = asks_text(await asks_list(services, None))
    assert "an answer in words or a choice (1=main, 2=release)" in text

    printed = await shell(scene, row["id"], *answer.split(), name="root")

    verb = "chose" if answer.isdigit() else "answered"
    assert printed.startswith(f"answered ask {row['id']} of agent ada: root {verb} {given};")
    await read_answer(scene)
    [result] = tool_results(scene, 1)
    how = "picked from your choices by" if answer.isdigit() else "answered by"
    # Stamped by the shell's own clock, when the answer was given.
    assert re.fullmatch(
        rf"The user answered: {given}\n\({how} root at \d{{4}}-\d\d-\d\d \d\d:\d\d UTC\)",
        str(result["content"]),
    )
    assert scene.bot_texts(channel)[-1] == "Thanks."
    assert f"✅ root {verb} {given}" in scene.stored(question).content


async def test_an_unknown_agent_is_an_error(scene_factory: SceneFactory) -> None:
    scene, _, _ = await asked(scene_factory, TOUCH)
    async with open_services(scene.app.config) as services:
        with pytest.raises(Exception, match="nobody"):
            await asks_list(services, "nobody")


async def test_a_change_feed_can_wake_the_waiter_at_once(scene_factory: SceneFactory) -> None:
    """``AskService.settled_elsewhere`` is the hook: told an ask changed, the waiter reads
    its row now instead of at its next look."""
    scene, channel, card = await asked(scene_factory, TOUCH)
    [row] = await pending(scene)
    await shell(scene, row["id"], "allow")

    assert await scene.app.ask_service.settled_elsewhere(row["id"])
    await scene.app.runtime.wait_idle("ada")
    await scene.env.settle()

    assert scene.bot_texts(channel)[-1] == "Made it."
    assert decision_of(scene, card) == "Allowed by operator"


async def test_the_shell_answer_reaches_the_waiting_bot_through_the_change_feed(
    scene_factory: SceneFactory,
) -> None:
    """The answer's row and its change are one transaction: the bot's follower hears it and
    the call runs without the waiter's own look at the row (the simulated clock never
    reaches ``POLL_SECONDS``)."""
    scene, channel, card = await asked(scene_factory, TOUCH)
    workspace = scene.app.manager.workspace_of("ada")
    [row] = await pending(scene)
    changes = scene.app.changes
    assert changes is not None

    await shell(scene, row["id"], "allow", name="root")

    deadline = time.monotonic() + 10
    while not (workspace / "made.txt").exists():
        assert time.monotonic() < deadline, "the answer was not heard through the feed"
        await asyncio.sleep(0.05)
        await scene.env.settle()
    heard = [change for change, _ in changes.heard if change.subject == row["id"]]
    assert [change.payload["what"] for change in heard] == ["answered"]
    await scene.app.runtime.wait_idle("ada")
    await scene.env.settle()
    assert scene.bot_texts(channel)[-1] == "Made it."
    assert decision_of(scene, card) == "Allowed by root"
