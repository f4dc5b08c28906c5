"""One turn per agent at a time: messages that arrive together start one loop, a message
sent during a model call is answered after it, and a message sent after a cancel is served
rather than dropped. Messages are created in the simulated server directly so that several
arrive inside one SimCord operation, as they do from a busy channel."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from plancord.core.planning import Actor, Phase
from plancord.testing.anthropic_server import JsonObject, Turn
from tests.discord_bot.agent_scene import Scene, SceneFactory
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn
from tests.requests_seen import last_user

Hook = Callable[[], Awaitable[None]]


def user_texts(request: JsonObject) -> list[str]:
    return [
        block["text"]
        for message in request["messages"]
        if message["role"] == "user"
        for block in message["content"]
        if block.get("type") == "text" and not block["text"].startswith("<plancord-regime>")
    ]


class CountingScript:
    """Plays ``turns`` in order, runs ``hooks[n]`` while model call ``n`` is in flight, and
    records how many model calls were in flight at once."""

    def __init__(self, *turns: Turn) -> None:
        self.turns = list(turns)
        self.hooks: dict[int, Hook] = {}
        self.calls = 0
        self.in_flight = 0
        self.most_in_flight = 0

    async def __call__(self, body: JsonObject) -> Turn | None:
        index = self.calls
        self.calls += 1
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            hook = self.hooks.pop(index, None)
            if hook is not None:
                await hook()
            await asyncio.sleep(0.02)
            return self.turns.pop(0) if self.turns else None
        finally:
            self.in_flight -= 1


def post(scene: Scene, channel: object, text: str) -> None:
    """ana's message appears in the channel; the bot sees it at the next settle."""
    scene.env.backend.create_message(channel.id, scene.ana.id, text)  # type: ignore[attr-defined]


async def test_two_messages_at_once_start_one_loop_and_both_reach_the_model(
    scene_factory: SceneFactory,
) -> None:
    script = CountingScript(tool_turn(ToolCall("git_status", {})), text_turn("Both answered."))
    scene: Scene = await scene_factory(script)
    channel = await scene.create_agent("ada")

    post(scene, channel, "first question")
    post(scene, channel, "second question")
    await scene.env.settle()
    await scene.app.runtime.wait_idle("ada")

    assert scene.server.rejections == []
    assert script.most_in_flight == 1
    # One loop: the tool ran once and the model was called twice, not four times.
    assert len(scene.server.requests) == 2
    assert user_texts(scene.server.requests[0]) == ["ana: first question", "ana: second question"]
    assert scene.bot_texts(channel)[-1] == "Both answered."
    stored = await scene.app.conversations.load("ada")
    # The regime the host appended follows the first user message.
    assert [m["role"] for m in stored] == ["user", "system", "assistant", "user", "assistant"]


async def test_a_message_during_the_model_call_gets_its_own_answer(
    scene_factory: SceneFactory,
) -> None:
    script = CountingScript(text_turn("Answer one."), text_turn("Answer two."))
    scene: Scene = await scene_factory(script)
    channel = await scene.create_agent("ada")

    async def second_message() -> None:
        post(scene, channel, "two")

    script.hooks[0] = second_message
    post(scene, channel, "one")
    await scene.env.settle()
    await scene.app.runtime.wait_idle("ada")
    await scene.env.settle()

    assert scene.server.rejections == []
    assert script.most_in_flight == 1
    assert scene.bot_texts(channel)[-2:] == ["Answer one.", "Answer two."]
    assert user_texts(scene.server.requests[1])[-1] == "ana: two"


async def test_plan_cancel_then_a_new_message_during_a_model_call_serves_the_new_message(
    scene_factory: SceneFactory,
) -> None:
    script = CountingScript(
        tool_turn(ToolCall("git_status", {})),
        text_turn("Doing the new thing."),
    )
    scene: Scene = await scene_factory(script)
    channel = await scene.create_agent("ada")

    async def cancel_then_ask_again() -> None:
        await scene.app.planning.cancel("ada", Actor.user(scene.ana.id, "ana"))
        post(scene, channel, "do the new thing instead")

    script.hooks[0] = cancel_then_ask_again
    await scene.ana.slash(channel, "plan start", task="the old thing")
    await scene.app.runtime.wait_idle("ada")
    await scene.env.settle()

    assert scene.server.rejections == []
    assert (await scene.app.store.load_state("ada")).phase is Phase.INACTIVE
    # The stopped turn's tool call never ran; the new request got a turn of its own.
    assert len(scene.server.requests) == 2
    results = [
        block
        for block in last_user(scene.server.requests[1])["content"]
        if block.get("type") == "tool_result"
    ]
    assert "stopped" in results[0]["content"]
    texts = scene.bot_texts(channel)
    assert "Stopped." in texts
    assert texts[-1] == "Doing the new thing."
    assert user_texts(scene.server.requests[-1])[-1] == "ana: do the new thing instead"
