"""An agent whose workspace is not on this machine (its shard moved, the volume is not
mounted) runs nothing and says why; no empty workspace is made in its place."""

from __future__ import annotations

import shutil
from typing import Any

from tests.fakes.anthropic_server import text_turn
from tests.runtime.conftest import Harness


async def test_a_missing_workspace_is_refused_readably_and_the_message_is_kept(
    make_harness: Any,
) -> None:
    harness: Harness = await make_harness([text_turn("I am back.")])
    shutil.rmtree(harness.workspace)

    await harness.say("please fix the build")

    said = harness.channel.said[-1]
    assert f"My workspace {harness.workspace} is not on this machine, so I ran nothing" in said
    assert "Your message is kept" in said
    assert harness.server.requests == []
    assert not harness.workspace.exists()
    history = await harness.conversations.load("ada")
    assert "please fix the build" in str(history[-1]["content"])


async def test_a_workspace_that_is_no_repository_is_refused_too(make_harness: Any) -> None:
    harness: Harness = await make_harness([text_turn("hi")])
    shutil.rmtree(harness.workspace / ".git")

    await harness.say("hello")

    assert "is not on this machine" in harness.channel.said[-1]
    assert harness.server.requests == []
