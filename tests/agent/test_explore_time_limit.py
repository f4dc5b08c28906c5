"""An ``explore`` sub-agent's time limit: a model that does not answer in time ends the
sub-agent with a result naming the limit, and its line ends stopped. The real ``anthropic``
client against the fake Messages API, real tools, a real database (SimCord cannot fire the
limit's timer while the bot waits on the model, so this runs without it)."""

from __future__ import annotations

import asyncio
from typing import Any

from plancord.agent.subagents import ExploreLimits, SubAgents
from plancord.agent.tools import default_tools
from plancord.agent.tools.base import ToolRegistry
from plancord.core.planning import Phase
from plancord.llm.anthropic_client import AnthropicModelClient
from plancord.storage.conversations import ConversationStore
from plancord.testing.anthropic_server import FakeAnthropicServer, ToolCall, text_turn, tool_turn
from tests.agent.conftest import FakeNotifier, MakeCtx, call
from tests.conftest import ManualClock
from tests.requests_seen import first_call


async def test_the_time_limit_ends_the_sub_agent_with_a_result_saying_so(
    make_ctx: MakeCtx, fake_notifier: FakeNotifier, store: Any, clock: ManualClock
) -> None:
    release = asyncio.Event()

    async def script(request: dict[str, Any]) -> Any:
        if first_call(request):
            return tool_turn(ToolCall("glob", {"pattern": "*"}))
        await release.wait()  # the model never answers the second call in time
        return text_turn("too late")

    server = await FakeAnthropicServer(script).start()
    model = AnthropicModelClient(api_key="test-key", base_url=server.url, max_retries=0)
    subagents = SubAgents(
        model=model,
        conversations=ConversationStore(store.db),
        clock=clock,
        model_for=lambda name, record: "claude-sonnet-5-5",
        limits=ExploreLimits(timeout_seconds=0.5),
    )
    subagents.bind(ToolRegistry(default_tools()))
    [explore] = await subagents.tools_for("ada")
    try:
        result = await call(explore, make_ctx(phase=Phase.INACTIVE), question="Where is it?")
    finally:
        release.set()
        await model.close()
        await server.stop()

    assert result.is_error
    assert result.content.startswith("explore #1 stopped at its time limit: no answer after 0.5 s")
    assert len(server.requests) == 2
    lines = [line for _, line in fake_notifier.activities if "explore #1" in line]
    assert lines[-1].startswith("⛔ explore #1: Where is it? — stopped: its time limit (0.5 s)")
    assert " · 1 call · " in lines[-1]
