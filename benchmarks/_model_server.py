"""The fake Messages API for ``bench_responsiveness.py``, in a process of its own.

``_model_server.py SEED FLAG`` prints the server's URL on a line, then serves until its stdin
closes. Every load agent's call is answered after a random 50–500 ms (seeded); planners
submit their plan at once while the file FLAG exists (the bench's preparation), and answer
with one text afterwards.
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
from pathlib import Path
from typing import Any

from _common import REPO_ROOT  # noqa: F401  (puts the repository root on sys.path)

# isort: split

from tests.fakes.anthropic_server import FakeAnthropicServer, ToolCall, text_turn, tool_turn

LATENCY = (0.05, 0.5)
PLANNER_TAG = "PLANNER"
PLAN = {
    "summary": "Read the workspace",
    "steps": [{"description": "List the files", "tools": ["glob"], "risk": "low"}],
}


class Model:
    """The script every agent plays, with a random latency per call.

    A load agent's turn: create a file, glob, grep, ``git log``, then a closing text. A
    planner (its system prompt carries ``PLANNER``) explores and submits ``PLAN`` while
    ``preparing`` (before the load starts, without latency; while the flag file exists);
    afterwards it answers each turn with one text, so a measured ``/plan start`` or Approve
    costs the bot one model call.
    """

    def __init__(self, seed: int, flag: Path) -> None:
        self.rng = random.Random(seed)
        self.flag = flag
        self.server: FakeAnthropicServer | None = None

    @property
    def preparing(self) -> bool:
        return self.flag.exists()

    @staticmethod
    def _since_human(messages: list[dict[str, Any]]) -> int:
        """Assistant turns since the newest user turn that is not only tool results."""
        count = 0
        for message in reversed(messages):
            content = message["content"]
            if message["role"] == "assistant":
                count += 1
                continue
            blocks = content if isinstance(content, list) else [{"type": "text"}]
            if not any(b.get("type") == "tool_result" for b in blocks):
                return count
        return count

    async def __call__(self, body: dict[str, Any]) -> Any:
        if self.server is not None:
            self.server.requests.clear()
            self.server.responses.clear()
            self.server.usages.clear()
        step = self._since_human(body["messages"])
        if PLANNER_TAG in json.dumps(body.get("system", "")):
            if self.preparing:
                if step == 0:
                    return tool_turn(ToolCall("glob", {"pattern": "*"}))
                return tool_turn(ToolCall("submit_plan", {"plan": PLAN}))
            await asyncio.sleep(self.rng.uniform(*LATENCY))
            return text_turn("On it.")
        await asyncio.sleep(self.rng.uniform(*LATENCY))
        turn = len(body["messages"])
        return [
            lambda: tool_turn(
                ToolCall("create_file", {"path": f"notes/n{turn}.md", "content": "load\n" * 40})
            ),
            lambda: tool_turn(ToolCall("glob", {"pattern": "**/*.md"})),
            lambda: tool_turn(ToolCall("grep", {"pattern": "load"})),
            lambda: tool_turn(ToolCall("bash_execute", {"command": "git log --oneline -3"})),
            lambda: text_turn("Checked the notes."),
        ][min(step, 4)]()


async def serve(seed: int, flag: Path) -> None:
    model = Model(seed, flag)
    server = model.server = await FakeAnthropicServer(model).start()
    print(server.url, flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)
    await server.stop()


if __name__ == "__main__":
    asyncio.run(serve(int(sys.argv[1]), Path(sys.argv[2])))
